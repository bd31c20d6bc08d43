// Lazy grammars: a grammar that is off until the generated text contains a trigger word, and from
// then on constrains the text from the trigger's first byte (tool calls: "<tool_call>" starts the
// call's grammar; the free text before it is not constrained).
//
//   TriggerScan scan({{"<tool_call>"}, {"{\"name\"", /*at_start=*/true}});
//   if (auto start = scan.feed(piece)) matcher.accept(scan.text().substr(*start));
//
// A trigger with `at_start` counts only as the first non-blank text of the generation (Llama 3's
// bare JSON call); the others count anywhere. When several triggers occur, the earliest wins.
// Triggers inside a leading reasoning block (<think>...</think>, or up to </think> when the prompt
// opened it) do not count: a model may write about a call while it thinks.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinter {

struct GrammarTrigger {
  std::string word;
  bool at_start = false;
};

struct GrammarTriggers {
  std::vector<GrammarTrigger> words;  // empty: the grammar is not lazy
  // A block at the start of the text where triggers do not count (empty open: none): it starts
  // with `skip_open` (after blanks), or at the start when `skip_open_in_prompt`, and ends after
  // `skip_close`. at_start triggers then count as the first non-blank text after it.
  std::string skip_open;
  std::string skip_close;
  bool skip_open_in_prompt = false;

  bool empty() const { return words.empty(); }
};

class TriggerScan {
 public:
  explicit TriggerScan(GrammarTriggers triggers);

  // Appends a generated piece. Once the text contains a trigger, returns the trigger's offset in
  // text() (the first time only; later calls return nullopt).
  std::optional<size_t> feed(std::string_view piece);
  // Where feed(piece) would find a trigger, without appending.
  std::optional<size_t> peek(std::string_view piece) const;

  const std::string& text() const { return text_; }
  bool triggered() const { return triggered_; }
  // Back to no text.
  void reset();

 private:
  std::optional<size_t> find(std::string_view text, size_t old_size) const;
  // Where triggers may start: after the skipped block; nullopt while the block is open.
  std::optional<size_t> scan_start(std::string_view text) const;

  GrammarTriggers triggers_;
  std::string text_;
  bool triggered_ = false;
};

}  // namespace sinter
