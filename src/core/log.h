// One-line logs with the subsystem first: "sinter gguf: loaded 12 tensors".
// The level comes from SINTER_LOG (error, warn, info, debug); the default is warn.
#pragma once

#include <string>

#include "sinter/result.h"

namespace sinter {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

LogLevel log_level();
void set_log_level(LogLevel level);
void log_line(LogLevel level, const char* subsystem, const std::string& message);

template <class... Args>
void log_warn(const char* subsystem, const Args&... args) {
  if (log_level() >= LogLevel::kWarn) log_line(LogLevel::kWarn, subsystem, concat(args...));
}
template <class... Args>
void log_info(const char* subsystem, const Args&... args) {
  if (log_level() >= LogLevel::kInfo) log_line(LogLevel::kInfo, subsystem, concat(args...));
}
template <class... Args>
void log_debug(const char* subsystem, const Args&... args) {
  if (log_level() >= LogLevel::kDebug) log_line(LogLevel::kDebug, subsystem, concat(args...));
}

}  // namespace sinter
