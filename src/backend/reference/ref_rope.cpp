// Rotary position embeddings (ggml's rope_ext semantics: normal and NeoX pairing, partial n_rot,
// linear frequency scaling, YaRN, per-pair frequency factors), and the in-place rotation of
// cached keys by position deltas (context shifts).
//
// The angles are computed in F32 the way ggml defines them, θ_k = position · base^(−2k/n_rot)
// by the recurrence θ_{k+1} = θ_k · base^(−2/n_rot): at positions in the thousands an angle
// "more exact" than that recurrence would differ from every other implementation by ~1e-4 rad.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "backend/reference/reference_ops.h"
#include "graph/rope_angles.h"

namespace sinter::reference_backend {
namespace {

// cos and sin of each pair's angle (graph/rope_angles.h): [2k] and [2k + 1].
std::vector<float> rotation_at(const RopeParams& p, const Tensor* freq_factors, float position,
                               bool magnitude) {
  std::vector<float> factors;
  if (freq_factors != nullptr) {
    for (int32_t k = 0; k < p.n_rot / 2; ++k) factors.push_back(f32_at(*freq_factors, k, 0));
  }
  std::vector<float> cos_sin(static_cast<size_t>(p.n_rot));
  rope_angles(p, freq_factors != nullptr ? factors.data() : nullptr, position, magnitude, cos_sin.data());
  return cos_sin;
}

// Rotates the first n_rot values of one head in place: pair k is (2k, 2k+1), or with NeoX
// (k, k + n_rot/2). Values from n_rot on are left as they are.
void rotate_head(float* x, const std::vector<float>& cos_sin, int32_t n_rot, bool neox) {
  for (int32_t k = 0; k < n_rot / 2; ++k) {
    const int32_t a = neox ? k : 2 * k;
    const int32_t b = neox ? k + n_rot / 2 : 2 * k + 1;
    const float c = cos_sin[static_cast<size_t>(2 * k)], s = cos_sin[static_cast<size_t>(2 * k + 1)];
    const float x0 = x[a], x1 = x[b];
    x[a] = x0 * c - x1 * s;
    x[b] = x0 * s + x1 * c;
  }
}

}  // namespace

// dst, x F32 [head_dim, n_head, n_tokens]; positions I32 [n_tokens]; freq_factors (optional) F32
// [n_rot/2]. Each token's heads are rotated by the angles of its position.
void rope(const Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor& positions = *node.src[1];
  const RopeParams p = rope_params_of(node);
  const int64_t head_dim = x.ne[0];
  std::vector<float> head(static_cast<size_t>(head_dim));
  for (int64_t i3 = 0; i3 < x.ne[3]; ++i3) {
    for (int64_t t = 0; t < x.ne[2]; ++t) {
      const std::vector<float> r =
          rotation_at(p, node.src[2], static_cast<float>(i32_at(positions, t)), true);
      for (int64_t h = 0; h < x.ne[1]; ++h) {
        for (int64_t i = 0; i < head_dim; ++i) head[static_cast<size_t>(i)] = f32_at(x, i, h, t, i3);
        rotate_head(head.data(), r, p.n_rot, p.neox);
        for (int64_t i = 0; i < head_dim; ++i) f32_at(node, i, h, t, i3) = head[static_cast<size_t>(i)];
      }
    }
  }
}

// The cache K [head_dim · heads_per_row, cells, planes] (F32, F16, BF16 or another type with a
// reference quantizer; the node aliases it) rotated in place by deltas I32 [cells]: each row of
// a cell is widened, each head in it rotated by the delta's angles, and the row written back in
// the cache's type. Cells with a zero delta are not touched (their bits stay as they are).
void rope_shift(const Tensor& node) {
  const Tensor& deltas = *node.src[1];
  assert(node.data == node.src[0]->data);  // a view of the cache: written in place
  const RopeParams p = rope_params_of(node);
  const int64_t head_dim = node.params[kRopeHeadDim];
  const int64_t row_length = node.ne[0];
  assert(head_dim > 0 && row_length % head_dim == 0);
  std::vector<float> row(static_cast<size_t>(row_length));
  for (int64_t cell = 0; cell < node.ne[1]; ++cell) {
    const int32_t delta = i32_at(deltas, cell);
    if (delta == 0) continue;
    const std::vector<float> r = rotation_at(p, node.src[2], static_cast<float>(delta), false);
    for (int64_t i3 = 0; i3 < node.ne[3]; ++i3) {
      for (int64_t plane = 0; plane < node.ne[2]; ++plane) {
        read_row_f32(node, cell, plane, i3, row.data());
        for (int64_t h = 0; h < row_length / head_dim; ++h)
          rotate_head(row.data() + h * head_dim, r, p.n_rot, p.neox);
        write_row(node.type, row.data(), node.row(cell, plane, i3), row_length);
      }
    }
  }
}

}  // namespace sinter::reference_backend
