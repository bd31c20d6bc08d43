// How much memory this process can still take, for plans that must refuse what does not fit
// before allocating it (the KV cache of a huge context).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sinter {

struct AvailableMemory {
  uint64_t bytes = 0;
  std::string source;  // where the figure comes from, e.g. "MemAvailable in /proc/meminfo"
};

// The smaller of the system's MemAvailable (free memory plus what the kernel can reclaim, such
// as the page cache) and what a cgroup memory limit leaves (v2 memory.max - memory.current, v1
// limit_in_bytes - usage_in_bytes). Empty where neither can be read (not Linux).
std::optional<AvailableMemory> available_memory();

// Parsers of the files above, for tests. parse_meminfo_available("...MemAvailable: 123 kB...")
// is 123 * 1024; a cgroup limit of "max" (no limit) is empty.
std::optional<uint64_t> parse_meminfo_available(std::string_view meminfo);
std::optional<uint64_t> parse_cgroup_bytes(std::string_view text);

// "6.40 GB", "812 MB", "3.5 kB": decimal units, three significant digits at most.
std::string format_bytes(uint64_t bytes);

}  // namespace sinter
