#include "memory/memory_plan.h"

#include <gtest/gtest.h>

#include "memory/kv_cache.h"

namespace sinter {
namespace {

constexpr uint64_t kGB = 1000ull * 1000 * 1000;

TEST(MemoryPlan, AContextTakesAtMostSevenEighthsOfTheAvailableMemory) {
  EXPECT_EQ(usable_memory(8 * kGB), 7 * kGB);
  EXPECT_EQ(usable_memory(0), 0u);
  ContextMemory need{.n_ctx = 1000, .kv_bytes = 6 * kGB, .bookkeeping_bytes = 0, .compute_bytes = kGB};
  EXPECT_TRUE(check_context_fits(need, AvailableMemory{8 * kGB, "test"}).ok());
  need.compute_bytes = kGB + 1;
  EXPECT_FALSE(check_context_fits(need, AvailableMemory{8 * kGB, "test"}).ok());
}

TEST(MemoryPlan, TheRefusalNamesBothFigures) {
  // stories260K's cache (5 layers, 4 KV heads of 8, F16): 640 bytes a cell.
  const std::vector<KvLayerShape> layers(5, KvLayerShape{32, 32, 4});
  ContextMemory need;
  need.n_ctx = 10000000;
  need.kv_bytes = KvCache::bytes_for(layers, need.n_ctx, DType::F16);
  need.bookkeeping_bytes = KvCache::bookkeeping_bytes_for(need.n_ctx);
  need.compute_bytes = 1234567;
  EXPECT_EQ(need.kv_bytes, 6400000000u);
  const Status status = check_context_fits(need, AvailableMemory{3 * kGB, "MemAvailable in /proc/meminfo"});
  ASSERT_FALSE(status.ok());
  const std::string message = status.error().message();
  EXPECT_NE(message.find("a context of 10000000 tokens needs 6.72 GB"), std::string::npos) << message;
  EXPECT_NE(message.find("KV cache 6.40 GB"), std::string::npos) << message;
  EXPECT_NE(message.find("3.00 GB is available (MemAvailable in /proc/meminfo)"), std::string::npos)
      << message;
  EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument);
}

TEST(MemoryPlan, UnknownAvailableMemoryIsNotAReasonToRefuse) {
  ContextMemory need{.n_ctx = 1, .kv_bytes = UINT64_MAX / 4, .bookkeeping_bytes = 0, .compute_bytes = 0};
  EXPECT_TRUE(check_context_fits(need, std::nullopt).ok());
}

}  // namespace
}  // namespace sinter
