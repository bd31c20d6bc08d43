// Result<T> and Error: how every fallible sinter call reports failure.
//
// Library code never throws across its API and never exits on bad input: it returns an Error
// whose message names what was wrong and where (file offset, key, tensor, request field).
#pragma once

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace sinter {

enum class ErrorCode {
  kInvalidArgument,  // the caller passed something unusable (bad option, id out of range)
  kNotFound,         // a file, key, tensor or model that does not exist
  kIo,               // the operating system refused (open, mmap, write, rename)
  kFormat,           // a file's bytes are malformed (truncated, absurd counts, bad offsets)
  kUnsupported,      // well-formed but not something sinter can do (unknown architecture, type)
  kContextFull,      // the context cannot hold the request under the caller's policy
  kCancelled,        // the caller asked to stop
  kBusy,             // a bounded queue or a shared budget is full now: try again later
  kTooLarge,         // an input needs more than its limit allows (memory, counts): never fits
  kInternal,         // a bug in sinter: the message says which invariant broke
};

const char* error_code_name(ErrorCode code);

// Concatenates anything streamable: concat("key ", key, " at offset ", off).
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

class [[nodiscard]] Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // The same error with "context: " in front, for callers that add where it happened.
  Error with_context(const std::string& context) const { return Error(code_, context + ": " + message_); }

 private:
  ErrorCode code_;
  std::string message_;
};

template <class... Args>
Error make_error(ErrorCode code, const Args&... args) {
  return Error(code, concat(args...));
}

template <class T>
class [[nodiscard]] Result {
 public:
  // Implicit on purpose: `return value;` and `return error;` both work in a Result function.
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}      // NOLINT
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { return std::get<1>(state_); }
  Error&& error() && { return std::get<1>(std::move(state_)); }

  template <class U>
  T value_or(U&& fallback) const& {
    return ok() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_{ErrorCode::kInternal, ""};
  bool failed_ = false;
};

using Status = Result<void>;

inline Status ok_status() { return Status(); }

}  // namespace sinter

#define SINTER_CONCAT_INNER(a, b) a##b
#define SINTER_CONCAT(a, b) SINTER_CONCAT_INNER(a, b)

// Returns the error of a failed Result/Status from the enclosing function.
#define SINTER_TRY(expr)                                                   \
  do {                                                                     \
    auto&& sinter_try_result_ = (expr);                                    \
    if (!sinter_try_result_) return std::move(sinter_try_result_).error(); \
  } while (0)

// `SINTER_ASSIGN(auto x, f());` declares x from a successful Result or returns its error.
// It expands to several statements: never use it as the body of an unbraced if/for.
#define SINTER_ASSIGN(lhs, expr) SINTER_ASSIGN_IMPL(SINTER_CONCAT(sinter_assign_, __LINE__), lhs, expr)
#define SINTER_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                       \
  if (!tmp) return std::move(tmp).error(); \
  lhs = std::move(tmp).value()
