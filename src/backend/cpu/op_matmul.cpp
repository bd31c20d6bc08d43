// Matrix products and embedding lookup on weights of any dequantizable type.
//
// Reference path: each weight row is dequantized block by block into a row-sized scratch buffer
// and dotted with every activation column; the whole matrix is never expanded.
#include <cassert>
#include <cstring>

#include "backend/cpu/cpu_ops.h"
#include "core/half.h"

namespace sinter::cpu {

float dot_f32(const float* a, const float* b, int64_t n) {
  // Eight independent partial sums in a fixed order: vectorizable, and the same for every
  // caller, so a row's result never depends on the batch around it.
  float partial[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) partial[j] += a[i + j] * b[i + j];
  }
  for (int j = 0; i < n; ++i, ++j) partial[j] += a[i] * b[i];
  return ((partial[0] + partial[4]) + (partial[1] + partial[5])) +
         ((partial[2] + partial[6]) + (partial[3] + partial[7]));
}

void row_to_f32(DType type, const void* row, float* out, int64_t n) {
  if (type == DType::F32) {
    std::memcpy(out, row, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  dtype_traits(type).dequantize(row, out, n);
}

// dst [n_out, m] = W [n_in, n_out] · X [n_in, m]; threads split the n_out weight rows.
void run_mul_mat(const Tensor& dst, const OpContext& ctx) {
  const Tensor& w = *dst.src[0];
  const Tensor& x = *dst.src[1];
  const int64_t n_in = w.ne[0];
  const int64_t n_out = w.ne[1];
  const int64_t columns = x.rows();
  float* row = ctx.scratch.floats.data();
  for (int64_t r = ctx.thread.share_begin(n_out); r < ctx.thread.share_end(n_out); ++r) {
    row_to_f32(w.type, w.row(r), row, n_in);
    for (int64_t c = 0; c < columns; ++c) {
      const auto* xc = reinterpret_cast<const float*>(static_cast<const uint8_t*>(x.data) + c * x.nb[1]);
      auto* out = reinterpret_cast<float*>(static_cast<uint8_t*>(dst.data) + c * dst.nb[1]);
      out[r] = dot_f32(row, xc, n_in);
    }
  }
}

// dst [n, k] = rows ids[0..k) of table [n, rows]; threads split the ids.
void run_get_rows(const Tensor& dst, const OpContext& ctx) {
  const Tensor& table = *dst.src[0];
  const auto* ids = dst.src[1]->data_as<const int32_t>();
  const int64_t count = dst.src[1]->ne[0];
  for (int64_t i = ctx.thread.share_begin(count); i < ctx.thread.share_end(count); ++i) {
    assert(ids[i] >= 0 && ids[i] < table.ne[1]);  // ids are validated before the graph runs
    row_to_f32(table.type, table.row(ids[i]), reinterpret_cast<float*>(dst.row(i)), table.ne[0]);
  }
}

size_t scratch_floats(const Tensor& node) {
  switch (node.op) {
    case Op::kMatMul: return static_cast<size_t>(node.src[0]->ne[0]);
    case Op::kAttention: return 3 * static_cast<size_t>(node.ne[0] + node.src[0]->ne[0]);  // query, row, sum
    case Op::kRopeShift: return static_cast<size_t>(node.ne[0]);
    case Op::kCopy: return static_cast<size_t>(node.ne[0]);
    default: return 0;
  }
}

}  // namespace sinter::cpu
