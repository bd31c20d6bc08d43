#include "chat/jinja/errors.h"

namespace sinter::chat::jinja {

Error type_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "TypeError: " + message);
}
Error value_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "ValueError: " + message);
}
Error undefined_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "UndefinedError: " + message);
}
Error security_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "SecurityError: " + message);
}
Error zero_division_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "ZeroDivisionError: " + message);
}
Error overflow_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "OverflowError: " + message);
}
Error index_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "IndexError: " + message);
}
Error key_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "KeyError: " + message);
}
Error raised_error(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }
Error limit_error(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, "template limit exceeded: " + message);
}
Error unsupported_error(const std::string& message) {
  return Error(ErrorCode::kUnsupported, "not supported by sinter: " + message);
}
Error syntax_error(SourceLocation where, const std::string& message) {
  return locate(Error(ErrorCode::kFormat, "TemplateSyntaxError: " + message), where);
}
Error locate(const Error& error, SourceLocation where) {
  return Error(error.code(), concat("line ", where.line, ", column ", where.column, ": ", error.message()));
}

}  // namespace sinter::chat::jinja
