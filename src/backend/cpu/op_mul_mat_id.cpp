// Expert products: dst [n_out, k, T] column (j, t) = W[:, :, ids[j, t]] · X[:, j or 0, t].
//
// The k·T columns of a batch are sorted by expert, so each chosen expert's weights are read once
// per batch whatever number of tokens chose it, and every thread works on every active expert:
//   1. thread 0 sorts the columns by expert (a counting sort) and lays out the work;
//   2. each active expert is repacked on first use (expert_store.h), then the columns are rounded
//      to the activation format in expert order;
//   3. all threads claim chunks of 16-row groups over all active experts as one index space (a
//      chunk never mixes experts), the dense gemm kernels writing expert-ordered outputs;
//   4. the outputs are copied to their columns of dst.
// Each output is the dense product's (op_matmul.cpp) bit for bit: the same kernels on the same
// rounded columns, whichever batch, expert mix or thread computes it. Weight types without a
// packed kernel run the dense product's plain paths per column.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/expert_store.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/kernels_pack.h"
#include "tensor/vec_dot.h"

namespace sinter::cpu {
namespace {

size_t round_up_64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// The shared buffer of one mul_mat_id node, in this order (each part 64-byte aligned).
struct IdLayout {
  int64_t n_expert = 0, k = 0, tokens = 0, columns = 0;  // columns = k · tokens
  size_t column_bytes = 0;                               // one rounded activation column
  size_t counter = 0, counts = 0, order = 0, group_start = 0, active = 0, activations = 0, outputs = 0,
         total = 0;

  IdLayout(const Tensor& dst, size_t column_bytes_) : column_bytes(column_bytes_) {
    const Tensor& w = *dst.src[0];
    n_expert = w.ne[2];
    k = dst.ne[1];
    tokens = dst.ne[2];
    columns = k * tokens;
    size_t at = 0;
    auto take = [&at](size_t bytes) {
      const size_t offset = at;
      at += round_up_64(bytes);
      return offset;
    };
    counter = take(64);
    counts = take(sizeof(int32_t) * static_cast<size_t>(n_expert + 1));  // prefix sums: expert e's columns
    order = take(sizeof(int32_t) * static_cast<size_t>(columns));        // column (j + k·t) at each position
    group_start = take(sizeof(int64_t) * static_cast<size_t>(n_expert + 1));
    active = take(sizeof(int32_t) * static_cast<size_t>(n_expert + 1));  // active experts, then their count
    activations = take(column_bytes * static_cast<size_t>(columns));
    outputs = take(sizeof(float) * static_cast<size_t>(dst.ne[0] * columns));
    total = at;
  }
};

template <class T>
T* part(uint8_t* shared, size_t offset) {
  return reinterpret_cast<T*>(shared + offset);
}

const float* x_column(const Tensor& x, int64_t j, int64_t t) {
  return reinterpret_cast<const float*>(x.row(x.ne[1] == 1 ? 0 : j, t));
}

// Step 1 on thread 0: columns sorted by expert (in column order within an expert), the active
// experts, and their groups as one index space.
// The matrix of column c (j + k·t): ids[c], or j without ids (per-head matrices).
int32_t expert_of(const int32_t* ids, int64_t c, int64_t k) {
  return ids != nullptr ? ids[c] : static_cast<int32_t>(c % k);
}

void sort_columns(const Tensor* ids, const IdLayout& l, int64_t groups_per_expert, uint8_t* shared) {
  auto* counts = part<int32_t>(shared, l.counts);
  auto* order = part<int32_t>(shared, l.order);
  auto* group_start = part<int64_t>(shared, l.group_start);
  auto* active = part<int32_t>(shared, l.active);
  const auto* id = ids != nullptr ? static_cast<const int32_t*>(ids->data) : nullptr;
  std::fill(counts, counts + l.n_expert + 1, 0);
  for (int64_t c = 0; c < l.columns; ++c) ++counts[expert_of(id, c, l.k) + 1];  // ids come from top_k
  for (int64_t e = 0; e < l.n_expert; ++e) counts[e + 1] += counts[e];
  // A second pass places each column after the ones of its expert placed before it.
  int32_t* next = part<int32_t>(shared, l.active);  // borrowed until the active list is written
  std::copy(counts, counts + l.n_expert, next);
  for (int64_t c = 0; c < l.columns; ++c) order[next[expert_of(id, c, l.k)]++] = static_cast<int32_t>(c);
  int32_t n_active = 0;
  group_start[0] = 0;
  for (int64_t e = 0; e < l.n_expert; ++e) {
    if (counts[e + 1] == counts[e]) continue;
    active[n_active] = static_cast<int32_t>(e);
    group_start[n_active + 1] = group_start[n_active] + groups_per_expert;
    ++n_active;
  }
  active[l.n_expert] = n_active;
  *part<int64_t>(shared, l.counter) = 0;
}

// Columns per block: about 512 KB of activations, as the dense product (a multiple of 24).
int64_t column_block(const ColumnLayout& layout) {
  const auto columns = static_cast<int64_t>((size_t{512} << 10) / layout.bytes);
  return std::max<int64_t>(24, columns / 24 * 24);
}

void run_packed_experts(const Tensor& dst, const ExpertMatrices& experts, const OpContext& ctx) {
  const Tensor& x = *dst.src[1];
  const int64_t n_out = dst.ne[0];
  const PackedMatrix first = experts.matrix(0);
  const ActivationFormat format = activation_format(first.type);
  const ColumnLayout layout = column_layout(format, first.n_in);
  const IdLayout l(dst, layout.bytes);
  uint8_t* shared = ctx.shared;
  if (ctx.thread.index == 0) sort_columns(dst.src[2], l, first.groups, shared);
  ctx.thread.barrier();
  const auto* counts = part<int32_t>(shared, l.counts);
  const auto* order = part<int32_t>(shared, l.order);
  const auto* group_start = part<int64_t>(shared, l.group_start);
  const auto* active = part<int32_t>(shared, l.active);
  const int32_t n_active = active[l.n_expert];

  // 2. Experts packed on first use (threads start at different experts), then the columns.
  for (int32_t a = 0; a < n_active; ++a) {
    experts.ensure_packed(active[(a + n_active * ctx.thread.index / ctx.thread.count) % n_active]);
  }
  const KernelSet& kernels = active_kernels();
  uint8_t* activations = shared + l.activations;
  for (int64_t p = ctx.thread.share_begin(l.columns); p < ctx.thread.share_end(l.columns); ++p) {
    const int64_t c = order[p];
    kernels.quantize(x_column(x, c % l.k, c / l.k), format, layout,
                     activations + static_cast<size_t>(p) * layout.bytes);
  }
  ctx.thread.barrier();

  // 3. Chunks of groups over the active experts, never across two.
  const GemmFn gemm = gemm_kernel(kernels, first.type);
  auto* outputs = part<float>(shared, l.outputs);
  std::atomic_ref<int64_t> next(*part<int64_t>(shared, l.counter));
  const int64_t total = group_start[n_active];
  const int64_t chunk =
      std::clamp<int64_t>(total / (8 * static_cast<int64_t>(ctx.thread.count)), 1,
                          std::max<int64_t>(1, static_cast<int64_t>((size_t{1} << 20) / first.group_bytes)));
  const int64_t block = column_block(layout);
  for (;;) {
    int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= total) break;
    const int64_t end = std::min(total, begin + chunk);
    while (begin < end) {
      const int32_t a = static_cast<int32_t>(
          std::upper_bound(group_start, group_start + n_active + 1, begin) - group_start - 1);
      const int32_t e = active[a];
      const int64_t stop = std::min(end, group_start[a + 1]);
      const PackedMatrix m = experts.matrix(e);
      const int64_t first_column = counts[e], n_columns = counts[e + 1] - counts[e];
      for (int64_t c = 0; c < n_columns; c += block) {
        gemm(m, begin - group_start[a], stop - group_start[a],
             activations + static_cast<size_t>(first_column + c) * layout.bytes, layout,
             std::min(block, n_columns - c), outputs + (first_column + c) * n_out, n_out);
      }
      begin = stop;
    }
  }
  ctx.thread.barrier();

  // 4. Each output column to its place.
  for (int64_t p = ctx.thread.share_begin(l.columns); p < ctx.thread.share_end(l.columns); ++p) {
    std::memcpy(dst.row(order[p] % l.k, order[p] / l.k), outputs + p * n_out,
                static_cast<size_t>(n_out) * sizeof(float));
  }
}

// Types without a packed kernel: per column, the dense product's plain path (the reference dot
// product on rounded columns, or rows widened to F32), threads splitting the output rows.
void run_plain_experts(const Tensor& dst, const OpContext& ctx) {
  const Tensor& w = *dst.src[0];
  const Tensor& x = *dst.src[1];
  const auto* ids = dst.src[2] != nullptr ? static_cast<const int32_t*>(dst.src[2]->data) : nullptr;
  const int64_t n_in = w.ne[0], n_out = w.ne[1], k = dst.ne[1], columns = k * dst.ne[2];
  const DType act = vec_dot_activation_type(w.type);
  const VecDotFn dot = reference_vec_dot(w.type);
  const bool reference = dot != nullptr && n_in % dtype_traits(w.type).block_size == 0 &&
                         n_in % dtype_traits(act).block_size == 0;
  const bool rounds = !reference && act != DType::F32 && n_in % dtype_traits(act).block_size == 0;
  const size_t stride = plain_column_bytes(w);
  auto column = [&](int64_t c) { return ctx.shared + static_cast<size_t>(c) * stride; };
  float* blocks = ctx.scratch.floats.data() + n_in;  // one quantized column (rounds)
  for (int64_t c = ctx.thread.share_begin(columns); c < ctx.thread.share_end(columns); ++c) {
    const float* in = x_column(x, c % k, c / k);
    if (reference) {
      dtype_traits(act).quantize(in, column(c), n_in);
    } else if (rounds) {
      dtype_traits(act).quantize(in, blocks, n_in);
      dtype_traits(act).dequantize(blocks, reinterpret_cast<float*>(column(c)), n_in);
    } else {
      std::memcpy(column(c), in, static_cast<size_t>(n_in) * sizeof(float));
    }
  }
  ctx.thread.barrier();
  float* row = ctx.scratch.floats.data();
  for (int64_t r = ctx.thread.share_begin(n_out); r < ctx.thread.share_end(n_out); ++r) {
    for (int64_t c = 0; c < columns; ++c) {
      const uint8_t* weight_row = w.row(r, expert_of(ids, c, k));
      float* out = reinterpret_cast<float*>(dst.row(c % k, c / k));
      if (reference) {
        out[r] = dot(n_in, weight_row, column(c));
      } else {
        row_to_f32(w.type, weight_row, row, n_in);
        out[r] = dot_f32(row, reinterpret_cast<const float*>(column(c)), n_in);
      }
    }
  }
}

}  // namespace

size_t plain_column_bytes(const Tensor& w) {
  const DType act = vec_dot_activation_type(w.type);
  return round_up_64(std::max(static_cast<size_t>(w.ne[0]) * sizeof(float), row_bytes(act, w.ne[0])));
}

size_t mul_mat_id_shared_bytes(const Tensor& dst) {
  const Tensor& w = *dst.src[0];
  const size_t columns = static_cast<size_t>(dst.ne[1] * dst.ne[2]);
  size_t bytes = plain_column_bytes(w) * columns;
  if (has_packed_layout(w.type))
    bytes = std::max(bytes, IdLayout(dst, column_layout(activation_format(w.type), w.ne[0]).bytes).total);
  return bytes;
}

void run_mul_mat_id(const Tensor& dst, const OpContext& ctx) {
  const ExpertMatrices* experts = ctx.experts != nullptr ? ctx.experts->find(dst.src[0]->data) : nullptr;
  if (experts != nullptr) {
    run_packed_experts(dst, *experts, ctx);
  } else {
    run_plain_experts(dst, ctx);
  }
}

}  // namespace sinter::cpu
