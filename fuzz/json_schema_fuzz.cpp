// Feeds arbitrary bytes to the JSON-schema converter as a schema's JSON text: every outcome must
// be a grammar or an Error with a message, never a crash, a hang or a leak; a grammar starts with
// its root rule and stays within the size limit. The limits are set small so that bombs (deep
// nesting, huge counts, many properties, $ref cycles) reach them often.
// Seeds: fuzz/corpus/json_schema/ (the conformance corpus and a few hostile schemas).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sample/json_schema_grammar.h"

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
  return 0;
}
