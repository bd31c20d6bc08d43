// Rotary position embeddings (normal and NeoX pairing; linear, YaRN and per-dimension
// frequency-factor scaling) and the in-place rotation of cached keys for context shifts.
#include <cmath>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/row_kernels.h"
#include "core/half.h"

namespace sinter::cpu {
namespace {

constexpr float kPi = 3.14159265358979323846f;

// Dimension index at which the rotation of a pair has done `n_rot` turns over the original
// context (YaRN's correction range, from the paper's definition).
float yarn_correction_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
  return static_cast<float>(n_dims) * std::log(static_cast<float>(n_ctx_orig) / (n_rot * 2.0f * kPi)) /
         (2.0f * std::log(base));
}

// Fills cos_sin[2*k], cos_sin[2*k+1] for pairs k = 0..n_rot/2-1 at `position` (which may be a
// negative delta for shifts). `magnitude` false leaves out YaRN's attention-magnitude factor.
void rope_angles(const RopeParams& p, const float* freq_factors, float position, bool magnitude,
                 float* cos_sin) {
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  float low = 0.0f, high = 0.0f;
  if (p.ext_factor != 0.0f) {
    low = std::max(0.0f, std::floor(yarn_correction_dim(p.n_rot, p.n_ctx_orig, p.beta_fast, p.freq_base)));
    high = std::min(static_cast<float>(p.n_rot - 1),
                    std::ceil(yarn_correction_dim(p.n_rot, p.n_ctx_orig, p.beta_slow, p.freq_base)));
  }
  float mscale = magnitude ? p.attn_factor : 1.0f;
  if (p.ext_factor != 0.0f && magnitude) mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
  float theta_base = position;
  for (int i0 = 0; i0 < p.n_rot; i0 += 2) {
    const float factor = freq_factors != nullptr ? freq_factors[i0 / 2] : 1.0f;
    const float theta_extrap = theta_base / factor;
    const float theta_interp = p.freq_scale * theta_extrap;
    float theta = theta_interp;
    if (p.ext_factor != 0.0f) {
      const float y = (static_cast<float>(i0 / 2) - low) / std::max(0.001f, high - low);
      const float ramp = (1.0f - std::min(1.0f, std::max(0.0f, y))) * p.ext_factor;
      theta = theta_interp * (1.0f - ramp) + theta_extrap * ramp;
    }
    cos_sin[i0] = std::cos(theta) * mscale;
    cos_sin[i0 + 1] = std::sin(theta) * mscale;
    theta_base *= theta_scale;
  }
}

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
