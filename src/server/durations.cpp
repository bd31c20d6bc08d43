#include "server/durations.h"

#include <cmath>
#include <ctime>

namespace sinter::server {
namespace {

// Nanoseconds per unit, longest suffix first so that "ms" is not read as "m".
struct Unit {
  std::string_view suffix;
  double nanoseconds;
};
constexpr Unit kUnits[] = {{"ns", 1.0}, {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"\xCE\xBCs", 1e3},
                           {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},        {"h", 3600e9}};

// A duration beyond this (about 292 years, the range of int64 nanoseconds) is "forever".
constexpr double kMaxNanoseconds = 9.2e18;

KeepAlive clamp(double nanoseconds) {
  if (nanoseconds >= kMaxNanoseconds) return KeepAlive::max();
  if (nanoseconds <= -kMaxNanoseconds) return KeepAlive(-1);
  return KeepAlive(static_cast<int64_t>(std::llround(nanoseconds)));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<KeepAlive> parse_duration(std::string_view text) {
  const std::string original(text);
  const auto invalid = [&] {
    return make_error(ErrorCode::kInvalidArgument, "'", original,
                      "' is not a duration (examples: \"5m\", \"1h30m\", \"300ms\", \"-1\", 300)");
  };
  if (text.empty()) return invalid();
  double sign = 1.0;
  if (text.front() == '-' || text.front() == '+') {
    if (text.front() == '-') sign = -1.0;
    text.remove_prefix(1);
  }
  if (text.empty()) return invalid();
  double total = 0.0;
  bool any_unit = false;
  while (!text.empty()) {
    size_t digits = 0;
    while (digits < text.size() && (is_digit(text[digits]) || text[digits] == '.')) ++digits;
    if (digits == 0) return invalid();
    const std::string number(text.substr(0, digits));
    if (number.find('.') != number.rfind('.') || number == ".") return invalid();
    const double value = std::strtod(number.c_str(), nullptr);
    text.remove_prefix(digits);
    if (text.empty()) {
      // A bare number ("300") is seconds, as Ollama reads numbers; "1h30" is not a duration.
      if (any_unit) return invalid();
      total += value * 1e9;
      break;
    }
    const Unit* unit = nullptr;
    for (const Unit& candidate : kUnits) {
      if (text.substr(0, candidate.suffix.size()) == candidate.suffix) {
        // "m" must not swallow the "m" of "ms".
        if (candidate.suffix == "m" && text.size() > 1 && text[1] == 's') continue;
        unit = &candidate;
        break;
      }
    }
    if (unit == nullptr) return invalid();
    text.remove_prefix(unit->suffix.size());
    total += value * unit->nanoseconds;
    any_unit = true;
  }
  return clamp(sign * total);
}

Result<KeepAlive> parse_keep_alive(const nlohmann::ordered_json& value, std::string_view field) {
  if (value.is_number()) {
    const double seconds = value.get<double>();
    if (!std::isfinite(seconds)) return make_error(ErrorCode::kInvalidArgument, field, " must be finite");
    return clamp(seconds * 1e9);
  }
  if (value.is_string()) {
    auto duration = parse_duration(value.get<std::string>());
    if (!duration) return duration.error().with_context(std::string(field));
    return duration;
  }
  return make_error(ErrorCode::kInvalidArgument, field,
                    " must be a duration string such as \"5m\" or a number of seconds, got ",
                    value.type_name());
}

std::string format_rfc3339(std::chrono::system_clock::time_point time) {
  const auto since_epoch = time.time_since_epoch();
  const auto seconds = std::chrono::floor<std::chrono::seconds>(since_epoch);
  const auto nanoseconds =
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count();
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &utc);
  char fraction[16];
  std::snprintf(fraction, sizeof(fraction), ".%09lldZ", static_cast<long long>(nanoseconds));
  return std::string(date) + fraction;
}

}  // namespace sinter::server
