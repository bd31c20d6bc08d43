// The KV cache: per layer, keys and values for each cell, stored head by head (tensors
// [head_dim, cells, heads]: one head's rows of all cells are contiguous, so attention, which
// reads one KV head's cells per call, streams them instead of taking head_dim values every
// heads·head_dim); each cell records the position it holds and the set of sequences that share
// it.
//
// Several sequences live in one cache; a cell shared by a common prefix (after copy()) is
// stored once. Attention never assumes cells are contiguous or in order: for each batch the
// cache lists, per token, the visible cells sorted by position (fill_attention_index).
//
// Memory is committed as the cache fills: keys, values and the cells' records are zero-filled
// mappings that the system backs with RAM on first touch, and place() takes the lowest free
// cell, so a cache of ten million cells holding a few hundred tokens costs the RAM of a few
// hundred cells (and a huge page per head plane where huge pages are on). Nothing reads or
// writes a cell at or past high_water() before a token is placed there.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "core/token.h"
#include "core/zeroed_array.h"
#include "graph/graph.h"
#include "sinter/result.h"

namespace sinter {

constexpr int kMaxSequences = 64;  // sequence ids 0..63 (a cell's sequence set is a 64-bit mask)
// The most cells a cache may have (2^24, 16.8 M tokens: above the longest trained contexts of
// today's models); a larger request is a mistake, refused before any memory plan.
constexpr int32_t kMaxCacheCells = int32_t{1} << 24;

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
  // The keys and values live in a buffer of `backend` (BufferUsage::kCache). A null backend
  // makes a cache with shapes but no memory (and no cells: place() refuses): enough to build
  // and plan graphs for memory estimates, never to run them.
  static Result<std::unique_ptr<KvCache>> create(const std::vector<KvLayerShape>& layers, int32_t cells,
                                                 DType type, Backend* backend);
  // Bytes a cache of this shape takes.
  static size_t bytes_for(const std::vector<KvLayerShape>& layers, int32_t cells, DType type);
  // Bytes of the cells' bookkeeping at most: the cell records and pending shifts, one
  // sequence's position list and an attention index.
  static size_t bookkeeping_bytes_for(int32_t cells);

  int32_t cell_count() const { return cell_count_; }
  int32_t used_cells() const { return used_; }
  int32_t free_cells() const { return cell_count() - used_; }
  // Cells [high_water(), cell_count()) have never held a token: their memory is untouched.
  int32_t high_water() const { return high_water_; }
  DType type() const { return type_; }
  size_t bytes() const { return buffer_bytes_; }
  int layer_count() const { return static_cast<int>(keys_.size()); }
  // [head_dim, cells, heads]: row(cell, head).
  Tensor* keys(int layer) { return &keys_[static_cast<size_t>(layer)]; }
  Tensor* values(int layer) { return &values_[static_cast<size_t>(layer)]; }
  // The backend whose buffer holds the keys and values (null for a shapes-only cache).
  std::string_view backend() const { return buffer_ ? buffer_->backend() : std::string_view(); }

  // Moves the keys and values into a buffer of another backend: the cells keep their tokens
  // (only cells below high_water() are copied). On error the cache is unchanged.
  Status move_to(Backend& backend);

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
  // Per-cell position deltas not yet applied to the keys ([cell_count()]; 0 past high_water()).
  std::span<const int32_t> pending_shift() const { return deltas_.span(); }
  void clear_pending_shift();

  // Smallest / largest cached position of a sequence, or -1 when it has none.
  Position min_position(SequenceId sequence) const;
  Position max_position(SequenceId sequence) const;
  int32_t sequence_cells(SequenceId sequence) const;

 private:
  // All-zero bytes are a free cell (the cell arrays start zeroed, untouched).
  struct Cell {
    Position position = 0;   // meaningful while sequences != 0
    uint64_t sequences = 0;  // bit s set: sequence s uses this cell; 0: free
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
  // Frees the cell if no sequence uses it any more.
  void release_if_unused(int32_t cell);
  void release(int32_t cell);
  // The lowest free cell (marked neither used nor counted), or -1 when every cell is in use.
  int32_t take_free_cell();
  // Copies a shared cell's rows into a free cell owned by `sequence` alone; -1 if none is free.
  int32_t detach(int32_t shared, SequenceId sequence);

  DType type_ = DType::F16;
  int32_t cell_count_ = 0;
  ZeroedArray<Cell> cells_;
  std::vector<EntryList> by_sequence_ = std::vector<EntryList>(kMaxSequences);
  std::vector<std::pair<SequenceId, Position>> placing_;  // place()'s batch, sorted to find repeats
  ZeroedArray<int32_t> deltas_;                           // 0 for every free cell
  bool shift_pending_ = false;
  int32_t used_ = 0;
  int32_t first_free_ = 0;  // every cell below it is in use
  int32_t high_water_ = 0;  // every cell at or above it is free and untouched
  std::vector<Tensor> keys_;
  std::vector<Tensor> values_;
  std::unique_ptr<Buffer> buffer_;  // null when created without a backend
  size_t buffer_bytes_ = 0;
};

}  // namespace sinter
