// Attention over the KV cache, and the writes that fill it.
//
// Each (token, query head) is computed on its own and plainly: the scores of every cell the
// attention index lists for the token, a max-subtracted softmax and the weighted sum of the
// values, all in double from the F32 queries and the cached rows widened to F32.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "backend/reference/reference_ops.h"

namespace sinter::reference_backend {

// node = cache [n, cells, planes] (the KV cache's: [head_dim, cells, n_head_kv]; the node aliases
// it) with, for each token t, plane p's row of cell slots[t] set to values
// [(t·planes + p)·n, (t·planes + p + 1)·n) of rows (in the logical order of a contiguous tensor:
// rows is [head_dim, n_head_kv, n_tokens] or [n·planes, n_tokens]), converted to the cache type.
void store_rows(const Tensor& node) {
  const Tensor& rows = *node.src[1];
  const Tensor& slots = *node.src[2];
  assert(node.data == node.src[0]->data);  // a view of the cache: written in place
  const int64_t n = node.ne[0], planes = node.ne[2];
  assert(node.ne[3] == 1 && rows.elements() == n * planes * slots.ne[0]);
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t t = 0; t < slots.ne[0]; ++t) {
    const int32_t slot = i32_at(slots, t);
    assert(slot >= 0 && slot < node.ne[1]);
    for (int64_t p = 0; p < planes; ++p) {
      read_flat_f32(rows, (t * planes + p) * n, n, values.data());
      write_row(node.type, values.data(), node.row(slot, p), n);
    }
  }
}

namespace {

// KV head g's row of `cell` in a cache tensor [per_row · dim, cells, planes]: plane g / per_row,
// the (g % per_row)-th run of `dim` values of the cell's row there.
const uint8_t* head_row(const Tensor& cache, int64_t dim, int64_t per_row, int64_t g, int64_t cell) {
  return cache.row(cell, g / per_row) + static_cast<size_t>(g % per_row) * row_bytes(cache.type, dim);
}

// The distinct cells an attention index lists (for all its tokens), numbered in order of first
// appearance: each is widened once per KV head, however many tokens see it.
struct ListedCells {
  std::vector<int32_t> cells;   // [distinct]: the cache cell of each number
  std::vector<int32_t> number;  // [cache cells]: the number of each listed cell
};

ListedCells listed_cells(const Tensor& index, int64_t n_tokens, int64_t cache_cells) {
  ListedCells listed;
  listed.number.assign(static_cast<size_t>(cache_cells), -1);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int32_t i = i32_at(index, t); i < i32_at(index, n_tokens + t); ++i) {
      const int32_t cell = i32_at(index, 2 * n_tokens + i);
      assert(cell >= 0 && cell < cache_cells);
      int32_t& number = listed.number[static_cast<size_t>(cell)];
      if (number >= 0) continue;
      number = static_cast<int32_t>(listed.cells.size());
      listed.cells.push_back(cell);
    }
  }
  return listed;
}

// KV head g's rows of the listed cells, widened to F32: [distinct][dim].
void widen_head_rows(const Tensor& cache, int64_t dim, int64_t per_row, int64_t g, const ListedCells& listed,
                     std::vector<float>& out) {
  out.resize(listed.cells.size() * static_cast<size_t>(dim));
  const DequantizeRowFn widen = dtype_traits(cache.type).dequantize;
  for (size_t j = 0; j < listed.cells.size(); ++j) {
    widen(head_row(cache, dim, per_row, g, listed.cells[j]), out.data() + j * static_cast<size_t>(dim), dim);
  }
}

}  // namespace

// node F32 [head_dim_v · n_head, n_tokens]; q F32 [head_dim, n_head, n_tokens]; k, v the caches
// after their stores, [per_row · head_dim, cells, planes] and [per_row · head_dim_v, cells,
// planes] (attention_cache_heads); index I32 (graph.h): begin[t] at t, end[t] at n_tokens + t,
// the cells from 2·n_tokens on. Query head h reads KV head h / (n_head / n_head_kv). Scores are
// scale · (q · k), soft-capped to softcap · tanh(s / softcap) when softcap is not 0. A token that
// sees no cell gets zeros. params: scale, softcap, max ALiBi bias. src[4], when present, holds a
// sink logit per query head: a score with no value in each softmax's denominator. src[5], when
// present (ALiBi), the positions of the tokens then of the index's listed cells (graph.h): head h
// adds −alibi_slope(h) · |p_token − p_cell| to each score after the scaling and soft-capping.
void attention(const Tensor& node) {
  const Tensor& q = *node.src[0];
  const Tensor& k = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor& index = *node.src[3];
  const int64_t head_dim = q.ne[0], n_head = q.ne[1], n_tokens = q.ne[2];
  const AttentionCacheHeads heads = attention_cache_heads(k, v, head_dim);
  const int64_t head_dim_v = heads.head_dim_v;
  const int64_t group = n_head / heads.n_head_kv;
  const double scale = node.param_float(0);
  const double softcap = node.param_float(1);
  const auto hd = static_cast<size_t>(head_dim), hd_v = static_cast<size_t>(head_dim_v);

  const Tensor* sinks = node.src[4];  // optional F32 [n_head]
  const Tensor* alibi = node.src[5];  // optional I32 [n_tokens + capacity]
  const float max_alibi_bias = node.param_float(2);
  const ListedCells listed = listed_cells(index, n_tokens, k.ne[1]);
  std::vector<float> keys, values;  // one KV head's rows of the listed cells, widened
  std::vector<double> query(hd), scores, sum(hd_v);
  for (int64_t g = 0; g < heads.n_head_kv; ++g) {
    widen_head_rows(k, head_dim, heads.per_row, g, listed, keys);
    widen_head_rows(v, head_dim_v, heads.per_row, g, listed, values);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const int32_t begin = i32_at(index, t);
      const int32_t count = std::max(0, i32_at(index, n_tokens + t) - begin);
      for (int64_t h = g * group; h < (g + 1) * group; ++h) {
        for (size_t i = 0; i < hd; ++i) query[i] = f32_at(q, static_cast<int64_t>(i), h, t);
        // Scores of the visible cells, in the index's order, and their maximum.
        scores.assign(static_cast<size_t>(count), 0.0);
        const double slope = alibi != nullptr ? alibi_slope(h, n_head, max_alibi_bias) : 0.0;
        // A sink is one more score, with no value.
        const double sink = sinks != nullptr ? static_cast<double>(f32_at(*sinks, h, 0)) : -INFINITY;
        double max_score = sink;
        for (int32_t j = 0; j < count; ++j) {
          const size_t row = static_cast<size_t>(
              listed.number[static_cast<size_t>(i32_at(index, 2 * n_tokens + begin + j))]);
          double dot = 0.0;
          for (size_t i = 0; i < hd; ++i) dot += query[i] * keys[row * hd + i];
          double s = scale * dot;
          if (softcap != 0.0) s = softcap * std::tanh(s / softcap);
          if (alibi != nullptr) {
            const int32_t distance = i32_at(*alibi, t) - i32_at(*alibi, n_tokens + begin + j);
            s -= slope * std::abs(distance);
          }
          scores[static_cast<size_t>(j)] = s;
          max_score = std::max(max_score, s);
        }
        // Softmax weights exp(s - max) and the weighted sum of the values.
        std::fill(sum.begin(), sum.end(), 0.0);
        double total = 0.0;
        if (max_score != -INFINITY) {
          if (sinks != nullptr) total += std::exp(sink - max_score);
          for (int32_t j = 0; j < count; ++j) {
            const size_t row = static_cast<size_t>(
                listed.number[static_cast<size_t>(i32_at(index, 2 * n_tokens + begin + j))]);
            const double weight = std::exp(scores[static_cast<size_t>(j)] - max_score);
            total += weight;
            for (size_t i = 0; i < hd_v; ++i) sum[i] += weight * values[row * hd_v + i];
          }
        }
        for (size_t i = 0; i < hd_v; ++i) {
          f32_at(node, h * head_dim_v + static_cast<int64_t>(i), t) =
              static_cast<float>(total > 0.0 ? sum[i] / total : 0.0);
        }
      }
    }
  }
}

}  // namespace sinter::reference_backend
