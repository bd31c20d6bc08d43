#include "sample/grammar/grammar_trigger.h"

#include <algorithm>

namespace sinter {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

TriggerScan::TriggerScan(std::vector<GrammarTrigger> triggers) : triggers_(std::move(triggers)) {
  std::erase_if(triggers_, [](const GrammarTrigger& t) { return t.word.empty(); });
}

std::optional<size_t> TriggerScan::find(std::string_view text, size_t old_size) const {
  size_t first_text = 0;
  while (first_text < text.size() && is_blank(text[first_text])) ++first_text;
  std::optional<size_t> best;
  for (const GrammarTrigger& trigger : triggers_) {
    std::optional<size_t> at;
    if (trigger.at_start) {
      if (text.compare(first_text, trigger.word.size(), trigger.word) == 0) at = first_text;
    } else {
      // Only occurrences that end in the new bytes: the older text was searched before.
      const size_t from = old_size >= trigger.word.size() ? old_size - trigger.word.size() + 1 : 0;
      if (const size_t found = text.find(trigger.word, from); found != std::string_view::npos) at = found;
    }
    if (at && (!best || *at < *best)) best = at;
  }
  return best;
}

std::optional<size_t> TriggerScan::peek(std::string_view piece) const {
  if (triggered_) return std::nullopt;
  std::string text = text_;
  text += piece;
  return find(text, text_.size());
}

std::optional<size_t> TriggerScan::feed(std::string_view piece) {
  if (triggered_) return std::nullopt;
  const size_t old_size = text_.size();
  text_ += piece;
  std::optional<size_t> at = find(text_, old_size);
  if (at) triggered_ = true;
  return at;
}

void TriggerScan::reset() {
  text_.clear();
  triggered_ = false;
}

}  // namespace sinter
