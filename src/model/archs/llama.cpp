// Llama 1/2/3 and Mistral-style models: pre-norm decoder blocks with RMS norm, grouped-query
// attention with rotary embeddings (pairs (2i, 2i+1)), and a SiLU-gated feed-forward network.
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/builder.h"
#include "model/registry.h"
#include "model/rope_config.h"

namespace sinter {
namespace {

struct LlamaHParams {
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_ff = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;    // attention.key_length
  uint32_t head_dim_v = 0;  // attention.value_length
  float rms_eps = 1e-5f;
  RopeConfig rope;

  void declare(HParams& p, uint32_t vocab_from_tokenizer) {
    p.required("{arch}.context_length", n_ctx_train);
    p.required("{arch}.embedding_length", n_embd);
    p.block_count("{arch}.block_count", n_layer);
    p.required("{arch}.feed_forward_length", n_ff);
    p.required("{arch}.attention.head_count", n_head);
    if (!p.status()) return;
    if (n_head == 0 || n_embd % n_head != 0) {
      p.fail(concat("embedding length ", n_embd, " is not divisible by ", n_head, " heads"));
      return;
    }
    p.optional("{arch}.attention.head_count_kv", n_head_kv, n_head);
    p.optional("{arch}.attention.key_length", head_dim, n_embd / n_head);
    p.optional("{arch}.attention.value_length", head_dim_v, n_embd / n_head);
    p.required("{arch}.attention.layer_norm_rms_epsilon", rms_eps);
    p.optional("{arch}.vocab_size", n_vocab, vocab_from_tokenizer);
    rope.declare(p, head_dim);
    if (n_head_kv == 0 || n_head % n_head_kv != 0) {
      p.fail(concat(n_head, " query heads cannot be grouped over ", n_head_kv, " key/value heads"));
    }
    if (n_vocab == 0)
      p.fail("the vocabulary size is unknown (no {arch}.vocab_size and no tokenizer.ggml.tokens)");
    if (n_layer == 0 || n_ff == 0 || n_ctx_train == 0)
      p.fail("block count, feed-forward length and context length must be positive");
    if (rope.n_rot > head_dim)
      p.fail(concat("rope dimension count ", rope.n_rot, " exceeds the head size ", head_dim));
  }
};

uint32_t tokenizer_vocab_size(const Metadata& metadata) {
  const GgufValue* tokens = metadata.find_value("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->type != GgufType::kArray) return 0;
  const size_t size = std::get<GgufArray>(tokens->data).size();  // beyond int32: an error in HParams
  return static_cast<uint32_t>(std::min<size_t>(size, std::numeric_limits<uint32_t>::max()));
}

struct LlamaLayer {
  NormWeights attn_norm;
  AttentionWeights attn;
  NormWeights ffn_norm;
  FfnWeights ffn;
};

class LlamaModel final : public Model {
 public:
  LlamaHParams h;
  Tensor* token_embd = nullptr;
  NormWeights output_norm;
  Tensor* output = nullptr;
  Tensor* rope_freqs = nullptr;
  std::vector<LlamaLayer> layers;

  void bind(WeightBinder& b) {
    const int64_t n_embd = h.n_embd, n_vocab = h.n_vocab, n_ff = h.n_ff;
    const int64_t q_out = int64_t{h.n_head} * h.head_dim;
    const int64_t k_out = int64_t{h.n_head_kv} * h.head_dim;
    const int64_t v_out = int64_t{h.n_head_kv} * h.head_dim_v;
    token_embd = b.require("token_embd.weight", {n_embd, n_vocab});
    output_norm.weight = b.require("output_norm.weight", {n_embd});
    output = b.require_or("output.weight", "token_embd.weight", {n_embd, n_vocab});
    rope_freqs = b.optional("rope_freqs.weight", {int64_t{h.rope.n_rot} / 2});
    layers.resize(h.n_layer);
    for (uint32_t il = 0; il < h.n_layer; ++il) {
      const int i = static_cast<int>(il);
      LlamaLayer& l = layers[il];
      l.attn_norm.weight = b.require(format_name("blk.%d.attn_norm.weight", i), {n_embd});
      l.attn.q = b.require(format_name("blk.%d.attn_q.weight", i), {n_embd, q_out});
      l.attn.k = b.require(format_name("blk.%d.attn_k.weight", i), {n_embd, k_out});
      l.attn.v = b.require(format_name("blk.%d.attn_v.weight", i), {n_embd, v_out});
      l.attn.output =
          b.require(format_name("blk.%d.attn_output.weight", i), {int64_t{h.n_head} * h.head_dim_v, n_embd});
      l.attn.q_bias = b.optional(format_name("blk.%d.attn_q.bias", i), {q_out});
      l.attn.k_bias = b.optional(format_name("blk.%d.attn_k.bias", i), {k_out});
      l.attn.v_bias = b.optional(format_name("blk.%d.attn_v.bias", i), {v_out});
      l.attn.output_bias = b.optional(format_name("blk.%d.attn_output.bias", i), {n_embd});
      l.ffn_norm.weight = b.require(format_name("blk.%d.ffn_norm.weight", i), {n_embd});
      l.ffn.gate = b.require(format_name("blk.%d.ffn_gate.weight", i), {n_embd, n_ff});
      l.ffn.up = b.require(format_name("blk.%d.ffn_up.weight", i), {n_embd, n_ff});
      l.ffn.down = b.require(format_name("blk.%d.ffn_down.weight", i), {n_ff, n_embd});
    }
  }

  void describe_shape() {
    shape_.architecture = "llama";
    shape_.n_vocab = static_cast<int32_t>(h.n_vocab);
    shape_.n_embd = static_cast<int32_t>(h.n_embd);
    shape_.n_layer = static_cast<int32_t>(h.n_layer);
    shape_.n_ctx_train = static_cast<int32_t>(h.n_ctx_train);
    shape_.kv_layers.assign(h.n_layer, KvLayerShape{int64_t{h.n_head_kv} * h.head_dim,
                                                    int64_t{h.n_head_kv} * h.head_dim_v, h.n_head_kv});
    shape_.kv_windows.assign(h.n_layer, 0);
    shape_.rope = h.rope.params(/*neox=*/false, h.n_ctx_train);
    shape_.head_dim_k = static_cast<int32_t>(h.head_dim);
    shape_.rope_freq_factors = rope_freqs;
  }

  static Result<std::unique_ptr<Model>> create(const Metadata& metadata, WeightBinder& binder) {
    auto model = std::make_unique<LlamaModel>();
    HParams p(metadata, "llama", binder.file());
    model->h.declare(p, tokenizer_vocab_size(metadata));
    SINTER_TRY(p.status());
    model->hparams_ = p.entries();
    model->bind(binder);
    model->describe_shape();
    return std::unique_ptr<Model>(std::move(model));
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    AttentionOptions attention;
    attention.n_head = static_cast<int32_t>(h.n_head);
    attention.n_head_kv = static_cast<int32_t>(h.n_head_kv);
    attention.head_dim = static_cast<int32_t>(h.head_dim);
    attention.head_dim_v = static_cast<int32_t>(h.head_dim_v);
    attention.rope = shape_.rope;
    attention.rope_freq_factors = rope_freqs;

    Tensor* x = fx.build_inp_embd(token_embd);
    for (uint32_t il = 0; il < h.n_layer; ++il) {
      const int i = static_cast<int>(il);
      const LlamaLayer& l = layers[il];
      attention.kv_layer = i;
      Tensor* residual = x;
      Tensor* cur = fx.build_norm(x, l.attn_norm, NormKind::kRms, h.rms_eps, "attn_norm", i);
      cur = fx.build_attn(cur, l.attn, attention, i);
      if (il + 1 == h.n_layer) {  // only the rows whose logits are wanted go on
        cur = fx.build_output_filter(cur, "attn_out_filtered", i);
        residual = fx.build_output_filter(residual, "residual_filtered", i);
      }
      Tensor* ffn_input = ForwardContext::name(fx.graph.add(cur, residual), "ffn_inp", i);
      cur = fx.build_norm(ffn_input, l.ffn_norm, NormKind::kRms, h.rms_eps, "ffn_norm", i);
      cur = fx.build_ffn(cur, l.ffn, FfnActivation::kSiluGated, i);
      x = ForwardContext::name(fx.graph.add(cur, ffn_input), "l_out", i);
    }
    x = fx.build_norm(x, output_norm, NormKind::kRms, h.rms_eps, "result_norm", -1);
    return ForwardContext::name(fx.graph.mul_mat(output, x), "result_output");
  }
};

Status write_llama_hparams(const SynthDims& d, Metadata& out) {
  LlamaHParams h;
  h.n_vocab = static_cast<uint32_t>(d.n_vocab);
  h.n_ctx_train = static_cast<uint32_t>(d.n_ctx);
  h.n_embd = static_cast<uint32_t>(d.n_embd);
  h.n_layer = static_cast<uint32_t>(d.n_layer);
  h.n_ff = static_cast<uint32_t>(d.n_ff);
  h.n_head = static_cast<uint32_t>(d.n_head);
  h.n_head_kv = static_cast<uint32_t>(d.n_head_kv);
  if (h.n_head == 0 || h.n_embd % h.n_head != 0) {
    return make_error(ErrorCode::kInvalidArgument, "n_embd ", h.n_embd, " is not divisible by n_head ",
                      h.n_head);
  }
  h.head_dim = h.head_dim_v = h.n_embd / h.n_head;
  h.rope.n_rot = h.head_dim;
  h.rope.freq_base = 10000.0f;
  out.set("general.architecture", GgufValue::of_string("llama"));
  HParams p(&out, "llama");
  h.declare(p, h.n_vocab);
  return p.status();
}

const ArchitectureRegistration kLlama{Architecture{
    "llama",
    LlamaModel::create,
    write_llama_hparams,
    {
        {"tiny", {64, 2, 4, 2, 192, 512, 512}},
        {"small", {256, 2, 8, 4, 768, 1024, 1024}},
        {"medium", {512, 4, 8, 4, 1536, 4096, 2048}},
        {"1b", {2048, 16, 32, 8, 8192, 32000, 4096}},
    },
}};

}  // namespace
}  // namespace sinter
