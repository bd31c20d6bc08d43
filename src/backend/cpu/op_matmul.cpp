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

DType activation_type(DType weight) {
  switch (weight) {
    case DType::F16: return DType::F16;
    case DType::BF16: return DType::BF16;
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0:
    case DType::IQ4_NL:
    case DType::MXFP4: return DType::Q8_0;
    case DType::Q4_1:
    case DType::Q5_1: return DType::Q8_1;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ2_XXS:
    case DType::IQ2_XS:
    case DType::IQ2_S:
    case DType::IQ3_XXS:
    case DType::IQ3_S:
    case DType::IQ1_S:
    case DType::IQ1_M:
    case DType::IQ4_XS:
    case DType::TQ1_0:
    case DType::TQ2_0: return DType::Q8_K;
    default: return DType::F32;
  }
}

namespace {

// Bytes of activation column c after it has been rounded to the activation type, as F32.
size_t activation_bytes(const Tensor& dst) { return static_cast<size_t>(dst.src[1]->ne[0]) * sizeof(float); }

}  // namespace

// dst [n_out, m] = W [n_in, n_out] · X [n_in, m]; threads split the n_out weight rows.
//
// Activations are first rounded to the weight type's activation format (Q8_0 for Q4_0, Q8_K for
// the K-quants, F16 for F16, ...), as the integer kernels use them; each column is rounded once
// and shared by all threads. Reference path: the rounded column is widened back to F32 and
// dotted with each dequantized weight row.
void run_mul_mat(const Tensor& dst, const OpContext& ctx) {
  const Tensor& w = *dst.src[0];
  const Tensor& x = *dst.src[1];
  const int64_t n_in = w.ne[0];
  const int64_t n_out = w.ne[1];
  const int64_t columns = x.rows();
  const DType act = activation_type(w.type);
  const bool rounds = act != DType::F32 && n_in % dtype_traits(act).block_size == 0;
  auto* rounded = reinterpret_cast<float*>(ctx.shared);
  if (rounds) {
    float* blocks = ctx.scratch.floats.data() + n_in;  // room for one quantized row
    for (int64_t c = ctx.thread.share_begin(columns); c < ctx.thread.share_end(columns); ++c) {
      const auto* xc = reinterpret_cast<const float*>(static_cast<const uint8_t*>(x.data) + c * x.nb[1]);
      dtype_traits(act).quantize(xc, blocks, n_in);
      dtype_traits(act).dequantize(blocks, rounded + c * n_in, n_in);
    }
    ctx.thread.barrier();
  }
  float* row = ctx.scratch.floats.data();
  for (int64_t r = ctx.thread.share_begin(n_out); r < ctx.thread.share_end(n_out); ++r) {
    row_to_f32(w.type, w.row(r), row, n_in);
    for (int64_t c = 0; c < columns; ++c) {
      const auto* xc = rounds ? rounded + c * n_in
                              : reinterpret_cast<const float*>(static_cast<const uint8_t*>(x.data) + c * x.nb[1]);
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

size_t shared_scratch_bytes(const Tensor& node) {
  if (node.op != Op::kMatMul) return 0;
  return activation_bytes(node) * static_cast<size_t>(node.src[1]->rows());
}

size_t scratch_floats(const Tensor& node) {
  switch (node.op) {
    case Op::kMatMul: return 3 * static_cast<size_t>(node.src[0]->ne[0]);  // weight row, quantized column
    case Op::kAttention: return 3 * static_cast<size_t>(node.ne[0] + node.src[0]->ne[0]);  // query, row, sum
    case Op::kRopeShift: return static_cast<size_t>(node.ne[0]);
    case Op::kCopy: return static_cast<size_t>(node.ne[0]);
    default: return 0;
  }
}

}  // namespace sinter::cpu
