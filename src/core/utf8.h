// UTF-8 helpers shared by the tokenizers, the streaming detokenizer and the server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sinter {

// Length of the sequence that starts with `lead` (1..4), or 0 if `lead` cannot start one.
size_t utf8_sequence_length(uint8_t lead);

// Decodes one code point at text[*pos]; advances *pos. Invalid bytes decode as U+FFFD and
// advance by one, so a loop over arbitrary bytes always terminates.
uint32_t utf8_decode(std::string_view text, size_t* pos);

// True if `text` is entirely well-formed UTF-8 (no overlongs, surrogates or values > U+10FFFF).
bool utf8_is_valid(std::string_view text);

// Number of bytes at the end of `text` that form an incomplete (but so far valid) sequence:
// a streaming writer holds these back until the rest arrives.
size_t utf8_incomplete_tail(std::string_view text);

void utf8_append(std::string* out, uint32_t code_point);

}  // namespace sinter
