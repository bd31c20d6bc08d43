// The lazy graph: builder calls record named nodes; nothing is computed until a backend runs
// the graph. Construction order is a valid topological order (a node can only use nodes that
// exist), and finalize() keeps the nodes the outputs depend on.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "graph/tensor.h"

namespace sinter {

// Rotary position embedding parameters (ggml's rope_ext semantics).
struct RopeParams {
  int32_t n_rot = 0;       // rotated dimensions of each head (≤ head_dim)
  bool neox = false;       // rotate pairs (i, i + n_rot/2) instead of (2i, 2i+1)
  int32_t n_ctx_orig = 0;  // training context, for YaRN's correction range
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;   // 1 / linear scaling factor
  float ext_factor = 0.0f;   // YaRN extrapolation mix (0 disables YaRN)
  float attn_factor = 1.0f;  // YaRN magnitude scale
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
};

// Which cached cells each token of a batch attends to: token t sees
// cells[begin[t]] .. cells[end[t]-1], listed in increasing position. Filled per batch by the KV
// cache (causality, sequence membership and sliding windows are all decided there), so the
// attention kernel's order of summation depends only on the token's own sequence.
struct AttentionIndex {
  std::vector<int32_t> cells;
  std::vector<int32_t> begin;
  std::vector<int32_t> end;
};

// In a graph the index is an input tensor, I32 [2·n_tokens + capacity]: begin[t] at t, end[t]
// at n_tokens + t, then the cells (up to `capacity` of them) from 2·n_tokens on.
inline int64_t attention_index_elements(int64_t n_tokens, int64_t capacity) {
  return 2 * n_tokens + capacity;
}
// The cells an index tensor of `elements` I32 values for `n_tokens` tokens can hold.
inline int64_t attention_index_capacity(int64_t n_tokens, int64_t elements) {
  return elements - 2 * n_tokens;
}

struct AttentionParams {
  float scale = 1.0f;    // usually 1/sqrt(head_dim)
  float softcap = 0.0f;  // tanh soft-capping of scores (0: off)
  // ALiBi (0: off): head h's scores get −slope(h) · |p_query − p_key| added after the scaling
  // and soft-capping, slope(h) = alibi_slope(h, n_head, max_alibi_bias).
  float max_alibi_bias = 0.0f;
};

// Graph::gated_delta_net's read-out scale (llama.cpp's 1/√d_k) and how value heads share query
// and key heads.
struct DeltaNetParams {
  float scale = 1.0f;
  bool grouped_heads = false;  // value head h reads head h / (H / H_k), else h % H_k
};

// ALiBi's slope of query head h among n_head: with n = the largest power of two ≤ n_head,
// 2^(−b·(h+1)/n) for h < n, else 2^(−b·(2(h−n)+1)/(2n)) (b = max_bias), computed as llama.cpp
// computes it (powf of the two bases), so that both give the same float.
float alibi_slope(int64_t h, int64_t n_head, float max_bias);

// The positions an ALiBi attention needs, I32 [n_tokens + capacity]: each token's position,
// then the position held by each cell of the attention index's list (graph.h's index layout).
inline int64_t alibi_positions_elements(int64_t n_tokens, int64_t capacity) { return n_tokens + capacity; }

// How an attention's cache tensors hold their KV heads: K [heads_per_row · head_dim, cells,
// planes] and V [heads_per_row · head_dim_v, cells, planes], so n_head_kv = heads_per_row ·
// planes (the KV cache's: one head per row, a plane per head; a single plane of all heads' rows
// per cell is read too). For k->ne[0] a multiple of head_dim (Graph::attention checks it).
struct AttentionCacheHeads {
  int64_t per_row;
  int64_t n_head_kv;
  int64_t head_dim_v;
};
inline AttentionCacheHeads attention_cache_heads(const Tensor& k, const Tensor& v, int64_t head_dim) {
  const int64_t per_row = k.ne[0] / head_dim;
  return {per_row, per_row * k.ne[2], v.ne[0] / per_row};
}

// The largest key head a per-key delta-net gate allows (Graph::gated_delta_net).
constexpr int64_t kMaxDeltaNetKeyGate = 512;

// A recurrent op's snapshot planes (its slots' second row, Graph's "Snapshots"), or null when
// its slots have none: token t's state is copied to plane snapshots[t] when that is >= 0.
inline const int32_t* state_snapshots(const Tensor& slots) {
  return slots.ne[1] == 2 ? slots.data_as<const int32_t>() + slots.ne[0] : nullptr;
}

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // --- leaves ---
  // A batch input of this type and shape, allocated with the graph, written before compute.
  Tensor* input(const std::string& name, DType type, std::array<int64_t, kMaxDims> ne);

  // --- operations (each returns a new node) ---
  // Operands are read as contiguous rows: a strided view (permute, transpose) must be copy()'d
  // before any op but copy, rope and attention's query (a logic_error otherwise).
  // table [n, rows] and ids [k] -> [n, k]; or per batch: table [n, rows, B], ids [k, B] -> [n, k, B].
  Tensor* get_rows(Tensor* table, Tensor* ids);
  Tensor* mul_mat(Tensor* weight, Tensor* x);
  // Each token's chosen experts: experts [n_in, n_out, n_expert], x [n_in, 1 or k, n_tokens],
  // ids I32 [k, n_tokens] (each in [0, n_expert)) -> [n_out, k, n_tokens].
  Tensor* mul_mat_id(Tensor* experts, Tensor* x, Tensor* ids);
  // Each plane its own matrix: w [n_in, n_out, H] · x [n_in, H, T] -> [n_out, H, T] (per-head
  // projections: mul_mat_id whose column (h, t) uses matrix h).
  Tensor* mul_mat_heads(Tensor* w, Tensor* x);
  Tensor* rms_norm(Tensor* x, float eps);
  Tensor* norm(Tensor* x, float eps);
  Tensor* add(Tensor* a, Tensor* b);
  // a − b; b broadcast over a's rows (as add).
  Tensor* sub(Tensor* a, Tensor* b);
  // a · b; b broadcast over a's rows (as add), or one value per row ([1, rows], as div).
  Tensor* mul(Tensor* a, Tensor* b);
  Tensor* scale(Tensor* a, float s);
  Tensor* silu(Tensor* a);
  Tensor* gelu(Tensor* a);
  // cap · tanh(a / cap), element-wise; cap > 0.
  Tensor* softcap(Tensor* a, float cap);
  Tensor* sigmoid(Tensor* a);
  // e^a and tanh(a), element-wise (RWKV's decays and LoRA projections).
  Tensor* exp(Tensor* a);
  Tensor* tanh(Tensor* a);
  Tensor* clamp(Tensor* a, float lo, float hi);
  // a > 20 ? a : log(1 + e^a), element-wise (llama.cpp's ggml_softplus: Qwen 3.5's decay gate).
  Tensor* softplus(Tensor* a);
  // a / b; b is a's shape, broadcast over a's rows, or one value per row ([1, rows]).
  Tensor* div(Tensor* a, Tensor* b);
  // [n, rows] -> [1, rows].
  Tensor* sum_rows(Tensor* a);
  // The columns of each row's k largest values, largest first: I32 [k, rows].
  Tensor* top_k(Tensor* a, int32_t k);
  // The same within groups (DeepSeek-V3's routing): each row's n values form `groups` groups of
  // n / groups; a group scores the sum of its two largest values; only the `groups_used`
  // best-scoring groups' columns take part in the top k.
  Tensor* top_k_grouped(Tensor* a, int32_t k, int32_t groups, int32_t groups_used);
  // Σ_j w[j, t] · a[:, j, t]: a [n, k, t], w [k, t] -> [n, t].
  Tensor* weighted_sum(Tensor* a, Tensor* w);
  // Rows joined: a [na, r1, r2, r3], b [nb, r1, r2, r3] -> [na + nb, r1, r2, r3].
  Tensor* concat(Tensor* a, Tensor* b);
  Tensor* swiglu(Tensor* gate, Tensor* up);
  Tensor* geglu(Tensor* gate, Tensor* up);
  // gpt-oss's: min(gate, limit) · sigmoid(alpha · min(gate, limit)) · (clamp(up, ±limit) + 1).
  Tensor* swiglu_oai(Tensor* gate, Tensor* up, float alpha, float limit);
  Tensor* rope(Tensor* x, Tensor* positions, const RopeParams& params, Tensor* freq_factors = nullptr);
  // Writes the columns of `rows` [n, k] into `cache` [n, cells] at `slots` I32 [k]. The result
  // stands for the cache after the write: use it (not the cache) as the attention's source.
  Tensor* store_rows(Tensor* cache, Tensor* rows, Tensor* slots);
  // `index`: the cells each token sees, I32 [attention_index_elements(n_tokens, capacity)].
  // `sinks` (F32 [n_head], may be null): a logit per query head that joins each softmax's
  // denominator without a value (gpt-oss). `alibi_positions` (I32, alibi_positions_elements
  // for the index's capacity): required when params.max_alibi_bias > 0, null otherwise.
  Tensor* attention(Tensor* q, Tensor* k_after_store, Tensor* v_after_store, Tensor* index,
                    const AttentionParams& params, Tensor* sinks = nullptr,
                    Tensor* alibi_positions = nullptr);
  // --- recurrent state (RWKV's WKV) ---
  // `slots` I32 [T] gives each token's state slot, 0..S−1 (one per sequence; a sequence's
  // tokens in increasing position order, sequences possibly interleaved). Tokens are processed
  // in batch order, each slot's state carried from one of its tokens to the next; the final
  // state of each slot is left in `state` (written in place, as store_rows writes the cache) and
  // the result is the output y [N·H, T]. Each token is computed as if it came alone, in a fixed
  // order of operations, so results are bit-identical however a sequence is split into batches.
  // Head h of slot s keeps an N × N matrix at state[:, :, h, s] with the VALUE index along ne[0]
  // (contiguous) and the KEY index along ne[1], for both ops: the SIMD kernels then run across
  // values and every sum is one chain in key order, the scalar reference's.
  //
  // RWKV-6 (llama.cpp's ggml_rwkv_wkv6): k, v, r, w F32 [N, H, T], u (time_first) F32 [N, H];
  // w is the decay factor exp(−exp(·)) that the model computes. With S[i][j] = state[j, i, h, s]
  // for key i and value j, per head and token (sums from 0, i = 0..N−1 in order):
  //   kv = v[j]·k[i]
  //   y[j] = Σ_i r[i]·(kv·u[i] + S[i][j])   y = fma(fma(kv, u[i], S[i][j]), r[i], y)
  //   S[i][j] ← S[i][j]·w[i] + kv            fma(S[i][j], w[i], kv)
  // (llama.cpp's state layout: key-major rows of values.)
  Tensor* rwkv_wkv6(Tensor* k, Tensor* v, Tensor* r, Tensor* u, Tensor* w, Tensor* state, Tensor* slots);
  // RWKV-7 (llama.cpp's ggml_rwkv_wkv7): r, w, k, v, a, b F32 [N, H, T]; w is the decay factor
  // exp(−0.606531·sigmoid(·)) that the model computes (llama.cpp passes a = −kk, b = kk·α, kk the
  // normalized key and α the in-context learning rate). With S[i][j] = state[i, j, h, s] for value
  // i and key j, per head and token (sums from 0, j = 0..N−1 in order):
  //   sa[i] = Σ_j a[j]·S[i][j]                         sa = fma(a[j], S[i][j], sa)
  //   S[i][j] ← S[i][j]·w[j] + v[i]·k[j] + sa[i]·b[j]   fma(sa[i], b[j], fma(S[i][j], w[j], v[i]·k[j]))
  //   y[i] = Σ_j S[i][j]·r[j], over the updated S      y = fma(S[i][j], r[j], y)
  // (llama.cpp stores each head's matrix with the key index contiguous: the transpose of this.)
  Tensor* rwkv_wkv7(Tensor* r, Tensor* w, Tensor* k, Tensor* v, Tensor* a, Tensor* b, Tensor* state,
                    Tensor* slots);
  // The gated delta rule (Qwen 3.5 / Qwen3-Next's linear attention; llama.cpp's
  // ggml_gated_delta_net with a scalar gate per head). q, k F32 [d_k, H_k, T] (L2-normalized by
  // the model), v F32 [d_v, H, T], g F32 [H, T] (the log of the decay, ≤ 0), beta F32 [H, T] (the
  // write strength, in (0, 1)), state F32 [d_v, d_k, H, S] -> y F32 [d_v·H, T]. Each input may lie
  // at any token stride (each token's values contiguous: the parts of a fused projection). Value
  // head h reads query and key head h % H_k (params.grouped_heads false: Qwen 3.5's files, whose
  // converter orders the value heads so) or h / (H / H_k) (true: Qwen3-Next's). Head h of slot s
  // keeps S[i][j] (key i, value j) at state[j, i, h, s]: the value index contiguous, as the WKV
  // ops keep it. Per head and token, with e = exp(g) (std::exp of the float) and sums from 0
  // over keys i = 0..d_k−1 in order:
  //   sk[j] = Σ_i S[i][j]·k[i]                      sk = fma(S[i][j], k[i], sk)
  //   d[j]  = (v[j] − e·sk[j])·beta                 fma(−e, sk[j], v[j]), then times beta
  //   S[i][j] ← fma(k[i], d[j], S[i][j]·e)          (decay, then the delta-rule write)
  //   y[j]  = (Σ_i S[i][j]·q[i])·scale, over the updated S
  // which is llama.cpp's S ← e·S; S += k ⊗ beta·(v − Sᵀk); y = Sᵀq·scale (scale 1/√d_k there).
  // Columns of values are independent: the SIMD kernels run across them, and every sum is one
  // chain in key order, so they give the reference's bits.
  //
  // Kimi's KDA gives a decay per key index instead: g F32 [d_k, H, T] (d_k <= 512), e_i = exp(g[i]).
  // Key row i of the state decays where it is read, S[i][j]·e_i (one rounding, the same value
  // both times), and the error is a plain difference (llama.cpp's order for this gate):
  //   sk[j] = Σ_i (S[i][j]·e_i)·k[i]                 sk = fma(S[i][j]·e_i, k[i], sk)
  //   d[j]  = (v[j] − sk[j])·beta
  //   S[i][j] ← fma(k[i], d[j], S[i][j]·e_i);  y as above
  Tensor* gated_delta_net(Tensor* q, Tensor* k, Tensor* v, Tensor* g, Tensor* beta, Tensor* state,
                          Tensor* slots, const DeltaNetParams& params);
  // Rotates the keys of `cache` [head_dim * n_head_kv, cells] in place by deltas I32 [cells].
  Tensor* rope_shift(Tensor* cache, Tensor* deltas, int32_t head_dim, const RopeParams& params,
                     Tensor* freq_factors = nullptr);
  // softmax(a * scale + mask) over each row; `mask` (F32, a's row length, broadcast over a's
  // rows when it has fewer) may be nullptr. -inf in the mask excludes a column.
  Tensor* softmax(Tensor* a, float scale = 1.0f, Tensor* mask = nullptr);
  Tensor* copy(Tensor* a, DType type = DType::F32);
  // x / max(sqrt(Σ x²), eps) over each row of x [n, ...] (computed as x · (1 / max(...)), as
  // llama.cpp's ggml_l2_norm). The rows may be a view at any row stride ([head_dim, heads·T] of a
  // wider tensor); the result is contiguous.
  Tensor* l2_norm(Tensor* x, float eps);

  // --- recurrent layers (Mamba-1/2, LFM2, RWKV) ---
  // Each keeps a per-sequence state in `state`, F32, contiguous, one plane per slot (the memory
  // layer owns it, as it owns the KV cache). `slots` I32 [T] gives each token of the batch its
  // sequence's slot (0..S-1); a sequence's tokens come in increasing position order, sequences
  // possibly interleaved. The op runs the tokens in batch order, carries each slot's state from
  // token to token, and leaves each slot's final state in `state` (written in place; the result
  // is the output, not the state). A token's result depends only on its slot's state and its own
  // inputs, so how a sequence is split over calls, and what else is in the batch, changes no bit.
  // Inputs x, dt, B, C may be views whose tokens lie at any stride (each token's values
  // contiguous): the parts of a fused projection.
  //
  // Snapshots (every recurrent op here and above): `slots` may be I32 [T, 2], its second row
  // giving per token a plane of `state` (a slot number past the sequences' own, or −1 for none)
  // that receives a copy of the token's slot's state as it is right after that token. The memory
  // keeps a sequence's last few states so (memory/recurrent_state.h: rolling back rejected
  // drafts). A copy changes nothing the op computes.
  //
  // Causal depthwise 1-D convolution (Mamba's conv1d; LFM2's short convolution). x [d, T],
  // weight [k, d] (GGUF ssm_conv1d.weight: k the kernel width, k >= 2), state [k-1, d, S] -> y
  // [d, T]. Token t, channel c, window v = (state[0..k-2, c, s], x[c, t]):
  // y[c, t] = Σ_j weight[j, c]·v[j], one fma chain from 0 in increasing j; then the state holds
  // v[1..k-1]. No bias, no activation (separate ops).
  Tensor* ssm_conv(Tensor* x, Tensor* weight, Tensor* state, Tensor* slots);
  // Selective scan (Mamba-1 and Mamba-2; llama.cpp's ggml_ssm_scan). x [head_dim, H, T],
  // dt [H, T] (bias added; softplus is applied here), A [d_state, H] (Mamba-1: A[n, h]) or [1, H]
  // (Mamba-2: one per head), B and C [d_state, G, T] (head h reads group h / (H / G)), state
  // [d_state, head_dim, H, S] -> y [head_dim, H, T]. Token t, head h, element i:
  //   dts = dt > 20 ? dt : log1p(exp(dt));  xdt = x[i, h, t] · dts
  //   for n in 0..d_state-1: dA = exp(dts · A[n or 0, h])
  //     s[n] = fma(B[n, g, t], xdt, s[n] · dA);  y = fma(s[n], C[n, g, t], y)   (y from 0)
  // Mamba-1 is head_dim 1, H = d_inner, G = 1. No D skip, gate or norm (separate ops).
  Tensor* ssm_scan(Tensor* x, Tensor* dt, Tensor* A, Tensor* B, Tensor* C, Tensor* state, Tensor* slots);
  // RWKV's token shift: x [d, T], state [d, S] -> y [d, T], y[:, t] the previous x of token t's
  // sequence (state[:, s] for its first token in the batch); state[:, s] becomes its last x.
  Tensor* token_shift(Tensor* x, Tensor* state, Tensor* slots);

  // Views (no computation).
  Tensor* reshape(Tensor* a, std::array<int64_t, kMaxDims> ne);
  Tensor* view(Tensor* a, std::array<int64_t, kMaxDims> ne, std::array<size_t, kMaxDims> nb, size_t offset);
  // Dimension i of the result is dimension axes[i] of `a` (a view; copy() makes it contiguous).
  Tensor* permute(Tensor* a, std::array<int, kMaxDims> axes);
  Tensor* transpose(Tensor* a) { return permute(a, {1, 0, 2, 3}); }

  // Marks an output and computes the final node order (reachable from the outputs).
  void mark_output(Tensor* t);
  void finalize();

  const std::vector<Tensor*>& nodes() const { return order_; }
  const std::vector<Tensor*>& inputs() const { return inputs_; }
  const std::vector<Tensor*>& outputs() const { return outputs_; }
  // The node of that name: among all nodes before finalize(), the kept ones after it.
  Tensor* find(const std::string& name) const;

  // Names a node "<base>-<layer>" (or "<base>" for layer < 0) and returns it, for chaining:
  // `cur = graph.named(graph.rms_norm(x, eps), "attn_norm", il);`
  static Tensor* named(Tensor* t, const std::string& base, int layer = -1);

 private:
  Tensor* new_node(Op op, DType type, std::array<int64_t, kMaxDims> ne,
                   std::initializer_list<Tensor*> sources);

  std::deque<Tensor> storage_;  // stable addresses
  std::vector<Tensor*> all_;
  std::vector<Tensor*> order_;
  std::vector<Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
};

// Index of the RopeParams fields in a kRope / kRopeShift node's params.
enum RopeParamIndex : int {
  kRopeNRot = 0,
  kRopeNeox,
  kRopeNCtxOrig,
  kRopeFreqBase,
  kRopeFreqScale,
  kRopeExtFactor,
  kRopeAttnFactor,
  kRopeBetaFast,
  kRopeBetaSlow,
  kRopeHeadDim,
};
RopeParams rope_params_of(const Tensor& node);

}  // namespace sinter
