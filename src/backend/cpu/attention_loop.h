// The attention inner loop, written once over an ISA's vector operations. Each ISA file
// (generic, AVX2, AVX-512) includes this header and instantiates it with its own `Ops`, compiled
// with its own instruction-set flags:
//
//   struct Ops {
//     static void widen(DType type, const uint8_t* row, float* out, int64_t n);  // cache row -> F32
//     // out[j] = q · rows[j·n ..], j = 0..count-1
//     static void dots(const float* q, const float* rows, int64_t count, int64_t n, float* out);
//     static float exp_shifted(float* x, float shift, int64_t n);  // x = exp(x - shift); returns Σ x
//     static void scale(float* x, float factor, int64_t n);         // x *= factor
//     static float scale_max(float* x, float factor, int64_t n);    // x *= factor; returns max(x)
//     // out += Σ_j weights[j] · rows[j·n ..], j = 0..count-1 in order
//     static void accumulate(float* out, const float* rows, const float* weights, int64_t count, int64_t n);
//     // optional: accumulate for `heads` heads at once (out and weights `*_stride` apart per head),
//     // with the same per-head result
//     static void accumulate_heads(float* out, int64_t out_stride, int32_t heads, const float* rows,
//                                  const float* weights, int64_t weight_stride, int64_t count, int64_t n);
//     // optional, both or neither: dots and accumulate_heads of all heads over an F16 cache's own
//     // rows (rows[j]: cell j's row; n a multiple of 8), widened in registers, with the same
//     // per-head results; dots_direct's out is [heads][kCellBlock]
//     // (asking for the rows of `ahead` as it goes)
//     static void dots_direct(const float* q, int32_t heads, int64_t n, const uint8_t* const* rows,
//                             int32_t count, float* out, const RowsAhead& ahead);
//     static void accumulate_direct(float* out, int64_t out_stride, int32_t heads,
//                                   const uint8_t* const* rows, const float* weights,
//                                   int64_t weight_stride, int64_t count, int64_t n);
//   };
//
// An online softmax over blocks of kCellBlock visible cells, in position order. Per block: the
// block's keys are widened once and every head of the group (of every token of the call, over
// the cells of the block it sees) scores them, s = scale·(q·k)
// (soft-capped when asked, ALiBi's distance bias added when asked); each head's running maximum m becomes
// max(m, the block's scores), its running sum of values and its weight total are rescaled by exp(old m − new
// m) (once per block, not per cell), the scores become weights exp(s − m) (a vector exp), and the block's
// values, widened once, are added with those weights. At the end the sum is divided by the total.
//
// One token (generation) over an F16 cache, where Ops has the direct forms: the block's rows are
// read where they are used, widened in registers, and not widened into the scratch first; for
// one token the widening's stores and reloads were a third of the time, with no other token to
// share them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/attention_kernels.h"

namespace sinter::cpu {

// Calls held.template operator()<H>(first) for the heads in groups of G (H = G, then the rest,
// G ≤ 4): the SIMD kernels keep H heads' sums in registers, so H must be a constant.
template <int G, class Held>
void for_head_groups(int32_t heads, Held&& held) {
  static_assert(G >= 1 && G <= 4);
  for (int32_t h = 0; h < heads; h += G) {
    switch (std::min(G, heads - h)) {
      case 4:
        if constexpr (G >= 4) held.template operator()<4>(h);
        break;
      case 3:
        if constexpr (G >= 3) held.template operator()<3>(h);
        break;
      case 2:
        if constexpr (G >= 2) held.template operator()<2>(h);
        break;
      default: held.template operator()<1>(h); break;
    }
  }
}
template <class Held>
void for_head_quads(int32_t heads, Held&& held) {
  for_head_groups<4>(heads, held);
}

// Internal linkage: each ISA's file compiles these with its own flags.
namespace {

// Asks for one line. An asm statement on x86: gcc 12 deleted loops whose only work was
// __builtin_prefetch (RowsAhead::ask compiled to nothing).
inline void prefetch_line(const uint8_t* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*p));
#else
  __builtin_prefetch(p);
#endif
}

// Asks for every line of a cached row.
inline void prefetch_cached_row(const uint8_t* row, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) prefetch_line(row + o);
  if (bytes > 0) prefetch_line(row + bytes - 1);  // the last line, when rows straddle lines
}

// The direct form's rows of the next block, which its dots ask for a few rows at a time as they
// use the block's rows (all at once, the requests stalled the loop: a third of its time).
struct RowsAhead {
  const uint8_t* const* keys = nullptr;  // [count] row pointers
  const uint8_t* const* values = nullptr;
  int32_t count = 0;
  size_t key_bytes = 0, value_bytes = 0;
  // Asks for the key and value rows from..to-1 (those listed).
  void ask(int32_t from, int32_t to) const {
    for (int32_t j = from; j < std::min(to, count); ++j) {
      prefetch_cached_row(keys[j], key_bytes);
      prefetch_cached_row(values[j], value_bytes);
    }
  }
};

}  // namespace

template <class Ops>
void attend_group_loop(const AttentionGroupArgs& a) {
  const int64_t width = std::max(a.head_dim, a.head_dim_v);
  const int32_t slots = a.tokens * a.heads;  // slot i·heads + h: head h of token i
  float* rows = a.scratch;                   // [kCellBlock][width]: the block's widened keys, then its values
  float* max_score = rows + kCellBlock * width + 16;
  float* total = max_score + slots;
  float* scores = total + slots;  // [slots][kCellBlock]: scores, then weights
  const auto cells_of = [&](int32_t i) { return a.cell_counts == nullptr ? a.cell_count : a.cell_counts[i]; };
  const auto out_of = [&](int32_t i, int32_t h) { return a.out + i * a.out_stride + h * a.head_dim_v; };
  int32_t longest = 0;
  for (int32_t i = 0; i < a.tokens; ++i) {
    longest = std::max(longest, cells_of(i));
    for (int32_t h = 0; h < a.heads; ++h) {
      // A sink starts the softmax as a cell of score `sink` and no value: weight 1 at maximum
      // `sink`, rescaled like the rest as larger scores come.
      max_score[i * a.heads + h] = a.sinks != nullptr ? a.sinks[h] : -INFINITY;
      total[i * a.heads + h] = a.sinks != nullptr ? 1.0f : 0.0f;
      std::memset(out_of(i, h), 0, static_cast<size_t>(a.head_dim_v) * sizeof(float));
    }
  }
  // Rows may be scattered and are read once: each is asked for a block ahead, every line of it,
  // one row per row widened (so that the requests spread over the work). With 8 rows ahead,
  // generation deep in the context waited on the cache's rows from memory.
  constexpr int32_t kPrefetchCells = kCellBlock;
  // Widens the `count` rows of `cells` (`listed` cells are listed from there on; the first
  // block's rows are asked for all at once, before it). kF16Values > 0: an F16 cache with rows of
  // that many values, as constants, so that the loops over a row's vectors and lines unroll (with
  // the row length a variable they were about a third of the instructions of generation's
  // attention; one core, `attention/avx2/f16/4x64`, both changes: ~60 -> 83-105 M cell-heads/s).
  const auto widen_rows = [&]<int64_t kF16Values>(const int32_t* cells, int32_t count, int32_t listed,
                                                  const uint8_t* base, size_t stride, int64_t values) {
    const DType type = kF16Values > 0 ? DType::F16 : a.cache_type;
    const int64_t n = kF16Values > 0 ? kF16Values : values;
    const size_t bytes = kF16Values > 0 ? 2 * kF16Values : row_bytes(type, n);
    if (cells == a.cells) {
      for (int32_t j = 0; j < std::min(kPrefetchCells, count); ++j)
        prefetch_cached_row(base + cells[j] * stride, bytes);
    }
    for (int32_t j = 0; j < count; ++j) {
      if (j + kPrefetchCells < listed) prefetch_cached_row(base + cells[j + kPrefetchCells] * stride, bytes);
      Ops::widen(type, base + cells[j] * stride, rows + j * n, n);
    }
  };
  const auto widen_block = [&](const int32_t* cells, int32_t count, int32_t listed, const uint8_t* base,
                               size_t stride, int64_t n) {
    if (a.cache_type == DType::F16 && n == 64) {
      widen_rows.template operator()<64>(cells, count, listed, base, stride, n);
    } else if (a.cache_type == DType::F16 && n == 128) {
      widen_rows.template operator()<128>(cells, count, listed, base, stride, n);
    } else {
      widen_rows.template operator()<0>(cells, count, listed, base, stride, n);
    }
  };
  constexpr bool kHasDirect = requires {
    &Ops::dots_direct;
    &Ops::accumulate_direct;
  };
  const bool direct = kHasDirect && a.tokens == 1 && a.cache_type == DType::F16 && a.head_dim % 8 == 0 &&
                      a.head_dim_v % 8 == 0;
  // The direct form's row pointers of a block and of the next ([block parity][keys, values]): the
  // next block's rows are asked for while the block's are used (the first block's all at once,
  // before it).
  const uint8_t* pointed[2][2][kCellBlock];
  const size_t key_bytes = 2 * static_cast<size_t>(a.head_dim),
               value_bytes = 2 * static_cast<size_t>(a.head_dim_v);
  const auto point_rows = [&](int32_t first) {
    const uint8_t** keys = pointed[(first / kCellBlock) % 2][0];
    const uint8_t** values = pointed[(first / kCellBlock) % 2][1];
    const int32_t count = std::max(0, std::min<int32_t>(kCellBlock, longest - first));
    for (int32_t j = 0; j < count; ++j) {
      keys[j] = a.keys + a.cells[first + j] * a.key_stride;
      values[j] = a.values + a.cells[first + j] * a.value_stride;
    }
    return RowsAhead{keys, values, count, key_bytes, value_bytes};
  };
  if (direct) point_rows(0).ask(0, kCellBlock);
  RowsAhead ahead;  // the next block's, in the direct form
  // The cells of the block starting at `first` that token i sees (≤ 0: none).
  const auto seen = [&](int32_t i, int32_t first) {
    return std::min<int32_t>(kCellBlock, cells_of(i) - first);
  };
  for (int32_t first = 0; first < longest; first += kCellBlock) {
    const int32_t* cells = a.cells + first;
    const int32_t block = std::min<int32_t>(kCellBlock, longest - first);  // the cells any token sees
    const uint8_t* const* key_rows = pointed[(first / kCellBlock) % 2][0];
    const uint8_t* const* value_rows = pointed[(first / kCellBlock) % 2][1];
    if (direct) {
      ahead = point_rows(first + kCellBlock);
    } else {
      widen_block(cells, block, longest - first, a.keys, a.key_stride, a.head_dim);
    }
    for (int32_t i = 0; i < a.tokens; ++i) {
      const int32_t count = seen(i, first);
      if (count <= 0) continue;
      const float* token_queries = a.queries + i * a.query_stride;
      float* token_scores = scores + i * a.heads * kCellBlock;
      if (direct) {
        if constexpr (kHasDirect) {
          Ops::dots_direct(token_queries, a.heads, a.head_dim, key_rows, count, token_scores, ahead);
        }
      } else {
        for (int32_t h = 0; h < a.heads; ++h) {
          Ops::dots(token_queries + h * a.head_dim, rows, count, a.head_dim, token_scores + h * kCellBlock);
        }
      }
      for (int32_t h = 0; h < a.heads; ++h) {
        const int32_t slot = i * a.heads + h;
        float* s = scores + slot * kCellBlock;
        float block_max = -INFINITY;
        if (a.softcap == 0.0f) {
          block_max = Ops::scale_max(s, a.scale, count);
        } else {
          for (int32_t j = 0; j < count; ++j) {
            s[j] = a.softcap * std::tanh(s[j] * a.scale / a.softcap);
            block_max = std::max(block_max, s[j]);
          }
        }
        if (a.alibi_slopes != nullptr) {
          const float slope = a.alibi_slopes[h];
          const int32_t position = a.query_positions[i];
          const int32_t* cell_positions = a.cell_positions + first;
          block_max = -INFINITY;
          for (int32_t j = 0; j < count; ++j) {
            s[j] -= slope * static_cast<float>(std::abs(position - cell_positions[j]));
            block_max = std::max(block_max, s[j]);
          }
        }
        const float new_max = std::max(max_score[slot], block_max);
        if (new_max == -INFINITY) {  // no finite score yet: nothing to weigh
          std::fill(s, s + count, 0.0f);
          continue;
        }
        if (new_max > max_score[slot] && total[slot] != 0.0f) {
          const float rescale = std::exp(max_score[slot] - new_max);
          Ops::scale(out_of(i, h), rescale, a.head_dim_v);
          total[slot] *= rescale;
        }
        max_score[slot] = new_max;
        total[slot] += Ops::exp_shifted(s, new_max, count);
      }
    }
    if (direct) {
      if constexpr (kHasDirect) {
        Ops::accumulate_direct(out_of(0, 0), a.head_dim_v, a.heads, value_rows, scores, kCellBlock, block,
                               a.head_dim_v);
      }
      continue;
    }
    widen_block(cells, block, longest - first, a.values, a.value_stride, a.head_dim_v);
    for (int32_t i = 0; i < a.tokens; ++i) {
      const int32_t count = seen(i, first);
      if (count <= 0) continue;
      const float* weights = scores + i * a.heads * kCellBlock;
      if constexpr (requires { &Ops::accumulate_heads; }) {  // each value row read once for all heads
        Ops::accumulate_heads(out_of(i, 0), a.head_dim_v, a.heads, rows, weights, kCellBlock, count,
                              a.head_dim_v);
      } else {
        for (int32_t h = 0; h < a.heads; ++h) {
          Ops::accumulate(out_of(i, h), rows, weights + h * kCellBlock, count, a.head_dim_v);
        }
      }
    }
  }
  for (int32_t i = 0; i < a.tokens; ++i) {
    for (int32_t h = 0; h < a.heads; ++h) {
      const float sum = total[i * a.heads + h];
      Ops::scale(out_of(i, h), sum == 0.0f ? 0.0f : 1.0f / sum, a.head_dim_v);
    }
  }
}

}  // namespace sinter::cpu
