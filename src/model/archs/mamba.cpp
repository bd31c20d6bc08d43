// Mamba (state-spaces/mamba-*) and Falcon-Mamba: a stack of pre-normed Mamba-1 layers, no
// attention. Each block is h + mamba(rms_norm(h)); the model keeps, per layer and sequence, a
// convolution state and a scan state of constant size (model/mamba_layer.h), so it holds
// sequences of any length. Falcon-Mamba's files set ssm.dt_b_c_rms: dt, B and C RMS-normed.
#include "model/decoder.h"
#include "model/mamba_layer.h"

namespace sinter {
namespace {

constexpr MambaVersion kVersion = MambaVersion::k1;

struct MambaHParams {
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  float norm_eps = 1e-5f;
  SsmHParams ssm;

  void declare(HParams& p, uint32_t vocab_from_tokenizer) {
    p.required("{arch}.context_length", n_ctx_train);
    p.required("{arch}.embedding_length", n_embd);
    p.block_count("{arch}.block_count", n_layer);
    p.required("{arch}.attention.layer_norm_rms_epsilon", norm_eps);
    p.optional("{arch}.vocab_size", n_vocab, vocab_from_tokenizer);
    ssm.declare(p, kVersion);
    if (n_vocab == 0)
      p.fail("the vocabulary size is unknown (no {arch}.vocab_size and no tokenizer.ggml.tokens)");
    if (n_layer == 0 || n_embd == 0 || n_ctx_train == 0)
      p.fail("block count, embedding length and context length must be positive");
  }
  Status set_synth_dims(const SynthDims& d) {
    n_vocab = static_cast<uint32_t>(d.n_vocab);
    n_ctx_train = static_cast<uint32_t>(d.n_ctx);
    n_embd = static_cast<uint32_t>(d.n_embd);
    n_layer = static_cast<uint32_t>(d.n_layer);
    norm_eps = 1e-5f;
    ssm.set_synth_dims(kVersion, n_embd, 0, 0);
    ssm.dt_b_c_rms = d.variant == "falcon";
    return ok_status();
  }
};

class MambaModel final : public DecoderModel<MambaHParams> {
 public:
  static constexpr const char* kArchitecture = "mamba";
  std::vector<Mamba1Weights> ssm;

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    ssm.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      w.layers[static_cast<size_t>(il)].attn_norm =
          bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      ssm[static_cast<size_t>(il)] = bind_mamba1(b, il, h.n_embd, h.ssm);
    }
  }

  ModelShape describe_shape() const {
    ModelShape s;
    s.architecture = kArchitecture;
    s.n_vocab = static_cast<int32_t>(h.n_vocab);
    s.n_embd = static_cast<int32_t>(h.n_embd);
    s.n_layer = static_cast<int32_t>(h.n_layer);
    s.n_ctx_train = static_cast<int32_t>(h.n_ctx_train);
    s.recurrent_layers.assign(h.n_layer, h.ssm.layer_state(kVersion));  // no KV layers
    return s;
  }

  Tensor* build_forward(ForwardContext& fx) const override {
    Graph& g = fx.graph;
    Tensor* x = fx.build_inp_embd(w.token_embd);
    const int n_layer = static_cast<int>(h.n_layer);
    for (int il = 0; il < n_layer; ++il) {
      Tensor* cur = fx.build_norm(x, w.layers[static_cast<size_t>(il)].attn_norm, NormKind::kRms, h.norm_eps,
                                  "attn_norm", il);
      cur = build_mamba1_layer(fx, cur, ssm[static_cast<size_t>(il)],
                               {.ssm = h.ssm, .norm_eps = h.norm_eps, .state_layer = il}, il);
      fx.filter_last_layer(il, n_layer, {&cur, &x});
      x = ForwardContext::name(g.add(cur, x), "l_out", il);
    }
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output);
  }
};

const ArchitectureRegistration kMamba{Architecture{
    MambaModel::kArchitecture,
    MambaModel::create<MambaModel>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<MambaHParams>(MambaModel::kArchitecture, dims, out, [](MambaHParams&) {});
    },
    // Heads and the FFN length are unused: the inner size is 2·n_embd, as in every Mamba file.
    // The "falcon" variant is Falcon-Mamba's (dt, B and C RMS-normed).
    {
        {"tiny", {64, 2, 1, 1, 128, 512, 512}},
        {"small", {256, 3, 1, 1, 512, 1024, 1024}},
        {"130m", {768, 24, 1, 1, 1536, 50280, 2048}},
        {"falcon-tiny", {64, 2, 1, 1, 128, 512, 512, 0, 0, 0, -1, "falcon"}},
        {"falcon-7b", {4096, 64, 1, 1, 8192, 65024, 8192, 0, 0, 0, -1, "falcon"}},
    },
}};

}  // namespace
}  // namespace sinter
