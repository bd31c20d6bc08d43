// Exact digit grammars for integer ranges: the GBNF expression whose sentences are the decimal
// spellings (no leading zeros, no "+", "-" only before a non-zero magnitude) of exactly the
// integers in [min, max].
#pragma once

#include <cstdint>
#include <string>

namespace sinter::json_schema {

// Bounds are limited to ±kMaxIntegerBound so that negation and 10^k never overflow.
constexpr int64_t kMaxIntegerBound = 1'000'000'000'000'000'000;  // 10^18

// A parenthesized GBNF expression; requires min <= max, both within ±kMaxIntegerBound.
std::string integer_range_expression(int64_t min, int64_t max);

}  // namespace sinter::json_schema
