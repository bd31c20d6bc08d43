// Norms and element-wise ops on F32 rows.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/activation_kernels.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/row_kernels.h"

namespace sinter::cpu {
namespace {

const float* row_f32(const Tensor& t, int64_t r) {
  const int64_t i1 = r % t.ne[1];
  const int64_t i2 = (r / t.ne[1]) % t.ne[2];
  const int64_t i3 = r / (t.ne[1] * t.ne[2]);
  return reinterpret_cast<const float*>(t.row(i1, i2, i3));
}

float* row_f32_mutable(const Tensor& t, int64_t r) { return const_cast<float*>(row_f32(t, r)); }

// b's row for a's row r when b broadcasts over a (dimensions of 1 repeat).
const float* broadcast_row(const Tensor& a, const Tensor& b, int64_t r) {
  const int64_t i1 = r % a.ne[1];
  const int64_t i2 = (r / a.ne[1]) % a.ne[2];
  const int64_t i3 = r / (a.ne[1] * a.ne[2]);
  return reinterpret_cast<const float*>(b.row(i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]));
}

// Calls part(r, begin, end) for this thread's share of an element-wise op over rows × n values:
// whole rows when there are at least as many rows as threads, otherwise slices of every row
// (multiples of 16 values, a cache line, so threads never write the same line). Generation has
// one row: both threads work on it. Each value is computed alone, so the split changes nothing.
template <class Part>
void for_thread_elements(const ThreadContext& thread, int64_t rows, int64_t n, Part part) {
  if (rows >= thread.count) {
    for (int64_t r = thread.share_begin(rows); r < thread.share_end(rows); ++r) part(r, int64_t{0}, n);
    return;
  }
  const int64_t lines = (n + 15) / 16;
  const int64_t begin = std::min(n, thread.share_begin(lines) * 16);
  const int64_t end = std::min(n, thread.share_end(lines) * 16);
  if (begin == end) return;
  for (int64_t r = 0; r < rows; ++r) part(r, begin, end);
}

}  // namespace

void run_rms_norm(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const float eps = dst.param_float(0);
  const int64_t n = x.ne[0];
  const SumSquaresFn sum_squares = row_kernels().sum_squares;
  for (int64_t r = ctx.thread.share_begin(x.rows()); r < ctx.thread.share_end(x.rows()); ++r) {
    const float* in = row_f32(x, r);
    float* out = row_f32_mutable(dst, r);
    const double sum = sum_squares(in, n);  // double: the mean of squares of thousands of values
    const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + eps);
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] * scale;
  }
}

void run_norm(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const float eps = dst.param_float(0);
  const int64_t n = x.ne[0];
  const SumSquaresFn sum_squares = row_kernels().sum_squares;
  for (int64_t r = ctx.thread.share_begin(x.rows()); r < ctx.thread.share_end(x.rows()); ++r) {
    const float* in = row_f32(x, r);
    float* out = row_f32_mutable(dst, r);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += in[i];
    const auto mean = static_cast<float>(sum / static_cast<double>(n));
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] - mean;
    // The variance of the centred row with RMS norm's vectorized sum of squares.
    const double variance = sum_squares(out, n);
    const float scale = 1.0f / std::sqrt(static_cast<float>(variance / static_cast<double>(n)) + eps);
    for (int64_t i = 0; i < n; ++i) out[i] *= scale;
  }
}

// x · (1 / max(sqrt(Σ x²), eps)) per row, the sum of squares in double as RMS norm's; x's rows may
// lie at any stride.
void run_l2_norm(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const float eps = dst.param_float(0);
  const int64_t n = x.ne[0];
  const SumSquaresFn sum_squares = row_kernels().sum_squares;
  for (int64_t r = ctx.thread.share_begin(x.rows()); r < ctx.thread.share_end(x.rows()); ++r) {
    const float* in = row_f32(x, r);
    float* out = row_f32_mutable(dst, r);
    const float scale = 1.0f / std::fmax(std::sqrt(static_cast<float>(sum_squares(in, n))), eps);
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] * scale;
  }
}

void run_binary(const Tensor& dst, const OpContext& ctx) {
  const Tensor& a = *dst.src[0];
  const Tensor& b = *dst.src[1];
  const Op op = dst.op;
  for_thread_elements(ctx.thread, a.rows(), a.ne[0], [&](int64_t r, int64_t begin, int64_t end) {
    const float* x = row_f32(a, r);
    const float* y = broadcast_row(a, b, r);
    float* out = row_f32_mutable(dst, r);
    const bool per_row = b.ne[0] == 1;  // mul, div: one value of b per row of a
    if (op == Op::kAdd) {
      for (int64_t i = begin; i < end; ++i) out[i] = x[i] + y[i];
    } else if (op == Op::kSub) {
      for (int64_t i = begin; i < end; ++i) out[i] = x[i] - y[i];
    } else if (op == Op::kMul) {
      if (per_row) {
        for (int64_t i = begin; i < end; ++i) out[i] = x[i] * y[0];
      } else {
        for (int64_t i = begin; i < end; ++i) out[i] = x[i] * y[i];
      }
    } else if (per_row) {
      for (int64_t i = begin; i < end; ++i) out[i] = x[i] / y[0];
    } else {
      for (int64_t i = begin; i < end; ++i) out[i] = x[i] / y[i];
    }
  });
}

void run_unary(const Tensor& dst, const OpContext& ctx) {
  const Tensor& a = *dst.src[0];
  const float s = dst.param_float(0);
  const ActivationKernels& kernels = activation_kernels();
  for_thread_elements(ctx.thread, a.rows(), a.ne[0], [&](int64_t r, int64_t begin, int64_t end) {
    const float* x = row_f32(a, r) + begin;
    float* out = row_f32_mutable(dst, r) + begin;
    const int64_t n = end - begin;
    switch (dst.op) {
      case Op::kScale:
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] * s;
        break;
      case Op::kSilu: kernels.silu(x, nullptr, out, n); break;
      case Op::kGelu: kernels.gelu(x, nullptr, out, n); break;
      case Op::kSoftcap: kernels.softcap(x, s, out, n); break;
      case Op::kSigmoid:
        for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / (1.0f + std::exp(-x[i]));
        break;
      case Op::kExp:
        for (int64_t i = 0; i < n; ++i) out[i] = std::exp(x[i]);
        break;
      case Op::kTanh:
        for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(x[i]);
        break;
      case Op::kSoftplus:
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] > 20.0f ? x[i] : std::log1p(std::exp(x[i]));
        break;
      case Op::kClamp: {
        const float hi = dst.param_float(1);
        for (int64_t i = 0; i < n; ++i) out[i] = std::min(std::max(x[i], s), hi);
        break;
      }
      default: break;
    }
  });
}

void run_gated(const Tensor& dst, const OpContext& ctx) {
  const Tensor& gate = *dst.src[0];
  const Tensor& up = *dst.src[1];
  const GatedRowFn row = dst.op == Op::kSwiGlu ? activation_kernels().silu : activation_kernels().gelu;
  for_thread_elements(ctx.thread, gate.rows(), gate.ne[0], [&](int64_t r, int64_t begin, int64_t end) {
    row(row_f32(gate, r) + begin, row_f32(up, r) + begin, row_f32_mutable(dst, r) + begin, end - begin);
  });
}

// gpt-oss's clamped SwiGLU (graph.h): a scalar loop; the expert FFN's products dominate.
void run_swiglu_oai(const Tensor& dst, const OpContext& ctx) {
  const Tensor& gate = *dst.src[0];
  const Tensor& up = *dst.src[1];
  const float alpha = dst.param_float(0);
  const float limit = dst.param_float(1);
  for_thread_elements(ctx.thread, gate.rows(), gate.ne[0], [&](int64_t r, int64_t begin, int64_t end) {
    const float* g = row_f32(gate, r);
    const float* u = row_f32(up, r);
    float* out = row_f32_mutable(dst, r);
    for (int64_t i = begin; i < end; ++i) {
      const float x = std::min(g[i], limit);
      const float y = std::min(std::max(u[i], -limit), limit);
      out[i] = x / (1.0f + std::exp(-alpha * x)) * (y + 1.0f);
    }
  });
}

void run_softmax(const Tensor& dst, const OpContext& ctx) {
  const Tensor& a = *dst.src[0];
  const Tensor* mask = dst.src[1];
  const float scale = dst.param_float(0);
  const int64_t n = a.ne[0];
  for (int64_t r = ctx.thread.share_begin(a.rows()); r < ctx.thread.share_end(a.rows()); ++r) {
    const float* x = row_f32(a, r);
    const float* m = mask != nullptr ? broadcast_row(a, *mask, r) : nullptr;
    float* out = row_f32_mutable(dst, r);
    float max_value = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      out[i] = x[i] * scale + (m != nullptr ? m[i] : 0.0f);
      max_value = std::max(max_value, out[i]);
    }
    if (max_value == -INFINITY) {  // every column masked: all zero rather than NaN
      for (int64_t i = 0; i < n; ++i) out[i] = 0.0f;
      continue;
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      out[i] = std::exp(out[i] - max_value);
      sum += out[i];
    }
    const auto inverse = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) out[i] *= inverse;
  }
}

void run_copy(const Tensor& dst, const OpContext& ctx) {
  const Tensor& a = *dst.src[0];
  const int64_t n = a.ne[0];
  float* staging = ctx.scratch.floats.data();
  const QuantizeRowFn write = row_writer(dst.type);
  for (int64_t r = ctx.thread.share_begin(a.rows()); r < ctx.thread.share_end(a.rows()); ++r) {
    const int64_t i1 = r % a.ne[1];
    const int64_t i2 = (r / a.ne[1]) % a.ne[2];
    const int64_t i3 = r / (a.ne[1] * a.ne[2]);
    const uint8_t* in = a.row(i1, i2, i3);
    if (a.nb[0] == dtype_traits(a.type).block_bytes) {
      row_to_f32(a.type, in, staging, n);
    } else {  // strided elements (a permuted view): widen one value at a time
      for (int64_t i = 0; i < n; ++i) row_to_f32(a.type, in + i * a.nb[0], staging + i, 1);
    }
    write(staging, dst.row(i1, i2, i3), n);
  }
}

}  // namespace sinter::cpu
