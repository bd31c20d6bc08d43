#include "core/memory_info.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace sinter {
namespace {

std::optional<std::string> read_small_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::optional<uint64_t> parse_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

// What the cgroup's limit leaves of its memory, or empty when it has no limit or none is found.
std::optional<uint64_t> cgroup_headroom(const char* limit_path, const char* usage_path) {
  const auto limit_text = read_small_file(limit_path);
  const auto usage_text = read_small_file(usage_path);
  if (!limit_text || !usage_text) return std::nullopt;
  const auto limit = parse_cgroup_bytes(*limit_text);
  const auto usage = parse_cgroup_bytes(*usage_text);
  if (!limit || !usage) return std::nullopt;
  // cgroup v1 reports "no limit" as a huge page-rounded number rather than "max".
  if (*limit >= (uint64_t{1} << 62)) return std::nullopt;
  return *limit > *usage ? *limit - *usage : 0;
}

}  // namespace

std::optional<uint64_t> parse_meminfo_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  size_t at = 0;
  while (at < meminfo.size()) {
    const size_t line_end = std::min(meminfo.find('\n', at), meminfo.size());
    const std::string_view line = meminfo.substr(at, line_end - at);
    if (line.substr(0, kKey.size()) == kKey) {
      const auto kib = parse_number(line.substr(kKey.size()));
      if (!kib || *kib > UINT64_MAX / 1024) return std::nullopt;
      return *kib * 1024;  // the file says "kB" and means KiB
    }
    at = line_end + 1;
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_cgroup_bytes(std::string_view text) {
  if (text.substr(0, 3) == "max") return std::nullopt;
  return parse_number(text);
}

std::optional<AvailableMemory> available_memory() {
  std::optional<AvailableMemory> best;
  if (const auto meminfo = read_small_file("/proc/meminfo")) {
    if (const auto bytes = parse_meminfo_available(*meminfo))
      best = AvailableMemory{*bytes, "MemAvailable in /proc/meminfo"};
  }
  const auto consider = [&](std::optional<uint64_t> bytes, const char* source) {
    if (bytes && (!best || *bytes < best->bytes)) best = AvailableMemory{*bytes, source};
  };
  consider(cgroup_headroom("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
           "the cgroup's memory.max less its memory.current");
  consider(cgroup_headroom("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                           "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
           "the cgroup's memory limit less its usage");
  return best;
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000) return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1000.0 && unit + 1 < std::size(kUnits)) {
    value /= 1000.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text,
                value < 10    ? "%.2f %s"
                : value < 100 ? "%.1f %s"
                              : "%.0f %s",
                value, kUnits[unit]);
  return text;
}

}  // namespace sinter
