// Python `str` semantics over UTF-8: code-point indexing and the string methods templates call
// (strip, split, replace, find, upper, title ...), with Python's definitions of whitespace,
// letters, digits and printable characters (Unicode categories from utf8proc).
//
// Inputs are valid UTF-8 (templates and JSON inputs are checked on the way in).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::chat::jinja::py {

std::u32string decode(std::string_view text);
std::string encode(std::u32string_view text);
void append_code_point(std::string* out, char32_t c);
// Number of code points (Python's len()).
size_t length(std::string_view text);

bool is_space(char32_t c);      // str.isspace(), and what strip()/split() remove by default
bool is_printable(char32_t c);  // str.isprintable(), used by repr()
bool is_alpha(char32_t c);
bool is_decimal(char32_t c);
bool is_digit(char32_t c);
bool is_numeric(char32_t c);
bool is_upper(char32_t c);
bool is_lower(char32_t c);
bool is_cased(char32_t c);
bool is_line_break(char32_t c);  // what str.splitlines() splits on

std::string upper(std::string_view text);
std::string lower(std::string_view text);
std::string swapcase(std::string_view text);
std::string title(std::string_view text);       // str.title()
std::string capitalize(std::string_view text);  // str.capitalize()

// Predicates over a whole string (False for the empty string, as in Python).
bool all_of(std::string_view text, bool (*predicate)(char32_t));
bool is_upper_string(std::string_view text);  // str.isupper(): has cased chars, none lowercase
bool is_lower_string(std::string_view text);
bool is_title_string(std::string_view text);

enum class StripSide { kBoth, kLeft, kRight };
// str.strip(chars): without chars, Python whitespace.
std::string strip(std::string_view text, const std::optional<std::string>& chars, StripSide side);
// str.split(sep, maxsplit) / str.rsplit: without sep, runs of whitespace and no empty parts.
// `sep` must not be empty (the caller reports ValueError).
std::vector<std::string> split(std::string_view text, const std::optional<std::string>& sep,
                               int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view text, const std::optional<std::string>& sep,
                                int64_t maxsplit);
std::vector<std::string> splitlines(std::string_view text, bool keep_ends);
// str.replace(old, new, count); count < 0 replaces all. An empty `old` inserts between characters.
std::string replace(std::string_view text, std::string_view old_text, std::string_view new_text,
                    int64_t count);
// Non-overlapping occurrences in [start, end) (code-point bounds, already clamped).
int64_t count(std::string_view text, std::string_view sub, int64_t start, int64_t end);
// Code-point index of the first (last) occurrence in [start, end), or -1.
int64_t find(std::string_view text, std::string_view sub, int64_t start, int64_t end, bool reverse);

// Python slice bounds for a sequence of `length` (CPython's PySlice_AdjustIndices): the first
// index, the step and how many elements the slice selects. `step` is not 0.
struct SliceIndices {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};
SliceIndices adjust_slice(int64_t length, std::optional<int64_t> start, std::optional<int64_t> stop,
                          int64_t step);

// Quotes like Python's repr(str): 'it' or "it's", escaping what is not printable.
std::string repr(std::string_view text);

}  // namespace sinter::chat::jinja::py
