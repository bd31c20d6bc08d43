// LFM2 (LiquidAI LFM2, LFM2.5) and LFM2-MoE (LFM2-8B-A1B): hybrids whose blocks put either a
// short convolution (model/short_conv.h) or grouped-query attention (an RMS norm of each query
// and key head before NeoX RoPE) where a decoder has attention, each followed by a SwiGLU FFN:
//
//   h = x + op(attn_norm(x))      op: the short convolution or attention
//   out = h + ffn(ffn_norm(h))
//
// As llama.cpp reads it, attention.head_count_kv has one value per layer and 0 marks a
// convolution layer. The final norm is stored as token_embd_norm; the output matrix is
// token_embd's unless the file has output.weight (LFM2's files have none). With
// attention.sliding_window every attention layer is windowed. In LFM2-MoE the blocks after the
// first leading_dense_block_count have a mixture of experts instead of the dense FFN: sigmoid
// routing (expert_gating_func) with a selection bias (exp_probs_b), the chosen weights
// renormalized and not scaled (llama.cpp reads no expert_weights_scale for it).
//
// The memory is a hybrid: the KV cache has the attention layers (numbered among themselves) and
// the recurrent state the convolution layers' last l_cache − 1 inputs (numbered likewise).
#include "model/decoder.h"
#include "model/short_conv.h"

namespace sinter {
namespace {

struct Lfm2HParams : DecoderHParams {
  uint32_t l_cache = 3;         // shortconv.l_cache: the convolution's width
  uint32_t sliding_window = 0;  // of every attention layer; 0: full attention
  // LFM2-MoE
  MoeHParams moe;
  uint32_t n_ff_exp = 0;
  uint32_t n_dense_lead = 0;
  uint32_t gating = 2;  // expert_gating_func: 1 softmax, 2 sigmoid

  bool is_moe(const HParams& p) const { return p.architecture() == "lfm2moe"; }

  void declare(HParams& p, uint32_t vocab) {
    kv_heads_per_layer = true;
    DecoderHParams::declare(p, vocab);
    p.required("{arch}.shortconv.l_cache", l_cache);
    p.optional("{arch}.attention.sliding_window", sliding_window, 0u);
    if (is_moe(p)) {
      moe.declare(p, /*required=*/true);
      p.required("{arch}.expert_feed_forward_length", n_ff_exp);
      p.optional("{arch}.leading_dense_block_count", n_dense_lead, 0u);
      p.required("{arch}.expert_gating_func", gating);
    }
    if (p.mode() == HParams::Mode::kRead) refuse_embedding_files(p);
    if (!p.status()) return;
    if (l_cache < 2) p.fail(concat("shortconv.l_cache ", l_cache, " must be at least 2"));
    if (head_dim != head_dim_v) p.fail("attention key and value lengths must be equal");
    if (is_moe(p) && (gating < 1 || gating > 2))
      p.fail(concat("expert_gating_func ", gating, " is not supported (1 softmax, 2 sigmoid)"));
    if (is_moe(p) && n_ff_exp == 0) p.fail("the experts' feed-forward length is 0");
  }

  // LFM2's embedding models (LFM2-ColBERT, the bidirectional LFM2-Embedding: a pooling type, a
  // non-causal attention and a centred convolution) are not supported: an error, rather than
  // running them as a causal generator.
  static void refuse_embedding_files(HParams& p) {
    bool causal = true;
    uint32_t pooling = 0;
    if (p.has("{arch}.attention.causal")) p.optional("{arch}.attention.causal", causal, true);
    if (p.has("{arch}.pooling_type")) p.optional("{arch}.pooling_type", pooling, 0u);
    if (!causal || pooling != 0)
      p.fail("LFM2 embedding models (a pooling type, or non-causal) are not supported");
  }

  Status set_synth_dims(const SynthDims& d) {
    SINTER_TRY(DecoderHParams::set_synth_dims(d));
    moe.set_synth_dims(d);
    n_ff_exp = static_cast<uint32_t>(d.n_ff_exp > 0 ? d.n_ff_exp : d.n_ff);
    return ok_status();
  }

  MoeOptions moe_options() const {
    MoeOptions o = moe.options(/*normalize=*/true);
    o.gating = gating == 2 ? MoeGating::kSigmoid : MoeGating::kSoftmax;
    o.scale = 1.0f;
    return o;
  }
};

// LFM2 and LFM2-MoE: one model, named by `kMoe`.
template <bool kMoe>
class Lfm2Model final : public DecoderModel<Lfm2HParams> {
 public:
  static constexpr const char* kArchitecture = kMoe ? "lfm2moe" : "lfm2";

  template <class M>
  static Result<std::unique_ptr<Model>> create(const Metadata& metadata, WeightBinder& binder) {
    SINTER_ASSIGN(auto model, DecoderModel::create<M>(metadata, binder));
    for (const ShortConvWeights& conv : static_cast<const M&>(*model).conv)
      SINTER_TRY(check_short_conv_types(conv));
    return model;
  }

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd;
    w.token_embd = b.require("token_embd.weight", {n_embd, int64_t{h.n_vocab}});
    w.output_norm = bind_norm(b, "token_embd_norm", -1, n_embd, Presence::kRequired);
    w.output = b.optional("output.weight", {n_embd, int64_t{h.n_vocab}});
    if (w.output == nullptr) w.output = w.token_embd;
    w.layers.resize(h.n_layer);
    conv.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      BlockWeights& l = w.layers[static_cast<size_t>(il)];
      const bool attention = h.has_attention(static_cast<uint32_t>(il));
      add_hybrid_layer(layers, attention);
      l.attn_norm = bind_norm(b, "blk.%d.attn_norm", il, n_embd, Presence::kRequired);
      if (attention) {
        l.attn = bind_attention(b, il, h, {.qk_norm = Presence::kRequired});
      } else {
        conv[static_cast<size_t>(il)] = bind_short_conv(b, il, n_embd, h.l_cache);
      }
      l.ffn_norm = bind_norm(b, "blk.%d.ffn_norm", il, n_embd, Presence::kRequired);
      if (!kMoe || static_cast<uint32_t>(il) < h.n_dense_lead) {
        l.ffn = bind_ffn(b, il, n_embd, h.n_ff, {});
        continue;
      }
      l.moe = bind_moe(b, il, n_embd, h.n_ff_exp, h.moe.n_expert);
      l.moe.selection_bias = b.require(format_name("blk.%d.exp_probs_b.bias", il), {int64_t{h.moe.n_expert}});
    }
  }

  std::vector<HybridLayer> layers;     // per block
  std::vector<ShortConvWeights> conv;  // per block (empty for attention blocks)

  ModelShape describe_shape() const {
    ModelShape s = decoder_shape(kArchitecture);
    s.kv_layers.clear();
    s.kv_windows.clear();
    for (const HybridLayer& layer : layers) {
      if (layer.attention) {
        s.kv_layers.push_back(h.kv_layer());
        s.kv_windows.push_back(static_cast<int32_t>(h.sliding_window));
        s.kv_rope.push_back(h.kv_rope(/*neox=*/true));
      } else {
        s.recurrent_layers.push_back(short_conv_state(h.n_embd, h.l_cache));
      }
    }
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Tensor* x = fx.build_inp_embd(w.token_embd);
    AttentionOptions attention = h.attention(/*neox=*/true);
    const BlockOptions block{.norm_eps = h.norm_eps, .moe = h.moe_options()};
    BlockOptions conv_block = block;
    conv_block.attention = [this](ForwardContext& f, Tensor* in, const AttentionOptions&, int il) {
      const auto at = static_cast<size_t>(il);
      return build_short_conv(f, in, conv[at], layers[at].index, il);
    };
    x = build_hybrid_blocks(fx, x, shape_, w, attention, layers, block, conv_block);
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output);
  }
};

// Attention in every third block (2, 5, 8, ...), as LFM2-1.2B has it in six of its sixteen; the
// others convolutions.
void set_synth_layers(Lfm2HParams& h) {
  h.norm_eps = 1e-5f;
  h.rope.freq_base = 1000000.0f;
  h.l_cache = 3;
  h.n_head_kv_layers.assign(h.n_layer, 0);
  for (uint32_t il = 2; il < h.n_layer; il += 3) h.n_head_kv_layers[il] = h.n_head_kv;
}

Status write_lfm2_keys(const char* architecture, const SynthDims& dims, Metadata& out) {
  return write_synth_keys<Lfm2HParams>(architecture, dims, out, [&dims](Lfm2HParams& h) {
    h.kv_heads_per_layer = true;
    set_synth_layers(h);
    // "swa": windows of 16 positions on the attention layers, which a 64-token test crosses.
    if (dims.variant == "swa") h.sliding_window = 16;
    h.n_dense_lead = 1;  // LFM2-MoE: a dense block first, as its files lead with two
    h.gating = 2;
  });
}

const ArchitectureRegistration kLfm2{Architecture{
    Lfm2Model<false>::kArchitecture,
    Lfm2Model<false>::create<Lfm2Model<false>>,
    [](const SynthDims& dims, Metadata& out) {
      return write_lfm2_keys(Lfm2Model<false>::kArchitecture, dims, out);
    },
    {
        {"tiny", {64, 4, 4, 2, 192, 512, 512}},
        {"small", {256, 6, 8, 4, 768, 1024, 1024}},
        {"tiny-swa", {64, 4, 4, 2, 192, 512, 512, 0, 0, 0, -1, "swa"}},
        {"350m", {1024, 16, 16, 8, 4608, 65536, 128000}},
        {"1.2b", {2048, 16, 32, 8, 8192, 65536, 128000}},
    },
}};

const ArchitectureRegistration kLfm2Moe{Architecture{
    Lfm2Model<true>::kArchitecture,
    Lfm2Model<true>::create<Lfm2Model<true>>,
    [](const SynthDims& dims, Metadata& out) {
      return write_lfm2_keys(Lfm2Model<true>::kArchitecture, dims, out);
    },
    {
        {"tiny", {64, 4, 4, 2, 192, 512, 512, 8, 2, 64}},
        {"small", {256, 3, 8, 4, 768, 1024, 1024, 8, 2, 128}},
        // LFM2-8B-A1B: 24 blocks of 2048, 32 experts (4 used) of 1792.
        {"8b-a1b", {2048, 24, 32, 8, 7168, 65536, 128000, 32, 4, 1792}},
    },
}};

}  // namespace
}  // namespace sinter
