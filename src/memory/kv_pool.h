// One pool of the KV cache (memory/kv_cache.h): the cells of the layers that share one attention
// window. Per layer of the pool, keys and values for each cell, stored head by head (tensors
// [head_dim, cells, heads]: one head's rows of all cells are contiguous, so attention, which
// reads one KV head's cells per call, streams them instead of taking head_dim values every
// heads·head_dim); each cell records the position it holds and the set of sequences that share
// it.
//
// Several sequences live in one pool; a cell shared by a common prefix (after copy()) is stored
// once. Attention never assumes cells are contiguous or in order: for each batch the pool lists,
// per token, the visible cells sorted by position (fill_attention_index).
//
// Memory is committed as the pool fills: keys, values and the cells' records are zero-filled
// mappings that the system backs with RAM on first touch, and place() takes the lowest free
// cell, so a pool of ten million cells holding a few hundred tokens costs the RAM of a few
// hundred cells (and a huge page per head plane where huge pages are on). Nothing reads or
// writes a cell at or past high_water() before a token is placed there.
//
// The pool checks nothing that KvCache checks for all pools at once (sequence ids, duplicates,
// room): its edits assume their arguments were validated.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
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

// Per sequence: cells at positions <= bound are dropped (-1: none).
using PruneBounds = std::array<Position, kMaxSequences>;

// Which positions a window of W positions lets a token at position p see (llama.cpp's
// llama_swa_type): trailing, the W positions p − W + 1 .. p (a decoder's sliding window); or
// symmetric, p − W/2 .. p + W/2 with W/2 rounded down (an encoder's local attention:
// EmbeddingGemma, ModernBERT). A symmetric window reaches back W/2 + 1 ≤ W positions (W ≥ 1),
// so what the cache keeps for a trailing window of W covers it.
enum class WindowKind : uint8_t { kTrailing, kSymmetric };

class KvPool {
 public:
  // `layers` are this pool's layers, `layer_ids` the model's KV layer index of each (the
  // tensors' names: cache_k-<id>). A null backend makes a pool with shapes but no memory (and
  // no cells).
  static Result<std::unique_ptr<KvPool>> create(const std::vector<KvLayerShape>& layers,
                                                const std::vector<int>& layer_ids, int32_t cells,
                                                int32_t window, DType type, Backend* backend,
                                                WindowKind window_kind = WindowKind::kTrailing);
  static size_t bytes_for(const std::vector<KvLayerShape>& layers, int32_t cells, DType type);
  // Bytes of the cells' bookkeeping at most: the cell records and pending shifts, one
  // sequence's position list and an attention index.
  static size_t bookkeeping_bytes_for(int32_t cells);

  int32_t window() const { return window_; }  // 0: full attention
  WindowKind window_kind() const { return window_kind_; }
  int32_t cell_count() const { return cell_count_; }
  int32_t used_cells() const { return used_; }
  int32_t free_cells() const { return cell_count_ - used_; }
  // Cells [high_water(), cell_count()) have never held a token: their memory is untouched.
  int32_t high_water() const { return high_water_; }
  bool has_memory() const { return cells_.size() != 0; }
  size_t bytes() const { return buffer_bytes_; }
  int layer_count() const { return static_cast<int>(keys_.size()); }
  // [head_dim, cells, heads]: row(cell, head); `layer` counts this pool's layers.
  Tensor* keys(int layer) { return &keys_[static_cast<size_t>(layer)]; }
  Tensor* values(int layer) { return &values_[static_cast<size_t>(layer)]; }
  std::string_view backend() const { return buffer_ ? buffer_->backend() : std::string_view(); }

  // move_to in two steps, so that a cache of several pools moves all or none: a zeroed buffer
  // of `backend` as large as this pool's (null for a pool without layers), then the copy of
  // the used cells into it.
  Result<std::unique_ptr<Buffer>> allocate_on(Backend& backend) const;
  void move_into(std::unique_ptr<Buffer> target);

  bool contains(SequenceId sequence, Position position) const;
  // Gives every token the lowest free cell; the caller checked that there is room. The cells
  // are placed() until the next call.
  void place(std::span<const CacheToken> tokens);
  std::span<const int32_t> placed() const { return placed_; }

  // How many cells prune(bounds) would free (a cell shared by several sequences is freed only
  // when every one of them drops it), and the dropping itself.
  int32_t cells_freed_by(const PruneBounds& bounds) const;
  void prune(const PruneBounds& bounds);

  // The cells each token may attend to: same sequence, position ≤ its own (causal) or any
  // (non-causal), and within `window` positions when window > 0 (as the pool's window_kind()
  // bounds them).
  void fill_attention_index(std::span<const CacheToken> tokens, bool causal, int32_t window,
                            AttentionIndex* index) const;
  // out[i] = the position cells[i] holds (cells in use, as an attention index lists them; ALiBi).
  void positions_of(std::span<const int32_t> cells, int32_t* out) const;

  // Position-range edits, as KvCache's (p1 < 0: to the end).
  void remove(SequenceId sequence, Position p0, Position p1);
  void copy(SequenceId src, SequenceId dst, Position p0, Position p1);
  // Positions in `stay` (sorted) keep their place; a shared cell that moves gets its own copy,
  // or stays where it is when no cell is free.
  void shift(SequenceId sequence, Position p0, Position p1, Position delta, std::span<const Position> stay);
  void clear();
  // Positions of sequence's cells in [p0, p1) that other sequences share (appended, sorted),
  // and their count: the cells shift() must copy.
  int32_t shared_positions(SequenceId sequence, Position p0, Position p1, std::vector<Position>* out) const;

  bool has_pending_shift() const { return shift_pending_; }
  // Per-cell position deltas not yet applied to the keys ([cell_count()]; 0 past high_water()).
  std::span<const int32_t> pending_shift() const { return deltas_.span(); }
  void clear_pending_shift();

  // Each sequence's cells sorted by position (one cell per position): the attention index,
  // duplicate checks and range edits read these instead of scanning every cell.
  struct Entry {
    Position position;
    int32_t cell;
    bool operator<(const Entry& other) const { return position < other.position; }
  };
  using EntryList = std::vector<Entry>;
  const EntryList& entries(SequenceId sequence) const { return by_sequence_[static_cast<size_t>(sequence)]; }

 private:
  // All-zero bytes are a free cell (the cell arrays start zeroed, untouched).
  struct Cell {
    Position position = 0;   // meaningful while sequences != 0
    uint64_t sequences = 0;  // bit s set: sequence s uses this cell; 0: free
  };
  // Entries of `sequence` with p0 <= position < p1.
  std::pair<EntryList::iterator, EntryList::iterator> range(SequenceId sequence, Position p0, Position p1);
  void insert(SequenceId sequence, Entry entry);
  static uint64_t bit(SequenceId s) { return uint64_t{1} << s; }
  // The entries of [first, last) (sorted by position) that a token at position p sees through
  // a window of `window` positions of this pool's kind.
  std::pair<EntryList::const_iterator, EntryList::const_iterator> within_window(
      EntryList::const_iterator first, EntryList::const_iterator last, Position p, int32_t window) const;
  // Frees the cell if no sequence uses it any more.
  void release_if_unused(int32_t cell);
  void release(int32_t cell);
  // The lowest free cell (marked neither used nor counted), or -1 when every cell is in use.
  int32_t take_free_cell();
  // Copies a shared cell's rows into a free cell owned by `sequence` alone; -1 if none is free.
  int32_t detach(int32_t shared, SequenceId sequence);

  DType type_ = DType::F16;
  int32_t window_ = 0;
  WindowKind window_kind_ = WindowKind::kTrailing;
  int32_t cell_count_ = 0;
  ZeroedArray<Cell> cells_;
  std::vector<EntryList> by_sequence_ = std::vector<EntryList>(kMaxSequences);
  std::vector<int32_t> placed_;  // place()'s cells, its capacity reused
  ZeroedArray<int32_t> deltas_;  // 0 for every free cell
  bool shift_pending_ = false;
  int32_t used_ = 0;
  int32_t first_free_ = 0;  // every cell below it is in use
  int32_t high_water_ = 0;  // every cell at or above it is free and untouched
  std::vector<Tensor> keys_;
  std::vector<Tensor> values_;
  std::unique_ptr<Buffer> buffer_;  // null without a backend or without layers
  size_t buffer_bytes_ = 0;
};

}  // namespace sinter
