// Errors of the Jinja interpreter, named after the Python exceptions Jinja2 raises in the same
// situation ("TypeError: ...", "UndefinedError: ..."), so that a message reads the same as the
// one Hugging Face's renderer gives. The interpreter prefixes "line L, column C: ".
#pragma once

#include <string>

#include "sinter/result.h"

namespace sinter::chat::jinja {

struct SourceLocation {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, in code points
};

Error type_error(const std::string& message);
Error value_error(const std::string& message);
Error undefined_error(const std::string& message);
Error security_error(const std::string& message);
Error zero_division_error(const std::string& message);
Error overflow_error(const std::string& message);
Error index_error(const std::string& message);
Error key_error(const std::string& message);
// Template code called raise_exception(message): the message is the template author's words.
Error raised_error(const std::string& message);
// A render stopped by a guard against runaway templates (recursion, iterations, output size).
Error limit_error(const std::string& message);
// Valid Jinja that sinter does not implement.
Error unsupported_error(const std::string& message);
Error syntax_error(SourceLocation where, const std::string& message);
// "line L, column C: message".
Error locate(const Error& error, SourceLocation where);

}  // namespace sinter::chat::jinja
