// RWKV-6 "Finch" (llama.cpp's rwkv6): RWKV's layers (model/rwkv_block.h) with RWKV-6's time mix
// (model/rwkv_time_mix.h: token-dependent shares and decay, WKV with a bonus for the current
// token) and a channel mix gated by its receptance. Files may halve the residual stream every
// rescale_every_n_layers layers (the converter divides those layers' output matrices to match).
#include "model/rwkv_time_mix.h"

namespace sinter {
namespace {

struct Rwkv6HParams : RwkvHParams {
  uint32_t time_mix_extra_dim = 0;    // the shares' LoRA rank (32; 64 at n_embd 4096)
  uint32_t time_decay_extra_dim = 0;  // the decay's (64; 128 at n_embd 4096)
  uint32_t rescale_every_n_layers = 0;

  void declare(HParams& p, uint32_t vocab) {
    RwkvHParams::declare(p, vocab);
    p.required("{arch}.time_mix_extra_dim", time_mix_extra_dim);
    p.required("{arch}.time_decay_extra_dim", time_decay_extra_dim);
    p.optional("{arch}.rescale_every_n_layers", rescale_every_n_layers, 0u);
    if (p.status() && (time_mix_extra_dim == 0 || time_decay_extra_dim == 0))
      p.fail("time_mix_extra_dim and time_decay_extra_dim must be positive");
  }
};

class Rwkv6Model final : public RwkvModel<Rwkv6HParams> {
 public:
  static constexpr const char* kArchitecture = "rwkv6";
  std::vector<Rwkv6TimeMixWeights> time_mix;

  void bind(WeightBinder& b) {
    w = bind_rwkv(b, h, /*receptance=*/true);
    const Rwkv6TimeMixDims dims{h.n_embd, h.head_size, h.time_mix_extra_dim, h.time_decay_extra_dim};
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il)
      time_mix.push_back(bind_rwkv6_time_mix(b, il, dims));
  }

  ModelShape describe_shape() const { return rwkv_shape(kArchitecture, h); }

  Tensor* build_forward(ForwardContext& fx) const override {
    return build_rwkv(fx, w, {.norm_eps = h.norm_eps, .rescale_every_n_layers = h.rescale_every_n_layers},
                      [this](ForwardContext& f, Tensor* x, Tensor* x_prev, int il) {
                        return build_rwkv6_time_mix(f, x, x_prev, time_mix[static_cast<size_t>(il)],
                                                    h.head_size, il);
                      });
  }
};

const ArchitectureRegistration kRwkv6{Architecture{
    Rwkv6Model::kArchitecture,
    Rwkv6Model::create<Rwkv6Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<Rwkv6HParams>(Rwkv6Model::kArchitecture, dims, out, [](Rwkv6HParams& h) {
        // The converter's ranks below n_embd 4096; a rescale every other layer (trained files
        // have 6), so that small files halve their stream too.
        h.time_mix_extra_dim = 32;
        h.time_decay_extra_dim = 64;
        h.rescale_every_n_layers = 2;
      });
    },
    // {n_embd, n_layer, n_head (WKV heads: N = n_embd / n_head, 64 as in every trained file),
    // n_head_kv (unused), n_ff, n_vocab, n_ctx}; n_ff as the converter sets it: 3.5 · n_embd
    // rounded down to a multiple of 32.
    {
        {"tiny", {64, 2, 1, 1, 224, 512, 512}},
        {"small", {256, 3, 4, 4, 896, 1024, 1024}},
        {"1.6b", {2048, 24, 32, 32, 7168, 65536, 1048576}},
    },
}};

}  // namespace
}  // namespace sinter
