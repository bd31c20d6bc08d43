// The dense layers an embedding model applies after pooling (ModelShape::pooled_projection:
// EmbeddingGemma's dense_2 and dense_3), computed on the host, where pooling is
// (runtime/embedding.h). Each weight is read once through its backend (tensor_get) and
// dequantized to F32 by its type's reference; a pooled vector then goes through the layers in
// order, each product summed in double.
//
// llama.cpp computes the same products in its graph (build_dense_out), rounding the vector to
// Q8_0 first for a Q8_0 weight: the two differ by about that rounding, far inside the
// tolerances of embeddings (cosine ≥ 0.999).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "model/model.h"
#include "sinter/result.h"

namespace sinter {

class PooledProjection {
 public:
  // The model's layers (none: an empty projection that changes nothing), or an error naming a
  // weight whose type sinter cannot dequantize or whose sizes do not chain from n_embd back to
  // n_embd.
  static Result<PooledProjection> from_shape(const ModelShape& shape);
  // From F32 matrices, row-major [n_out][n_in] each (tests).
  struct Layer {
    int64_t n_in = 0;
    int64_t n_out = 0;
    std::vector<float> weights;  // [n_out][n_in]: W · v sums row o against v
  };
  explicit PooledProjection(std::vector<Layer> layers = {}) : layers_(std::move(layers)) {}

  bool empty() const { return layers_.empty(); }
  size_t layer_count() const { return layers_.size(); }

  // v [n_in of the first layer] -> [n_out of the last]; v itself when empty, nothing when v has
  // another size.
  std::vector<float> apply(std::span<const float> v) const;
  // Each row of `rows` (token-major, `width` values a row; with pooling none, one per token)
  // in place. The projection maps `width` values back to `width` (from_shape checks it).
  void apply_rows(std::vector<float>& rows, size_t width) const;

 private:
  std::vector<Layer> layers_;
};

}  // namespace sinter
