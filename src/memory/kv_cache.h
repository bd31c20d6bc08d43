// The KV cache: per layer, keys and values for each cell, stored head by head (tensors
// [head_dim, cells, heads]: one head's rows of all cells are contiguous, so attention, which
// reads one KV head's cells per call, streams them instead of taking head_dim values every
// heads·head_dim); each cell records the position it holds and the set of sequences that share
// it.
//
// Several sequences live in one cache; a cell shared by a common prefix (after copy()) is
// stored once. Attention never assumes cells are contiguous or in order: for each batch the
// cache lists, per token, the visible cells sorted by position (fill_attention_index).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/large_buffer.h"
#include "core/token.h"
#include "graph/graph.h"
#include "sinter/result.h"

namespace sinter {

constexpr int kMaxSequences = 64;  // sequence ids 0..63 (a cell's sequence set is a 64-bit mask)

struct KvLayerShape {
  int64_t k_row = 0;  // values per cell of keys (head_dim_k * heads)
  int64_t v_row = 0;  // values per cell of values
  int64_t heads = 1;  // KV heads (planes of the layer's tensors)
};

// One token of a batch as the cache sees it.
struct CacheToken {
  SequenceId sequence = 0;
  Position position = 0;
};

class KvCache {
 public:
  // `allocate` false makes a cache with shapes but no memory: enough to build and plan graphs
  // for memory estimates, never to run them.
  static Result<std::unique_ptr<KvCache>> create(const std::vector<KvLayerShape>& layers, int32_t cells,
                                                 DType type, bool allocate = true);
  // Bytes a cache of this shape takes.
  static size_t bytes_for(const std::vector<KvLayerShape>& layers, int32_t cells, DType type);

  int32_t cell_count() const { return static_cast<int32_t>(cells_.size()); }
  int32_t used_cells() const { return used_; }
  int32_t free_cells() const { return cell_count() - used_; }
  DType type() const { return type_; }
  size_t bytes() const { return buffer_bytes_; }
  int layer_count() const { return static_cast<int>(keys_.size()); }
  // [head_dim, cells, heads]: row(cell, head).
  Tensor* keys(int layer) { return &keys_[static_cast<size_t>(layer)]; }
  Tensor* values(int layer) { return &values_[static_cast<size_t>(layer)]; }

  // Gives every token a free cell (recording its sequence and position) and returns the cells,
  // or kContextFull with nothing changed. A (sequence, position) already cached is an error.
  // Writes the cells to *slots (its capacity reused: nothing is allocated per generated token).
  Status place(std::span<const CacheToken> tokens, std::vector<int32_t>* slots);
  Result<std::vector<int32_t>> place(std::span<const CacheToken> tokens);

  // The cells each token may attend to: same sequence, position ≤ its own (causal) or any
  // (non-causal), and within `window` positions when window > 0.
  void fill_attention_index(std::span<const CacheToken> tokens, bool causal, int32_t window,
                            AttentionIndex* index) const;

  // Position-range edits; p1 < 0 means "to the end". Ranges are half-open [p0, p1).
  void remove(SequenceId sequence, Position p0, Position p1);
  // dst shares src's cells in [p0, p1) (no bytes copied): a forked or common prefix.
  void copy(SequenceId src, SequenceId dst, Position p0, Position p1);
  // Adds `delta` to the positions of sequence's cells in [p0, p1); their keys must be rotated
  // by the same delta (pending_shift / clear_pending_shift) before the next forward pass.
  void shift(SequenceId sequence, Position p0, Position p1, Position delta);
  void clear();

  bool has_pending_shift() const { return shift_pending_; }
  // Per-cell position deltas not yet applied to the keys.
  const std::vector<int32_t>& pending_shift() const { return deltas_; }
  void clear_pending_shift();

  // Smallest / largest cached position of a sequence, or -1 when it has none.
  Position min_position(SequenceId sequence) const;
  Position max_position(SequenceId sequence) const;
  int32_t sequence_cells(SequenceId sequence) const;

 private:
  struct Cell {
    Position position = -1;
    uint64_t sequences = 0;  // bit s set: sequence s uses this cell
  };
  // Each sequence's cells sorted by position (one cell per position): the attention index,
  // duplicate checks and range edits read these instead of scanning every cell.
  struct Entry {
    Position position;
    int32_t cell;
    bool operator<(const Entry& other) const { return position < other.position; }
  };
  using EntryList = std::vector<Entry>;
  // Entries of `sequence` with p0 <= position < p1.
  std::pair<EntryList::iterator, EntryList::iterator> range(SequenceId sequence, Position p0, Position p1);
  void insert(SequenceId sequence, Entry entry);
  static uint64_t bit(SequenceId s) { return uint64_t{1} << s; }
  void release_if_unused(Cell& cell);
  // Copies a shared cell's rows into a free cell owned by `sequence` alone; -1 if none is free.
  int32_t detach(int32_t shared, SequenceId sequence);

  DType type_ = DType::F16;
  std::vector<Cell> cells_;
  std::vector<EntryList> by_sequence_ = std::vector<EntryList>(kMaxSequences);
  std::vector<std::pair<SequenceId, Position>> placing_;  // place()'s batch, sorted to find repeats
  std::vector<int32_t> deltas_;
  bool shift_pending_ = false;
  int32_t used_ = 0;
  int32_t search_start_ = 0;
  std::vector<Tensor> keys_;
  std::vector<Tensor> values_;
  LargeBuffer buffer_;  // empty when created without allocating
  size_t buffer_bytes_ = 0;
};

}  // namespace sinter
