// Feeds arbitrary bytes to the GBNF parser and, when they parse, to the matcher. The input is a
// grammar, optionally followed by "\n%%\n" and text: the text is fed to the matcher in tokens of
// 1..4 bytes (UTF-8 sequences split across them), and at each step the trie mask over a small
// vocabulary must equal the per-token check. A malformed grammar must be an Error; nothing may
// crash, hang or use unbounded memory (the limits below are small on purpose). Seeds: fuzz/corpus/gbnf/
// (bomb-*: grammars within the parser's limits whose work per token the matcher's limits bound;
// bad-*: escapes and bytes that are no character).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sample/grammar/gbnf_parser.h"
#include "sample/grammar/grammar_mask.h"
#include "sample/grammar/grammar_matcher.h"

namespace {

using namespace sinter;

const std::shared_ptr<const GrammarVocabulary>& vocabulary() {
  static const auto vocab = [] {
    std::vector<std::string> pieces = {"", "</s>"};
    for (int b = 1; b < 256; ++b) pieces.push_back(std::string(1, static_cast<char>(b)));
    for (const char* word : {"ab", "abc", "\"", "{\"", "\": ", "é", "\xc3", "\xa9\xc3", "中文", "\xe4\xb8",
                             "😀", "\xf0\x9f", "12", " (", "<s>", "\n\n", "\xc0\x80"}) {
      pieces.push_back(word);
    }
    std::vector<bool> eog(pieces.size(), false);
    eog[1] = true;
    return GrammarVocabulary::build(std::move(pieces), std::move(eog));
  }();
  return vocab;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find("\n%%\n");
  const std::string_view grammar_text = input.substr(0, split);
  const std::string_view text =
      split == std::string_view::npos ? std::string_view() : input.substr(split + 4);

  GbnfLimits parse_limits;
  parse_limits.max_elements = 1u << 14;
  parse_limits.max_rules = 1u << 12;
  parse_limits.max_repetition = 64;
  parse_limits.max_nesting = 32;
  auto parsed = parse_gbnf(grammar_text, parse_limits);
  if (!parsed) {
    if (parsed.error().message().empty()) std::abort();
    return 0;
  }
  GrammarLimits limits;
  limits.max_stacks = 64;
  limits.max_stack_depth = 256;
  limits.max_expansion = 4096;
  limits.max_step_work = 1u << 20;  // a bomb ends in an error within a few ms, not the fuzzer's timeout
  auto compiled = compile_grammar(grammar_text, limits);
  if (!compiled) return 0;  // the expansion of the start rule hit a limit
  GrammarMatcher matcher(*compiled);
  const GrammarVocabulary& vocab = *vocabulary();
  GrammarMaskScratch scratch;
  std::vector<uint8_t> mask;
  size_t pos = 0;
  for (int step = 0; step < 64 && pos < text.size(); ++step) {
    if (!grammar_token_mask(matcher, vocab, mask, scratch)) return 0;
    for (TokenId id = 0; id < vocab.size(); ++id) {
      auto one = grammar_allows_token(matcher, vocab, id);
      if (!one) return 0;
      if (*one != (mask[static_cast<size_t>(id)] != 0)) std::abort();  // the trie walk disagrees
    }
    const size_t length = 1 + static_cast<uint8_t>(text[pos]) % 4;
    const std::string_view token = text.substr(pos, length);
    pos += length;
    auto allowed = matcher.allows(token);
    if (!allowed) return 0;
    const bool accepted = static_cast<bool>(matcher.accept(token));
    if (accepted != *allowed) std::abort();  // allows() and accept() disagree
  }
  (void)matcher.can_complete();
  (void)matcher.finished();
  return 0;
}
