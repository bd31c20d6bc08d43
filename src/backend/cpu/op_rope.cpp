// Rotary position embeddings (normal and NeoX pairing; linear, YaRN and per-dimension
// frequency-factor scaling) and the in-place rotation of cached keys for context shifts.
#include <cmath>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/row_kernels.h"
#include "core/half.h"
#include "graph/rope_angles.h"

namespace sinter::cpu {
namespace {

// Rotates one head vector of head_dim values in place.
void rotate_head(float* x, const float* cos_sin, int n_rot, bool neox) {
  for (int i0 = 0; i0 < n_rot; i0 += 2) {
    const float c = cos_sin[i0];
    const float s = cos_sin[i0 + 1];
    const int a = neox ? i0 / 2 : i0;
    const int b = neox ? i0 / 2 + n_rot / 2 : i0 + 1;
    const float x0 = x[a];
    const float x1 = x[b];
    x[a] = x0 * c - x1 * s;
    x[b] = x0 * s + x1 * c;
  }
}

}  // namespace

// dst, x: [head_dim, n_head, n_tokens]; positions I32 [n_tokens]. Threads split the tokens.
void run_rope(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const auto* positions = dst.src[1]->data_as<const int32_t>();
  const float* factors = dst.src[2] != nullptr ? dst.src[2]->data_as<const float>() : nullptr;
  const RopeParams p = rope_params_of(dst);
  const int64_t head_dim = x.ne[0];
  float* cos_sin = ctx.scratch.floats.data();  // [n_rot]: scratch_floats, nothing allocated per token
  for (int64_t t = ctx.thread.share_begin(x.ne[2]); t < ctx.thread.share_end(x.ne[2]); ++t) {
    rope_angles(p, factors, static_cast<float>(positions[t]), true, cos_sin);
    for (int64_t h = 0; h < x.ne[1]; ++h) {
      const auto* in = reinterpret_cast<const float*>(x.row(h, t));
      auto* out = reinterpret_cast<float*>(dst.row(h, t));
      for (int64_t i = 0; i < head_dim; ++i) out[i] = in[i];
      rotate_head(out, cos_sin, p.n_rot, p.neox);
    }
  }
}

// Cache K [head_dim · heads_per_row, cells, planes] (the KV cache's: [head_dim, cells, n_head_kv])
// rotated in place by deltas I32 [cells]; threads split the cells. A pure rotation: no magnitude
// factor is applied again.
void run_rope_shift(const Tensor& dst, const OpContext& ctx) {
  const Tensor& cache = *dst.src[0];
  const auto* deltas = dst.src[1]->data_as<const int32_t>();
  const float* factors = dst.src[2] != nullptr ? dst.src[2]->data_as<const float>() : nullptr;
  const RopeParams p = rope_params_of(dst);
  const int64_t head_dim = dst.params[kRopeHeadDim];
  const int64_t row_length = cache.ne[0];
  float* row = ctx.scratch.floats.data();  // [row_length], then cos_sin [n_rot] (scratch_floats)
  float* cos_sin = row + row_length;
  const QuantizeRowFn write = row_writer(cache.type);
  for (int64_t c = ctx.thread.share_begin(cache.ne[1]); c < ctx.thread.share_end(cache.ne[1]); ++c) {
    if (deltas[c] == 0) continue;
    rope_angles(p, factors, static_cast<float>(deltas[c]), false, cos_sin);
    for (int64_t plane = 0; plane < cache.ne[2]; ++plane) {
      row_to_f32(cache.type, cache.row(c, plane), row, row_length);
      for (int64_t h = 0; h < row_length / head_dim; ++h)
        rotate_head(row + h * head_dim, cos_sin, p.n_rot, p.neox);
      write(row, cache.row(c, plane), row_length);
    }
  }
}

}  // namespace sinter::cpu
