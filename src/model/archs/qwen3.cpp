// Qwen 3 (dense): Qwen 2's blocks without the Q/K/V biases, with an RMS norm of each query and
// key head (over head_dim, before RoPE), and a head size of its own (attention.key_length).
//
// A file with a pooling type (mean, CLS or last: Qwen3-Embedding's is last) is an embedding
// model: the same causal blocks, the forward pass ending at the final norm's hidden states,
// which the runtime pools (runtime/embedding.h), as llama.cpp embeds with such a file. With
// pooling rank it is Qwen3-Reranker: cls.output holds the "yes" and "no" rows of the output
// matrix, and their softmax at the last token gives P(yes) (runtime/rerank.h).
#include <algorithm>

#include "model/decoder.h"
#include "model/rank_head.h"

namespace sinter {
namespace {

struct Qwen3HParams : DecoderHParams {
  // `{arch}.pooling_type`, only in embedding models' files; -1: none (a generative model).
  int32_t pooling_type = -1;

  void declare(HParams& p, uint32_t vocab) {
    DecoderHParams::declare(p, vocab);
    const bool present = p.mode() == HParams::Mode::kWrite ? pooling_type >= 0 : p.has("{arch}.pooling_type");
    if (!present) return;
    auto pooling = static_cast<uint32_t>(std::max(pooling_type, 0));
    p.optional("{arch}.pooling_type", pooling, 0u);
    if (pooling > static_cast<uint32_t>(Pooling::kRank)) {
      p.fail(concat("pooling type ", pooling, " is not one of 0 (none) .. 4 (rank)"));
    }
    pooling_type = static_cast<int32_t>(pooling);
  }

  // Pooling none (the key's default) is a generative model's file, as converters write it.
  bool embedding() const { return pooling_type > static_cast<int32_t>(Pooling::kNone); }
  bool reranker() const { return pooling_type == static_cast<int32_t>(Pooling::kRank); }
};

// Qwen3-Reranker: P(yes) from the softmax over the "yes" and "no" rows at the last token.
constexpr int64_t kRerankLabels = 2;

class Qwen3Model final : public DecoderModel<Qwen3HParams> {
 public:
  static constexpr const char* kArchitecture = "qwen3";

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      l.attn = bind_attention(b, il, h, {.qkv_bias = Presence::kOptional, .qk_norm = Presence::kRequired});
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, h.n_embd, Presence::kRequired);
      l.ffn = bind_ffn(b, il, h.n_embd, h.n_ff, {});
    }
    rank_head = bind_projection_head(b, h.n_embd, h.reranker(), head_rows(b, kRerankLabels));
  }

  RankHead rank_head;  // a reranker's

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_rope.assign(h.n_layer, h.kv_rope(/*neox=*/true));
    if (h.embedding()) {
      s.encoder = true;  // hidden states out; attention stays causal
      s.pooling = static_cast<Pooling>(h.pooling_type);
      if (h.reranker()) {
        s.n_rank_outputs = rank_head.outputs(s.n_embd);
        s.rank_is_probability = true;  // a softmax ends the head
      }
    }
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Tensor* x = build_decoder(fx, shape_, w, h.attention(/*neox=*/true), {.block = {.norm_eps = h.norm_eps}});
    if (!h.reranker()) return x;
    // The "yes" and "no" logits at each output row, then their softmax: the first is P(yes).
    return ForwardContext::name(fx.graph.softmax(build_rank_head(fx, x, rank_head)), "result_rank_softmax");
  }
};

const ArchitectureRegistration kQwen3{Architecture{
    Qwen3Model::kArchitecture,
    Qwen3Model::create<Qwen3Model>,
    [](const SynthDims& dims, Metadata& out) {
      // llama.cpp sizes a reranker's cls.output by its labels: "yes" and "no".
      if (dims.pooling_type == static_cast<int32_t>(Pooling::kRank))
        out.set("qwen3.classifier.output_labels", GgufValue::of_strings({"yes", "no"}));
      return write_synth_keys<Qwen3HParams>(Qwen3Model::kArchitecture, dims, out, [&dims](Qwen3HParams& h) {
        h.pooling_type = dims.pooling_type;  // --pooling: an embedding model (last: Qwen3-Embedding)
        h.norm_eps = 1e-6f;
        h.rope.freq_base = 1000000.0f;
        // A head size of its own (attention.key_length), as Qwen 3's 128 over 1024 / 16 in the
        // 0.6B model: small presets get twice n_embd / n_head; sizes of 128 and up stay.
        if (h.head_dim < 128) h.head_dim = h.head_dim_v = h.rope.n_rot = std::min(2 * h.head_dim, 128u);
      });
    },
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        {"1.7b", {2048, 28, 16, 8, 6144, 151936, 4096}},
    },
}};

}  // namespace
}  // namespace sinter
