// A model with both attention and recurrent layers (Jamba, Granite 4, Nemotron-H, Falcon-H1,
// LFM2): a KV cache for its attention layers and a recurrent state for the others, edited
// together. A sequence can resume only where both can: at a checkpoint of the state that the
// cache (with its windows) still holds. Positions cannot shift: the state summarizes every token
// it has seen.
#pragma once

#include <memory>

#include "memory/kv_cache.h"
#include "memory/recurrent_state.h"

namespace sinter {

class HybridMemory final : public SequenceMemory {
 public:
  HybridMemory(std::unique_ptr<KvCache> kv, std::unique_ptr<RecurrentState> recurrent)
      : kv_(std::move(kv)), recurrent_(std::move(recurrent)) {}

  std::string_view kind() const override { return "hybrid"; }
  Status place(std::span<const CacheToken> tokens) override;
  void unplace(std::span<const CacheToken> tokens) override;
  int64_t prepare_pass(std::span<const CacheToken> tokens, bool causal) override {
    return kv_->prepare_pass(tokens, causal);
  }
  void passed() override { recurrent_->passed(); }
  void remove(SequenceId sequence, Position p0, Position p1) override;
  void copy(SequenceId src, SequenceId dst, Position p0, Position p1) override;
  bool can_shift() const override { return false; }
  void shift(SequenceId, Position, Position, Position) override {}
  Position resumable_prefix(SequenceId sequence, Position wanted) const override;
  void checkpoint(SequenceId sequence) override { recurrent_->checkpoint(sequence); }
  void clear() override;
  Position max_position(SequenceId sequence) const override { return kv_->max_position(sequence); }
  int32_t cell_count() const override { return kv_->cell_count(); }
  int32_t used_cells() const override { return kv_->used_cells(); }
  int32_t free_cells() const override { return kv_->free_cells(); }
  int32_t n_seq_max() const override { return kv_->n_seq_max(); }
  size_t bytes() const override { return kv_->bytes() + recurrent_->bytes(); }
  Status move_to(Backend& backend) override;
  KvCache* kv() override { return kv_.get(); }
  RecurrentState* recurrent() override { return recurrent_.get(); }

 private:
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<RecurrentState> recurrent_;
};

}  // namespace sinter
