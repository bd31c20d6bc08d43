#include "sample/json_schema/integer_range.h"

#include <string_view>
#include <vector>

namespace sinter::json_schema {
namespace {

std::string join_alternatives(const std::vector<std::string>& alternatives) {
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
  return out + ")";
}

std::string digit_class(char from, char to) {
  if (from == to) return std::string("\"") + from + "\"";
  return std::string("[") + from + "-" + to + "]";
}

bool all_of(std::string_view digits, char c) { return digits.find_first_not_of(c) == std::string_view::npos; }

// Any `count` digits.
std::string any_digits(size_t count) {
  if (count == 0) return "";
  return count == 1 ? "[0-9]" : "[0-9]{" + std::to_string(count) + "}";
}

std::string sequence(const std::string& head, const std::string& tail) {
  if (tail.empty()) return head;
  return head + " " + tail;
}

// The digit strings of length n between `low` and `high` (both of length n, low <= high), leading
// zeros allowed: the classic split into the part that shares low's first digit, the part that
// shares high's, and the full blocks in between.
std::string same_length_range(std::string_view low, std::string_view high) {
  const size_t n = low.size();
  if (n == 0) return "";
  if (low == high) return "\"" + std::string(low) + "\"";
  if (low[0] == high[0])
    return sequence(digit_class(low[0], low[0]), same_length_range(low.substr(1), high.substr(1)));
  std::vector<std::string> alternatives;
  char first_full = low[0];
  if (!all_of(low.substr(1), '0')) {
    alternatives.push_back(
        sequence(digit_class(low[0], low[0]), same_length_range(low.substr(1), std::string(n - 1, '9'))));
    ++first_full;
  }
  char last_full = high[0];
  std::string high_part;
  if (!all_of(high.substr(1), '9')) {
    high_part =
        sequence(digit_class(high[0], high[0]), same_length_range(std::string(n - 1, '0'), high.substr(1)));
    --last_full;
  }
  if (first_full <= last_full)
    alternatives.push_back(sequence(digit_class(first_full, last_full), any_digits(n - 1)));
  if (!high_part.empty()) alternatives.push_back(high_part);
  return join_alternatives(alternatives);
}

// Non-negative integers in [low, high] without leading zeros: one same-length range per number of
// digits.
std::string magnitude_range(int64_t low, int64_t high) {
  std::vector<std::string> alternatives;
  int64_t power = 1;  // 10^(digits - 1)
  for (size_t digits = 1; digits <= 19; ++digits) {
    const int64_t block_low = digits == 1 ? 0 : power;
    const int64_t block_high = digits == 19 ? INT64_MAX : power * 10 - 1;
    const int64_t from = std::max(low, block_low);
    const int64_t to = std::min(high, block_high);
    if (from <= to) alternatives.push_back(same_length_range(std::to_string(from), std::to_string(to)));
    if (digits < 19) power *= 10;
  }
  return join_alternatives(alternatives);
}

}  // namespace

std::string integer_range_expression(int64_t min, int64_t max) {
  std::string out;
  if (min >= 0) {
    out = magnitude_range(min, max);
  } else if (max < 0) {
    out = "\"-\" " + magnitude_range(-max, -min);
  } else {
    out = "\"-\" " + magnitude_range(1, -min) + " | " + magnitude_range(0, max);
  }
  return "(" + out + ")";
}

}  // namespace sinter::json_schema
