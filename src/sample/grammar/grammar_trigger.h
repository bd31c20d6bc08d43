// Lazy grammars: a grammar that is off until the generated text contains a trigger word, and from
// then on constrains the text from the trigger's first byte (tool calls: "<tool_call>" starts the
// call's grammar; the free text before it is not constrained).
//
//   TriggerScan scan({{"<tool_call>"}, {"{\"name\"", /*at_start=*/true}});
//   if (auto start = scan.feed(piece)) matcher.accept(scan.text().substr(*start));
//
// A trigger with `at_start` counts only as the first non-blank text of the generation (Llama 3's
// bare JSON call); the others count anywhere. When several triggers occur, the earliest wins.
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

class TriggerScan {
 public:
  explicit TriggerScan(std::vector<GrammarTrigger> triggers);

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

  std::vector<GrammarTrigger> triggers_;
  std::string text_;
  bool triggered_ = false;
};

}  // namespace sinter
