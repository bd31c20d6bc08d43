// The KV cache commits memory as it fills: a cache of a million cells holding a few tokens
// costs the RAM of those tokens (and a huge page per head plane where huge pages are on), not
// the whole cache; freed cells are reused before untouched ones.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "memory/kv_cache.h"

namespace sinter {
namespace {

// The cache's memory comes from a backend.
Backend* cpu_backend() {
  static const std::unique_ptr<Backend> backend = create_backend("cpu", BackendOptions{1}).value();
  return backend.get();
}

// Resident bytes of this process (/proc/self/statm), or 0 where it cannot be read.
uint64_t resident_bytes() {
  FILE* file = std::fopen("/proc/self/statm", "r");
  if (file == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int read = std::fscanf(file, "%llu %llu", &size, &resident);
  std::fclose(file);
  return read == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

std::vector<CacheToken> tokens(SequenceId s, Position from, Position to) {
  std::vector<CacheToken> out;
  for (Position p = from; p < to; ++p) out.push_back({s, p});
  return out;
}

TEST(LazyKvCache, AFewTokensInAMillionCellsCommitLittleMemory) {
  ASSERT_GT(resident_bytes(), 0u) << "/proc/self/statm";
  // 2 layers of 4 heads of 16: 512 bytes of F16 keys and values per cell, 512 MiB for 2^20 cells.
  const std::vector<KvLayerShape> layers = {{64, 64, 4}, {64, 64, 4}};
  constexpr int32_t kCells = 1 << 20;
  const uint64_t before = resident_bytes();
  auto cache = KvCache::create(layers, kCells, DType::F16, cpu_backend());
  ASSERT_TRUE(cache) << cache.error().message();
  ASSERT_EQ((*cache)->bytes(), size_t{512} << 20);
  // Place and write two tokens, as a forward pass stores their keys and values.
  auto slots = (*cache)->place_cells(tokens(0, 0, 2));
  ASSERT_TRUE(slots);
  for (int layer = 0; layer < (*cache)->layer_count(); ++layer) {
    for (Tensor* t : {(*cache)->keys(layer), (*cache)->values(layer)}) {
      for (int32_t cell : *slots)
        for (int64_t head = 0; head < t->ne[2]; ++head) std::memset(t->row(cell, head), 0x3c, t->row_bytes());
    }
  }
  AttentionIndex index;
  (*cache)->fill_attention_index(tokens(0, 1, 2), true, 0, &index);
  (*cache)->remove(0, 1, -1);
  (*cache)->clear();
  const uint64_t grown = resident_bytes() - before;
  // 16 head planes, each at most a 2 MiB huge page, plus the first pages of the bookkeeping.
  EXPECT_LT(grown, uint64_t{64} << 20) << "resident memory grew by " << grown << " bytes";
}

TEST(LazyKvCache, UnwrittenCellsReadAsZero) {
  auto cache = KvCache::create({{16, 16, 2}}, 5000, DType::F32, cpu_backend());
  ASSERT_TRUE(cache);
  const Tensor* keys = (*cache)->keys(0);
  float row[8];
  ASSERT_EQ(keys->row_bytes(), sizeof row);
  std::memcpy(row, keys->row(4999, 1), sizeof row);
  for (float value : row) EXPECT_EQ(value, 0.0f);
}

TEST(LazyKvCache, FreedCellsAreReusedBeforeUntouchedOnes) {
  auto cache = KvCache::create({{16, 16, 2}}, 1000, DType::F16, cpu_backend());
  ASSERT_TRUE(cache);
  KvCache& c = **cache;
  ASSERT_TRUE(c.place(tokens(0, 0, 10)));
  ASSERT_TRUE(c.place(tokens(1, 0, 10)));
  EXPECT_EQ(c.high_water(), 20);
  c.remove(0, 0, -1);  // cells 0..9 are free again
  auto slots = c.place_cells(tokens(2, 0, 12));
  ASSERT_TRUE(slots);
  // The ten freed cells first, then the next two untouched ones.
  EXPECT_EQ(*slots, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 21}));
  EXPECT_EQ(c.high_water(), 22);
  EXPECT_EQ(c.used_cells(), 22);
  c.clear();
  EXPECT_EQ(c.used_cells(), 0);
  auto again = c.place_cells(tokens(3, 0, 3));
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, (std::vector<int32_t>{0, 1, 2}));
}

TEST(LazyKvCache, ShiftedOutAndDetachedCellsKeepTheCountsRight) {
  auto cache = KvCache::create({{16, 16, 2}}, 8, DType::F16, cpu_backend());
  ASSERT_TRUE(cache);
  KvCache& c = **cache;
  ASSERT_TRUE(c.place(tokens(0, 0, 4)));
  c.copy(0, 1, 0, 4);            // sequence 1 shares cells 0..3
  c.shift(1, 0, 4, -2);          // positions 0, 1 of sequence 1 fall out; 2, 3 get own cells
  EXPECT_EQ(c.used_cells(), 6);  // 4 shared by sequence 0, 2 detached copies
  EXPECT_EQ(c.sequence_cells(1), 2);
  EXPECT_EQ(c.min_position(1), 0);
  c.remove(0, 0, -1);
  EXPECT_EQ(c.used_cells(), 2);
  ASSERT_TRUE(c.place(tokens(2, 0, 6)));  // exactly the six free cells
  EXPECT_EQ(c.free_cells(), 0);
  EXPECT_FALSE(c.place(tokens(2, 6, 7)));
}

TEST(KvCacheLimits, RefusesMoreCellsThanTheLimitWithoutAllocating) {
  for (int32_t cells : {kMaxCacheCells + 1, INT32_MAX}) {
    auto cache = KvCache::create({{64, 64, 4}}, cells, DType::F32, cpu_backend());
    ASSERT_FALSE(cache);
    EXPECT_NE(cache.error().message().find("at most 16777216 cells"), std::string::npos)
        << cache.error().message();
  }
  // At the limit, a cache with shapes only (for memory plans) costs nothing.
  auto shapes_only = KvCache::create({{64, 64, 4}}, kMaxCacheCells, DType::F32, /*backend=*/nullptr);
  ASSERT_TRUE(shapes_only);
  EXPECT_EQ((*shapes_only)->cell_count(), kMaxCacheCells);
  EXPECT_EQ((*shapes_only)->bytes(), size_t{512} << 24);  // 8 GiB
  EXPECT_FALSE((*shapes_only)->place(tokens(0, 0, 1)));
  EXPECT_FALSE(KvCache::create({{64, 64, 4}}, 0, DType::F16, cpu_backend()));
  EXPECT_FALSE(KvCache::create({{64, 64, 4}}, -5, DType::F16, cpu_backend()));
}

}  // namespace
}  // namespace sinter
