// The routing and combining ops of mixture-of-experts layers: row sums, top-k selection and the
// weighted sum of each token's expert outputs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "backend/cpu/cpu_ops.h"

namespace sinter::cpu {
namespace {

const float* row_of(const Tensor& t, int64_t r) {
  return reinterpret_cast<const float*>(t.row(r % t.ne[1], (r / t.ne[1]) % t.ne[2], r / (t.ne[1] * t.ne[2])));
}

// Grouped selection (Graph::top_k_grouped): x's n values in `groups` groups; a group scores the
// sum of its two largest values (NaN as −inf); `out` gets x where the group is among the
// `used` best (ties: the lower group), −inf elsewhere. `order`, `scores`: [groups] of working space.
void keep_best_groups(const float* x, int64_t n, int32_t groups, int32_t used, float* out, int32_t* order,
                      float* scores) {
  const int64_t size = n / groups;
  for (int32_t g = 0; g < groups; ++g) {
    float first = -INFINITY, second = -INFINITY;
    for (int64_t i = g * size; i < (g + 1) * size; ++i) {
      const float v = std::isnan(x[i]) ? -INFINITY : x[i];
      if (v > first) {
        second = first;
        first = v;
      } else if (v > second) {
        second = v;
      }
    }
    scores[g] = first + second;
  }
  std::iota(order, order + groups, 0);
  std::partial_sort(order, order + used, order + groups, [scores](int32_t a, int32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  std::fill(out, out + n, -INFINITY);
  for (int32_t j = 0; j < used; ++j) {
    const int64_t first = int64_t{order[j]} * size;
    std::copy(x + first, x + first + size, out + first);
  }
}

}  // namespace

// dst [1, rows] = Σ of each row, in order, in double (then rounded once).
void run_sum_rows(const Tensor& dst, const OpContext& ctx) {
  const Tensor& a = *dst.src[0];
  auto* out = static_cast<float*>(dst.data);
  for (int64_t r = ctx.thread.share_begin(a.rows()); r < ctx.thread.share_end(a.rows()); ++r) {
    const float* x = row_of(a, r);
    double sum = 0.0;
    for (int64_t i = 0; i < a.ne[0]; ++i) sum += x[i];
    out[r] = static_cast<float>(sum);
  }
}

// dst I32 [k, rows]: each row's k largest columns, largest first, the lower column first among
// equal values; NaN counts as the smallest value. Grouped: among the best groups' columns.
void run_top_k(const Tensor& dst, const OpContext& ctx) {
  const Tensor& a = *dst.src[0];
  const int64_t n = a.ne[0], k = dst.ne[0];
  const int32_t groups = dst.params[1], groups_used = dst.params[2];
  // Scratch (op_matmul.cpp sizes it): columns [n], then for grouped selection the kept values
  // [n], the group order [groups] and scores [groups].
  auto* columns = reinterpret_cast<int32_t*>(ctx.scratch.floats.data());
  float* kept = ctx.scratch.floats.data() + n;
  auto* group_order = reinterpret_cast<int32_t*>(kept + n);
  float* group_scores = kept + n + groups;
  for (int64_t r = ctx.thread.share_begin(a.rows()); r < ctx.thread.share_end(a.rows()); ++r) {
    const float* x = row_of(a, r);
    if (groups > 1) {
      keep_best_groups(x, n, groups, groups_used, kept, group_order, group_scores);
      x = kept;
    }
    auto value = [x](int32_t i) { return std::isnan(x[i]) ? -INFINITY : x[i]; };
    std::iota(columns, columns + n, 0);
    std::partial_sort(columns, columns + k, columns + n, [&](int32_t i, int32_t j) {
      const float vi = value(i), vj = value(j);
      return vi > vj || (vi == vj && i < j);
    });
    std::copy(columns, columns + k, static_cast<int32_t*>(dst.data) + r * k);
  }
}

// dst [n, t] = Σ_j w[j, t] · a[:, j, t]: each product rounded to float, then added in order of j
// (the expert outputs weighted, then summed one after the other).
void run_weighted_sum(const Tensor& dst, const OpContext& ctx) {
  const Tensor& a = *dst.src[0];
  const Tensor& w = *dst.src[1];
  const int64_t n = a.ne[0], k = a.ne[1], tokens = a.ne[2];
  for (int64_t t = ctx.thread.share_begin(tokens); t < ctx.thread.share_end(tokens); ++t) {
    const auto* weights = reinterpret_cast<const float*>(w.row(t));
    auto* out = reinterpret_cast<float*>(dst.row(t));
    const auto* first = reinterpret_cast<const float*>(a.row(0, t));
    for (int64_t i = 0; i < n; ++i) out[i] = first[i] * weights[0];
    for (int64_t j = 1; j < k; ++j) {
      const auto* x = reinterpret_cast<const float*>(a.row(j, t));
      for (int64_t i = 0; i < n; ++i) {
        const float product = x[i] * weights[j];
        out[i] += product;
      }
    }
  }
}

// dst [na + nb, rows] = each row of a, then the same row of b (any types of a fixed size).
void run_concat(const Tensor& dst, const OpContext& ctx) {
  const Tensor& a = *dst.src[0];
  const Tensor& b = *dst.src[1];
  const size_t a_bytes = a.row_bytes(), b_bytes = b.row_bytes();
  for (int64_t r = ctx.thread.share_begin(a.rows()); r < ctx.thread.share_end(a.rows()); ++r) {
    const int64_t i1 = r % a.ne[1], i2 = (r / a.ne[1]) % a.ne[2], i3 = r / (a.ne[1] * a.ne[2]);
    uint8_t* out = dst.row(i1, i2, i3);
    std::memcpy(out, a.row(i1, i2, i3), a_bytes);
    std::memcpy(out + a_bytes, b.row(i1, i2, i3), b_bytes);
  }
}

}  // namespace sinter::cpu
