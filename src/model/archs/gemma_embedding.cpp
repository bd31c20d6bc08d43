// EmbeddingGemma (llama.cpp's LLM_ARCH_GEMMA_EMBEDDING): Gemma 3's blocks as an encoder. Attention
// is non-causal, and each windowed layer's window is symmetric (a token sees W/2 positions on
// either side: ModelShape::window_kind), five windowed layers to one global by default, the
// windowed ones with a RoPE base of their own (rope.freq_base_swa, 10000) and no scaling.
// Embeddings are scaled by √n_embd, queries by 1/√head_dim (llama.cpp scales Q, then attends
// with scale 1: the same product); the final RMS norm's hidden states are pooled by the file's
// pooling type, and there are no logits. A file converted with sentence-transformers' Dense
// modules has dense_2 [n_embd → dense_2_feat_out] and dense_3 [dense_3_feat_in → n_embd]:
// the runtime applies them to each pooled vector (ModelShape::pooled_projection).
#include <cmath>

#include "model/decoder.h"

namespace sinter {
namespace {

struct GemmaEmbeddingHParams : DecoderHParams {
  uint32_t sliding_window = 0;
  uint32_t sliding_window_period = 6;
  float rope_freq_base_swa = 10000.0f;
  uint32_t pooling_type = 0;  // Pooling: 0 none, 1 mean, 2 CLS, 3 last
  // The dense layers after pooling (0: absent).
  uint32_t dense_2_feat_in = 0;
  uint32_t dense_2_feat_out = 0;
  uint32_t dense_3_feat_in = 0;
  uint32_t dense_3_feat_out = 0;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    p.required("{arch}.attention.sliding_window", sliding_window);
    p.optional("{arch}.attention.sliding_window_pattern", sliding_window_period, 6u);
    p.optional("{arch}.rope.freq_base_swa", rope_freq_base_swa, 10000.0f);
    p.optional("{arch}.pooling_type", pooling_type, 0u);
    p.optional("{arch}.dense_2_feat_in", dense_2_feat_in, 0u);
    p.optional("{arch}.dense_2_feat_out", dense_2_feat_out, 0u);
    p.optional("{arch}.dense_3_feat_in", dense_3_feat_in, 0u);
    p.optional("{arch}.dense_3_feat_out", dense_3_feat_out, 0u);
    if (rope_freq_base_swa <= 0.0f) p.fail("rope.freq_base_swa must be positive");
    if (pooling_type >= static_cast<uint32_t>(Pooling::kRank)) {
      p.fail(concat("pooling type ", pooling_type,
                    " is not one of 0 (none) .. 3 (last): the model has no classification head"));
    }
    // As llama.cpp checks: the dense layers start from and end at the embedding length.
    if (dense_2_feat_in != 0 && dense_2_feat_in != n_embd)
      p.fail(concat("dense_2_feat_in ", dense_2_feat_in, " is not the embedding length ", n_embd));
    if (dense_3_feat_out != 0 && dense_3_feat_out != n_embd)
      p.fail(concat("dense_3_feat_out ", dense_3_feat_out, " is not the embedding length ", n_embd));
  }
};

class GemmaEmbeddingModel final : public DecoderModel<GemmaEmbeddingHParams> {
 public:
  static constexpr const char* kArchitecture = "gemma-embedding";

  Tensor* dense_2 = nullptr;  // [n_embd, dense_2_feat_out]
  Tensor* dense_3 = nullptr;  // [dense_3_feat_in, n_embd]

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    w.token_embd = b.require("token_embd.weight", {n_embd, h.n_vocab});
    w.output_norm = bind_norm(b, "output_norm", -1, n_embd, Presence::kRequired);
    b.optional("output.weight", {n_embd, h.n_vocab});  // converters may write it; nothing reads it
    w.layers.resize(h.n_layer);
    // Q, K and V apart as converted, or fused when the file has attn_qkv.
    const bool fused = b.file_tensor(format_name("blk.%d.attn_qkv.weight", 0)) != nullptr;
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      l.attn = bind_attention(
          b, il, h, {.qkv_bias = Presence::kOptional, .qk_norm = Presence::kRequired, .fused_qkv = fused});
      l.attn_post_norm = bind_norm(b, "blk.%d.post_attention_norm", il, n_embd, Presence::kRequired);
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, n_embd, Presence::kRequired);
      l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {});
      l.ffn_post_norm = bind_norm(b, "blk.%d.post_ffw_norm", il, n_embd, Presence::kRequired);
    }
    // Optional in files (only those converted with the Dense modules), present in synthetic
    // models whose keys give their sizes.
    if (h.dense_2_feat_out > 0) dense_2 = b.feature("dense_2.weight", {n_embd, h.dense_2_feat_out});
    if (h.dense_3_feat_in > 0) dense_3 = b.feature("dense_3.weight", {h.dense_3_feat_in, n_embd});
  }

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.encoder = true;
    s.causal = false;
    s.pooling = static_cast<Pooling>(h.pooling_type);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    for (Tensor* dense : {dense_2, dense_3}) {
      if (dense != nullptr) s.pooled_projection.push_back(dense);
    }
    if (h.sliding_window == 0) return s;  // all global
    s.window_kind = WindowKind::kSymmetric;
    const std::vector<bool> windowed = sliding_window_layers(h.n_layer, h.sliding_window_period);
    set_sliding_windows(s, windowed, static_cast<int32_t>(h.sliding_window));
    set_local_rope(s, windowed, h.rope_freq_base_swa);
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    AttentionOptions attention = h.attention(/*neox=*/true);
    attention.scale = 1.0f / std::sqrt(static_cast<float>(h.head_dim));
    return build_decoder(fx, shape_, w, attention,
                         {.embedding_scale = std::sqrt(static_cast<float>(h.n_embd)),
                          .block = {.norm_eps = h.norm_eps, .activation = FfnActivation::kGeluGated}});
  }
};

const ArchitectureRegistration kGemmaEmbedding{Architecture{
    GemmaEmbeddingModel::kArchitecture,
    GemmaEmbeddingModel::create<GemmaEmbeddingModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<GemmaEmbeddingHParams>(
          GemmaEmbeddingModel::kArchitecture, dims, out, [&dims](GemmaEmbeddingHParams& h) {
            h.norm_eps = 1e-6f;
            h.pooling_type = dims.pooling_type >= 0 ? static_cast<uint32_t>(dims.pooling_type)
                                                    : static_cast<uint32_t>(Pooling::kMean);
            // Test sizes: a window that texts of a few dozen tokens cross (8 positions each
            // side); model sizes (a context of 2048 and up): EmbeddingGemma's own 512.
            h.sliding_window = h.n_ctx_train >= 2048 ? 512 : 16;
            if (h.n_layer < 6) h.sliding_window_period = 2;  // a global layer among few
            h.rope.freq_base = 1000000.0f;
            // The Dense modules, as EmbeddingGemma's: out to 4·n_embd and back.
            h.dense_2_feat_in = h.dense_3_feat_out = h.n_embd;
            h.dense_2_feat_out = h.dense_3_feat_in = 4 * h.n_embd;
          });
    },
    {
        {"tiny", {64, 2, 4, 1, 192, 512, 512}},
        {"small", {256, 4, 8, 4, 768, 1024, 1024}},
        {"300m", {768, 24, 3, 1, 1152, 262144, 2048}},
    },
    /*encoder=*/true,
}};

}  // namespace
}  // namespace sinter
