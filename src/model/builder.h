// The builder toolkit: the pieces every forward pass is composed of. An architecture file
// says which norm, which projections, which activation, in which order; the toolkit handles
// batch inputs, KV cache slots, attention masks and output filtering, and names every
// intermediate ("attn_norm-3") so any layer can be dumped and compared with a reference.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "graph/graph.h"
#include "memory/batch.h"
#include "memory/kv_cache.h"
#include "memory/sequence_memory.h"
#include "model/model.h"

namespace sinter {

// The shape of one forward pass: graphs with equal shapes are interchangeable (graph reuse).
struct BatchShape {
  int32_t n_tokens = 0;
  int32_t n_outputs = 0;       // rows whose logits are wanted
  int64_t index_capacity = 0;  // cells each attention index input can list (graph.h)
  bool embeddings = false;     // some entries come as embedding rows (memory/batch.h)
  bool operator==(const BatchShape&) const = default;
};

struct NormWeights {
  Tensor* weight = nullptr;
  Tensor* bias = nullptr;
};
enum class NormKind { kRms, kLayer };

struct FfnWeights {
  Tensor* gate = nullptr;  // nullptr for a plain (non-gated) FFN
  Tensor* up = nullptr;
  // Gate and up in one matrix [n_embd, 2·n_ff] (Phi-3): the gate's rows first, then up's. With
  // it, up_bias (when present) is the whole product's [2·n_ff] (jina-bert-v2).
  Tensor* gate_up = nullptr;
  Tensor* down = nullptr;
  Tensor* gate_bias = nullptr;
  Tensor* up_bias = nullptr;
  Tensor* down_bias = nullptr;
};
// Gated kinds multiply act(gate) by up; the others apply act to up alone (kReluSquared:
// Nemotron-H's relu(x)², llama.cpp's LLM_FFN_RELU_SQR).
enum class FfnActivation { kSiluGated, kGeluGated, kGelu, kSilu, kReluSquared };

struct AttentionWeights {
  Tensor* q = nullptr;
  Tensor* k = nullptr;
  Tensor* v = nullptr;
  Tensor* qkv = nullptr;  // Q, K and V in one matrix (rows in that order) instead of q, k, v
  Tensor* qkv_bias = nullptr;
  Tensor* output = nullptr;
  Tensor* q_bias = nullptr;
  Tensor* k_bias = nullptr;
  Tensor* v_bias = nullptr;
  Tensor* output_bias = nullptr;
  // Norms of queries and keys before RoPE: a [head_dim] weight normalizes each head (Qwen 3,
  // Gemma 3), a [heads · head_dim] one the whole projection (OLMo 2).
  Tensor* q_norm = nullptr;
  Tensor* k_norm = nullptr;
  Tensor* q_norm_bias = nullptr;
  Tensor* k_norm_bias = nullptr;
  // A logit per query head [n_head] that joins each softmax's denominator with no value
  // (gpt-oss's attention sinks).
  Tensor* sinks = nullptr;
};

struct AttentionOptions {
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;    // of queries and keys
  int32_t head_dim_v = 0;  // of values
  bool use_rope = true;    // false: a NoPE layer (SmolLM3)
  RopeParams rope;
  Tensor* rope_freq_factors = nullptr;
  float scale = 0.0f;  // of the scores; 0: 1/sqrt(head_dim)
  float softcap = 0.0f;
  float max_alibi_bias = 0.0f;        // ALiBi's (graph.h's AttentionParams); 0: none
  NormKind qk_norm = NormKind::kRms;  // for q_norm / k_norm
  float norm_eps = 1e-6f;
  int32_t kv_layer = 0;  // which layer of the KV cache (its pool gives its window)
};

class ForwardContext {
 public:
  ForwardContext(Graph& graph, const BatchShape& batch, SequenceMemory& memory);

  Graph& graph;
  const BatchShape batch;
  // What the model keeps per sequence: the KV cache of its attention layers, the state of its
  // recurrent layers (memory/sequence_memory.h).
  SequenceMemory& memory;
  // The attention layers' cache, and the recurrent layers' state (std::logic_error when the
  // memory has none: the model asked for a kind of layer it did not declare in ModelShape).
  KvCache& cache() const;
  RecurrentState& state() const;

  // Every input of the graph, each filled before a pass by the object that made it (the batch's,
  // the KV cache's, the recurrent state's: memory/batch.h's PassInput).
  std::vector<std::unique_ptr<PassInput>> inputs;

  // Batch inputs.
  Tensor* token_ids;   // I32 [n_tokens]
  Tensor* positions;   // I32 [n_tokens]
  Tensor* output_ids;  // I32 [n_outputs]: batch rows whose logits are wanted (nullptr if all)
  // I32 [streams · n_tokens]: the entries' positions in each of `streams` streams (M-RoPE), made
  // on first use.
  Tensor* positions_input(int streams);
  // Per pool of the KV cache that the pass uses (null for the others): I32 [n_tokens], the
  // pool's cell of each token, ...
  std::vector<Tensor*> kv_slots;
  // ... and I32 [attention_index_elements(n_tokens, index_capacity)], the pool's cells each
  // token attends to (within the pool's window).
  std::vector<Tensor*> attention_index;
  // ... and, for ALiBi attention, I32 [alibi_positions_elements(n_tokens, index_capacity)]: the
  // tokens' positions, then the position of each cell the pool's index lists.
  std::vector<Tensor*> alibi_positions;
  // I32 [n_tokens]: the recurrent state slot of each token's sequence (null without recurrent
  // layers; made on first use).
  Tensor* state_slots = nullptr;
  Tensor* state_slots_input();

  // A pool's inputs, made on first use.
  Tensor* kv_slots_input(int pool);
  Tensor* attention_index_input(int pool);
  Tensor* alibi_positions_input(int pool);

  Tensor* build_inp_embd(Tensor* token_embedding);
  Tensor* build_norm(Tensor* x, const NormWeights& w, NormKind kind, float eps, const char* name, int layer);
  Tensor* build_ffn(Tensor* x, const FfnWeights& w, FfnActivation activation, int layer);
  // An ungated activation (kGelu, kSilu, kReluSquared) of x.
  Tensor* build_activation(Tensor* x, FfnActivation activation);
  // The positions one sequence may hold (LongRoPE chooses its factors by it).
  int32_t n_ctx_per_sequence() const { return memory.cell_count() / memory.n_seq_max(); }
  // Points options at KV layer `layer` of the model: its cache, its RoPE (or NoPE) from
  // ModelShape::kv_rope, its window from ModelShape::kv_windows.
  void use_layer(AttentionOptions& options, const ModelShape& shape, int layer) const;
  // Rotary embedding of x [head_dim, heads, n_tokens] at the batch's positions.
  Tensor* build_rope(Tensor* x, const RopeParams& rope, Tensor* freq_factors, const char* name, int layer);
  // Norm of Q or K [head_dim, heads, n_tokens] (per head, or over all heads: by the weight's size).
  Tensor* build_qk_norm(Tensor* x, Tensor* weight, Tensor* bias, NormKind kind, float eps, const char* name,
                        int layer);
  // Projections, rotary embedding, cache write, attention over the cache, output projection.
  Tensor* build_attn(Tensor* x, const AttentionWeights& w, const AttentionOptions& options, int layer);
  // The cache write and attention alone: q [head_dim, n_head, T] and k [head_dim, n_head_kv, T]
  // (rotated), v [head_dim_v · n_head_kv, T] -> [head_dim_v · n_head, T] (options.scale: 0 for
  // 1/√head_dim).
  Tensor* build_attn_over_cache(Tensor* q, Tensor* k, Tensor* v, const AttentionOptions& options, int layer,
                                Tensor* sinks = nullptr);
  // Logits [n_vocab, rows] of the final hidden states: x·W, times `scale` (when not 1), then
  // soft-capped (when softcap > 0).
  Tensor* build_logits(Tensor* x, Tensor* output, Tensor* bias = nullptr, float scale = 1.0f,
                       float softcap = 0.0f);
  // At the last of n_layer layers, keeps only the wanted rows of each tensor (the output filter of
  // every branch that reaches the logits); a no-op at other layers.
  void filter_last_layer(int layer, int n_layer, std::initializer_list<Tensor**> tensors);
  // Keeps only the rows whose logits are wanted (a no-op when all are).
  Tensor* build_output_filter(Tensor* x, const char* name, int layer);
  // y = W x + b
  Tensor* build_linear(Tensor* weight, Tensor* x, Tensor* bias);
  // Rows [first, first + count) of x [n, m] as a contiguous [count, m] tensor (fused projections).
  Tensor* build_row_slice(Tensor* x, int64_t first, int64_t count);

  static Tensor* name(Tensor* t, const char* base, int layer = -1) { return Graph::named(t, base, layer); }
};

}  // namespace sinter
