// The KV cache: keys and values of every KV layer of a model, for up to 64 sequences, in pools
// (memory/kv_pool.h) of the layers that share one attention window (llama.cpp's iSWA cache).
//
// Pool 0 holds the full-attention layers and has n_ctx cells: it is the context, and every
// count without a pool (cell_count, used_cells, free_cells, high_water, min/max_position,
// sequence_cells) is its. It exists even when every layer has a window, then without layers
// (cells' bookkeeping only): it records which positions each sequence holds. Each distinct
// window W > 0 has a pool of min(n_ctx, W·n_seq_max + n_batch) cells, so that a windowed
// layer's memory does not grow with the context.
//
// Every sequence edit (place, remove, copy, shift, clear) applies to all pools. Before a
// place(), a windowed pool drops each placed sequence's cells that no token at or after the
// sequence's smallest placed position p_min can see (positions <= p_min - W); when that leaves
// too few free cells, also the cells of the other sequences that their next position
// (max_position + 1) cannot see. Then W - 1 cells per sequence plus the batch always fit.
// A symmetric window (WindowKind) sees back only W/2 positions: the same drops are safe for it
// (they keep a little more than it needs), and the tokens ahead that it sees are those of the
// same pass (a non-causal model computes an input in one pass).
//
// A dropped cell cannot be brought back: a sequence cut back to an earlier position may have
// lost cells a token there would see. resumable_prefix() says where a sequence can resume
// exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "memory/kv_pool.h"
#include "memory/sequence_memory.h"

namespace sinter {

struct KvCacheOptions {
  std::vector<KvLayerShape> layers;  // one per KV layer of the model
  std::vector<int32_t> windows;      // per layer: sliding window, 0: full attention (empty: all 0)
  int32_t n_ctx = 0;                 // cells of the full pool: the context
  int32_t n_seq_max = 1;             // sequences holding cells at once (sizes windowed pools)
  int32_t n_batch = 512;             // most tokens one place() adds
  DType type = DType::F16;
  WindowKind window_kind = WindowKind::kTrailing;  // of every window (a model has one kind)
};

// One pool as create() would make it.
struct KvPoolPlan {
  int32_t window = 0;  // 0: full attention
  WindowKind window_kind = WindowKind::kTrailing;
  int32_t cells = 0;
  std::vector<int> layers;  // the model's KV layer indices
  uint64_t bytes = 0;       // keys and values
};

class KvCache final : public SequenceMemory {
 public:
  // The pools of a cache with these options: pool 0 has window 0, then one pool per distinct
  // window in increasing order. Refuses a context outside 1..kMaxCacheCells, negative windows,
  // a window list of another length than the layers, n_seq_max outside 1..kMaxSequences.
  static Result<std::vector<KvPoolPlan>> plan(const KvCacheOptions& options);
  // The keys and values live in buffers of `backend` (BufferUsage::kCache). A null backend
  // makes a cache with shapes but no memory (and no cells: place() refuses): enough to build
  // and plan graphs for memory estimates, never to run them.
  static Result<std::unique_ptr<KvCache>> create(const KvCacheOptions& options, Backend* backend);
  // Every layer full: one pool of `cells` cells.
  static Result<std::unique_ptr<KvCache>> create(const std::vector<KvLayerShape>& layers, int32_t cells,
                                                 DType type, Backend* backend);
  ~KvCache() override;
  // Bytes a cache of this shape takes (0 for options plan() refuses).
  static size_t bytes_for(const KvCacheOptions& options);
  static size_t bytes_for(const std::vector<KvLayerShape>& layers, int32_t cells, DType type);
  // Bytes of the cells' bookkeeping at most, over all pools.
  static size_t bookkeeping_bytes_for(const KvCacheOptions& options);
  static size_t bookkeeping_bytes_for(int32_t cells);

  // The full pool's (the context's) cells.
  int32_t cell_count() const override { return full().cell_count(); }
  // Sequences the cache was sized for; cell_count() / n_seq_max() is one sequence's context.
  int32_t n_seq_max() const override { return n_seq_max_; }
  int32_t used_cells() const override { return full().used_cells(); }
  int32_t free_cells() const override { return full().free_cells(); }
  // Cells [high_water(), cell_count()) have never held a token: their memory is untouched.
  int32_t high_water() const { return full().high_water(); }
  DType type() const { return type_; }
  size_t bytes() const override;  // every pool's
  // The model's KV layers: keys(layer) / values(layer) are [head_dim, cells of its pool, heads],
  // row(cell, head).
  int layer_count() const { return static_cast<int>(layer_pool_.size()); }
  Tensor* keys(int layer) { return pool(layer_pool_[static_cast<size_t>(layer)]).keys(local(layer)); }
  Tensor* values(int layer) { return pool(layer_pool_[static_cast<size_t>(layer)]).values(local(layer)); }
  // The backend whose buffers hold the keys and values (null for a shapes-only cache).
  std::string_view backend() const;

  int pool_count() const { return static_cast<int>(pools_.size()); }
  int pool_of(int layer) const { return layer_pool_[static_cast<size_t>(layer)]; }
  int32_t pool_window(int p) const { return pool(p).window(); }
  WindowKind pool_window_kind(int p) const { return pool(p).window_kind(); }
  int32_t pool_cells(int p) const { return pool(p).cell_count(); }
  int32_t pool_used_cells(int p) const { return pool(p).used_cells(); }
  int32_t pool_high_water(int p) const { return pool(p).high_water(); }
  int pool_layer_count(int p) const { return pool(p).layer_count(); }
  size_t pool_bytes(int p) const { return pool(p).bytes(); }

  // Moves the keys and values into buffers of another backend: the cells keep their tokens
  // (only cells below each pool's high water are copied). On error the cache is unchanged.
  Status move_to(Backend& backend) override;

  // Gives every token a free cell in every pool (recording its sequence and position), after
  // the windowed pools dropped what no token can see any more; or kContextFull with nothing
  // changed. A (sequence, position) already cached is an error. Writes the full pool's cells to
  // *slots (its capacity reused: nothing is allocated per generated token); placed(pool) are
  // each pool's, until the next place().
  Status place(std::span<const CacheToken> tokens, std::vector<int32_t>* slots);
  Result<std::vector<int32_t>> place_cells(std::span<const CacheToken> tokens);
  std::span<const int32_t> placed(int p) const { return pool(p).placed(); }

  // The positions the cells of pool p hold (KvPool::positions_of).
  void positions_of(int p, std::span<const int32_t> cells, int32_t* out) const {
    pool(p).positions_of(cells, out);
  }
  // The cells of a pool each token may attend to: same sequence, position ≤ its own (causal) or
  // any (non-causal), and within the pool's window (trailing or symmetric).
  void fill_attention_index(int p, std::span<const CacheToken> tokens, bool causal,
                            AttentionIndex* index) const;
  // The full pool's cells, within `window` positions when window > 0.
  void fill_attention_index(std::span<const CacheToken> tokens, bool causal, int32_t window,
                            AttentionIndex* index) const;

  // Position-range edits of every pool; p1 < 0 means "to the end". Ranges are half-open [p0, p1).
  void remove(SequenceId sequence, Position p0, Position p1) override;
  // dst shares src's cells in [p0, p1) (no bytes copied): a forked or common prefix.
  void copy(SequenceId src, SequenceId dst, Position p0, Position p1) override;
  // Adds `delta` to the positions of sequence's cells in [p0, p1); their keys must be rotated
  // by the same delta (pending_shift / clear_pending_shift) before the next forward pass. A cell
  // shared with another sequence is copied first; where a pool has no free cell for that, the
  // shared positions stay where they are, in every pool.
  void shift(SequenceId sequence, Position p0, Position p1, Position delta) override;
  void clear() override;

  // The largest p <= wanted at which `sequence` can resume exactly: a token at p finds every
  // cell it may see (in each windowed pool, the cells of the positions max(0, p - W + 1)..p - 1
  // that the full pool holds). `wanted` when no pool has a window; 0 means from scratch.
  Position resumable_prefix(SequenceId sequence, Position wanted) const override;

  bool has_pending_shift() const;
  // Per-cell position deltas not yet applied to a pool's keys ([pool_cells(p)]; 0 past its high
  // water).
  std::span<const int32_t> pending_shift(int p = 0) const { return pool(p).pending_shift(); }
  void clear_pending_shift();

  // Smallest / largest cached position of a sequence, or -1 when it has none.
  Position min_position(SequenceId sequence) const;
  Position max_position(SequenceId sequence) const override;
  int32_t sequence_cells(SequenceId sequence) const;

  // The attention index of pool p that prepare_pass() made for the placed tokens.
  const AttentionIndex& pass_index(int p) const { return pass_indices_[static_cast<size_t>(p)]; }

  // SequenceMemory's own (the rest is above).
  int64_t prepare_pass(std::span<const CacheToken> tokens, bool causal) override;
  std::string_view kind() const override { return "kv cache"; }
  Status place(std::span<const CacheToken> tokens) override { return place(tokens, &placed_full_); }
  void unplace(std::span<const CacheToken> tokens) override;
  bool can_shift() const override { return true; }
  KvCache* kv() override { return this; }
  RecurrentState* recurrent() override { return nullptr; }

 private:
  KvCache() = default;
  KvPool& pool(int p) { return *pools_[static_cast<size_t>(p)]; }
  const KvPool& pool(int p) const { return *pools_[static_cast<size_t>(p)]; }
  const KvPool& full() const { return *pools_.front(); }
  int local(int layer) const { return layer_local_[static_cast<size_t>(layer)]; }
  // The largest p <= wanted that pool p (windowed) lets the sequence resume at.
  Position resumable_in(int p, SequenceId sequence, Position wanted) const;

  DType type_ = DType::F16;
  std::vector<std::unique_ptr<KvPool>> pools_;
  std::vector<int> layer_pool_;                           // per model KV layer: its pool
  std::vector<int> layer_local_;                          // per model KV layer: its index in the pool
  std::vector<std::pair<SequenceId, Position>> placing_;  // place()'s batch, sorted to find repeats
  std::vector<PruneBounds> prune_;                        // place()'s drops, per pool
  std::vector<Position> staying_;                         // shift()'s shared positions that stay
  std::vector<int32_t> placed_full_;                      // place()'s full-pool cells
  std::vector<AttentionIndex> pass_indices_;              // prepare_pass()'s, per pool
  int32_t n_seq_max_ = 1;
};

}  // namespace sinter
