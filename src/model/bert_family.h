// The BERT family of encoders (llama.cpp's build_bert): token + token-type (row 0, "sentence
// A") embeddings, absolute position embeddings or RoPE, a LayerNorm, then post-norm blocks
//
//   h = LN(x + attn(x));   out = LN(h + ffn(h))
//
// with non-causal attention: each token sees every token of its sequence. The forward pass
// returns the last block's hidden states [n_embd, n_outputs] (or, for a reranker, its
// classification head's scores); pooling them is the runtime's (runtime/embedding.h).
// A variant says what differs between members: bert (absolute positions, plain GELU FFN,
// separate or fused Q/K/V), nomic-bert (NeoX RoPE, no position embeddings, SwiGLU, fused QKV)
// and jina-bert-v2 (ALiBi instead of positions, LayerNorms of Q and K, a second attention
// norm, GeGLU with biases, a one-score reranker head).
#pragma once

#include "model/decoder.h"
#include "model/rank_head.h"

namespace sinter {

struct BertHParams : DecoderHParams {
  uint32_t n_token_types = 2;   // rows of token_types.weight
  uint32_t pooling_type = 0;    // Pooling: 0 none, 1 mean, 2 CLS, 3 last, 4 rank
  bool causal = false;          // converters write false; a causal BERT is not one llama.cpp makes
  bool alibi = false;           // set before declare() by an ALiBi member (jina-bert-v2)
  float max_alibi_bias = 0.0f;  // declared when alibi: 8 by default, as llama.cpp's jina-bert-v2

  BertHParams() { norm = NormKind::kLayer; }
  void declare(HParams& p, uint32_t vocab);
};

struct BertVariant {
  const char* architecture;
  bool rope = false;                   // NeoX RoPE on Q and K instead of position_embd
  bool gated_ffn = false;              // SwiGLU (gate, up, down) instead of GELU (up, down)
  bool fused_qkv = false;              // attn_qkv required (and in synthetic models)
  Presence bias = Presence::kFeature;  // Q/K/V, output and FFN biases
  // jina-bert-v2: ALiBi (no positions, nothing rotates), LayerNorms (with bias) of the whole Q
  // and K projections, attn_norm_2, a GeGLU FFN (ffn_up [n_embd, 2·n_ff] holding the gate's
  // rows first, as converters write it now, or a separate ffn_gate as they wrote it before; a
  // file with neither has a plain GELU FFN) and a reranker head cls [n_embd, 1] + tanh.
  bool jina = false;
};

struct BertLayer {
  AttentionWeights attn;
  NormWeights attn_out_norm;  // on x + attention
  NormWeights attn_norm_2;    // jina's, when present: LN(attn_out_norm's + x) again
  FfnWeights ffn;
  NormWeights layer_out_norm;  // on h + ffn
};

class BertFamilyModel : public DecoderModel<BertHParams> {
 public:
  explicit BertFamilyModel(const BertVariant& variant) : variant_(variant) { h.alibi = variant.jina; }

  Tensor* token_types = nullptr;    // [n_embd, n_token_types]; only row 0 is used
  Tensor* position_embd = nullptr;  // [n_embd, n_ctx_train] (absolute positions)
  NormWeights embd_norm;
  std::vector<BertLayer> layers;
  RankHead rank_head;  // a reranker's (pooling rank)

  void bind(WeightBinder& b);
  ModelShape describe_shape() const;
  Tensor* build_forward(ForwardContext& fx) const override;
  bool reranker() const { return h.pooling_type == static_cast<uint32_t>(Pooling::kRank); }

 private:
  FfnWeights bind_jina_ffn(WeightBinder& b, int layer) const;

  BertVariant variant_;
};

// A synthetic model's keys: BERT's epsilon, the pooling asked for (mean by default).
Status write_bert_synth_keys(const char* architecture, const SynthDims& dims, Metadata& out,
                             float rope_freq_base = 10000.0f, bool alibi = false);

}  // namespace sinter
