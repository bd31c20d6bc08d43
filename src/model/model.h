// The Model interface: an architecture's hyper-parameters, bound weights, and the forward pass
// it composes from the builder toolkit (model/builder.h).
#pragma once

#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "graph/graph.h"
#include "memory/kv_cache.h"
#include "memory/recurrent_state.h"
#include "model/hparams.h"

namespace sinter {

class ForwardContext;

// How a KV layer's keys were rotated, so that the forward pass and a context shift rotate them
// alike (one definition per layer, used by both).
struct KvRope {
  bool rotated = true;  // false: a NoPE layer (no rotation, nothing to shift)
  int32_t head_dim = 0;
  RopeParams params;
  Tensor* factors = nullptr;       // frequency factors (rope_freqs, or LongRoPE's short factors)
  Tensor* factors_long = nullptr;  // LongRoPE: the factors when the context per sequence is
  int32_t long_above = 0;          //   longer than this (the original training context)

  Tensor* factors_for(int32_t n_ctx_per_sequence) const {
    return factors_long != nullptr && n_ctx_per_sequence > long_above ? factors_long : factors;
  }
};

// How an encoder's per-token hidden states become one vector per sequence: the values of
// `{arch}.pooling_type` (llama.cpp's llama_pooling_type).
enum class Pooling : int32_t { kNone = 0, kMean = 1, kCls = 2, kLast = 3, kRank = 4 };

// What the runtime must know about a model, whatever its architecture.
struct ModelShape {
  std::string architecture;
  int32_t n_vocab = 0;
  int32_t n_embd = 0;
  int32_t n_layer = 0;
  int32_t n_ctx_train = 0;
  bool causal = true;
  // An encoder (BERT), or a decoder whose file has a pooling type (Qwen3-Embedding, causal):
  // build_forward returns the final hidden states [n_embd, n_outputs]
  // instead of logits, attention is non-causal (causal = false: each token sees every token of
  // its sequence), and `pooling` is the file's way to one vector per sequence.
  bool encoder = false;
  Pooling pooling = Pooling::kNone;
  // A reranker (pooling rank): build_forward returns its classification head's outputs
  // [n_rank_outputs, n_outputs] instead of hidden states (0: not a reranker).
  int32_t n_rank_outputs = 0;
  // The head ends in a softmax (Qwen3-Reranker: P(yes)), so its score is a probability already.
  bool rank_is_probability = false;
  std::vector<KvLayerShape> kv_layers;  // one per layer that has a KV cache
  // Per KV layer: sliding window (0: full attention). The KV cache has one pool per distinct
  // window (memory/kv_cache.h), and each pool its own attention index.
  std::vector<int32_t> kv_windows;
  // How every window bounds what a token sees: trailing (a decoder's sliding window) or
  // symmetric (an encoder's local attention: EmbeddingGemma, ModernBERT); memory/kv_pool.h.
  WindowKind window_kind = WindowKind::kTrailing;
  std::vector<KvRope> kv_rope;  // per KV layer
  // One per layer that keeps a recurrent state (Mamba, LFM2's convolutions, RWKV): what it keeps
  // per sequence (memory/recurrent_state.h). A model with these and KV layers has a hybrid memory.
  std::vector<RecurrentLayerShape> recurrent_layers;
  // Dense layers after pooling (sentence-transformers' Dense modules, EmbeddingGemma's
  // dense_2 and dense_3; llama.cpp's build_dense_out): each pooled vector (with pooling none,
  // each token's row) becomes W_k · ... · W_1 · v, no bias, no activation, before any
  // normalization. Weights [n_in, n_out] (ne order), the first's n_in and the last's n_out
  // n_embd. The runtime applies them on the host (runtime/pooled_projection.h).
  std::vector<Tensor*> pooled_projection;

  // Floats per output row of build_forward: n_vocab logits, an encoder's n_embd, or a
  // reranker's head outputs.
  int32_t output_width() const {
    if (!encoder) return n_vocab;
    return n_rank_outputs > 0 ? n_rank_outputs : n_embd;
  }
};

class Model {
 public:
  virtual ~Model() = default;

  const ModelShape& shape() const { return shape_; }
  const std::vector<HParamEntry>& hparams() const { return hparams_; }
  const std::deque<Tensor>& weights() const { return weights_; }
  std::deque<Tensor>& weights() { return weights_; }

  // Builds one batch's forward pass; returns logits [n_vocab, n_outputs] (an encoder: hidden
  // states [n_embd, n_outputs]).
  virtual Tensor* build_forward(ForwardContext& fx) const = 0;

  // Rotates the cached keys of every layer by the cache's pending deltas: deltas[pool] is
  // I32 [cache.pool_cells(pool)] (null for a pool without layers).
  virtual void build_kv_shift(Graph& graph, KvCache& cache, std::span<Tensor* const> deltas) const;

 protected:
  ModelShape shape_;
  std::vector<HParamEntry> hparams_;
  std::deque<Tensor> weights_;
};

}  // namespace sinter
