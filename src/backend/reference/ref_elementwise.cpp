// Element-wise ops on F32 (add, sub, mul, scale, exp, tanh, the activations and the gated
// products), and copy, which makes a contiguous tensor of any writable type from a view of any
// readable one.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "backend/reference/reference_ops.h"

namespace sinter::reference_backend {
namespace {

// dst[i] = f(a[i]) for every element (dst has a's shape).
template <class F>
void map_unary(const Tensor& node, F f) {
  const Tensor& a = *node.src[0];
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    for (int64_t i = 0; i < a.ne[0]; ++i) f32_at(node, i, i1, i2, i3) = f(f32_at(a, i, i1, i2, i3));
  });
}

// dst[i] = f(a[i], b[i]), b broadcast over a: each of b's dimensions is 1 (repeated) or a's.
template <class F>
void map_binary(const Tensor& node, F f) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  assert(b.ne[0] == a.ne[0]);
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    const int64_t j1 = i1 % b.ne[1], j2 = i2 % b.ne[2], j3 = i3 % b.ne[3];
    for (int64_t i = 0; i < a.ne[0]; ++i) {
      f32_at(node, i, i1, i2, i3) = f(f32_at(a, i, i1, i2, i3), f32_at(b, i, j1, j2, j3));
    }
  });
}

// x·sigmoid(x) = x / (1 + e^-x), in double.
double silu_of(double x) { return x / (1.0 + std::exp(-x)); }

// GELU, the tanh approximation (as llama.cpp): 0.5·x·(1 + tanh(√(2/π)·x·(1 + 0.044715·x²))).
double gelu_of(double x) {
  const double sqrt_2_over_pi = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(sqrt_2_over_pi * x * (1.0 + 0.044715 * x * x)));
}

}  // namespace

void add(const Tensor& node) {
  map_binary(node, [](float x, float y) { return x + y; });
}

void sub(const Tensor& node) {
  map_binary(node, [](float x, float y) { return x - y; });
}

// dst = a · b; b broadcast over a's rows, or one value per row ([1, rows]).
void mul(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  if (b.ne[0] == a.ne[0]) {
    map_binary(node, [](float x, float y) { return x * y; });
    return;
  }
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    const float y = f32_at(b, 0, i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]);
    for (int64_t i = 0; i < a.ne[0]; ++i) f32_at(node, i, i1, i2, i3) = f32_at(a, i, i1, i2, i3) * y;
  });
}

// dst = a / b; b broadcast over a's rows, or one value per row ([1, rows]).
void div(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    const int64_t j1 = i1 % b.ne[1], j2 = i2 % b.ne[2], j3 = i3 % b.ne[3];
    for (int64_t i = 0; i < a.ne[0]; ++i) {
      f32_at(node, i, i1, i2, i3) = f32_at(a, i, i1, i2, i3) / f32_at(b, b.ne[0] == 1 ? 0 : i, j1, j2, j3);
    }
  });
}

// dst = 1 / (1 + e^-a), in double.
void sigmoid(const Tensor& node) {
  map_unary(node,
            [](float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x)))); });
}

// dst = e^a, in double.
void exp(const Tensor& node) {
  map_unary(node, [](float x) { return static_cast<float>(std::exp(static_cast<double>(x))); });
}

// dst = tanh(a), in double.
void tanh(const Tensor& node) {
  map_unary(node, [](float x) { return static_cast<float>(std::tanh(static_cast<double>(x))); });
}

// dst = a > 20 ? a : log(1 + e^a), in double (llama.cpp's ggml_softplus, whose float form the CPU
// computes).
void softplus(const Tensor& node) {
  map_unary(node, [](float x) {
    return x > 20.0f ? x : static_cast<float>(std::log1p(std::exp(static_cast<double>(x))));
  });
}

// dst = min(max(a, lo), hi); params: lo, hi.
void clamp(const Tensor& node) {
  const float lo = node.param_float(0), hi = node.param_float(1);
  map_unary(node, [lo, hi](float x) { return x < lo ? lo : x > hi ? hi : x; });
}

// dst = a · s; params[0]: s.
void scale(const Tensor& node) {
  const float s = node.param_float(0);
  map_unary(node, [s](float x) { return x * s; });
}

void silu(const Tensor& node) {
  map_unary(node, [](float x) { return static_cast<float>(silu_of(x)); });
}

void gelu(const Tensor& node) {
  map_unary(node, [](float x) { return static_cast<float>(gelu_of(x)); });
}

// dst = cap · tanh(a / cap); params[0]: cap.
void softcap(const Tensor& node) {
  const double cap = node.param_float(0);
  map_unary(node, [cap](float x) { return static_cast<float>(cap * std::tanh(x / cap)); });
}

// dst = silu(gate) · up (same shapes).
void swiglu(const Tensor& node) {
  map_binary(node, [](float gate, float up) { return static_cast<float>(silu_of(gate) * up); });
}

// dst = g · sigmoid(alpha · g) · (u + 1), g = min(gate, limit), u = clamp(up, ±limit); params:
// alpha, limit (gpt-oss).
void swiglu_oai(const Tensor& node) {
  const double alpha = node.param_float(0), limit = node.param_float(1);
  map_binary(node, [alpha, limit](float gate, float up) {
    const double g = std::min(static_cast<double>(gate), limit);
    const double u = std::clamp(static_cast<double>(up), -limit, limit);
    return static_cast<float>(g / (1.0 + std::exp(-alpha * g)) * (u + 1.0));
  });
}

// dst = gelu(gate) · up (same shapes).
void geglu(const Tensor& node) {
  map_binary(node, [](float gate, float up) { return static_cast<float>(gelu_of(gate) * up); });
}

// dst (contiguous, of node.type) = a, row by row: each of a's rows (any dequantizable type, any
// strides a view gives it) is widened to F32 and written with the destination type's reference
// quantizer.
void copy(const Tensor& node) {
  const Tensor& a = *node.src[0];
  assert(a.ne == node.ne);
  std::vector<float> row(static_cast<size_t>(a.ne[0]));
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row_f32(a, i1, i2, i3, row.data());
    write_row(node.type, row.data(), node.row(i1, i2, i3), a.ne[0]);
  });
}

}  // namespace sinter::reference_backend
