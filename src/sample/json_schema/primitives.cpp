#include "sample/json_schema/primitives.h"

#include <array>

namespace sinter::json_schema {
namespace {

// Each rule that ends a JSON token ends with `space`, so a value followed by a separator or the
// end of the text admits the same bounded whitespace everywhere.
constexpr std::string_view kSpaceFlexible = R"g(| " " | "\n"{1,2} [ \t]{0,20})g";
constexpr std::string_view kSpaceCompact = R"g(" "?)g";

constexpr std::array<std::string_view, 0> kNone{};
constexpr std::array<std::string_view, 1> kSpace{"space"};
constexpr std::array<std::string_view, 2> kNumberUses{"integral-part", "space"};
constexpr std::array<std::string_view, 3> kNumberFullUses{"integral-part", "decimal-part", "space"};
constexpr std::array<std::string_view, 2> kStringUses{"char", "space"};
constexpr std::array<std::string_view, 6> kValueUses{"object", "array",   "string",
                                                     "number", "boolean", "null"};
constexpr std::array<std::string_view, 3> kContainerUses{"string", "value", "space"};
constexpr std::array<std::string_view, 1> kDateUses{"date-month-day"};
constexpr std::array<std::string_view, 1> kDay28{"day-28"};
constexpr std::array<std::string_view, 1> kDay30{"day-30"};
constexpr std::array<std::string_view, 3> kMonthDays{"day-28", "day-30", "day-31"};
constexpr std::array<std::string_view, 2> kDateTimeUses{"date", "time"};
constexpr std::array<std::string_view, 2> kDateStringUses{"date", "space"};
constexpr std::array<std::string_view, 2> kTimeStringUses{"time", "space"};
constexpr std::array<std::string_view, 2> kDateTimeStringUses{"date-time", "space"};

// Bodies follow llama.cpp's json-schema-to-grammar (same sentences, so the same outputs are
// possible), except where a validator would reject llama.cpp's output: a string's unescaped
// characters exclude only `"`, `\` and controls (JSON allows DEL), and dates respect the number
// of days of each month (February stops at 28: leap years are not tracked).
const PrimitiveRule kRules[] = {
    {"boolean", R"g(("true" | "false") space)g", kSpace},
    {"null", R"g("null" space)g", kSpace},
    {"integral-part", R"g([0] | [1-9] [0-9]{0,15})g", kNone},
    {"decimal-part", R"g([0-9]{1,16})g", kNone},
    {"number", R"g("-"? integral-part ("." decimal-part)? ([eE] [-+]? integral-part)? space)g",
     kNumberFullUses},
    {"integer", R"g("-"? integral-part space)g", kNumberUses},
    {"char", R"g([^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))g", kNone},
    {"string", R"g("\"" char* "\"" space)g", kStringUses},
    {"value", R"g(object | array | string | number | boolean | null)g", kValueUses},
    {"object", R"g("{" space (string ":" space value ("," space string ":" space value)*)? "}" space)g",
     kContainerUses},
    {"array", R"g("[" space (value ("," space value)*)? "]" space)g", kContainerUses},
    {"uuid",
     R"g("\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\"" space)g",
     kSpace},
    {"day-28", R"g("0" [1-9] | "1" [0-9] | "2" [0-8])g", kNone},
    {"day-30", R"g(day-28 | "29" | "30")g", kDay28},
    {"day-31", R"g(day-30 | "31")g", kDay30},
    {"date-month-day",
     R"g(("0" [13578] | "1" [02]) "-" day-31 | ("0" [469] | "11") "-" day-30 | "02-" day-28)g", kMonthDays},
    {"date", R"g([1-9] [0-9]{3} "-" date-month-day)g", kDateUses},
    {"time",
     R"g(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{3})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))g",
     kNone},
    {"date-time", R"g(date "T" time)g", kDateTimeUses},
    {"date-string", R"g("\"" date "\"" space)g", kDateStringUses},
    {"time-string", R"g("\"" time "\"" space)g", kTimeStringUses},
    {"date-time-string", R"g("\"" date-time "\"" space)g", kDateTimeStringUses},
};

const PrimitiveRule kSpaceRules[] = {
    {"space", kSpaceFlexible, kNone},
    {"space", kSpaceCompact, kNone},
};

}  // namespace

const PrimitiveRule* find_primitive(std::string_view name, JsonWhitespace whitespace) {
  if (name == "space") return &kSpaceRules[whitespace == JsonWhitespace::kFlexible ? 0 : 1];
  for (const PrimitiveRule& rule : kRules) {
    if (rule.name == name) return &rule;
  }
  return nullptr;
}

}  // namespace sinter::json_schema
