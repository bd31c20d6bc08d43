#include "sample/grammar/grammar_trigger.h"

#include <algorithm>

namespace sinter {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_blanks(std::string_view text, size_t pos) {
  while (pos < text.size() && is_blank(text[pos])) ++pos;
  return pos;
}

}  // namespace

TriggerScan::TriggerScan(GrammarTriggers triggers) : triggers_(std::move(triggers)) {
  std::erase_if(triggers_.words, [](const GrammarTrigger& t) { return t.word.empty(); });
  if (triggers_.skip_close.empty()) triggers_.skip_open.clear();
}

std::optional<size_t> TriggerScan::scan_start(std::string_view text) const {
  if (triggers_.skip_open.empty()) return 0;
  size_t body = 0;
  if (!triggers_.skip_open_in_prompt) {
    const size_t first = skip_blanks(text, 0);
    const std::string_view rest = text.substr(first);
    if (rest.starts_with(triggers_.skip_open)) {
      body = first + triggers_.skip_open.size();
    } else if (std::string_view(triggers_.skip_open).starts_with(rest)) {
      return std::nullopt;  // may still become the block's opening
    } else {
      return 0;
    }
  }
  const size_t close = text.find(triggers_.skip_close, body);
  if (close == std::string_view::npos) return std::nullopt;
  return close + triggers_.skip_close.size();
}

std::optional<size_t> TriggerScan::find(std::string_view text, size_t old_size) const {
  const std::optional<size_t> start = scan_start(text);
  if (!start) return std::nullopt;
  const size_t first_text = skip_blanks(text, *start);
  std::optional<size_t> best;
  for (const GrammarTrigger& trigger : triggers_.words) {
    std::optional<size_t> at;
    if (trigger.at_start) {
      if (text.compare(first_text, trigger.word.size(), trigger.word) == 0) at = first_text;
    } else {
      // Only occurrences that end in the new bytes: the older text was searched before.
      const size_t from =
          std::max(*start, old_size >= trigger.word.size() ? old_size - trigger.word.size() + 1 : size_t{0});
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
