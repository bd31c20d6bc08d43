// The CPU backend's ops. Each runs its share of one graph node on one thread of the pool:
// work is split over output rows (never over the reduction dimension), so every output value
// is computed by the same sequence of operations whatever the batch or thread count.
#pragma once

#include <cstddef>
#include <vector>

#include "core/thread_pool.h"
#include "graph/graph.h"

namespace sinter::cpu {

class PackedWeightStore;  // kernels_pack.h
class ExpertStore;        // expert_store.h

// Per-thread scratch memory, sized before the graph runs (nothing is allocated per token).
struct Scratch {
  std::vector<float> floats;
};

struct OpContext {
  const ThreadContext& thread;
  Scratch& scratch;  // this thread's own
  uint8_t* shared;   // one buffer all threads of the region see (e.g. quantized
                     // activations written by all, then read by all after a barrier)
  const Graph& graph;
  const PackedWeightStore* packed = nullptr;  // weights repacked at load (matmul, get_rows)
  const ExpertStore* experts = nullptr;       // expert tensors repacked on first use (mul_mat_id)
};

// Floats of scratch each thread needs for this node.
size_t scratch_floats(const Tensor& node);
// Bytes of the shared buffer this node needs (64-byte aligned).
size_t shared_scratch_bytes(const Tensor& node);

void run_get_rows(const Tensor& dst, const OpContext& ctx);
void run_mul_mat(const Tensor& dst, const OpContext& ctx);
// A run of matrix products that read the same activations (the Q, K and V projections; the
// FFN's gate and up): the columns rounded once and one pool of work over all the matrices, with
// two barriers for the run instead of two per product. Each output's bits are those of
// run_mul_mat.
constexpr int kMaxMatMulRun = 4;
struct PackedMatrix;  // kernels.h
// Whether products with a and b round their columns to the same bytes (a run's condition, with
// the same X).
bool rounds_columns_alike(const PackedMatrix& a, const PackedMatrix& b);
// nodes[i] = w[i] · X, the w[i] the packed weights of the nodes.
void run_mul_mat_run(const PackedMatrix* const* w, const Tensor* const* nodes, int count,
                     const OpContext& ctx);
void run_rms_norm(const Tensor& dst, const OpContext& ctx);
void run_norm(const Tensor& dst, const OpContext& ctx);
void run_l2_norm(const Tensor& dst, const OpContext& ctx);
void run_binary(const Tensor& dst, const OpContext& ctx);  // add, mul, div
void run_unary(const Tensor& dst, const OpContext& ctx);   // scale, silu, gelu, softcap, sigmoid, clamp
void run_gated(const Tensor& dst, const OpContext& ctx);   // swiglu, geglu
void run_swiglu_oai(const Tensor& dst, const OpContext& ctx);
void run_copy(const Tensor& dst, const OpContext& ctx);
void run_softmax(const Tensor& dst, const OpContext& ctx);
void run_rope(const Tensor& dst, const OpContext& ctx);
void run_rope_shift(const Tensor& dst, const OpContext& ctx);
void run_store_rows(const Tensor& dst, const OpContext& ctx);
void run_attention(const Tensor& dst, const OpContext& ctx);
// Mixture-of-experts routing and combination (op_moe.cpp).
void run_sum_rows(const Tensor& dst, const OpContext& ctx);
void run_top_k(const Tensor& dst, const OpContext& ctx);
void run_weighted_sum(const Tensor& dst, const OpContext& ctx);
void run_concat(const Tensor& dst, const OpContext& ctx);
// Recurrent layers (op_recurrent.cpp): each slot's state carried over the batch's tokens.
void run_ssm_conv(const Tensor& dst, const OpContext& ctx);
void run_ssm_scan(const Tensor& dst, const OpContext& ctx);
void run_token_shift(const Tensor& dst, const OpContext& ctx);
size_t recurrent_scratch_floats(const Tensor& node);
size_t recurrent_shared_bytes(const Tensor& node);
// RWKV's WKV recurrences (op_rwkv.cpp): threads split the heads; each slot's state updated in place.
void run_rwkv_wkv6(const Tensor& dst, const OpContext& ctx);
void run_rwkv_wkv7(const Tensor& dst, const OpContext& ctx);
// The gated delta rule (op_delta_net.cpp): threads split the value heads; states updated in place.
void run_gated_delta_net(const Tensor& dst, const OpContext& ctx);
// Expert products (op_mul_mat_id.cpp): experts repacked on first use (expert_store.h).
void run_mul_mat_id(const Tensor& dst, const OpContext& ctx);
size_t mul_mat_id_shared_bytes(const Tensor& dst);
// Bytes of one activation column on the plain paths of products with weight `w` (64-aligned).
size_t plain_column_bytes(const Tensor& w);

// The format activations are rounded to before products with weights of this type
// (Q8_0 for Q4_0, Q8_K for the K-quants, F16 for F16; F32 for F32).
DType activation_type(DType weight);

// Shared numerics.
float dot_f32(const float* a, const float* b, int64_t n);
// Converts one row of any dequantizable type to F32.
void row_to_f32(DType type, const void* row, float* out, int64_t n);

}  // namespace sinter::cpu
