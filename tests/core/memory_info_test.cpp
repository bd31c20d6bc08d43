#include "core/memory_info.h"

#include <gtest/gtest.h>

#include "core/large_buffer.h"
#include "core/thread_pool.h"
#include "core/zeroed_array.h"

namespace sinter {
namespace {

TEST(MemoryInfo, ParsesMemAvailableInKibibytes) {
  const std::string meminfo =
      "MemTotal:       32858736 kB\n"
      "MemFree:         1045016 kB\n"
      "MemAvailable:   24235728 kB\n"
      "Buffers:          123456 kB\n";
  EXPECT_EQ(parse_meminfo_available(meminfo), uint64_t{24235728} * 1024);
  EXPECT_EQ(parse_meminfo_available("MemTotal: 5 kB\n"), std::nullopt);
  EXPECT_EQ(parse_meminfo_available("MemAvailable: lots\n"), std::nullopt);
  EXPECT_EQ(parse_meminfo_available(""), std::nullopt);
}

TEST(MemoryInfo, ParsesCgroupFiles) {
  EXPECT_EQ(parse_cgroup_bytes("4294967296\n"), uint64_t{4294967296});
  EXPECT_EQ(parse_cgroup_bytes("max\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_bytes(""), std::nullopt);
}

TEST(MemoryInfo, AvailableMemoryIsPlausibleOnLinux) {
  const auto available = available_memory();
  if (!available) GTEST_SKIP() << "no /proc/meminfo";
  EXPECT_GT(available->bytes, uint64_t{16} << 20);
  EXPECT_FALSE(available->source.empty());
}

TEST(MemoryInfo, FormatsBytesInDecimalUnits) {
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_bytes(999), "999 bytes");
  EXPECT_EQ(format_bytes(1500), "1.50 kB");
  EXPECT_EQ(format_bytes(6400000000), "6.40 GB");
  EXPECT_EQ(format_bytes(21300000000), "21.3 GB");
  EXPECT_EQ(format_bytes(812000000), "812 MB");
}

TEST(ZeroedBuffers, StartAsZeroWhetherMappedOrFromTheHeap) {
  for (size_t bytes : {size_t{1}, size_t{4096}, 3 * LargeBuffer::kHugePage + 123}) {
    auto buffer = LargeBuffer::allocate_zeroed(bytes);
    ASSERT_TRUE(buffer);
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; ++i) nonzero += buffer->data()[i] != 0;
    EXPECT_EQ(nonzero, 0u) << bytes;
  }
  struct Pair {
    int32_t a;
    uint64_t b;
  };
  auto array = ZeroedArray<Pair>::allocate(1 << 18);
  ASSERT_TRUE(array);
  EXPECT_EQ(array->size(), size_t{1} << 18);
  EXPECT_EQ((*array)[12345].a, 0);
  EXPECT_EQ((*array)[(1 << 18) - 1].b, 0u);
  (*array)[7].b = 9;
  EXPECT_EQ(array->span()[7].b, 9u);
  EXPECT_FALSE(ZeroedArray<Pair>::allocate(SIZE_MAX / 4));
}

TEST(ThreadLimits, AtMostFourPerHardwareThreadAndNeverAboveTheCap) {
  EXPECT_GE(max_thread_count(), 4);
  EXPECT_LE(max_thread_count(), kMaxThreads);
  EXPECT_LE(default_thread_count(), max_thread_count());
  // The pool clamps what its callers should have refused.
  EXPECT_EQ(ThreadPool(0).size(), 1);
  EXPECT_EQ(ThreadPool(-3).size(), 1);
}

}  // namespace
}  // namespace sinter
