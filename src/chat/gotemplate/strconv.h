// Go's strconv, as the template engine needs it (see strconv.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sinter::chat::gotemplate {

// strconv.Quote and QuoteRune: Go-syntax literals, non-printable runes escaped.
std::string go_quote(std::string_view s);
std::string go_quote_rune(char32_t r);

// strconv.FormatFloat(f, fmt, -1, 64): the shortest text that reads back as f ('e', 'f', 'g').
std::string go_format_float_shortest(double f, char fmt);

// unicode.IsPrint.
bool go_is_print(char32_t r);

// strconv.Unquote for "...", `...` and '...' literals; false if malformed.
bool go_unquote(std::string_view quoted, std::string* out);
// strconv.UnquoteChar: one (possibly escaped) character of a quoted literal at s[*i].
bool go_unquote_char(std::string_view s, size_t* i, char quote, std::string* out);
// Whether the underscores of a number literal stand where Go allows them.
bool go_underscore_ok(std::string_view s);
// strconv.ParseUint(s, 0, 64) / ParseInt(s, 0, 64).
bool go_parse_integer(std::string_view s, bool is_signed, uint64_t* magnitude, bool* negative);
// strconv.ParseFloat(s, 64) for the forms the lexer produces.
bool go_parse_float(std::string_view s, double* out);

// utf8.DecodeRuneInString at `pos`: invalid bytes give U+FFFD with width 1.
char32_t go_decode_rune(std::string_view s, size_t pos, size_t* width);

}  // namespace sinter::chat::gotemplate
