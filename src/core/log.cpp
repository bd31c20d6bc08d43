#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sinter {
namespace {

LogLevel level_from_environment() {
  const char* value = std::getenv("SINTER_LOG");
  if (value == nullptr) return LogLevel::kWarn;
  if (std::strcmp(value, "error") == 0) return LogLevel::kError;
  if (std::strcmp(value, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(value, "debug") == 0) return LogLevel::kDebug;
  return LogLevel::kWarn;
}

std::atomic<int>& current_level() {
  static std::atomic<int> level{static_cast<int>(level_from_environment())};
  return level;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warning";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "";
}

}  // namespace

LogLevel log_level() { return static_cast<LogLevel>(current_level().load(std::memory_order_relaxed)); }

void set_log_level(LogLevel level) { current_level().store(static_cast<int>(level)); }

void log_line(LogLevel level, const char* subsystem, const std::string& message) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "sinter %s %s: %s\n", subsystem, level_name(level), message.c_str());
}

}  // namespace sinter
