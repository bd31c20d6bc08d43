// Feeds arbitrary bytes to the JSON-schema converter as a schema's JSON text: every outcome must
// be a grammar or an Error with a message, never a crash, a hang or a leak; a grammar starts with
// its root rule and stays within the size limit. The limits are set small so that bombs (deep
// nesting, huge counts, many properties, $ref cycles) reach them often. Each grammar is compiled
// and its first masks computed, so that pattern bombs reach the matcher's limits too.
// Seeds: fuzz/corpus/json_schema/ (the conformance corpus and a few hostile schemas).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sample/grammar/grammar_mask.h"
#include "sample/grammar/grammar_matcher.h"
#include "sample/json_schema_grammar.h"

namespace {

// Every byte as a token, and an end of generation.
const sinter::GrammarVocabulary& byte_vocabulary() {
  static const auto vocab = [] {
    std::vector<std::string> pieces = {"</s>"};
    for (int b = 1; b < 256; ++b) pieces.push_back(std::string(1, static_cast<char>(b)));
    std::vector<bool> eog(pieces.size(), false);
    eog[0] = true;
    return sinter::GrammarVocabulary::build(std::move(pieces), std::move(eog));
  }();
  return *vocab;
}

bool mentions(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sinter::JsonSchemaOptions options;
  options.limits.max_depth = 24;
  options.limits.max_rules = 512;
  options.limits.max_repetition = 64;
  options.limits.max_grammar_bytes = 1 << 16;
  options.whitespace = size % 2 == 0 ? sinter::JsonWhitespace::kFlexible : sinter::JsonWhitespace::kCompact;
  auto grammar = sinter::json_schema_text_to_grammar(text, options);
  if (!grammar) {
    if (grammar.error().message().empty()) __builtin_trap();
    if (grammar.error().code() == sinter::ErrorCode::kInternal) __builtin_trap();
    return 0;
  }
  if (grammar->rfind("root ::= ", 0) != 0) __builtin_trap();
  // The limit counts rule bodies; names and separators add a little.
  if (grammar->size() > 2 * options.limits.max_grammar_bytes) __builtin_trap();
  // The grammar compiles, never asks for a code point without a UTF-8 form, and its first masks
  // stay within small limits (a pattern bomb ends in an error, not the fuzzer's timeout).
  sinter::GrammarLimits limits;
  limits.max_stacks = 256;
  limits.max_expansion = 4096;
  limits.max_step_work = 1u << 20;
  auto compiled = sinter::compile_grammar(*grammar, limits);
  if (!compiled) {
    const std::string& message = compiled.error().message();
    if (mentions(message, "a UTF-16 surrogate, not a character") ||
        mentions(message, "above U+10FFFF, the largest code point")) {
      __builtin_trap();
    }
    return 0;
  }
  sinter::GrammarMatcher matcher(*compiled);
  sinter::GrammarMaskScratch scratch;
  std::vector<uint8_t> mask;
  for (int step = 0; step < 4; ++step) {
    if (!sinter::grammar_token_mask(matcher, byte_vocabulary(), mask, scratch)) return 0;
    // The first allowed byte after the data's size picks the next token.
    size_t id = 1 + size % 255;
    while (id < mask.size() && !mask[id]) ++id;
    if (id >= mask.size() || !matcher.accept(std::string(1, static_cast<char>(id)))) return 0;
  }
  return 0;
}
