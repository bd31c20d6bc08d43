// BERT (llama.cpp's LLM_ARCH_BERT: BGE, MiniLM, E5 and other sentence-embedding encoders):
// token + token-type (row 0, "sentence A") + absolute position embeddings, a LayerNorm, then
// post-norm blocks
//
//   h = LN(x + attn(x));   out = LN(h + ffn(h))
//
// with biases on every projection and norm, a plain GELU feed-forward network, no rotary
// embedding, and non-causal attention: each token sees every token of its sequence. The forward
// pass returns the last block's hidden states [n_embd, n_outputs]; pooling them into one
// vector per sequence is the runtime's (runtime/embedding.h), as `{arch}.pooling_type` says.
#include "model/decoder.h"
#include "model/rank_head.h"

namespace sinter {
namespace {

struct BertHParams : DecoderHParams {
  uint32_t n_token_types = 2;  // rows of token_types.weight
  uint32_t pooling_type = 0;   // Pooling: 0 none, 1 mean, 2 CLS, 3 last, 4 rank
  bool causal = false;         // converters write false; a causal BERT is not one llama.cpp makes

  BertHParams() { norm = NormKind::kLayer; }

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    // llama.cpp refuses a BERT file without a token type count, even one without token_types.
    p.required("tokenizer.ggml.token_type_count", n_token_types);
    p.optional("{arch}.pooling_type", pooling_type, 0u);
    p.optional("{arch}.attention.causal", causal, false);
    if (pooling_type > static_cast<uint32_t>(Pooling::kRank))
      p.fail(concat("pooling type ", pooling_type, " is not one of 0 (none) .. 4 (rank)"));
    if (n_token_types == 0) p.fail("the token type count must be positive");
  }
};

struct BertLayer {
  AttentionWeights attn;
  NormWeights attn_out_norm;  // on x + attention
  FfnWeights ffn;
  NormWeights layer_out_norm;  // on h + ffn
};

class BertModel final : public DecoderModel<BertHParams> {
 public:
  static constexpr const char* kArchitecture = "bert";

  Tensor* token_types = nullptr;    // [n_embd, n_token_types]; only row 0 is used
  Tensor* position_embd = nullptr;  // [n_embd, n_ctx_train]
  NormWeights embd_norm;
  std::vector<BertLayer> layers;
  RankHead rank_head;  // a reranker's (pooling rank)

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    w.token_embd = b.require("token_embd.weight", {n_embd, h.n_vocab});
    token_types = b.feature("token_types.weight", {n_embd, h.n_token_types});
    position_embd = b.require("position_embd.weight", {n_embd, h.n_ctx_train});
    embd_norm = bind_norm(b, "token_embd_norm", -1, n_embd, Presence::kRequired, Presence::kRequired);
    // Converted files hold Q, K and V apart; a file with a fused attn_qkv is bound as one.
    const bool fused =
        b.file() != nullptr && b.file()->find_tensor(format_name("blk.%d.attn_qkv.weight", 0)) != nullptr;
    layers.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BertLayer& l = layers[static_cast<size_t>(il)];
      l.attn = bind_attention(
          b, il, h, {.qkv_bias = Presence::kFeature, .output_bias = Presence::kFeature, .fused_qkv = fused});
      l.attn_out_norm =
          bind_norm(b, "blk.%d.attn_output_norm", il, n_embd, Presence::kRequired, Presence::kRequired);
      l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {.gated = false, .bias = Presence::kFeature});
      l.layer_out_norm =
          bind_norm(b, "blk.%d.layer_output_norm", il, n_embd, Presence::kRequired, Presence::kRequired);
    }
    rank_head = bind_rank_head(b, n_embd, reranker());
  }

  bool reranker() const { return h.pooling_type == static_cast<uint32_t>(Pooling::kRank); }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.encoder = true;
    s.causal = h.causal;
    s.pooling = static_cast<Pooling>(h.pooling_type);
    if (reranker()) s.n_rank_outputs = rank_head.outputs(s.n_embd);
    KvRope none = h.kv_rope(/*neox=*/false);
    none.rotated = false;  // absolute positions: nothing rotates, nothing shifts
    s.kv_rope.assign(h.n_layer, none);
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Graph& g = fx.graph;
    const int n_layer = static_cast<int>(h.n_layer);
    Tensor* x = fx.build_inp_embd(w.token_embd);
    if (token_types != nullptr) {
      // Every token is of type 0: row 0 [n_embd] broadcast over the batch.
      const size_t row = token_types->nb[1];
      Tensor* type0 =
          g.view(token_types, {token_types->ne[0], 1, 1, 1}, {token_types->nb[0], row, row, row}, 0);
      if (type0->type != DType::F32) type0 = g.copy(type0, DType::F32);
      x = g.add(x, type0);
    }
    x = g.add(g.get_rows(position_embd, fx.positions), x);
    x = fx.build_norm(x, embd_norm, NormKind::kLayer, h.norm_eps, "inp_norm", -1);
    for (int il = 0; il < n_layer; ++il) {
      const BertLayer& l = layers[static_cast<size_t>(il)];
      AttentionOptions attention = h.attention(/*neox=*/false);
      fx.use_layer(attention, shape_, il);
      Tensor* cur = fx.build_attn(x, l.attn, attention, il);
      fx.filter_last_layer(il, n_layer, {&cur, &x});
      cur = g.add(cur, x);
      Tensor* ffn_inp =
          fx.build_norm(cur, l.attn_out_norm, NormKind::kLayer, h.norm_eps, "attn_out_norm", il);
      cur = fx.build_ffn(ffn_inp, l.ffn, FfnActivation::kGelu, il);
      cur = g.add(cur, ffn_inp);
      x = fx.build_norm(cur, l.layer_out_norm, NormKind::kLayer, h.norm_eps, "layer_out_norm", il);
    }
    x = ForwardContext::name(x, "result_embd");
    return reranker() ? build_rank_head(fx, x, rank_head) : x;
  }
};

const ArchitectureRegistration kBert{Architecture{
    BertModel::kArchitecture,
    BertModel::create<BertModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<BertHParams>(BertModel::kArchitecture, dims, out, [&dims](BertHParams& h) {
        h.norm_eps = 1e-12f;  // BERT's
        h.pooling_type = dims.pooling_type >= 0 ? static_cast<uint32_t>(dims.pooling_type)
                                                : static_cast<uint32_t>(Pooling::kMean);
      });
    },
    {
        {"tiny", {64, 2, 4, 4, 256, 512, 512}},
        {"small", {256, 4, 8, 8, 1024, 1024, 512}},
        {"bge-small", {384, 12, 12, 12, 1536, 30522, 512}},
    },
    /*encoder=*/true,
}};

}  // namespace
}  // namespace sinter
