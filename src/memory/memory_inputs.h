// The graph inputs the memory fills before each pass (memory/batch.h's PassInput): for a pool of
// the KV cache, the cell each token is written to, the cells each token attends to (the attention
// index) and, for ALiBi, their positions; for the recurrent state, each token's state slot.
#pragma once

#include "graph/graph.h"
#include "memory/batch.h"
#include "memory/kv_cache.h"
#include "memory/recurrent_state.h"

namespace sinter {

// I32 [n_tokens]: the pool's cell of each token of the last place().
class KvSlotsInput final : public PassInput {
 public:
  KvSlotsInput(Tensor* tensor, KvCache& cache, int pool) : PassInput(tensor), cache_(cache), pool_(pool) {}

 private:
  Status set(std::span<const BatchEntry> batch) override;
  KvCache& cache_;
  int pool_;
};

// I32 [attention_index_elements(n_tokens, capacity)]: the pool's attention index that
// prepare_pass() made (graph.h: begins, ends, then the cells).
class AttentionIndexInput final : public PassInput {
 public:
  AttentionIndexInput(Tensor* tensor, KvCache& cache, int pool)
      : PassInput(tensor), cache_(cache), pool_(pool) {}

 private:
  Status set(std::span<const BatchEntry> batch) override;
  KvCache& cache_;
  int pool_;
};

// I32 [alibi_positions_elements(n_tokens, capacity)]: the tokens' positions, then those of the
// cells the pool's index lists (ALiBi's distances).
class AlibiPositionsInput final : public PassInput {
 public:
  AlibiPositionsInput(Tensor* tensor, KvCache& cache, int pool)
      : PassInput(tensor), cache_(cache), pool_(pool) {}

 private:
  Status set(std::span<const BatchEntry> batch) override;
  KvCache& cache_;
  int pool_;
  std::vector<int32_t> values_;  // reused across passes
};

// I32 [n_tokens]: the recurrent state slot of each token's sequence; I32 [n_tokens, 2] when the
// state keeps snapshots, the second row the plane each token leaves its state in.
class StateSlotsInput final : public PassInput {
 public:
  StateSlotsInput(Tensor* tensor, RecurrentState& state) : PassInput(tensor), state_(state) {}

 private:
  Status set(std::span<const BatchEntry> batch) override;
  RecurrentState& state_;
};

}  // namespace sinter
