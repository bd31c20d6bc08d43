// A tensor: a node of the lazy graph, or a persistent weight / cache buffer that graphs read.
//
// Shapes follow ggml's convention, which GGUF files use: ne[0] is the innermost (contiguous)
// dimension — the row length — and nb[i] is the byte stride of dimension i. A matrix W with
// n_out rows of n_in values has ne = {n_in, n_out}.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tensor/dtype.h"

namespace sinter {

class Buffer;  // backend/buffer.h: the memory a tensor's bytes live in

constexpr int kMaxDims = 4;
constexpr int kMaxSources = 8;  // RWKV-7's WKV: r, w, k, v, a, b, state, slots
constexpr int kMaxParams = 12;

enum class Op : uint8_t {
  kLeaf,         // weight, cache buffer or batch input: data set outside the graph
  kGetRows,      // table [n, rows, B] (any type), ids I32 [k, B] -> F32 [n, k, B]: batch b reads
                 // its own rows of table[:, :, b] (B = 1: a plain lookup)
  kMatMul,       // W [n_in, n_out] (any type) · X F32 [n_in, m] -> F32 [n_out, m]
  kRmsNorm,      // x / sqrt(mean(x^2) + eps), per row; params: eps
  kNorm,         // (x - mean) / sqrt(var + eps), per row; params: eps
  kAdd,          // a + b, b broadcast over a's rows when it has fewer
  kMul,          // a * b, broadcast likewise, or b one value per row ([1, rows], as kDiv)
  kScale,        // a * s; params: s
  kSilu,         // x * sigmoid(x)
  kGelu,         // tanh approximation, as llama.cpp
  kSoftcap,      // cap · tanh(x / cap) (Gemma 2's logit soft-capping); params: cap
  kSwiGlu,       // silu(a) * b  (the gated FFN product)
  kGeGlu,        // gelu(a) * b
  kRope,         // rotary embedding of x [head_dim, n_head, n_tokens] by positions I32 [n_tokens]
  kStoreRows,    // cache[:, slots[t]] = src[:, t] (converting to the cache type); returns cache
  kAttention,    // q [head_dim, n_head, n_tokens] over cached K, V and the cells an index I32
                 // lists per token -> [head_dim * n_head, n_tokens]; params: scale, softcap;
                 // src[4] optional sinks F32 [n_head]: one more logit per head in the softmax's
                 // denominator, with no value (gpt-oss's attention sinks); src[5] optional ALiBi
                 // positions I32 (graph.h), with params[2] the maximum bias
  kRopeShift,    // rotates cached keys in place by per-cell position deltas (context shift)
  kSoftmax,      // softmax(a * scale + mask) per row; mask [n, rows] optional; params: scale
  kCopy,         // contiguous copy of a (possibly strided) view, converting type
  kSigmoid,      // 1 / (1 + e^-x)
  kClamp,        // min(max(x, lo), hi); params: lo, hi
  kDiv,          // a / b, b broadcast over a's rows, and over each row when its rows hold one value
  kSumRows,      // a [n, rows] -> [1, rows]: each row's sum
  kTopK,         // a F32 [n, rows] -> I32 [k, rows]: the columns of each row's k largest values,
                 // largest first (equal values: the lower column first); params: k, and for
                 // grouped selection groups, groups_used (Graph::top_k_grouped; 0: none)
  kMulMatId,     // experts W [n_in, n_out, n_expert] (any type) · X F32 [n_in, 1 or k, n_tokens] by
                 // ids I32 [k, n_tokens] -> F32 [n_out, k, n_tokens]: column (j, t) is
                 // W[:, :, ids[j, t]] · X[:, j (or 0), t] (the mixture-of-experts products); without
                 // ids, column (j, t) uses matrix j (per-head matrices: W [n_in, n_out, H], X [n_in, H, T])
  kWeightedSum,  // a F32 [n, k, t], w F32 [k, t] -> [n, t]: Σ_j w[j, t] · a[:, j, t], j in order
  kConcat,       // a [na, ...], b [nb, ...] (the same other dimensions) -> [na + nb, ...]: rows joined
  kSwiGluOai,    // gpt-oss's clamped SwiGLU: g = min(a, limit), u = clamp(b, ±limit),
                 // g · sigmoid(alpha · g) · (u + 1); params: alpha, limit
  // Recurrent layers (Mamba, RWKV, LFM2): each keeps a per-sequence state in a persistent F32
  // tensor with one plane per state slot; slots I32 [T] gives each token's slot. Tokens are run in
  // batch order, each slot's state carried from token to token, and the op leaves each slot's
  // final state in the tensor (in place, like kStoreRows); its result is the output.
  kSsmConv,     // causal depthwise convolution: x [d, T], weight [k, d], state [k-1, d, S], slots
                // -> [d, T]: y = Σ_j weight[j]·window[j] over the window (state, x); state shifts
  kSsmScan,     // selective scan: x [head_dim, H, T], dt [H, T], A [d_state or 1, H], B, C
                // [d_state, G, T], state [d_state, head_dim, H, S], slots -> [head_dim, H, T]
  kTokenShift,  // x [d, T], state [d, S], slots -> [d, T]: the previous token's x of the sequence
  kL2Norm,      // x · (1 / max(sqrt(Σ x²), eps)), per row; params: eps
  kRwkvWkv6,    // RWKV-6's WKV: k, v, r F32 [N, H, T], u F32 [N, H], w F32 [N, H, T], state F32
                // [N, N, H, S] (persistent: each slot's state, updated in place), slots I32 [T]
                // -> y F32 [N·H, T] (Graph::rwkv_wkv6)
  kRwkvWkv7,    // RWKV-7's WKV: r, w, k, v, a, b F32 [N, H, T], state F32 [N, N, H, S] (updated
                // in place), slots I32 [T] -> y F32 [N·H, T] (Graph::rwkv_wkv7)
  kExp,         // e^x
  kTanh,        // tanh(x)
  kSub,         // a - b, b broadcast over a's rows when it has fewer
  kSoftplus,    // x > 20 ? x : log(1 + e^x) (llama.cpp's ggml_softplus)
  // The gated delta rule: q, k F32 [d_k, H_k, T], v F32 [d_v, H, T], g and beta F32 [H, T], state
  // F32 [d_v, d_k, H, S] (updated in place), slots I32 [T] -> y F32 [d_v·H, T]; params: scale,
  // head mapping (Graph::gated_delta_net)
  kGatedDeltaNet,
  kView,  // no computation: another shape/stride over the source's bytes (stays last)
};

const char* op_name(Op op);

enum class TensorRole : uint8_t {
  kIntermediate,  // planned into the compute arena
  kInput,         // planned into the arena, written by the caller before compute
  kPersistent,    // owned outside the graph (weights, KV cache); never planned
};

struct Tensor {
  Op op = Op::kLeaf;
  DType type = DType::F32;
  TensorRole role = TensorRole::kIntermediate;
  bool is_output = false;  // kept alive to the end of the graph
  std::array<int64_t, kMaxDims> ne{1, 1, 1, 1};
  std::array<size_t, kMaxDims> nb{0, 0, 0, 0};
  std::array<Tensor*, kMaxSources> src{};
  std::array<int32_t, kMaxParams> params{};
  Tensor* view_source = nullptr;  // for kView: the tensor whose bytes this one reads
  size_t view_offset = 0;
  void* data = nullptr;      // an address in `buffer` (backend/buffer.h)
  Buffer* buffer = nullptr;  // set by the backend that allocated or adopted the bytes
  std::string name;
  int32_t index = -1;  // position in its graph's node list

  int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
  size_t row_bytes() const { return sinter::row_bytes(type, ne[0]); }
  size_t bytes() const { return row_bytes() * static_cast<size_t>(rows()); }
  bool is_contiguous() const;
  std::string shape_string() const;

  float param_float(int i) const { return std::bit_cast<float>(params[i]); }
  void set_param_float(int i, float v) { params[i] = std::bit_cast<int32_t>(v); }

  template <class T>
  T* data_as() const {
    return static_cast<T*>(data);
  }
  // Address of row (i1, i2, i3).
  uint8_t* row(int64_t i1, int64_t i2 = 0, int64_t i3 = 0) const {
    return static_cast<uint8_t*>(data) + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
  }
};

// Strides of a contiguous tensor of this type and shape.
std::array<size_t, kMaxDims> contiguous_strides(DType type, const std::array<int64_t, kMaxDims>& ne);

// A persistent tensor over existing bytes (weights in the mapped file, cache buffers).
Tensor make_persistent(std::string name, DType type, std::array<int64_t, kMaxDims> ne, void* data);

}  // namespace sinter
