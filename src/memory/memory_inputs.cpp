#include "memory/memory_inputs.h"

#include "backend/buffer.h"

namespace sinter {
namespace {

Status check_pool(const KvCache& cache, int pool, const char* what) {
  if (pool < 0 || pool >= cache.pool_count() || cache.pool_layer_count(pool) == 0) {
    return make_error(ErrorCode::kInternal, "the forward pass uses the ", what, " of KV cache pool ", pool,
                      ", which has no layers");
  }
  return ok_status();
}

}  // namespace

Status KvSlotsInput::set(std::span<const BatchEntry> batch) {
  SINTER_TRY(check_pool(cache_, pool_, "cells"));
  const auto cells = cache_.placed(pool_);
  if (cells.size() != batch.size())
    return make_error(ErrorCode::kInternal, "KV cells of ", cells.size(), " tokens for a pass of ",
                      batch.size());
  tensor_set(*tensor_, cells.data(), cells.size());
  return ok_status();
}

Status AttentionIndexInput::set(std::span<const BatchEntry> batch) {
  SINTER_TRY(check_pool(cache_, pool_, "attention index"));
  const AttentionIndex& index = cache_.pass_index(pool_);
  const size_t n = batch.size() * sizeof(int32_t);
  tensor_set(*tensor_, index.begin.data(), 0, n);
  tensor_set(*tensor_, index.end.data(), n, n);
  tensor_set(*tensor_, index.cells.data(), 2 * n, index.cells.size() * sizeof(int32_t));
  return ok_status();
}

Status AlibiPositionsInput::set(std::span<const BatchEntry> batch) {
  SINTER_TRY(check_pool(cache_, pool_, "ALiBi positions"));
  const AttentionIndex& index = cache_.pass_index(pool_);
  // The tokens' positions, then those of the listed cells (looked up only for ALiBi models).
  values_.resize(batch.size() + index.cells.size());
  for (size_t i = 0; i < batch.size(); ++i) values_[i] = batch[i].position;
  cache_.positions_of(pool_, index.cells, values_.data() + batch.size());
  tensor_set(*tensor_, values_.data(), values_.size());
  return ok_status();
}

Status StateSlotsInput::set(std::span<const BatchEntry> batch) {
  const auto slots = state_.placed_slots();
  if (slots.size() != batch.size()) {
    return make_error(ErrorCode::kInternal, "state slots of ", slots.size(), " tokens for a pass of ",
                      batch.size());
  }
  tensor_set(*tensor_, slots.data(), slots.size());
  if (tensor_->ne[1] == 2) {
    // The second row: the plane each token leaves its state in (graph.h: snapshots).
    const auto snapshots = state_.placed_snapshots();
    if (snapshots.size() != batch.size())
      return make_error(ErrorCode::kInternal, "state snapshots of ", snapshots.size(),
                        " tokens for a pass of ", batch.size());
    const size_t bytes = snapshots.size() * sizeof(int32_t);
    tensor_set(*tensor_, snapshots.data(), bytes, bytes);
  }
  return ok_status();
}

}  // namespace sinter
