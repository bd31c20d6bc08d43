// RWKV-7 "Goose" (llama.cpp's rwkv7): RWKV's layers (model/rwkv_block.h) with RWKV-7's time mix
// (model/rwkv_time_mix.h: a delta-rule state update with a learned in-context learning rate,
// values mixed towards the first layer's, an output gate) and a channel mix without receptance.
#include <algorithm>
#include <cmath>

#include "model/rwkv_time_mix.h"

namespace sinter {
namespace {

struct Rwkv7HParams : RwkvHParams {
  uint32_t decay_lora_rank = 0;
  uint32_t iclr_lora_rank = 0;
  uint32_t value_residual_mix_lora_rank = 0;
  uint32_t gate_lora_rank = 0;

  void declare(HParams& p, uint32_t vocab) {
    RwkvHParams::declare(p, vocab);
    p.required("{arch}.attention.decay_lora_rank", decay_lora_rank);
    p.required("{arch}.attention.iclr_lora_rank", iclr_lora_rank);
    p.required("{arch}.attention.value_residual_mix_lora_rank", value_residual_mix_lora_rank);
    // Optional in llama.cpp (ARWKV-7 files have no gate), but an RWKV-7 file's lerp_fused always
    // holds the gate's share and its g1/g2 are required: 0 would be an unloadable file.
    p.optional("{arch}.attention.gate_lora_rank", gate_lora_rank, 0u);
    if (p.status() && (decay_lora_rank == 0 || iclr_lora_rank == 0 || value_residual_mix_lora_rank == 0 ||
                       gate_lora_rank == 0))
      p.fail("the decay, iclr, value residual mix and gate LoRA ranks must be positive");
  }
};

class Rwkv7Model final : public RwkvModel<Rwkv7HParams> {
 public:
  static constexpr const char* kArchitecture = "rwkv7";
  std::vector<Rwkv7TimeMixWeights> time_mix;

  void bind(WeightBinder& b) {
    w = bind_rwkv(b, h, /*receptance=*/false);
    const Rwkv7TimeMixDims dims{h.n_embd, h.decay_lora_rank, h.iclr_lora_rank, h.value_residual_mix_lora_rank,
                                h.gate_lora_rank};
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il)
      time_mix.push_back(bind_rwkv7_time_mix(b, il, dims));
  }

  ModelShape describe_shape() const { return rwkv_shape(kArchitecture, h); }

  Tensor* build_forward(ForwardContext& fx) const override {
    Tensor* v_first = nullptr;  // the first layer's values, which later layers mix in
    return build_rwkv(fx, w, {.norm_eps = h.norm_eps},
                      [this, &v_first](ForwardContext& f, Tensor* x, Tensor* x_prev, int il) {
                        return build_rwkv7_time_mix(f, x, x_prev, v_first, time_mix[static_cast<size_t>(il)],
                                                    h.head_size, il);
                      });
  }
};

// The converter's default rank for a hidden size: max(1, round(n_embd^exponent · multiplier / 32))
// · 32.
uint32_t lora_rank(uint32_t n_embd, double exponent, double multiplier) {
  const double blocks = std::round(std::pow(static_cast<double>(n_embd), exponent) * multiplier / 32.0);
  return static_cast<uint32_t>(std::max(1.0, blocks)) * 32;
}

const ArchitectureRegistration kRwkv7{Architecture{
    Rwkv7Model::kArchitecture,
    Rwkv7Model::create<Rwkv7Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<Rwkv7HParams>(Rwkv7Model::kArchitecture, dims, out, [](Rwkv7HParams& h) {
        h.decay_lora_rank = lora_rank(h.n_embd, 0.5, 1.8);
        h.iclr_lora_rank = lora_rank(h.n_embd, 0.5, 1.8);
        h.value_residual_mix_lora_rank = lora_rank(h.n_embd, 0.5, 1.3);
        h.gate_lora_rank = lora_rank(h.n_embd, 0.8, 0.6);
      });
    },
    // {n_embd, n_layer, n_head (WKV heads: N = n_embd / n_head, 64 as in every trained file),
    // n_head_kv (unused), n_ff, n_vocab, n_ctx}; n_ff 4 · n_embd, as the converter's default.
    {
        {"tiny", {64, 2, 1, 1, 256, 512, 512}},
        {"small", {256, 3, 4, 4, 1024, 1024, 1024}},
        {"1.5b", {2048, 24, 32, 32, 8192, 65536, 1048576}},
    },
}};

}  // namespace
}  // namespace sinter
