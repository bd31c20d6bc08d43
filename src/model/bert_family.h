// The BERT family of encoders (llama.cpp's build_bert): token + token-type (row 0, "sentence
// A") embeddings, absolute position embeddings or RoPE, a LayerNorm, then post-norm blocks
//
//   h = LN(x + attn(x));   out = LN(h + ffn(h))
//
// with non-causal attention: each token sees every token of its sequence. The forward pass
// returns the last block's hidden states [n_embd, n_outputs] (or, for a reranker, its
// classification head's scores); pooling them is the runtime's (runtime/embedding.h).
// A variant says what differs between members: bert (absolute positions, plain GELU FFN,
// separate or fused Q/K/V) and nomic-bert (NeoX RoPE, no position embeddings, SwiGLU, fused QKV).
#pragma once

#include "model/decoder.h"
#include "model/rank_head.h"

namespace sinter {

struct BertHParams : DecoderHParams {
  uint32_t n_token_types = 2;  // rows of token_types.weight
  uint32_t pooling_type = 0;   // Pooling: 0 none, 1 mean, 2 CLS, 3 last, 4 rank
  bool causal = false;         // converters write false; a causal BERT is not one llama.cpp makes

  BertHParams() { norm = NormKind::kLayer; }
  void declare(HParams& p, uint32_t vocab);
};

struct BertVariant {
  const char* architecture;
  bool rope = false;                   // NeoX RoPE on Q and K instead of position_embd
  bool gated_ffn = false;              // SwiGLU (gate, up, down) instead of GELU (up, down)
  bool fused_qkv = false;              // attn_qkv required (and in synthetic models)
  Presence bias = Presence::kFeature;  // Q/K/V, output and FFN biases
};

struct BertLayer {
  AttentionWeights attn;
  NormWeights attn_out_norm;  // on x + attention
  FfnWeights ffn;
  NormWeights layer_out_norm;  // on h + ffn
};

class BertFamilyModel : public DecoderModel<BertHParams> {
 public:
  explicit BertFamilyModel(const BertVariant& variant) : variant_(variant) {}

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
  BertVariant variant_;
};

// A synthetic model's keys: BERT's epsilon, the pooling asked for (mean by default).
Status write_bert_synth_keys(const char* architecture, const SynthDims& dims, Metadata& out,
                             float rope_freq_base = 10000.0f);

}  // namespace sinter
