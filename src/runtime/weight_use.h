// Which op consumes each weight of a model: a weight is asked about with the op that uses it (an
// embedding table with get_rows, a projection with mul_mat, a norm weight with mul), so that
// loading, placement and the diagnosis ask a backend's op table the right question.
#pragma once

#include <string>
#include <unordered_map>

#include "backend/backend.h"
#include "model/model.h"

namespace sinter {

struct WeightUse {
  Op op = Op::kLeaf;
  DType key = DType::F32;  // op_key_type of the consuming node
  // The share of the weight's bytes one token's pass reads: all of a matrix, k of n_expert
  // experts, one row of an embedding table (the largest share where several ops read it).
  double share_per_token = 0.0;
};

// Where a weight goes (or went, at load) and how its consumer runs on it.
struct WeightPlacement {
  std::string name;
  DType type = DType::F32;
  Op consumer = Op::kLeaf;  // kLeaf: no op of the forward pass reads it
  std::string backend;
  ExecutionPath path = ExecutionPath::kUnsupported;
  BufferKind buffer = BufferKind::kHostMapped;
};

// Keys are the model's weight tensors.
using WeightUses = std::unordered_map<const Tensor*, WeightUse>;
// What one generated token reads of a model's weights.
struct TokenReads {
  uint64_t parameters = 0;  // active parameters
  uint64_t bytes = 0;
};
TokenReads token_reads(const Model& model, const WeightUses& uses);

// Found in a one-token forward pass (no memory is allocated); weights the pass never reads are
// absent.
Result<WeightUses> weight_uses(const Model& model);

// Where a weight goes: the primary backend where its table supports the op reading the weight,
// else the fallback (may be null). `backend` is left empty when the pass never reads the weight
// (consumer kLeaf) or when neither backend can run its op.
WeightPlacement place_weight(const Tensor& weight, const WeightUses& uses, const Backend& primary,
                             const Backend* fallback);

}  // namespace sinter
