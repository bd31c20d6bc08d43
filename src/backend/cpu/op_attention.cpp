// Attention over the KV cache, and the writes that fill it.
//
// Each (token, head) is computed on its own, over the cells the attention index lists for the
// token, in position order. The result depends only on the token's sequence, never on
// what else is in the batch or where in the cache the cells are.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/attention_kernels.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/row_kernels.h"

namespace sinter::cpu {

// cache [n, cells, planes] (the KV cache: [head_dim, cells, heads]) rows at slots[t]: plane p's
// row of cell slots[t] = rows[p·n .. (p+1)·n, t]; threads split the tokens.
void run_store_rows(const Tensor& dst, const OpContext& ctx) {
  const Tensor& cache = *dst.src[0];
  const Tensor& rows = *dst.src[1];
  const auto* slots = dst.src[2]->data_as<const int32_t>();
  const int64_t count = dst.src[2]->ne[0];
  const int64_t n = cache.ne[0], planes = cache.ne[2];
  const QuantizeRowFn write = row_writer(cache.type);
  for (int64_t t = ctx.thread.share_begin(count); t < ctx.thread.share_end(count); ++t) {
    // rows is [n_embd_head, n_head_kv, n_tokens] or [n·planes, n_tokens]: token t's values are contiguous.
    const auto* values = reinterpret_cast<const float*>(static_cast<const uint8_t*>(rows.data) +
                                                        t * n * planes * sizeof(float));
    for (int64_t p = 0; p < planes; ++p) write(values + p * n, cache.row(slots[t], p), n);
  }
}

namespace {

// Where KV head g's row of cell 0 starts in a cache tensor [per_row · head_dim, cells,
// planes] (the KV cache's is [head_dim, cells, heads]); its cells' rows are nb[1] apart.
const uint8_t* head_rows(const Tensor& cache, int64_t head_dim, int64_t per_row, int64_t g) {
  return cache.row(0, g / per_row) + (g % per_row) * sinter::row_bytes(cache.type, head_dim);
}

}  // namespace

// dst [head_dim_v * n_head, n_tokens]; q [head_dim, n_head, n_tokens]; K [head_dim, cells,
// n_head_kv] (the KV cache's layout; [head_dim * n_head_kv, cells] is read too); V alike with
// head_dim_v. Threads split the (token, KV head) pairs; the query
// heads that share a KV head are computed together (attention_kernels.h).
//
// All arithmetic is F32 whatever the cache type (cached rows are widened as they are read): an
// online softmax over the visible cells in position order. llama.cpp rounds queries and the
// running sum to F16 for micro-batches under 64 rows and computes in F32 above; sinter computes
// every batch the second way, so a token's result never depends on its batch (docs/NUMERICS.md).
void run_attention(const Tensor& dst, const OpContext& ctx) {
  const Tensor& q = *dst.src[0];
  const Tensor& k = *dst.src[1];
  const Tensor& v = *dst.src[2];
  const int64_t head_dim = q.ne[0];
  const int64_t n_head = q.ne[1];
  const int64_t n_tokens = q.ne[2];
  // The index input (graph.h): begin[t], end[t], then the cells.
  const auto* index_begin = dst.src[3]->data_as<const int32_t>();
  const int32_t* index_end = index_begin + n_tokens;
  const int32_t* index_cells = index_begin + 2 * n_tokens;
  const AttentionCacheHeads heads = attention_cache_heads(k, v, head_dim);
  const int64_t n_head_kv = heads.n_head_kv;
  const int64_t head_dim_v = heads.head_dim_v;
  const int64_t group = n_head / n_head_kv;
  const AttendGroupFn attend = attend_group_kernel();
  const float* sinks = dst.src[4] != nullptr ? dst.src[4]->data_as<const float>() : nullptr;  // [n_head]
  // ALiBi: the tokens' positions, then the positions of the index's cells (graph.h).
  const int32_t* alibi_positions = dst.src[5] != nullptr ? dst.src[5]->data_as<const int32_t>() : nullptr;
  std::vector<float> alibi_slopes;
  if (alibi_positions != nullptr) {
    alibi_slopes.resize(static_cast<size_t>(n_head));
    for (int64_t h = 0; h < n_head; ++h)
      alibi_slopes[static_cast<size_t>(h)] = alibi_slope(h, n_head, dst.param_float(2));
  }

  // A kernel call handles at most kMaxQuerySlots (token, head) pairs (its per-slot state lives in
  // the scratch).
  const int64_t heads_per_call = std::min<int64_t>(group, kMaxQuerySlots);
  const int32_t max_tokens = static_cast<int32_t>(kMaxQuerySlots / heads_per_call);
  AttentionGroupArgs args;
  args.heads = static_cast<int32_t>(heads_per_call);
  args.head_dim = head_dim;
  args.head_dim_v = head_dim_v;
  args.cache_type = k.type;
  args.key_stride = k.nb[1];
  args.value_stride = v.nb[1];
  args.scale = dst.param_float(0);
  args.softcap = dst.param_float(1);
  args.scratch = ctx.scratch.floats.data();
  args.query_stride = static_cast<int64_t>(q.nb[2] / sizeof(float));
  args.out_stride = static_cast<int64_t>(dst.nb[1] / sizeof(float));
  // Runs of adjacent tokens whose visible cells start at the same entry of the index (tokens of
  // one sequence under a causal mask without a window: each sees a prefix of the same cells)
  // share a call, so each block of cells is widened once for all of them; a token's result is
  // the same as alone (attention_kernels.h). The (run, KV head) pairs are dealt to the threads in
  // turn: under a causal mask a run's cost grows with its position, so contiguous shares gave the
  // last thread most of a prompt's work (3x the first's with 2 threads). Which thread computes a
  // pair changes nothing in its result.
  int32_t cell_counts[kMaxQuerySlots];
  int64_t unit = 0;
  for (int64_t t = 0; t < n_tokens;) {
    const int32_t begin = index_begin[t];
    int32_t tokens = 1;
    while (tokens < max_tokens && t + tokens < n_tokens && index_begin[t + tokens] == begin) ++tokens;
    for (int64_t g = 0; g < n_head_kv; ++g, ++unit) {
      if (unit % ctx.thread.count != ctx.thread.index) continue;
      for (int32_t i = 0; i < tokens; ++i) cell_counts[i] = index_end[t + i] - begin;
      args.keys = head_rows(k, head_dim, heads.per_row, g);
      args.values = head_rows(v, head_dim_v, heads.per_row, g);
      args.cells = index_cells + begin;
      if (alibi_positions != nullptr) {
        args.query_positions = alibi_positions + t;
        args.cell_positions = alibi_positions + n_tokens + begin;
      }
      args.tokens = tokens;
      args.cell_counts = cell_counts;
      for (int64_t first = 0; first < group; first += heads_per_call) {
        const int64_t h = g * group + first;  // the group's heads are adjacent
        args.queries = reinterpret_cast<const float*>(q.row(h, t));
        args.out = reinterpret_cast<float*>(dst.row(t)) + h * head_dim_v;
        args.sinks = sinks != nullptr ? sinks + h : nullptr;
        args.alibi_slopes = alibi_positions != nullptr ? alibi_slopes.data() + h : nullptr;
        attend(args);
      }
    }
    t += tokens;
  }
}

}  // namespace sinter::cpu
