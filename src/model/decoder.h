// What decoder architectures share besides the builder toolkit: the hyper-parameters nearly all
// of them declare (Llama's set), the creation sequence (declare, check, bind, describe), the
// binding of the usual per-layer tensors by their llama.cpp names, and the writing of synthetic
// models' keys. An architecture file keeps what is its own: extra keys, which pieces it binds,
// and its forward pass.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/metadata.h"
#include "model/block.h"
#include "model/builder.h"
#include "model/hparams.h"
#include "model/registry.h"
#include "model/rope_config.h"
#include "model/weights.h"

namespace sinter {

struct DecoderHParams {
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_ff = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;    // attention.key_length
  uint32_t head_dim_v = 0;  // attention.value_length
  NormKind norm = NormKind::kRms;
  float norm_eps = 1e-5f;  // attention.layer_norm_rms_epsilon or attention.layer_norm_epsilon
  RopeConfig rope;
  // Hybrids (LFM2) give attention.head_count_kv per layer, 0 for a layer without attention: set
  // kv_heads_per_layer before declare() to read it so (a single value still means every layer).
  // n_head_kv is then the attention layers' count, which must be the same for all of them.
  bool kv_heads_per_layer = false;
  std::vector<uint32_t> n_head_kv_layers;
  // Nemotron-H gives feed_forward_length per layer, 0 for a layer without FFN: set ff_per_layer
  // before declare() to read it so. n_ff is then the largest.
  bool ff_per_layer = false;
  std::vector<uint32_t> n_ff_layers;
  // MoE-only files may have no feed_forward_length (Qwen 3.5 MoE's converter writes it only where
  // the checkpoint has a dense size): set ff_optional before declare() to read it so (0 if absent).
  bool ff_optional = false;

  // Declares the shared keys and checks them; `norm` picks the epsilon's key.
  void declare(HParams& p, uint32_t vocab_from_tokenizer);
  void declare_kv_heads_per_layer(HParams& p);
  // The dimensions of a synthetic model (head sizes n_embd / n_head, RoPE over the whole head).
  Status set_synth_dims(const SynthDims& d);

  int64_t q_width() const { return int64_t{n_head} * head_dim; }
  int64_t k_width() const { return int64_t{n_head_kv} * head_dim; }
  int64_t v_width() const { return int64_t{n_head_kv} * head_dim_v; }
  KvLayerShape kv_layer() const { return {k_width(), v_width(), n_head_kv}; }
  // The attention options every layer starts from (RoPE as configured, NeoX or not).
  AttentionOptions attention(bool neox) const;
  // The rotation of every layer's keys when all layers share it.
  KvRope kv_rope(bool neox, Tensor* factors = nullptr) const {
    return KvRope{true, static_cast<int32_t>(head_dim), rope.params(neox, n_ctx_train), factors};
  }
  // Whether layer il has attention (with kv_heads_per_layer, a count of KV heads above 0).
  bool has_attention(uint32_t il) const {
    return !kv_heads_per_layer || (il < n_head_kv_layers.size() && n_head_kv_layers[il] > 0);
  }
};

// Sliding-window layers of a "period" pattern (llama.cpp's set_swa_pattern): layer il is windowed
// when il % period < period − 1 (period 2: even layers; 6: all but 5, 11, 17, ...), or with
// dense_first when il % period != 0 (ModernBERT's 3: all but 0, 3, 6, ...); period 0 makes
// every layer windowed.
std::vector<bool> sliding_window_layers(uint32_t n_layer, uint32_t period, bool dense_first = false);
// Sets the windows of a shape's KV layers: `window` where `windowed`, else full attention.
void set_sliding_windows(ModelShape& shape, const std::vector<bool>& windowed, int32_t window);
// The windowed layers' RoPE: their own base (rope.freq_base_swa), unscaled (Gemma 3 and the
// encoders built like it: their local layers).
void set_local_rope(ModelShape& shape, const std::vector<bool>& windowed, float freq_base);

// The vocabulary size a file's tokenizer implies (0 without one).
uint32_t tokenizer_vocab_size(const Metadata& metadata);

// Which optional pieces a layer's binding includes.
enum class Presence {
  kAbsent,
  kOptional,  // bound when the file has it; absent from synthetic models
  kFeature,   // bound when the file has it; present in synthetic models
  kRequired,
};

struct AttentionBinding {
  Presence qkv_bias = Presence::kAbsent;
  Presence output_bias = Presence::kAbsent;
  // Q/K norm weights: [head_dim] (per head) or, with qk_norm_whole, [n_head · head_dim].
  Presence qk_norm = Presence::kAbsent;
  bool qk_norm_whole = false;
  Presence qk_norm_bias = Presence::kAbsent;  // LayerNorm Q/K norms with bias
  bool fused_qkv = false;                     // attn_qkv.weight [n_embd, q + k + v] instead of attn_q/k/v
};

struct FfnBinding {
  bool gated = true;           // gate and up (SwiGLU, GeGLU), or up alone (plain GELU)
  bool fused_gate_up = false;  // ffn_up.weight [n_embd, 2·n_ff]: gate rows first, then up
  Presence bias = Presence::kAbsent;
};

// "blk.%d.attn_norm" + ".weight" / ".bias".
NormWeights bind_norm(WeightBinder& b, const char* pattern, int layer, int64_t n, Presence weight,
                      Presence bias = Presence::kAbsent);
AttentionWeights bind_attention(WeightBinder& b, int layer, const DecoderHParams& h,
                                const AttentionBinding& o);
FfnWeights bind_ffn(WeightBinder& b, int layer, int64_t n_embd, int64_t n_ff, const FfnBinding& o);
Tensor* bind_weight(WeightBinder& b, const std::string& name, std::vector<int64_t> shape, Presence presence);

// Creation shared by every decoder model class M (deriving from DecoderModel<H>): declares M's
// hyper-parameters from the file, then M::bind(binder) and M::describe_shape().
template <class H>
class DecoderModel : public Model {
 public:
  H h;
  DecoderWeights w;

  template <class M>
  static Result<std::unique_ptr<Model>> create(const Metadata& metadata, WeightBinder& binder) {
    auto model = std::make_unique<M>();
    HParams p(metadata, M::kArchitecture, binder.file());
    model->h.declare(p, tokenizer_vocab_size(metadata));
    SINTER_TRY(p.status());
    model->hparams_ = p.entries();
    model->bind(binder);
    model->shape_ = model->describe_shape();
    return std::unique_ptr<Model>(std::move(model));
  }

 protected:
  enum class Output {
    kOwnOrTied,  // output.weight, or token_embd.weight when the file has none
    kOwn,        // output.weight, required
    kTied,       // always token_embd.weight (Gemma, Command R: a file's output.weight is unexpected)
  };
  // token_embd, output_norm (with a bias if `norm_bias`), the output matrix; sizes w.layers.
  void bind_embeddings(WeightBinder& b, Output output, Presence norm_bias = Presence::kAbsent) {
    const int64_t n_embd = h.n_embd, n_vocab = h.n_vocab;
    w.token_embd = b.require("token_embd.weight", {n_embd, n_vocab});
    w.output_norm = bind_norm(b, "output_norm", -1, n_embd, Presence::kRequired, norm_bias);
    switch (output) {
      case Output::kOwnOrTied:
        w.output = b.require_or("output.weight", "token_embd.weight", {n_embd, n_vocab});
        break;
      case Output::kOwn: w.output = b.require("output.weight", {n_embd, n_vocab}); break;
      case Output::kTied: w.output = w.token_embd; break;
    }
    w.layers.resize(h.n_layer);
  }

  // The runtime's view of a decoder: every layer has a KV cache of the same shape.
  ModelShape decoder_shape(const char* architecture) const {
    const DecoderHParams& d = h;
    ModelShape s;
    s.architecture = architecture;
    s.n_vocab = static_cast<int32_t>(d.n_vocab);
    s.n_embd = static_cast<int32_t>(d.n_embd);
    s.n_layer = static_cast<int32_t>(d.n_layer);
    s.n_ctx_train = static_cast<int32_t>(d.n_ctx_train);
    s.kv_layers.assign(d.n_layer, d.kv_layer());
    s.kv_windows.assign(d.n_layer, 0);
    return s;
  }
};

// Writes a synthetic model's keys: H's dimensions from `dims`, then `features(h)` sets what
// the architecture's tests must exercise, then H's declaration writes every key.
template <class H, class Features>
Status write_synth_keys(const char* architecture, const SynthDims& dims, Metadata& out, Features features) {
  H h;
  SINTER_TRY(h.set_synth_dims(dims));
  features(h);
  out.set("general.architecture", GgufValue::of_string(architecture));
  HParams p(&out, architecture);
  h.declare(p, h.n_vocab);
  return p.status();
}

}  // namespace sinter
