// Row reductions on F32: RMS norm, layer norm, L2 norm and softmax. Sums, means and the softmax's
// exponentials are computed in double; each result is rounded to F32 once, at the end.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/reference/reference_ops.h"

namespace sinter::reference_backend {

// dst = x / sqrt(mean(x²) + eps) per row; params[0]: eps.
void rms_norm(const Tensor& node) {
  const Tensor& x = *node.src[0];
  const double eps = node.param_float(0);
  const int64_t n = x.ne[0];
  for_each_row(x.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    double sum_squares = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = f32_at(x, i, i1, i2, i3);
      sum_squares += v * v;
    }
    const double inverse_rms = 1.0 / std::sqrt(sum_squares / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i) {
      f32_at(node, i, i1, i2, i3) = static_cast<float>(f32_at(x, i, i1, i2, i3) * inverse_rms);
    }
  });
}

// dst = (x - mean) / sqrt(variance + eps) per row; params[0]: eps.
void norm(const Tensor& node) {
  const Tensor& x = *node.src[0];
  const double eps = node.param_float(0);
  const int64_t n = x.ne[0];
  for_each_row(x.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += f32_at(x, i, i1, i2, i3);
    const double mean = sum / static_cast<double>(n);
    double sum_squares = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = f32_at(x, i, i1, i2, i3) - mean;
      sum_squares += d * d;
    }
    const double inverse_deviation = 1.0 / std::sqrt(sum_squares / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i) {
      f32_at(node, i, i1, i2, i3) = static_cast<float>((f32_at(x, i, i1, i2, i3) - mean) * inverse_deviation);
    }
  });
}

// dst = x · (1 / max(sqrt(Σ x²), eps)) per row, as llama.cpp's ggml_l2_norm: each square rounded
// to float, summed in double in order, the root taken in float; params[0]: eps.
void l2_norm(const Tensor& node) {
  const Tensor& x = *node.src[0];
  const float eps = node.param_float(0);
  for_each_row(x.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    double sum = 0.0;
    for (int64_t i = 0; i < x.ne[0]; ++i) {
      const float v = f32_at(x, i, i1, i2, i3);
      sum += static_cast<double>(v * v);
    }
    const float scale = 1.0f / std::fmax(std::sqrt(static_cast<float>(sum)), eps);
    for (int64_t i = 0; i < x.ne[0]; ++i) f32_at(node, i, i1, i2, i3) = f32_at(x, i, i1, i2, i3) * scale;
  });
}

// dst = softmax(a * scale + mask) per row; mask (optional, F32) has a's row length and is
// broadcast over a's rows (its dimensions of 1 repeat); -inf in it excludes a column. A row with
// every column excluded is all zeros. params[0]: scale.
void softmax(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor* mask = node.src[1];
  const float scale = node.param_float(0);
  const int64_t n = a.ne[0];
  std::vector<float> logits(static_cast<size_t>(n));
  std::vector<double> weights(static_cast<size_t>(n));
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    // The masked, scaled values in F32, as the op defines them.
    float max_value = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      float v = f32_at(a, i, i1, i2, i3) * scale;
      if (mask != nullptr) v += f32_at(*mask, i, i1 % mask->ne[1], i2 % mask->ne[2], i3 % mask->ne[3]);
      logits[static_cast<size_t>(i)] = v;
      max_value = std::max(max_value, v);
    }
    if (max_value == -INFINITY) {
      for (int64_t i = 0; i < n; ++i) f32_at(node, i, i1, i2, i3) = 0.0f;
      return;
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      weights[static_cast<size_t>(i)] =
          std::exp(static_cast<double>(logits[static_cast<size_t>(i)]) - max_value);
      sum += weights[static_cast<size_t>(i)];
    }
    for (int64_t i = 0; i < n; ++i)
      f32_at(node, i, i1, i2, i3) = static_cast<float>(weights[static_cast<size_t>(i)] / sum);
  });
}

}  // namespace sinter::reference_backend
