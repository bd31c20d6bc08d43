// Unicode normalization and character classes for the tokenizers (through utf8proc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sinter {

// NFC / NFD of valid UTF-8 (invalid input is returned unchanged).
std::string unicode_nfc(std::string_view text);
std::string unicode_nfd(std::string_view text);

// Unicode general category tests.
bool unicode_is_punctuation(uint32_t code_point);      // P*
bool unicode_is_nonspacing_mark(uint32_t code_point);  // Mn
bool unicode_is_other(uint32_t code_point);            // Cc, Cf, Cs, Co, Cn
// Full lowercase mapping appended to `out` (U+0130 becomes "i" + U+0307, as in Rust and JavaScript).
void unicode_append_lowercase(std::string* out, uint32_t code_point);

}  // namespace sinter
