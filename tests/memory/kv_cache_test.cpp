#include "memory/kv_cache.h"

#include <gtest/gtest.h>

#include <cstring>

namespace sinter {
namespace {

// The cache's memory comes from a backend.
Backend* cpu_backend() {
  static const std::unique_ptr<Backend> backend = create_backend("cpu", BackendOptions{1}).value();
  return backend.get();
}

std::unique_ptr<KvCache> make_cache(int32_t cells) {
  auto cache = KvCache::create({{16, 16, 2}, {16, 16, 2}}, cells, DType::F16, cpu_backend());  // 2 heads of 8
  EXPECT_TRUE(cache);
  return std::move(cache).value();
}

std::vector<CacheToken> tokens(SequenceId s, Position from, Position to) {
  std::vector<CacheToken> out;
  for (Position p = from; p < to; ++p) out.push_back({s, p});
  return out;
}

TEST(KvCache, PlacesTokensAndRefusesWhenFull) {
  auto cache = make_cache(10);
  ASSERT_TRUE(cache->place(tokens(0, 0, 6)));
  EXPECT_EQ(cache->used_cells(), 6);
  auto full = cache->place(tokens(1, 0, 5));
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code(), ErrorCode::kContextFull);
  EXPECT_EQ(cache->used_cells(), 6);            // nothing changed
  EXPECT_FALSE(cache->place(tokens(0, 5, 6)));  // position 5 of sequence 0 is already cached
  EXPECT_FALSE(cache->place({{CacheToken{64, 0}}}));
}

TEST(KvCache, AttentionIndexIsCausalPerSequenceInPositionOrder) {
  auto cache = make_cache(16);
  // Interleave two sequences so that their cells alternate.
  for (Position p = 0; p < 4; ++p) {
    ASSERT_TRUE(cache->place({{CacheToken{1, p}, CacheToken{0, p}}}));
  }
  const std::vector<CacheToken> batch = {{0, 3}, {1, 2}, {0, 1}};
  AttentionIndex index;
  cache->fill_attention_index(batch, /*causal=*/true, /*window=*/0, &index);
  const auto cells_of = [&](size_t t) {
    return std::vector<int32_t>(index.cells.begin() + index.begin[t], index.cells.begin() + index.end[t]);
  };
  // Sequence 0 sits in cells 1, 3, 5, 7; sequence 1 in 0, 2, 4, 6.
  EXPECT_EQ(cells_of(0), (std::vector<int32_t>{1, 3, 5, 7}));
  EXPECT_EQ(cells_of(1), (std::vector<int32_t>{0, 2, 4}));
  EXPECT_EQ(cells_of(2), (std::vector<int32_t>{1, 3}));
  cache->fill_attention_index(batch, true, /*window=*/2, &index);
  EXPECT_EQ(cells_of(0), (std::vector<int32_t>{5, 7}));  // positions 2 and 3
  cache->fill_attention_index(batch, /*causal=*/false, 0, &index);
  EXPECT_EQ(cells_of(2), (std::vector<int32_t>{1, 3, 5, 7}));
}

TEST(KvCache, RemoveCopyAndShift) {
  auto cache = make_cache(16);
  ASSERT_TRUE(cache->place(tokens(0, 0, 8)));
  cache->copy(0, 1, 0, 4);  // sequence 1 shares the first four cells
  EXPECT_EQ(cache->used_cells(), 8);
  EXPECT_EQ(cache->sequence_cells(1), 4);
  cache->remove(0, 0, 2);  // still held by sequence 1
  EXPECT_EQ(cache->used_cells(), 8);
  cache->remove(1, 0, 2);  // now free
  EXPECT_EQ(cache->used_cells(), 6);
  EXPECT_EQ(cache->min_position(0), 2);

  // Shifting positions 4..7 of sequence 0 down by 2 moves only sequence 0's cells.
  cache->shift(0, 4, -1, -2);
  EXPECT_TRUE(cache->has_pending_shift());
  EXPECT_EQ(cache->max_position(0), 5);
  EXPECT_EQ(cache->max_position(1), 3);
  cache->clear_pending_shift();
  EXPECT_FALSE(cache->has_pending_shift());
}

TEST(KvCache, ShiftOfASharedCellGivesTheMovingSequenceItsOwnCopy) {
  auto cache = make_cache(8);
  ASSERT_TRUE(cache->place(tokens(0, 0, 2)));
  // Recognizable bytes in cell 1 of both layers and heads.
  for (int layer = 0; layer < 2; ++layer) {
    for (int head = 0; head < 2; ++head) {
      std::memset(cache->keys(layer)->row(1, head), 0x11 + layer + 4 * head, cache->keys(layer)->row_bytes());
      std::memset(cache->values(layer)->row(1, head), 0x22 + layer + 4 * head,
                  cache->values(layer)->row_bytes());
    }
  }
  cache->copy(0, 1, 0, 2);
  cache->shift(1, 1, 2, 5);  // sequence 1's position 1 becomes 6; sequence 0 keeps position 1
  EXPECT_EQ(cache->max_position(0), 1);
  EXPECT_EQ(cache->max_position(1), 6);
  EXPECT_EQ(cache->used_cells(), 3);
  // The new cell carries the same bytes.
  AttentionIndex index;
  const std::vector<CacheToken> probe = {{1, 6}};
  cache->fill_attention_index(probe, true, 0, &index);
  const int32_t moved = index.cells[static_cast<size_t>(index.end[0] - 1)];
  EXPECT_NE(moved, 1);
  for (int layer = 0; layer < 2; ++layer) {
    for (int head = 0; head < 2; ++head) {
      for (const Tensor* t : {cache->keys(layer), cache->values(layer)})
        EXPECT_EQ(std::memcmp(t->row(moved, head), t->row(1, head), t->row_bytes()), 0)
            << layer << " " << head;
    }
  }
  EXPECT_EQ(cache->pending_shift()[static_cast<size_t>(moved)], 5);
  EXPECT_EQ(cache->pending_shift()[1], 0);
}

// Each layer's keys and values are stored head by head: one head's rows of all cells together.
TEST(KvCache, StoresEachHeadsRowsTogether) {
  auto created =
      KvCache::create({{12, 8, 4}}, 5, DType::F16, cpu_backend());  // 4 heads: keys of 3, values of 2
  ASSERT_TRUE(created);
  KvCache& cache = *created.value();
  const Tensor& k = *cache.keys(0);
  const Tensor& v = *cache.values(0);
  EXPECT_EQ(k.ne, (std::array<int64_t, kMaxDims>{3, 5, 4, 1}));
  EXPECT_EQ(v.ne, (std::array<int64_t, kMaxDims>{2, 5, 4, 1}));
  EXPECT_EQ(k.nb[1], 3 * sizeof(uint16_t));
  EXPECT_EQ(k.nb[2], 5 * k.nb[1]);
  EXPECT_EQ(v.row(0), k.row(0) + k.bytes());  // values after the layer's keys
  EXPECT_EQ(cache.bytes(), k.bytes() + v.bytes());
  auto uneven = KvCache::create({{12, 8, 5}}, 5, DType::F16, cpu_backend());
  ASSERT_FALSE(uneven);
  EXPECT_EQ(uneven.error().code(), ErrorCode::kInvalidArgument);
}

TEST(KvCache, ShiftBeforeTheStartDropsTokens) {
  auto cache = make_cache(8);
  ASSERT_TRUE(cache->place(tokens(0, 0, 4)));
  cache->shift(0, 0, -1, -2);
  EXPECT_EQ(cache->used_cells(), 2);
  EXPECT_EQ(cache->min_position(0), 0);
  EXPECT_EQ(cache->max_position(0), 1);
}

}  // namespace
}  // namespace sinter
