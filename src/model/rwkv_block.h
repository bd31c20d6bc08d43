// What RWKV-6 ("Finch") and RWKV-7 ("Goose") share (llama.cpp's rwkv6/rwkv7 graphs): the keys
// both declare, the stack of layers around their time mixes, the channel mix, the token shifts
// and the per-head group norm. Each layer is
//
//   a = LayerNorm(x)                    (attn_norm)
//   x = x + time_mix(a, shift(a))       (model/rwkv_time_mix.h: the WKV recurrence)
//   f = LayerNorm(x)                    (attn_norm_2)
//   x = x + channel_mix(f, shift(f))
//
// where shift(a) is each token's previous token's a in its sequence (Graph::token_shift). A layer
// keeps three states per sequence: the two shifts' last rows [n_embd] and the WKV state
// [N, N, H] (N the head size, H = n_embd / N heads). The embeddings pass a LayerNorm
// (token_embd_norm) before the first layer, and the logits a LayerNorm (output_norm) after the
// last. There is no attention and no position: the model has no context limit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "model/builder.h"
#include "model/decoder.h"
#include "model/registry.h"
#include "model/weights.h"

namespace sinter {

// The keys both versions read.
struct RwkvHParams {
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;  // converters write 1048576: RWKV has no context limit
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_ff = 0;
  uint32_t head_size = 0;  // wkv.head_size: N; the layer has n_embd / N heads
  float norm_eps = 1e-5f;  // attention.layer_norm_epsilon, of every LayerNorm but the group norm
  uint32_t token_shift_count = 2;

  void declare(HParams& p, uint32_t vocab_from_tokenizer);
  // A synthetic model's: dims.n_head heads of n_embd / n_head.
  Status set_synth_dims(const SynthDims& d);
  int64_t n_head() const { return head_size == 0 ? 0 : int64_t{n_embd} / head_size; }
};

struct RwkvChannelMixWeights {
  Tensor* lerp_k = nullptr;      // [n_embd]: the share of the previous token in the key's input
  Tensor* lerp_r = nullptr;      // RWKV-6: the receptance's
  Tensor* key = nullptr;         // [n_embd, n_ff]
  Tensor* value = nullptr;       // [n_ff, n_embd]
  Tensor* receptance = nullptr;  // RWKV-6: [n_embd, n_embd], a sigmoid gate on the output
};

struct RwkvLayerWeights {
  NormWeights attn_norm;  // before the time mix
  NormWeights ffn_norm;   // attn_norm_2: before the channel mix
  RwkvChannelMixWeights channel_mix;
};

struct RwkvWeights {
  Tensor* token_embd = nullptr;
  NormWeights token_embd_norm;
  NormWeights output_norm;
  Tensor* output = nullptr;
  std::vector<RwkvLayerWeights> layers;
};

// The states of each layer, in ModelShape::recurrent_layers order.
enum RwkvState : int { kTimeMixShift = 0, kChannelMixShift = 1, kWkvState = 2 };

// Binds the embeddings, the output and each layer's norms and channel mix (the receptance and
// lerp_r with `receptance`: RWKV-6).
RwkvWeights bind_rwkv(WeightBinder& b, const RwkvHParams& h, bool receptance);

// The runtime's view: no KV layers, three states per layer.
ModelShape rwkv_shape(const char* architecture, const RwkvHParams& h);

// x [n_embd, T], each token's previous x in its sequence -> [n_embd, T] (the time mix's input).
using RwkvTimeMix = std::function<Tensor*(ForwardContext& fx, Tensor* x, Tensor* x_prev, int layer)>;

struct RwkvOptions {
  float norm_eps = 1e-5f;
  // RWKV-6: the residual stream is halved after every this many layers (0: never).
  uint32_t rescale_every_n_layers = 0;
};

// The whole model: embeddings, the layers with `time_mix`, the logits.
Tensor* build_rwkv(ForwardContext& fx, const RwkvWeights& w, const RwkvOptions& options,
                   const RwkvTimeMix& time_mix);

// Each token's previous x in its sequence, x [n_embd, T] (the state `state` of recurrent layer
// `layer` holds the last x of each sequence between passes).
Tensor* build_token_shift(ForwardContext& fx, Tensor* x, int layer, RwkvState state, const char* name);

// The channel mix (RWKV's FFN): k = relu(W_k·xk)², out = W_v·k, times sigmoid(W_r·xr) with a
// receptance; xk (xr) mixes each token with its previous one by lerp_k (lerp_r).
Tensor* build_rwkv_channel_mix(ForwardContext& fx, Tensor* x, Tensor* x_prev, const RwkvChannelMixWeights& w,
                               int layer);

// The WKV output's group norm: a LayerNorm of each head of y [N·H, T] (eps 64e-5, as llama.cpp
// hard-codes), then the weight and bias over all heads.
Tensor* build_rwkv_group_norm(ForwardContext& fx, Tensor* y, const NormWeights& ln, int64_t head_size,
                              int layer);

// x + share · (x_prev − x) for each share, written as llama.cpp computes it: sx · share + x, with
// sx = x_prev − x.
Tensor* build_lerp(Graph& g, Tensor* x, Tensor* sx, Tensor* share);

// Row `index` [n] of a weight of `count` rows of n F32 values (a fused lerp's).
Tensor* weight_row(Graph& g, Tensor* weight, int64_t n, int64_t index);

// Creation of an RWKV model class M (deriving from RwkvModel<H>): declares H from the file, then
// M::bind(binder) and M::describe_shape().
template <class H>
class RwkvModel : public Model {
 public:
  H h;
  RwkvWeights w;

  template <class M>
  static Result<std::unique_ptr<Model>> create(const Metadata& metadata, WeightBinder& binder);
};

template <class H>
template <class M>
Result<std::unique_ptr<Model>> RwkvModel<H>::create(const Metadata& metadata, WeightBinder& binder) {
  auto model = std::make_unique<M>();
  HParams p(metadata, M::kArchitecture, binder.file());
  model->h.declare(p, tokenizer_vocab_size(metadata));
  SINTER_TRY(p.status());
  model->hparams_ = p.entries();
  model->bind(binder);
  model->shape_ = model->describe_shape();
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace sinter
