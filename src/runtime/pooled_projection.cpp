#include "runtime/pooled_projection.h"

#include <algorithm>

#include "backend/buffer.h"
#include "tensor/dtype.h"

namespace sinter {
namespace {

// W [n_in, n_out] (ne order: rows of n_in values) as F32 rows [n_out][n_in].
Result<PooledProjection::Layer> dequantized(const Tensor& w) {
  const DTypeTraits& traits = dtype_traits(w.type);
  if (w.ne[2] != 1 || w.ne[3] != 1) {
    return make_error(ErrorCode::kInvalidArgument, "the pooled projection '", w.name, "' is not a matrix");
  }
  if (traits.dequantize == nullptr) {
    return make_error(ErrorCode::kUnsupported, "the pooled projection '", w.name, "' is ", traits.name,
                      ", a type sinter cannot dequantize");
  }
  PooledProjection::Layer layer;
  layer.n_in = w.ne[0];
  layer.n_out = w.ne[1];
  layer.weights.resize(static_cast<size_t>(layer.n_in * layer.n_out));
  std::vector<uint8_t> row(w.row_bytes());
  for (int64_t r = 0; r < layer.n_out; ++r) {
    tensor_get(w, row.data(), static_cast<size_t>(r) * w.nb[1], row.size());
    traits.dequantize(row.data(), layer.weights.data() + r * layer.n_in, layer.n_in);
  }
  return layer;
}

}  // namespace

Result<PooledProjection> PooledProjection::from_shape(const ModelShape& shape) {
  std::vector<Layer> layers;
  int64_t width = shape.n_embd;
  for (const Tensor* w : shape.pooled_projection) {
    SINTER_ASSIGN(Layer layer, dequantized(*w));
    if (layer.n_in != width) {
      return make_error(ErrorCode::kInvalidArgument, "the pooled projection '", w->name, "' takes ",
                        layer.n_in, " values, not the ", width, " it is given");
    }
    width = layer.n_out;
    layers.push_back(std::move(layer));
  }
  if (width != shape.n_embd) {
    return make_error(ErrorCode::kInvalidArgument, "the pooled projection ends with ", width,
                      " values, not the embedding length ", shape.n_embd);
  }
  return PooledProjection(std::move(layers));
}

std::vector<float> PooledProjection::apply(std::span<const float> v) const {
  std::vector<float> in(v.begin(), v.end());
  std::vector<float> out;
  for (const Layer& layer : layers_) {
    if (in.size() != static_cast<size_t>(layer.n_in)) return {};
    out.assign(static_cast<size_t>(layer.n_out), 0.0f);
    for (int64_t o = 0; o < layer.n_out; ++o) {
      const float* w = layer.weights.data() + o * layer.n_in;
      double sum = 0.0;
      for (int64_t i = 0; i < layer.n_in; ++i) sum += static_cast<double>(w[i]) * in[static_cast<size_t>(i)];
      out[static_cast<size_t>(o)] = static_cast<float>(sum);
    }
    in.swap(out);
  }
  return in;
}

void PooledProjection::apply_rows(std::vector<float>& rows, size_t width) const {
  if (empty() || width == 0) return;
  for (size_t at = 0; at + width <= rows.size(); at += width) {
    const std::vector<float> projected = apply({rows.data() + at, width});
    std::copy_n(projected.begin(), std::min(projected.size(), width),
                rows.begin() + static_cast<std::ptrdiff_t>(at));
  }
}

}  // namespace sinter
