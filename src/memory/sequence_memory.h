// What a model keeps of each sequence between forward passes, whatever its layers are: the keys
// and values of attention layers (memory/kv_cache.h), the state of recurrent layers — Mamba's
// convolution and scan states, RWKV's token shifts and WKV state (memory/recurrent_state.h) — or
// both, each layer getting what its kind needs (memory/hybrid_memory.h). The runtime and the
// scheduler ask only this interface: place a pass's tokens, fork, cut or roll back a sequence,
// where it can resume, whether it can shift. Nothing above this layer asks which kind it has.
//
// The kinds differ in what they can undo. Attention cells hold every position, so a sequence can
// be cut back anywhere (within what sliding windows still hold). A recurrent state holds only the
// sequence's present: it is kept at earlier points by checkpoints (snapshots taken at the end of
// each prompt and every so many tokens) and, when asked for, at each of its last few positions
// (rollback rings, for rejected drafts); a sequence can go back exactly to one of those.
// resumable_prefix() says where; remove() and copy() go to such a point.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "backend/backend.h"
#include "core/token.h"
#include "memory/kv_pool.h"
#include "sinter/result.h"

namespace sinter {

class KvCache;
class RecurrentState;

class SequenceMemory {
 public:
  virtual ~SequenceMemory() = default;

  // "kv cache", "recurrent state" or "hybrid" (for reports).
  virtual std::string_view kind() const = 0;

  // Records a pass's tokens (each sequence's tokens in increasing positions, continuing where the
  // sequence ends); kContextFull or kInvalidArgument with nothing changed.
  virtual Status place(std::span<const CacheToken> tokens) = 0;
  // Forgets the tokens of the last place() (its pass failed). A recurrent state cannot know how
  // far the failed pass got: its sequences start again from scratch.
  virtual void unplace(std::span<const CacheToken> tokens) = 0;
  // Prepares what the memory's graph inputs need for the placed tokens (a KV cache: each pool's
  // attention index; `causal`: a token sees only positions up to its own) and returns the most
  // cells an attention index lists (0 without attention layers): graphs are sized by it.
  virtual int64_t prepare_pass(std::span<const CacheToken> tokens, bool causal) {
    (void)tokens;
    (void)causal;
    return 0;
  }
  // The pass of the last place() was computed (a recurrent state then takes the checkpoints due).
  virtual void passed() {}

  // Position-range edits; p1 < 0 means "to the end", ranges are half-open [p0, p1). Cutting a
  // sequence back (remove(s, p, -1)) needs resumable_prefix(s, p) == p; remove(s, 0, -1) empties
  // it.
  virtual void remove(SequenceId sequence, Position p0, Position p1) = 0;
  // dst starts as src's first p1 positions (p0 = 0): a forked or common prefix, at a point
  // src can resume at.
  virtual void copy(SequenceId src, SequenceId dst, Position p0, Position p1) = 0;
  // Whether positions can be shifted (a context shift): false when any layer keeps a state
  // that summarizes the tokens shifted out.
  virtual bool can_shift() const = 0;
  // Adds `delta` to the positions in [p0, p1) (can_shift() only).
  virtual void shift(SequenceId sequence, Position p0, Position p1, Position delta) = 0;
  // The largest p <= wanted at which `sequence` can continue exactly (0: from scratch).
  virtual Position resumable_prefix(SequenceId sequence, Position wanted) const = 0;
  // Keeps the sequence's present as a point to resume at later (the end of a prompt). Nothing
  // for a KV cache, whose cells are kept anyway.
  virtual void checkpoint(SequenceId sequence) { (void)sequence; }
  virtual void clear() = 0;

  // The largest position a sequence holds, or -1 when it holds none.
  virtual Position max_position(SequenceId sequence) const = 0;
  // Tokens the memory can hold in all (the context), those held, and those a pass can still add.
  // A memory without attention layers holds any number: kUnboundedCells.
  virtual int32_t cell_count() const = 0;
  virtual int32_t used_cells() const = 0;
  virtual int32_t free_cells() const = 0;
  // Sequences it was sized for.
  virtual int32_t n_seq_max() const = 0;
  // Bytes of its tensors (keys and values, states, checkpoints).
  virtual size_t bytes() const = 0;
  // Moves its tensors into buffers of another backend; the sequences keep their state.
  virtual Status move_to(Backend& backend) = 0;

  // The parts the model's layers read and write: null where the model has no such layers.
  virtual KvCache* kv() = 0;
  virtual RecurrentState* recurrent() = 0;
  const KvCache* kv() const { return const_cast<SequenceMemory*>(this)->kv(); }
  const RecurrentState* recurrent() const { return const_cast<SequenceMemory*>(this)->recurrent(); }

  // A context per sequence that never fills (positions are int32).
  static constexpr int32_t kUnboundedCells = int32_t{1} << 30;
};

}  // namespace sinter
