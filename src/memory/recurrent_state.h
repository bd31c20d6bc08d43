// The state of recurrent layers (Mamba's convolution and scan states, LFM2's short convolution,
// RWKV's token shifts and WKV state): per layer, a few F32 tensors with one plane per state
// slot, constant in the length of the sequence. Each sequence that holds tokens has a slot;
// the ops of the recurrent layers (graph.h: ssm_conv, ssm_scan, token_shift, rwkv_wkv6/7) read
// each token's slot from placed_slots() and carry the slot's state from token to token.
//
// A state holds only a sequence's present. To go back, the state keeps checkpoints: copies of a
// sequence's planes at a position, taken at checkpoint() (the runtime calls it at the end of each
// prompt) and after a pass that takes a sequence `checkpoint_interval` tokens past its last one.
// They live in host memory within `checkpoint_bytes` (the oldest go first); a sequence can be cut
// back (remove) or forked (copy) exactly to its present or to one of them.
//
// Speculative decoding cuts a sequence back by the few drafted tokens it rejects, anywhere in
// the last pass. For that the state can keep each sequence's states at its last K + 1 positions
// (K = `rollback_tokens`, the present included): every state tensor has K + 1 more planes per
// slot, a ring into which the recurrent ops copy a token's state right after computing it
// (graph.h: snapshots) — a copy of the state per token for the last K + 1 tokens of each
// sequence in a pass, and nothing recomputed when tokens are rejected. A sequence can then be
// cut back (or forked) by up to K tokens, within a pass or across passes.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memory/sequence_memory.h"

namespace sinter {

// One state tensor of a recurrent layer, per slot (the slot is the tensor's last dimension).
struct RecurrentStateShape {
  std::array<int64_t, 3> ne{1, 1, 1};
  int64_t elements() const { return ne[0] * ne[1] * ne[2]; }
};

// What one recurrent layer keeps per sequence (e.g. Mamba: its convolution state
// [d_conv - 1, d_inner] and its scan state [d_state, head_dim, n_head]).
struct RecurrentLayerShape {
  std::vector<RecurrentStateShape> states;
};

// The most tokens a state can roll back without a checkpoint (RecurrentStateOptions).
constexpr int32_t kMaxRollbackTokens = 32;

struct RecurrentStateOptions {
  std::vector<RecurrentLayerShape> layers;  // one per recurrent layer of the model
  int32_t n_seq_max = 1;                    // state slots: sequences holding tokens at once
  size_t checkpoint_bytes = 0;              // host memory for checkpoints (0: none)
  int32_t checkpoint_interval = 512;        // tokens between a sequence's automatic checkpoints
  int32_t rollback_tokens = 0;              // K: a sequence can be cut back K tokens (0: none)
};

class RecurrentState final : public SequenceMemory {
 public:
  // A null backend makes a state with shapes but no memory (for memory estimates).
  static Result<std::unique_ptr<RecurrentState>> create(const RecurrentStateOptions& options,
                                                        Backend* backend);
  // Bytes of the states of every slot (checkpoints not counted: they are bounded by their budget).
  static size_t bytes_for(const RecurrentStateOptions& options);
  // Bytes one sequence's state takes (one checkpoint).
  static size_t sequence_bytes_for(const std::vector<RecurrentLayerShape>& layers);
  ~RecurrentState() override;

  // State tensor `index` of recurrent layer `layer`: F32 [ne0, ne1, ne2, planes()].
  // Planes 0 .. n_seq_max − 1 are the sequences' slots, the rest the rollback rings.
  Tensor* state(int layer, int index) {
    return &states_[static_cast<size_t>(layer)][static_cast<size_t>(index)];
  }
  int layer_count() const { return static_cast<int>(states_.size()); }
  // The slot of each token of the last place(), in its order.
  std::span<const int32_t> placed_slots() const { return placed_slots_; }
  // The plane each token of the last place() leaves its state in (−1: none), in its order;
  // empty without rollback_tokens.
  std::span<const int32_t> placed_snapshots() const { return placed_snapshots_; }
  bool keeps_snapshots() const { return options_.rollback_tokens > 0; }
  // Planes of a sequence's ring: K + 1 (the present and the K positions before it), 0 without.
  static int32_t ring_size(const RecurrentStateOptions& options) {
    return options.rollback_tokens > 0 ? options.rollback_tokens + 1 : 0;
  }
  // Planes of each state tensor: a slot per sequence and, with rollback, its ring.
  static int64_t planes_for(const RecurrentStateOptions& options) {
    return int64_t{options.n_seq_max} * (1 + ring_size(options));
  }
  // Checkpoints held now, and their bytes.
  size_t checkpoint_count() const { return checkpoints_.size(); }
  size_t checkpoint_bytes() const { return checkpoint_bytes_used_; }

  // SequenceMemory
  std::string_view kind() const override { return "recurrent state"; }
  Status place(std::span<const CacheToken> tokens) override;
  void unplace(std::span<const CacheToken> tokens) override;
  void passed() override;
  void remove(SequenceId sequence, Position p0, Position p1) override;
  void copy(SequenceId src, SequenceId dst, Position p0, Position p1) override;
  bool can_shift() const override { return false; }
  void shift(SequenceId, Position, Position, Position) override {}
  Position resumable_prefix(SequenceId sequence, Position wanted) const override;
  void checkpoint(SequenceId sequence) override;
  void clear() override;
  Position max_position(SequenceId sequence) const override;
  int32_t cell_count() const override { return kUnboundedCells; }
  int32_t used_cells() const override;
  int32_t free_cells() const override { return kUnboundedCells - used_cells(); }
  int32_t n_seq_max() const override { return options_.n_seq_max; }
  size_t bytes() const override;
  Status move_to(Backend& backend) override;
  KvCache* kv() override { return nullptr; }
  RecurrentState* recurrent() override { return this; }

 private:
  struct Checkpoint {
    SequenceId sequence = 0;
    Position position = 0;  // tokens 0..position-1 are in it
    uint64_t taken = 0;     // order of taking (the oldest go first)
    std::vector<uint8_t> bytes;
  };
  RecurrentState() = default;
  // The slot of a sequence, taking a free one (zeroed) when it has none; -1 when none is free.
  int32_t take_slot(SequenceId sequence);
  void release_slot(SequenceId sequence);
  void zero_slot(int32_t slot);
  void copy_slot(int32_t from, int32_t to);
  void save(int32_t slot, std::vector<uint8_t>& bytes) const;
  void load(int32_t slot, const std::vector<uint8_t>& bytes);
  const Checkpoint* find_checkpoint(SequenceId sequence, Position position) const;
  void drop_checkpoints(SequenceId sequence, Position after);
  void add_checkpoint(SequenceId sequence);
  // The ring plane of `slot` that holds a sequence's state at `position` (tokens 0..position−1).
  int32_t ring_plane(int32_t slot, Position position) const;
  // Whether the ring of `sequence` holds its state at `position` (below its present).
  bool in_ring(SequenceId sequence, Position position) const;

  RecurrentStateOptions options_;
  std::unique_ptr<Buffer> buffer_;
  std::vector<std::vector<Tensor>> states_;  // per layer, per state
  size_t slot_bytes_ = 0;                    // one slot's planes, all tensors
  std::array<int32_t, kMaxSequences> slot_of_{};
  std::array<Position, kMaxSequences> next_{};             // tokens each sequence holds
  std::array<Position, kMaxSequences> last_checkpoint_{};  // where its last checkpoint was taken
  // The ring of each sequence holds its states at positions ring_from_ .. next_ (kNoRing: none).
  static constexpr Position kNoRing = INT32_MAX;
  std::array<Position, kMaxSequences> ring_from_{};
  std::vector<bool> slot_used_;
  std::vector<int32_t> placed_slots_;
  std::vector<int32_t> placed_snapshots_;
  std::vector<std::pair<SequenceId, Position>> before_place_;  // next_ of the placed sequences
  std::vector<Checkpoint> checkpoints_;
  size_t checkpoint_bytes_used_ = 0;
  uint64_t checkpoints_taken_ = 0;
};

}  // namespace sinter
