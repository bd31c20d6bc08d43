// Mixture-of-experts routing and combination: row sums, top-k, weighted sums of expert outputs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "backend/reference/reference_ops.h"

namespace sinter::reference_backend {

// dst [1, rows]: each row's sum, in double, in order.
void sum_rows(const Tensor& node) {
  const Tensor& a = *node.src[0];
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    double sum = 0.0;
    for (int64_t i = 0; i < a.ne[0]; ++i) sum += f32_at(a, i, i1, i2, i3);
    f32_at(node, 0, i1, i2, i3) = static_cast<float>(sum);
  });
}

// dst I32 [k, rows]: the columns of each row's k largest values, largest first; equal values
// in column order; NaN below everything. A stable sort of all columns by value, descending.
// Grouped (params groups, groups_used): only the best groups' columns compete.
void top_k(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const int64_t n = a.ne[0], k = node.ne[0];
  const int32_t groups = node.params[1], groups_used = node.params[2];
  int64_t r = 0;
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    std::vector<std::pair<float, int32_t>> values;
    for (int64_t i = 0; i < n; ++i) {
      const float v = f32_at(a, i, i1, i2, i3);
      values.emplace_back(std::isnan(v) ? -INFINITY : v, static_cast<int32_t>(i));
    }
    if (groups > 1) {
      // Each group's score: its two largest values summed; the columns of all but the
      // groups_used best groups (a stable sort: ties keep the lower group) become −inf.
      const int64_t size = n / groups;
      std::vector<std::pair<float, int32_t>> scores;
      for (int32_t g = 0; g < groups; ++g) {
        std::vector<float> group;
        for (int64_t i = g * size; i < (g + 1) * size; ++i)
          group.push_back(values[static_cast<size_t>(i)].first);
        std::sort(group.begin(), group.end(), std::greater<>());
        scores.emplace_back(group[0] + group[1], g);
      }
      std::stable_sort(scores.begin(), scores.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      std::vector<bool> kept(static_cast<size_t>(groups), false);
      for (int32_t j = 0; j < groups_used; ++j)
        kept[static_cast<size_t>(scores[static_cast<size_t>(j)].second)] = true;
      for (int64_t i = 0; i < n; ++i) {
        if (!kept[static_cast<size_t>(i / size)]) values[static_cast<size_t>(i)].first = -INFINITY;
      }
    }
    std::stable_sort(values.begin(), values.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    auto* out = static_cast<int32_t*>(node.data) + r * k;
    for (int64_t j = 0; j < k; ++j) out[j] = values[static_cast<size_t>(j)].second;
    ++r;
  });
}

// dst [n, t] = Σ_j w[j, t] · a[:, j, t]: each product rounded to float, added in order of j.
void weighted_sum(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& w = *node.src[1];
  for (int64_t t = 0; t < a.ne[2]; ++t) {
    for (int64_t i = 0; i < a.ne[0]; ++i) {
      float sum = f32_at(a, i, 0, t) * f32_at(w, 0, t);
      for (int64_t j = 1; j < a.ne[1]; ++j) {
        const float product = f32_at(a, i, j, t) * f32_at(w, j, t);
        sum += product;
      }
      f32_at(node, i, t) = sum;
    }
  }
}

// dst [na + nb, ...]: each row of a, then the row of b (F32).
void concat(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  for_each_row(a.ne, [&](int64_t i1, int64_t i2, int64_t i3) {
    for (int64_t i = 0; i < a.ne[0]; ++i) f32_at(node, i, i1, i2, i3) = f32_at(a, i, i1, i2, i3);
    for (int64_t i = 0; i < b.ne[0]; ++i) f32_at(node, a.ne[0] + i, i1, i2, i3) = f32_at(b, i, i1, i2, i3);
  });
}

}  // namespace sinter::reference_backend
