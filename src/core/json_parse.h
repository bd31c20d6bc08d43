// Parsing JSON that comes from outside (request bodies, files, strings inside requests, model
// output) with two bounds that hold inside the parser, before a deep or huge tree exists:
//
// - nesting depth: every later walk over a tree (conversions to template values, schemas,
//   nlohmann's own dump and copy) recurses, so nothing deeper than the parser admits may reach
//   them; the parser itself (nlohmann's) is iterative.
// - memory: the bytes the tree will take, estimated from nlohmann's allocations as values arrive
//   and charged to a MemoryAccount (the current request's by default), so a 16 MiB body of `[]`
//   stops at its request's limit instead of growing to 400 MB.
//
// JSON from outside goes through parse_json(), never through Json::parse directly.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/memory_budget.h"
#include "sinter/result.h"

namespace sinter {

// Far above real requests (tool schemas nest in the tens) and low enough that a recursive walk
// of this depth uses a small part of a thread's stack.
inline constexpr int kMaxJsonDepth = 128;

struct JsonLimits {
  int max_depth = kMaxJsonDepth;
  // Charged as the tree grows; null: MemoryAccount::current() (which may be none).
  MemoryAccount* account = nullptr;
};

namespace json_detail {

// What one value costs in an nlohmann tree on a 64-bit glibc: its 16-byte slot in the parent's
// vector (twice that after the vector's growth), plus the heap object of a string, array or
// object (32 + 16 bytes of malloc overhead), plus a string's characters beyond the small-string
// buffer. An object member's slot also holds its key (a 32-byte std::string).
inline size_t value_cost(nlohmann::detail::value_t type, size_t string_size) {
  constexpr size_t kSlot = 2 * 16;
  constexpr size_t kHeapObject = 48;
  switch (type) {
    case nlohmann::detail::value_t::string:
      return kSlot + kHeapObject + (string_size > 15 ? string_size + 17 : 0);
    case nlohmann::detail::value_t::array:
    case nlohmann::detail::value_t::object: return kSlot + kHeapObject;
    default: return kSlot;
  }
}

inline size_t key_cost(size_t key_size) { return 2 * 32 + (key_size > 15 ? key_size + 17 : 0); }

// Thrown from the parser's callback to stop it; turned into the Error it carries.
struct Stop {
  Error error;
};

}  // namespace json_detail

// Parses `text` as one JSON value of type J (nlohmann::json or nlohmann::ordered_json).
// kInvalidArgument for malformed JSON ("<what> is not valid JSON: ...") or nesting past
// max_depth ("<what> nests deeper than 128 levels"); the account's kTooLarge/kBusy when the tree
// would not fit.
template <class J>
Result<J> parse_json(std::string_view text, std::string_view what = "the JSON text",
                     const JsonLimits& limits = {}) {
  MemoryAccount* account = limits.account != nullptr ? limits.account : MemoryAccount::current();
  size_t pending = 0;  // cost not yet charged: the account is charged every 64 KiB
  const auto charge = [&](size_t bytes, bool flush) {
    pending += bytes;
    if (account == nullptr || (!flush && pending < (size_t{64} << 10))) return;
    Status status = account->charge(pending);
    pending = 0;
    if (!status) throw json_detail::Stop{std::move(status).error()};
  };
  const typename J::parser_callback_t callback = [&](int depth, typename J::parse_event_t event,
                                                     J& parsed) -> bool {
    switch (event) {
      case J::parse_event_t::object_start:
      case J::parse_event_t::array_start:
        // `depth` counts the containers around this one: the outermost has 0.
        if (depth >= limits.max_depth) {
          throw json_detail::Stop{make_error(ErrorCode::kInvalidArgument, what, " nests deeper than ",
                                             limits.max_depth, " levels")};
        }
        charge(json_detail::value_cost(nlohmann::detail::value_t::object, 0), false);
        break;
      case J::parse_event_t::key:
        charge(json_detail::key_cost(parsed.template get_ref<const std::string&>().size()), false);
        break;
      case J::parse_event_t::value:
        charge(
            json_detail::value_cost(
                parsed.type(), parsed.is_string() ? parsed.template get_ref<const std::string&>().size() : 0),
            false);
        break;
      default: break;
    }
    return true;
  };
  try {
    J value = J::parse(text.data(), text.data() + text.size(), callback);
    charge(0, true);
    return value;
  } catch (const json_detail::Stop& stop) {
    return stop.error;
  } catch (const typename J::exception& e) {  // parse_error; out_of_range for numbers like 1e999
    return make_error(ErrorCode::kInvalidArgument, what, " is not valid JSON: ", e.what());
  }
}

}  // namespace sinter
