// The KV cache's pools: one per distinct attention window, the windowed ones sized by the
// window (not the context), dropping what no token can see any more, and in step with the
// full pool through every edit.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "memory/kv_cache.h"

namespace sinter {
namespace {

Backend* backend(const char* name = "cpu") {
  static std::map<std::string, std::unique_ptr<Backend>> backends;
  auto& b = backends[name];
  if (!b) b = create_backend(name, BackendOptions{1}).value();
  return b.get();
}

constexpr KvLayerShape kLayer{16, 16, 2};  // 2 heads of 8

KvCacheOptions options_for(std::vector<int32_t> windows, int32_t n_ctx, int32_t n_seq_max, int32_t n_batch) {
  KvCacheOptions o;
  o.layers.assign(windows.size(), kLayer);
  o.windows = std::move(windows);
  o.n_ctx = n_ctx;
  o.n_seq_max = n_seq_max;
  o.n_batch = n_batch;
  return o;
}

std::unique_ptr<KvCache> make(const KvCacheOptions& o) {
  auto cache = KvCache::create(o, backend());
  EXPECT_TRUE(cache) << cache.error().message();
  return std::move(cache).value();
}

std::vector<CacheToken> tokens(SequenceId s, Position from, Position to) {
  std::vector<CacheToken> out;
  for (Position p = from; p < to; ++p) out.push_back({s, p});
  return out;
}

TEST(KvPools, OnePoolPerWindowWithSizesByTheRule) {
  auto cache = make(options_for({0, 8, 0, 16, 8}, 1000, 2, 32));
  ASSERT_EQ(cache->pool_count(), 3);
  EXPECT_EQ(cache->pool_window(0), 0);
  EXPECT_EQ(cache->pool_window(1), 8);
  EXPECT_EQ(cache->pool_window(2), 16);
  EXPECT_EQ((std::vector<int>{cache->pool_of(0), cache->pool_of(1), cache->pool_of(2), cache->pool_of(3),
                              cache->pool_of(4)}),
            (std::vector<int>{0, 1, 0, 2, 1}));
  EXPECT_EQ(cache->pool_cells(0), 1000);        // the context
  EXPECT_EQ(cache->pool_cells(1), 8 * 2 + 32);  // window · sequences + batch
  EXPECT_EQ(cache->pool_cells(2), 16 * 2 + 32);
  EXPECT_EQ(cache->cell_count(), 1000);
  // A layer's tensors have its pool's cells; bytes add up per pool.
  EXPECT_EQ(cache->keys(1)->ne[1], 48);
  EXPECT_EQ(cache->values(3)->ne[1], 64);
  EXPECT_EQ(cache->keys(2)->ne[1], 1000);
  const size_t per_cell = 2 * 16 * sizeof(uint16_t);  // keys and values of one layer, F16
  EXPECT_EQ(cache->pool_bytes(0), 2 * 1000 * per_cell);
  EXPECT_EQ(cache->pool_bytes(1), 2 * 48 * per_cell);
  EXPECT_EQ(cache->pool_bytes(2), 64 * per_cell);
  EXPECT_EQ(cache->bytes(), (2000 + 96 + 64) * per_cell);
  EXPECT_EQ(KvCache::bytes_for(options_for({0, 8, 0, 16, 8}, 1000, 2, 32)), cache->bytes());

  // A window beyond the context: never more cells than the context.
  EXPECT_EQ(make(options_for({0, 600}, 1000, 2, 32))->pool_cells(1), 1000);
  // No windows: one pool, as a cache of full layers always was.
  auto plain = make(options_for({0, 0}, 100, 4, 32));
  EXPECT_EQ(plain->pool_count(), 1);
  EXPECT_EQ(plain->bytes(), KvCache::bytes_for({kLayer, kLayer}, 100, DType::F16));
  // Every layer windowed: pool 0 has no layers (and no bytes) but still counts the context.
  auto windowed = make(options_for({8, 8}, 1000, 1, 4));
  ASSERT_EQ(windowed->pool_count(), 2);
  EXPECT_EQ(windowed->pool_layer_count(0), 0);
  EXPECT_EQ(windowed->pool_bytes(0), 0u);
  EXPECT_EQ(windowed->cell_count(), 1000);
  EXPECT_EQ(windowed->pool_cells(1), 12);
  ASSERT_TRUE(windowed->place(tokens(0, 0, 4)));
  EXPECT_EQ(windowed->used_cells(), 4);
  EXPECT_EQ(windowed->backend(), "cpu");
}

TEST(KvPools, RefusesBadOptions) {
  EXPECT_FALSE(KvCache::create(options_for({0, -1}, 100, 1, 8), backend()));
  KvCacheOptions mismatched = options_for({0, 8}, 100, 1, 8);
  mismatched.windows.push_back(4);
  EXPECT_FALSE(KvCache::create(mismatched, backend()));
  EXPECT_FALSE(KvCache::create(options_for({0, 8}, 100, 0, 8), backend()));
  EXPECT_FALSE(KvCache::create(options_for({0, 8}, 100, kMaxSequences + 1, 8), backend()));
  EXPECT_FALSE(KvCache::create(options_for({0, 8}, 0, 1, 8), backend()));
  EXPECT_EQ(KvCache::bytes_for(options_for({0, -1}, 100, 1, 8)), 0u);
}

// The memory-constant property: a windowed pool holds the last `window` positions and a batch,
// however long the sequence grows.
TEST(KvPools, WindowedPoolStaysBoundedWhileASequenceGrows) {
  constexpr int32_t kWindow = 8, kBatch = 4;
  auto cache = make(options_for({0, kWindow}, 4096, 1, kBatch));
  const int32_t bound = kWindow + kBatch;
  ASSERT_EQ(cache->pool_cells(1), bound);
  const size_t windowed_bytes = cache->pool_bytes(1);
  Position next = 0;
  for (int step = 0; next + kBatch <= 3000; ++step) {
    const int32_t chunk = step % 5 == 0 ? kBatch : 1;  // prompt-like chunks and single tokens
    ASSERT_TRUE(cache->place(tokens(0, next, next + chunk))) << "at " << next;
    next += chunk;
    ASSERT_LE(cache->pool_used_cells(1), bound);
    // Every position the last token may see is still there.
    EXPECT_GE(cache->pool_used_cells(1), std::min(next, kWindow));
  }
  EXPECT_EQ(cache->used_cells(), next);  // the full pool keeps everything
  EXPECT_LE(cache->pool_high_water(1), bound);
  EXPECT_EQ(cache->pool_bytes(1), windowed_bytes);
  // The windowed pool's size does not depend on the context.
  EXPECT_EQ(make(options_for({0, kWindow}, 100000, 1, kBatch))->pool_bytes(1), windowed_bytes);

  // Two sequences interleaved, each many windows long.
  auto two = make(options_for({0, kWindow}, 4096, 2, kBatch));
  for (Position p = 0; p < 500; ++p) {
    ASSERT_TRUE(two->place({{CacheToken{0, p}, CacheToken{1, p}}}));
    ASSERT_LE(two->pool_used_cells(1), 2 * kWindow + kBatch);
  }
  EXPECT_LE(two->pool_high_water(1), 2 * kWindow + kBatch);
}

// Positions of the cells an index lists for token i, given each cell's position.
std::vector<Position> listed(const AttentionIndex& index, size_t i,
                             const std::map<int32_t, Position>& where) {
  std::vector<Position> out;
  for (int32_t k = index.begin[i]; k < index.end[i]; ++k)
    out.push_back(where.at(index.cells[static_cast<size_t>(k)]));
  return out;
}

// A windowed pool lists exactly the positions a single big pool lists under the same window.
TEST(KvPools, AttentionIndexOfAWindowedPoolListsTheWindow) {
  constexpr int32_t kWindow = 5, kBatch = 4;
  auto cache = make(options_for({0, kWindow}, 400, 3, kBatch));
  auto reference = KvCache::create({kLayer}, 400, DType::F16, backend()).value();
  std::map<int32_t, Position> pooled_at, reference_at;  // cell -> position
  Position next[3] = {0, 0, 0};
  AttentionIndex pooled, expected;
  for (int step = 0; step < 90; ++step) {
    const SequenceId s = step % 3;
    const int32_t chunk = 1 + (step * 7) % kBatch;
    const auto batch = tokens(s, next[s], next[s] + chunk);
    next[s] += chunk;
    ASSERT_TRUE(cache->place(batch));
    auto ref_slots = reference->place_cells(batch);
    ASSERT_TRUE(ref_slots);
    for (size_t i = 0; i < batch.size(); ++i) {
      pooled_at[cache->placed(1)[i]] = batch[i].position;
      reference_at[(*ref_slots)[i]] = batch[i].position;
    }
    cache->fill_attention_index(1, batch, /*causal=*/true, &pooled);
    reference->fill_attention_index(batch, /*causal=*/true, kWindow, &expected);
    for (size_t i = 0; i < batch.size(); ++i) {
      EXPECT_EQ(listed(pooled, i, pooled_at), listed(expected, i, reference_at))
          << "step " << step << " token " << i;
    }
    ASSERT_LE(cache->pool_high_water(1), 3 * kWindow + kBatch);
  }
}

// A symmetric window W (an encoder's local attention) lets a token at p see p − W/2 .. p + W/2
// of its sequence (W/2 rounded down), and only up to p when causal. Across many batches of two
// sequences, the windowed pool lists exactly the positions of the full pool within that range:
// its drops (positions no later token reaches) never take a cell a token sees.
TEST(KvPools, SymmetricWindowListsHalfAWindowEitherSide) {
  for (const int32_t window : {7, 8}) {
    for (const bool causal : {false, true}) {
      SCOPED_TRACE(concat("window ", window, causal ? ", causal" : ", non-causal"));
      const int32_t half = window / 2;
      KvCacheOptions o = options_for({0, window}, 600, 2, 16);
      o.window_kind = WindowKind::kSymmetric;
      auto cache = make(o);
      ASSERT_EQ(cache->pool_count(), 2);
      EXPECT_EQ(cache->pool_window_kind(0), WindowKind::kTrailing);
      EXPECT_EQ(cache->pool_window_kind(1), WindowKind::kSymmetric);
      std::map<int32_t, Position> at;  // the windowed pool's cell -> position
      Position next[2] = {0, 0};
      AttentionIndex index;
      for (int step = 0; step < 60; ++step) {
        const SequenceId s = step % 2;
        const int32_t chunk = 1 + (step * 5) % 16;
        const auto batch = tokens(s, next[s], next[s] + chunk);
        next[s] += chunk;
        ASSERT_TRUE(cache->place(batch));
        for (size_t i = 0; i < batch.size(); ++i) at[cache->placed(1)[i]] = batch[i].position;
        cache->fill_attention_index(1, batch, causal, &index);
        for (size_t i = 0; i < batch.size(); ++i) {
          const Position p = batch[i].position;
          std::vector<Position> expected;  // every position of the sequence within the window
          for (Position q = std::max(0, p - half); q <= std::min(next[s] - 1, causal ? p : p + half); ++q)
            expected.push_back(q);
          ASSERT_EQ(listed(index, i, at), expected) << "step " << step << " position " << p;
        }
      }
    }
  }
}

TEST(KvPools, EditsApplyToEveryPool) {
  auto cache = make(options_for({0, 4}, 64, 2, 10));  // windowed pool: 18 cells
  ASSERT_TRUE(cache->place(tokens(0, 0, 10)));
  EXPECT_EQ(cache->pool_used_cells(1), 10);  // nothing to drop: the batch starts at 0
  ASSERT_TRUE(cache->place(tokens(0, 10, 11)));
  EXPECT_EQ(cache->pool_used_cells(1), 4);  // positions 7..10: what position 10 and later see
  EXPECT_EQ(cache->used_cells(), 11);

  cache->copy(0, 1, 0, 11);  // shared in both pools, no new cells
  EXPECT_EQ(cache->sequence_cells(1), 11);
  EXPECT_EQ(cache->pool_used_cells(1), 4);
  cache->remove(0, 0, -1);  // still held by sequence 1
  EXPECT_EQ(cache->used_cells(), 11);
  EXPECT_EQ(cache->pool_used_cells(1), 4);
  cache->remove(1, 9, -1);
  EXPECT_EQ(cache->used_cells(), 9);
  EXPECT_EQ(cache->pool_used_cells(1), 2);  // positions 7, 8

  cache->shift(1, 5, -1, -2);  // 5..8 become 3..6, in both pools
  EXPECT_TRUE(cache->has_pending_shift());
  EXPECT_EQ(cache->max_position(1), 6);
  const auto moved = [&](int pool) {
    int n = 0;
    for (int32_t delta : cache->pending_shift(pool)) n += delta == -2 ? 1 : 0;
    return n;
  };
  EXPECT_EQ(moved(0), 4);
  EXPECT_EQ(moved(1), 2);
  ASSERT_TRUE(cache->place(tokens(1, 7, 8)));  // the windowed pool sees positions 5, 6 (were 7, 8)
  AttentionIndex index;
  cache->fill_attention_index(1, tokens(1, 7, 8), true, &index);
  EXPECT_EQ(index.end[0] - index.begin[0], 3);  // 5, 6, 7 within the window of 4
  cache->clear_pending_shift();
  EXPECT_FALSE(cache->has_pending_shift());
  EXPECT_EQ(moved(0) + moved(1), 0);
  cache->clear();
  EXPECT_EQ(cache->used_cells(), 0);
  EXPECT_EQ(cache->pool_used_cells(1), 0);
  EXPECT_EQ(cache->max_position(1), -1);
}

TEST(KvPools, ShiftWithoutRoomKeepsThePoolsInStep) {
  auto cache = make(options_for({0, 2}, 4, 1, 2));  // both pools of 4 cells
  ASSERT_TRUE(cache->place(tokens(0, 0, 4)));
  cache->copy(0, 1, 0, 4);
  cache->shift(1, 2, 4, 1);  // 2, 3 are shared and no pool has a free cell: they stay
  EXPECT_FALSE(cache->has_pending_shift());
  EXPECT_EQ(cache->max_position(1), 3);
  EXPECT_EQ(cache->resumable_prefix(1, 4), 4);
  cache->remove(0, 0, -1);
  cache->shift(1, 2, 4, 1);  // sequence 1's own cells now: both pools move them
  EXPECT_EQ(cache->max_position(1), 4);
  EXPECT_EQ(cache->pool_used_cells(0), 4);
  EXPECT_EQ(cache->pool_used_cells(1), 4);
}

TEST(KvPools, ResumablePrefixFollowsWhatThePoolsDropped) {
  auto plain = make(options_for({0, 0}, 64, 1, 8));
  ASSERT_TRUE(plain->place(tokens(0, 0, 20)));
  EXPECT_EQ(plain->resumable_prefix(0, 17), 17);  // no window: anything

  auto cache = make(options_for({0, 4}, 64, 2, 8));
  ASSERT_TRUE(cache->place(tokens(0, 0, 8)));
  for (Position p = 0; p <= 8; ++p) EXPECT_EQ(cache->resumable_prefix(0, p), p);  // nothing dropped yet
  ASSERT_TRUE(cache->place(tokens(0, 8, 9)));                                     // drops 0..4
  EXPECT_EQ(cache->resumable_prefix(0, 9), 9);                                    // sees 6..8
  EXPECT_EQ(cache->resumable_prefix(0, 8), 8);                                    // sees 5..7
  EXPECT_EQ(cache->resumable_prefix(0, 7), 0);  // would see 4: dropped, and so on down
  EXPECT_EQ(cache->resumable_prefix(0, 1), 0);
  EXPECT_EQ(cache->resumable_prefix(0, 12), 12);  // sees 9..11: none cached, nothing missing
  EXPECT_EQ(cache->resumable_prefix(0, 0), 0);
  // A copied prefix resumes where its source does.
  cache->copy(0, 1, 0, 9);
  EXPECT_EQ(cache->resumable_prefix(1, 9), 9);
  EXPECT_EQ(cache->resumable_prefix(1, 7), 0);

  // Holes: a position the full pool does not hold is not needed.
  auto holes = make(options_for({0, 3}, 64, 1, 8));
  ASSERT_TRUE(holes->place(tokens(0, 0, 6)));
  ASSERT_TRUE(holes->place(tokens(0, 9, 10)));    // the windowed pool drops 0..5
  EXPECT_EQ(holes->resumable_prefix(0, 10), 10);  // sees 8, 9: 9 present, 8 never cached
  EXPECT_EQ(holes->resumable_prefix(0, 9), 9);    // sees 7, 8: never cached
  EXPECT_EQ(holes->resumable_prefix(0, 8), 8);    // sees 6, 7: never cached
  EXPECT_EQ(holes->resumable_prefix(0, 7), 0);    // sees 5: dropped; so does 6, and so on down
}

TEST(KvPools, ResumablePrefixAgreesAcrossSeveralWindows) {
  auto cache = make(options_for({0, 2, 6}, 64, 1, 4));
  ASSERT_TRUE(cache->place(tokens(0, 0, 4)));
  ASSERT_TRUE(cache->place(tokens(0, 4, 8)));  // window 2 drops 0..2, window 6 drops nothing
  ASSERT_TRUE(cache->place(tokens(0, 8, 9)));  // window 2 drops ..6, window 6 drops 0..2
  EXPECT_EQ(cache->resumable_prefix(0, 9), 9);
  // 8 needs 7 (window 2) and 3..7 (window 6): present.
  EXPECT_EQ(cache->resumable_prefix(0, 8), 8);
  // 7 needs 6 in the window-2 pool: dropped. 6 then needs 5: dropped ... down to 0.
  EXPECT_EQ(cache->resumable_prefix(0, 7), 0);
}

TEST(KvPools, OtherSequencesLoseOnlyWhatTheirNextTokenCannotSee) {
  auto cache = make(options_for({0, 4}, 64, 2, 8));  // windowed pool: 16 cells
  ASSERT_TRUE(cache->place(tokens(0, 0, 8)));
  ASSERT_TRUE(cache->place(tokens(1, 0, 8)));
  EXPECT_EQ(cache->pool_used_cells(1), 16);
  // Sequence 0 frees its positions 0..4 (5 cells); 8 tokens need 3 more, taken from what
  // sequence 1's next position (8) cannot see: its 0..4.
  ASSERT_TRUE(cache->place(tokens(0, 8, 16)));
  EXPECT_EQ(cache->pool_used_cells(1), 11 + 3);  // 5..15 of sequence 0, 5..7 of sequence 1
  EXPECT_EQ(cache->resumable_prefix(1, 8), 8);
  EXPECT_EQ(cache->resumable_prefix(1, 7), 0);
  EXPECT_EQ(cache->resumable_prefix(0, 16), 16);
}

// A refused place() changes no pool: not the drops it would have made either.
TEST(KvPools, RefusedPlaceLeavesEveryPoolUnchanged) {
  auto cache = make(options_for({0, 4}, 64, 1, 2));  // windowed pool: 6 cells
  ASSERT_TRUE(cache->place(tokens(0, 0, 2)));
  ASSERT_TRUE(cache->place(tokens(1, 0, 2)));
  ASSERT_TRUE(cache->place(tokens(2, 0, 2)));  // more sequences than sized for: the pool is full
  ASSERT_EQ(cache->pool_used_cells(1), 6);
  const auto snapshot = [&] {
    std::vector<int32_t> state = {cache->used_cells(), cache->pool_used_cells(1), cache->pool_high_water(1)};
    for (SequenceId s = 0; s < 4; ++s) {
      state.push_back(cache->sequence_cells(s));
      state.push_back(cache->resumable_prefix(s, 2));
    }
    return state;
  };
  const auto before = snapshot();
  // Sequence 0 at 5..7 would drop its 0..1 (2 cells) but needs 3: refused, nothing dropped.
  auto full = cache->place(tokens(0, 5, 8));
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code(), ErrorCode::kContextFull);
  EXPECT_EQ(snapshot(), before);
  auto fourth = cache->place(tokens(3, 0, 1));
  ASSERT_FALSE(fourth);
  EXPECT_EQ(fourth.error().code(), ErrorCode::kContextFull);
  EXPECT_EQ(snapshot(), before);
  // A bad batch is refused before anything is dropped.
  EXPECT_FALSE(cache->place({{CacheToken{0, 9}, CacheToken{0, 1}}}));  // 1 is cached
  EXPECT_EQ(snapshot(), before);
  // The full pool refuses too, with every pool unchanged.
  auto small = make(options_for({0, 4}, 6, 1, 2));
  ASSERT_TRUE(small->place(tokens(0, 0, 5)));
  const int32_t windowed = small->pool_used_cells(1);
  EXPECT_FALSE(small->place(tokens(0, 5, 7)));
  EXPECT_EQ(small->pool_used_cells(1), windowed);
  EXPECT_EQ(small->used_cells(), 5);
  // Once sequence 0 is done, there is room again.
  cache->remove(0, 0, -1);
  EXPECT_TRUE(cache->place(tokens(3, 0, 2)));
}

TEST(KvPools, MoveToMovesEveryPool) {
  auto cache = make(options_for({0, 4}, 32, 1, 4));
  ASSERT_TRUE(cache->place(tokens(0, 0, 3)));
  for (int layer = 0; layer < 2; ++layer) {
    Tensor* k = cache->keys(layer);
    std::memset(k->row(cache->placed(cache->pool_of(layer))[2], 1), 0x40 + layer, k->row_bytes());
  }
  ASSERT_TRUE(cache->move_to(*backend("reference")));
  EXPECT_EQ(cache->backend(), "reference");
  for (int layer = 0; layer < 2; ++layer) {
    const Tensor* k = cache->keys(layer);
    const auto* row = static_cast<const uint8_t*>(k->row(cache->placed(cache->pool_of(layer))[2], 1));
    EXPECT_EQ(row[0], 0x40 + layer) << layer;
  }
}

}  // namespace
}  // namespace sinter
