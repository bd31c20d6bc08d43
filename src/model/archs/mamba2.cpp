// Mamba-2 (state-spaces/mamba2-*, Codestral Mamba): a stack of pre-normed Mamba-2 layers, no
// attention. Each layer's heads share B and C within groups (ssm.group_count), decay by one A per
// head, add D times their input, and the gated output is RMS-normed per group before the out
// projection (model/mamba_layer.h). Constant memory per sequence: any length fits.
#include "model/decoder.h"
#include "model/mamba_layer.h"

namespace sinter {
namespace {

constexpr MambaVersion kVersion = MambaVersion::k2;

struct Mamba2HParams {
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
  // SynthDims' heads are the SSM heads, its KV heads the groups of heads that share B and C.
  Status set_synth_dims(const SynthDims& d) {
    n_vocab = static_cast<uint32_t>(d.n_vocab);
    n_ctx_train = static_cast<uint32_t>(d.n_ctx);
    n_embd = static_cast<uint32_t>(d.n_embd);
    n_layer = static_cast<uint32_t>(d.n_layer);
    norm_eps = 1e-5f;
    const auto n_head = static_cast<uint32_t>(d.n_head), n_group = static_cast<uint32_t>(d.n_head_kv);
    if (n_head == 0 || (2 * n_embd) % n_head != 0 || n_group == 0 || n_head % n_group != 0) {
      return make_error(ErrorCode::kInvalidArgument, "mamba2: the inner size 2·n_embd = ", 2 * n_embd,
                        " must divide into n_head ", n_head, " heads, and the heads into n_head_kv ", n_group,
                        " groups");
    }
    ssm.set_synth_dims(kVersion, n_embd, n_head, n_group);
    return ok_status();
  }
};

class Mamba2Model final : public DecoderModel<Mamba2HParams> {
 public:
  static constexpr const char* kArchitecture = "mamba2";
  std::vector<Mamba2Weights> ssm;

  void bind(WeightBinder& b) {
    bind_embeddings(b, Output::kOwnOrTied);
    ssm.resize(h.n_layer);
    for (int il = 0; il < static_cast<int>(h.n_layer); ++il) {
      w.layers[static_cast<size_t>(il)].attn_norm =
          bind_norm(b, "blk.%d.attn_norm", il, h.n_embd, Presence::kRequired);
      ssm[static_cast<size_t>(il)] = bind_mamba2(b, il, h.n_embd, h.ssm);
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
      cur = build_mamba2_layer(fx, cur, ssm[static_cast<size_t>(il)],
                               {.ssm = h.ssm, .norm_eps = h.norm_eps, .state_layer = il}, il);
      fx.filter_last_layer(il, n_layer, {&cur, &x});
      x = ForwardContext::name(g.add(cur, x), "l_out", il);
    }
    x = fx.build_norm(x, w.output_norm, NormKind::kRms, h.norm_eps, "result_norm", -1);
    return fx.build_logits(x, w.output);
  }
};

const ArchitectureRegistration kMamba2{Architecture{
    Mamba2Model::kArchitecture,
    Mamba2Model::create<Mamba2Model>,
    [](const SynthDims& dims, Metadata& out) {
      return write_synth_keys<Mamba2HParams>(Mamba2Model::kArchitecture, dims, out, [](Mamba2HParams&) {});
    },
    // n_head SSM heads in n_head_kv groups (two, so that grouping is exercised); the FFN length
    // is unused (the inner size is 2·n_embd, the state n_embd / 4, at most 128).
    {
        {"tiny", {64, 2, 4, 2, 128, 512, 512}},
        {"small", {256, 3, 8, 2, 512, 1024, 1024}},
        {"130m", {768, 24, 24, 1, 1536, 50288, 2048}},
        // Codestral Mamba 7B: 64 layers of 4096, 128 heads of 64 in 8 groups, a state of 128.
        {"7b", {4096, 64, 128, 8, 8192, 32768, 8192}},
    },
}};

}  // namespace
}  // namespace sinter
