// Matrix products and embedding lookup on weights of any dequantizable type.
//
// Two paths compute the same bits (each output is the reference dot product of
// src/tensor/vec_dot.h, whatever the batch, tile or thread):
// - packed: weights repacked at load into 16-row groups (kernels_pack.h); activation columns
//   rounded by the ISA's quantizer into a planar layout; the ISA's gemm kernel (gemv is the
//   one-column case of the same kernel).
// - plain: the file's rows, activations rounded by the reference quantizers, and the reference
//   dot product per row and column (the generic ISA level, and weights that were not repacked).
// Types without a reference dot product dequantize each weight row and dot in F32.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>

#include "backend/cpu/attention_kernels.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/kernels_pack.h"
#include "core/half.h"
#include "tensor/vec_dot.h"

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

DType activation_type(DType weight) { return vec_dot_activation_type(weight); }

namespace {

const float* column_of(const Tensor& x, int64_t c) {
  return reinterpret_cast<const float*>(static_cast<const uint8_t*>(x.data) + c * x.nb[1]);
}
float* output_column(const Tensor& dst, int64_t c) {
  return reinterpret_cast<float*>(static_cast<uint8_t*>(dst.data) + c * dst.nb[1]);
}

size_t round_up_64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Bytes per column in the shared buffer: the largest any path below uses.
size_t shared_column_bytes(const Tensor& w) {
  const int64_t n_in = w.ne[0];
  size_t bytes = round_up_64(static_cast<size_t>(n_in) * sizeof(float));
  if (has_packed_layout(w.type))
    bytes = std::max(bytes, column_layout(activation_format(w.type), n_in).bytes);
  return bytes;
}

bool has_reference_dot(const Tensor& w) {
  const DType act = vec_dot_activation_type(w.type);
  return reference_vec_dot(w.type) != nullptr && w.ne[0] % dtype_traits(w.type).block_size == 0 &&
         w.ne[0] % dtype_traits(act).block_size == 0;
}

// The shared buffer: a work counter for the packed path, then the activation columns.
constexpr size_t kCounterBytes = 64;

uint8_t* shared_columns(const OpContext& ctx) { return ctx.shared + kCounterBytes; }

// The 16-row groups of a run of packed matrices that read the same activation columns, as one
// index space (matrix i owns [start[i], start[i + 1])): threads claim from one counter, so a
// small matrix (the K and V projections) never leaves a thread waiting at its own barrier.
struct GroupSpace {
  const PackedMatrix* const* w;
  int count;
  int64_t start[kMaxMatMulRun + 1];
  int64_t max_chunk[kMaxMatMulRun];

  GroupSpace(const PackedMatrix* const* matrices, int n, int threads) : w(matrices), count(n) {
    start[0] = 0;
    for (int i = 0; i < n; ++i) start[i + 1] = start[i] + w[i]->groups;
    // Several chunks per thread, so that a thread the machine preempts leaves its work to the
    // others, and at most ~1 MB of weights, which stay in L2 while the columns stream past (a
    // multiple of 4: the float kernels take 4 groups at a time).
    for (int i = 0; i < n; ++i) {
      int64_t chunk = total() / (8 * static_cast<int64_t>(threads));
      chunk = std::min(chunk, static_cast<int64_t>((size_t{1} << 20) / w[i]->group_bytes));
      max_chunk[i] = std::max<int64_t>(4, chunk / 4 * 4);
    }
  }
  int64_t total() const { return start[count]; }
  int matrix_of(int64_t group) const {
    int i = 0;
    while (group >= start[i + 1]) ++i;
    return i;
  }
};

struct GroupRange {
  int matrix = 0;
  int64_t begin = 0, end = 0;  // groups of that matrix; empty: nothing left
};

// Claims the next groups for a thread, never across two matrices: chunks shrink to half the
// remaining work's per-thread share as the end nears (down to 4 groups for the float kernels, 1
// otherwise), so that threads finish together instead of one waiting at the barrier for the
// other's last large chunk (in generation a 1 MB chunk is ~80 us of memory time).
GroupRange claim_groups(std::atomic_ref<int64_t> next, const GroupSpace& space, int threads) {
  int64_t begin = next.load(std::memory_order_relaxed);
  for (;;) {
    if (begin >= space.total()) return {};
    const int i = space.matrix_of(begin);
    const DType type = space.w[i]->type;
    const bool float_kernel = type == DType::F32 || type == DType::F16 || type == DType::BF16;
    const int64_t granule = float_kernel ? 4 : 1;
    const int64_t share = (space.total() - begin) / (2 * static_cast<int64_t>(threads)) / granule * granule;
    const int64_t end = std::min(begin + std::clamp(share, granule, space.max_chunk[i]), space.start[i + 1]);
    if (next.compare_exchange_weak(begin, end, std::memory_order_relaxed)) {
      return {i, begin - space.start[i], end - space.start[i]};
    }
  }
}

// Columns per block: about 512 KB of activations, so that a block and a chunk of weights share
// the L2 cache (a multiple of 24: every kernel's tile width divides it).
int64_t column_block(const ColumnLayout& layout) {
  const auto columns = static_cast<int64_t>((size_t{512} << 10) / layout.bytes);
  return std::max<int64_t>(24, columns / 24 * 24);
}

// dst[i] = w[i] · X for a run of packed matrices with the same activation format and X: the
// columns are rounded once, then all threads take chunks of every matrix's groups.
void run_packed(const PackedMatrix* const* w, const Tensor* const* dst, int count, const OpContext& ctx) {
  const Tensor& x = *dst[0]->src[1];
  const int64_t columns = x.rows();
  const KernelSet& kernels = active_kernels();
  const ActivationFormat format = activation_format(w[0]->type);
  const ColumnLayout layout = column_layout(format, w[0]->n_in);
  uint8_t* activations = shared_columns(ctx);
  std::atomic_ref<int64_t> next_group(*reinterpret_cast<int64_t*>(ctx.shared));
  if (ctx.thread.index == 0) next_group.store(0, std::memory_order_relaxed);  // published by the barrier
  for (int64_t c = ctx.thread.share_begin(columns); c < ctx.thread.share_end(columns); ++c) {
    kernels.quantize(column_of(x, c), format, layout, activations + static_cast<size_t>(c) * layout.bytes);
  }
  ctx.thread.barrier();
  // Threads claim chunks of 16-row groups (never a part of the reduction): each output is
  // computed by the same code whichever thread takes it.
  const GroupSpace space(w, count, ctx.thread.count);
  const int64_t block = column_block(layout);
  for (;;) {
    const GroupRange claim = claim_groups(next_group, space, ctx.thread.count);
    if (claim.begin == claim.end) break;
    const PackedMatrix& m = *w[claim.matrix];
    const Tensor& out_tensor = *dst[claim.matrix];
    auto* out = static_cast<float*>(out_tensor.data);
    const auto stride = static_cast<int64_t>(out_tensor.nb[1] / sizeof(float));
    const GemmFn gemm = gemm_kernel(kernels, m.type);
    // A chunk's weights stay in L2 while blocks of columns stream past them.
    for (int64_t c = 0; c < columns; c += block) {
      gemm(m, claim.begin, claim.end, activations + static_cast<size_t>(c) * layout.bytes, layout,
           std::min(block, columns - c), out + c * stride, stride);
    }
  }
}

// The file's rows and the reference dot products.
void run_reference(const Tensor& dst, const OpContext& ctx) {
  const Tensor& w = *dst.src[0];
  const Tensor& x = *dst.src[1];
  const int64_t n_in = w.ne[0], n_out = w.ne[1], columns = x.rows();
  const DType act = vec_dot_activation_type(w.type);
  const size_t stride = shared_column_bytes(w);
  for (int64_t c = ctx.thread.share_begin(columns); c < ctx.thread.share_end(columns); ++c) {
    dtype_traits(act).quantize(column_of(x, c), shared_columns(ctx) + static_cast<size_t>(c) * stride, n_in);
  }
  ctx.thread.barrier();
  const VecDotFn dot = reference_vec_dot(w.type);
  for (int64_t r = ctx.thread.share_begin(n_out); r < ctx.thread.share_end(n_out); ++r) {
    for (int64_t c = 0; c < columns; ++c) {
      output_column(dst, c)[r] = dot(n_in, w.row(r), shared_columns(ctx) + static_cast<size_t>(c) * stride);
    }
  }
}

// Types without a reference dot product: activations rounded to the activation format (where
// n_in allows) and widened; each weight row dequantized and dotted in F32.
void run_dequantized(const Tensor& dst, const OpContext& ctx) {
  const Tensor& w = *dst.src[0];
  const Tensor& x = *dst.src[1];
  const int64_t n_in = w.ne[0], n_out = w.ne[1], columns = x.rows();
  const DType act = vec_dot_activation_type(w.type);
  const bool rounds = act != DType::F32 && n_in % dtype_traits(act).block_size == 0;
  const size_t stride = shared_column_bytes(w);
  auto rounded = [&](int64_t c) {
    return reinterpret_cast<float*>(shared_columns(ctx) + static_cast<size_t>(c) * stride);
  };
  if (rounds) {
    float* blocks = ctx.scratch.floats.data() + n_in;  // room for one quantized row
    for (int64_t c = ctx.thread.share_begin(columns); c < ctx.thread.share_end(columns); ++c) {
      dtype_traits(act).quantize(column_of(x, c), blocks, n_in);
      dtype_traits(act).dequantize(blocks, rounded(c), n_in);
    }
    ctx.thread.barrier();
  }
  float* row = ctx.scratch.floats.data();
  for (int64_t r = ctx.thread.share_begin(n_out); r < ctx.thread.share_end(n_out); ++r) {
    row_to_f32(w.type, w.row(r), row, n_in);
    for (int64_t c = 0; c < columns; ++c) {
      output_column(dst, c)[r] = dot_f32(row, rounds ? rounded(c) : column_of(x, c), n_in);
    }
  }
}

}  // namespace

// dst [n_out, m] = W [n_in, n_out] · X [n_in, m].
void run_mul_mat(const Tensor& dst, const OpContext& ctx) {
  const Tensor& w = *dst.src[0];
  if (const PackedMatrix* packed = ctx.packed != nullptr ? ctx.packed->find(w.data) : nullptr) {
    const Tensor* node = &dst;
    run_packed(&packed, &node, 1, ctx);
  } else if (has_reference_dot(w)) {
    run_reference(dst, ctx);
  } else {
    run_dequantized(dst, ctx);
  }
}

bool rounds_columns_alike(const PackedMatrix& a, const PackedMatrix& b) {
  const ActivationFormat fa = activation_format(a.type), fb = activation_format(b.type);
  return a.n_in == b.n_in && fa.format == fb.format && fa.sum_group == fb.sum_group &&
         fa.sum_scale == fb.sum_scale;
}

void run_mul_mat_run(const PackedMatrix* const* w, const Tensor* const* nodes, int count,
                     const OpContext& ctx) {
  assert(count >= 1 && count <= kMaxMatMulRun);
  run_packed(w, nodes, count, ctx);
}

// dst [n, k, B] = rows ids[0..k, b] of table [n, rows, B] for each b; threads split the ids.
void run_get_rows(const Tensor& dst, const OpContext& ctx) {
  const Tensor& table = *dst.src[0];
  const auto* ids = dst.src[1]->data_as<const int32_t>();
  const int64_t count = dst.src[1]->elements(), per_batch = dst.src[1]->ne[0];
  const PackedMatrix* packed = ctx.packed != nullptr ? ctx.packed->find(table.data) : nullptr;
  auto* row_bytes = reinterpret_cast<uint8_t*>(ctx.scratch.floats.data());
  for (int64_t i = ctx.thread.share_begin(count); i < ctx.thread.share_end(count); ++i) {
    assert(ids[i] >= 0 && ids[i] < table.ne[1]);  // ids are validated before the graph runs
    auto* out = reinterpret_cast<float*>(dst.row(i % per_batch, i / per_batch));
    if (packed != nullptr) {
      unpack_row(*packed, ids[i], row_bytes);  // packed tables are 2-D (B = 1)
      row_to_f32(table.type, row_bytes, out, table.ne[0]);
    } else {
      row_to_f32(table.type, table.row(ids[i], i / per_batch), out, table.ne[0]);
    }
  }
}

size_t shared_scratch_bytes(const Tensor& node) {
  if (node.op == Op::kMulMatId) return mul_mat_id_shared_bytes(node);
  if (node.op == Op::kSsmScan) return recurrent_shared_bytes(node);
  if (node.op != Op::kMatMul) return 0;
  return kCounterBytes + shared_column_bytes(*node.src[0]) * static_cast<size_t>(node.src[1]->rows());
}

size_t scratch_floats(const Tensor& node) {
  switch (node.op) {
    case Op::kMatMul:
    case Op::kMulMatId: return 3 * static_cast<size_t>(node.src[0]->ne[0]);  // weight row, quantized column
    case Op::kTopK:  // the row's column indices; grouped: its kept values, group order and scores
      return static_cast<size_t>(node.params[1] > 1 ? 2 * node.src[0]->ne[0] + 2 * node.params[1]
                                                    : node.src[0]->ne[0]);
    case Op::kGetRows:
      return static_cast<size_t>(node.src[0]->ne[0]);  // one unpacked row (≤ 4 bytes a value)
    case Op::kAttention: {
      const int64_t head_dim = node.src[0]->ne[0];
      const int64_t head_dim_v = attention_cache_heads(*node.src[1], *node.src[2], head_dim).head_dim_v;
      return attention_scratch_floats(kMaxQuerySlots, head_dim, head_dim_v);
    }
    case Op::kRope: return static_cast<size_t>(node.ne[0]);           // cos/sin of n_rot ≤ head_dim
    case Op::kRopeShift: return 2 * static_cast<size_t>(node.ne[0]);  // a cached row, then cos/sin
    case Op::kCopy: return static_cast<size_t>(node.ne[0]);
    case Op::kSsmConv:
    case Op::kSsmScan: return recurrent_scratch_floats(node);
    default: return 0;
  }
}

}  // namespace sinter::cpu
