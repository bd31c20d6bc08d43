// The reference backend's ops: scalar, single-threaded implementations of every graph op, written
// to be obviously right rather than fast. They are the golden side of cross-backend comparisons.
//
// Every kernel computes one node from its sources, reading them through their strides (nb[]),
// so views (permutes, transposes, slices) are read where they lie. Results are written to the
// node's own bytes (contiguous, except the cache views store_rows and rope_shift write in place).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "graph/graph.h"

namespace sinter::reference_backend {

using RefKernel = void (*)(const Tensor& node);

// --- the ops (one per graph op that computes) ---
void get_rows(const Tensor& node);      // ref_matmul.cpp
void mul_mat(const Tensor& node);       // ref_matmul.cpp
void rms_norm(const Tensor& node);      // ref_norm.cpp
void norm(const Tensor& node);          // ref_norm.cpp
void softmax(const Tensor& node);       // ref_norm.cpp
void add(const Tensor& node);           // ref_elementwise.cpp
void mul(const Tensor& node);           // ref_elementwise.cpp
void scale(const Tensor& node);         // ref_elementwise.cpp
void silu(const Tensor& node);          // ref_elementwise.cpp
void gelu(const Tensor& node);          // ref_elementwise.cpp
void softcap(const Tensor& node);       // ref_elementwise.cpp
void swiglu(const Tensor& node);        // ref_elementwise.cpp
void geglu(const Tensor& node);         // ref_elementwise.cpp
void swiglu_oai(const Tensor& node);    // ref_elementwise.cpp
void copy(const Tensor& node);          // ref_elementwise.cpp
void rope(const Tensor& node);          // ref_rope.cpp
void rope_shift(const Tensor& node);    // ref_rope.cpp
void store_rows(const Tensor& node);    // ref_attention.cpp
void attention(const Tensor& node);     // ref_attention.cpp
void div(const Tensor& node);           // ref_elementwise.cpp
void sigmoid(const Tensor& node);       // ref_elementwise.cpp
void clamp(const Tensor& node);         // ref_elementwise.cpp
void mul_mat_id(const Tensor& node);    // ref_matmul.cpp
void sum_rows(const Tensor& node);      // ref_moe.cpp
void top_k(const Tensor& node);         // ref_moe.cpp
void weighted_sum(const Tensor& node);  // ref_moe.cpp
void concat(const Tensor& node);        // ref_moe.cpp
void l2_norm(const Tensor& node);       // ref_norm.cpp
void ssm_conv(const Tensor& node);      // ref_recurrent.cpp
void ssm_scan(const Tensor& node);      // ref_recurrent.cpp
void token_shift(const Tensor& node);   // ref_recurrent.cpp
void rwkv_wkv6(const Tensor& node);     // ref_rwkv.cpp
void rwkv_wkv7(const Tensor& node);     // ref_rwkv.cpp
void exp(const Tensor& node);           // ref_elementwise.cpp
void tanh(const Tensor& node);          // ref_elementwise.cpp
void sub(const Tensor& node);           // ref_elementwise.cpp
void softplus(const Tensor& node);      // ref_elementwise.cpp
// ref_delta_net.cpp
void gated_delta_net(const Tensor& node);

// --- shared helpers (ref_access.cpp) ---

// The F32 value at (i0, i1, i2, i3) of an F32 tensor, through its strides.
inline float& f32_at(const Tensor& t, int64_t i0, int64_t i1, int64_t i2 = 0, int64_t i3 = 0) {
  return *reinterpret_cast<float*>(t.row(i1, i2, i3) + i0 * static_cast<int64_t>(t.nb[0]));
}

// Element i of a one-dimensional I32 tensor (ids, positions, slots, deltas, index).
inline int32_t i32_at(const Tensor& t, int64_t i) {
  int32_t value;
  std::memcpy(&value, static_cast<const uint8_t*>(t.data) + i * static_cast<int64_t>(t.nb[0]), sizeof value);
  return value;
}

// A recurrent op's snapshot (graph.h): copies plane `slot` of `state` (contiguous, `planes`
// planes along its last dimension) to the plane that token t's snapshot names, if it names one.
void keep_state_snapshot(const Tensor& state, int64_t planes, const Tensor& slots, int64_t t, int64_t slot);

// Calls f(i1, i2, i3) for every row of a tensor of shape `ne`, in memory order of a contiguous one.
template <class F>
void for_each_row(const std::array<int64_t, kMaxDims>& ne, F&& f) {
  for (int64_t i3 = 0; i3 < ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < ne[1]; ++i1) f(i1, i2, i3);
    }
  }
}

// Row (i1, i2, i3) of `t` (any type with a dequantizer) widened to ne[0] F32 values in `out`.
// Rows of block types must be contiguous; rows of plain types may have any element stride.
void read_row_f32(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, float* out);

// `count` values of `t` (a plain type: block size 1) from logical element `first` on, where the
// logical order is that of a contiguous tensor of t's shape, widened to F32 in `out`.
void read_flat_f32(const Tensor& t, int64_t first, int64_t count, float* out);

// Writes n F32 values as one row of `type` at `dst`, with the type's reference quantizer (n a
// multiple of the type's block size).
void write_row(DType type, const float* values, void* dst, int64_t n);

}  // namespace sinter::reference_backend
