// The graph inputs a pass's batch fills itself (memory/batch.h's PassInput): token ids, positions
// (one stream, or M-RoPE's several), the rows whose logits are wanted, and the embedding rows
// given in place of tokens.
#pragma once

#include <vector>

#include "memory/batch.h"

namespace sinter {

// I32 [n_tokens]: each entry's token (0 for an entry given as an embedding row).
class TokenIdsInput final : public PassInput {
 public:
  using PassInput::PassInput;

 private:
  Status set(std::span<const BatchEntry> batch) override;
  std::vector<int32_t> values_;
};

// I32 [streams · n_tokens]: the entries' positions, stream by stream (one stream: the positions).
class PositionsInput final : public PassInput {
 public:
  PositionsInput(Tensor* tensor, int streams) : PassInput(tensor), streams_(streams) {}

 private:
  Status set(std::span<const BatchEntry> batch) override;
  int streams_;
  std::vector<int32_t> values_;
};

// I32 [n_outputs]: the batch rows whose logits are wanted (the last row when none is).
class OutputIdsInput final : public PassInput {
 public:
  using PassInput::PassInput;

 private:
  Status set(std::span<const BatchEntry> batch) override;
  std::vector<int32_t> values_;
};

// F32 [n_embd, n_tokens], two of them: `rows` holds the given embedding rows (zeros for token
// entries) and `keep` is 1 where the token's own embedding is kept, 0 where a row replaces it,
// so that token_rows · keep + rows is exact for both kinds.
class EmbeddingRowsInput final : public PassInput {
 public:
  EmbeddingRowsInput(Tensor* rows, Tensor* keep) : PassInput(rows), keep_(keep) {}

 private:
  Status set(std::span<const BatchEntry> batch) override;
  Tensor* keep_;
  std::vector<float> values_;
};

}  // namespace sinter
