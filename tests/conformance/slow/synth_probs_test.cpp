// Next-token probabilities of random-weight llama models against llama.cpp at every position
// of a 72-token sequence, for each weight type and backend, within the bounds of docs/DESIGN.md:
// F32: max |Δp| ≤ 1e-4; F16, BF16 and quantized: mean KL(oracle ‖ sinter) ≤ 5e-4,
// max |Δp| ≤ 1e-2, top-1 agreement ≥ 90 %.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using Distribution = std::vector<std::vector<std::pair<int, double>>>;

struct Shape {
  const char* name;
  const char* flags;  // sinter synth dimensions
  int n_vocab;
};

const Shape kShapes[] = {
    {"gqa2", "--dims small --n-embd 256 --n-head 8 --n-head-kv 4 --n-layer 2 --n-ff 512 --n-vocab 1024",
     1024},
    {"mqa", "--dims small --n-embd 128 --n-head 4 --n-head-kv 1 --n-layer 3 --n-ff 384 --n-vocab 600", 600},
};

std::string model_path(const Shape& shape, const std::string& type) {
  static std::map<std::string, std::string> made;
  const std::string key = std::string(shape.name) + "-" + type;
  if (made.count(key) != 0) return made[key];
  const std::string path = testing::scratch_dir() + "/../" + key + ".gguf";
  const auto result =
      testing::run_command(testing::shell_quote(testing::sinter_binary()) + " synth llama " +
                           testing::shell_quote(path) + " " + shape.flags + " --seed 11 --type " + type);
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return made[key] = path;
}

std::vector<int> sequence(int n_vocab, int length = 72) {
  std::vector<int> ids = {1};
  for (int i = 1; i < length; ++i) ids.push_back(3 + (i * 7919 + 13) % (n_vocab - 3));
  return ids;
}

Distribution sinter_probs(const std::string& model, const std::string& backend, const std::vector<int>& ids) {
  const auto result =
      testing::run_command(testing::shell_quote(testing::sinter_binary()) + " probs --backend " + backend +
                           " " + testing::shell_quote(model) + " " + testing::join_ids(ids));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  Distribution out;
  for (const auto& position : nlohmann::json::parse(result.out)) {
    auto& row = out.emplace_back();
    for (const auto& pair : position) row.emplace_back(pair[0].get<int>(), pair[1].get<double>());
  }
  return out;
}

struct Agreement {
  double max_dp = 0, mean_kl = 0, top1 = 0;
};

Agreement compare(const Distribution& oracle, const Distribution& ours) {
  Agreement a;
  EXPECT_EQ(oracle.size(), ours.size());
  for (size_t i = 0; i < oracle.size() && i < ours.size(); ++i) {
    std::map<int, double> mine(ours[i].begin(), ours[i].end());
    double kl = 0;
    for (const auto& [id, p] : oracle[i]) {
      a.max_dp = std::max(a.max_dp, std::fabs(p - mine[id]));
      if (p > 0) kl += p * std::log(p / std::max(mine[id], 1e-30));
    }
    a.mean_kl += kl / static_cast<double>(oracle.size());
    a.top1 +=
        (oracle[i].front().first == ours[i].front().first) ? 1.0 / static_cast<double>(oracle.size()) : 0.0;
  }
  return a;
}

// The oracle's distributions for a model, asked once for all backends.
const Distribution& oracle_distribution(const std::string& model, const std::vector<int>& ids,
                                        bool flash_attention = false) {
  static std::map<std::string, Distribution> distributions;
  auto it = distributions.find(model);
  if (it == distributions.end()) {
    it = distributions
             .emplace(model, flash_attention ? testing::oracle_probs_flash(model, ids)
                                             : testing::oracle_probs(model, ids))
             .first;
  }
  return it->second;
}

class SynthProbs : public ::testing::TestWithParam<std::tuple<const char*, int, const char*>> {};

TEST_P(SynthProbs, WithinTheBoundsAgainstTheOracle) {
  const std::string backend = std::get<0>(GetParam());
  const Shape& shape = kShapes[std::get<1>(GetParam())];
  const std::string type = std::get<2>(GetParam());
  const std::string model = model_path(shape, type);
  const auto ids = sequence(shape.n_vocab);
  const Distribution& oracle = oracle_distribution(model, ids);
  const Distribution ours = sinter_probs(model, backend, ids);
  const Agreement a = compare(oracle, ours);
  RecordProperty("max_dp", std::to_string(a.max_dp));
  RecordProperty("mean_kl", std::to_string(a.mean_kl));
  std::printf("%s %s %s: max|dp| %.3g, mean KL %.3g, top-1 %.3f\n", backend.c_str(), shape.name, type.c_str(),
              a.max_dp, a.mean_kl, a.top1);
  if (type == "f32") {
    EXPECT_LE(a.max_dp, 1e-4);
  } else {
    EXPECT_LE(a.mean_kl, 5e-4);
    EXPECT_LE(a.max_dp, 1e-2);
    EXPECT_GE(a.top1, 0.9);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, SynthProbs,
                         ::testing::Combine(::testing::Values("cpu", "reference"), ::testing::Values(0, 1),
                                            ::testing::Values("f32", "f16", "bf16", "q8_0", "q4_0", "q4_K",
                                                              "q6_K")));

// Every architecture (its synthetic model sets every feature: sliding windows of 16 positions,
// which an 84-position sequence crosses, soft-caps, NoPE layers, LongRoPE factors), for F32,
// Q8_0 and the Q4_K_M mixture. "phi3 long" has a context beyond its original one, so that the
// long LongRoPE factors are the ones used (the oracle's context is 256); "command_r_plus" has
// the 64 layers at which Command R files carry per-head Q/K norms, in F32 only: its quantized
// products are command_r's kernels, and through 64 random layers an activation's Q8_0 rounding
// that flips on a last-bit difference grows into a KL of ~7e-4 between any two engines (the CPU
// and the reference backend, whose dot products are bit-identical, differ by 2e-3 in p).
struct ArchCase {
  const char* name;
  const char* architecture;
  const char* flags;
  bool gelu;              // the oracle's GELU reads and writes F16 (GGML_GELU_FP16): see below
  bool quantized = true;  // also Q8_0 and Q4_K_M
  bool mxfp4 = false;     // also the MXFP4_MOE mixture (MXFP4 experts, Q8_0 elsewhere)
  int seed = 11;
  bool flash_attention = false;  // the oracle with flash attention on (see deepseek2)
};
const ArchCase kArchCases[] = {
    {"qwen2", "qwen2", "", false},
    {"qwen3", "qwen3", "", false},
    {"gemma", "gemma", "", true},
    {"gemma2", "gemma2", "", true},
    {"gemma3", "gemma3", "", true},
    {"phi3", "phi3", "", false},
    {"phi3_long", "phi3", "--n-ctx 256", false},
    {"olmo2", "olmo2", "", false},
    {"granite", "granite", "", false},
    {"smollm3", "smollm3", "", false},
    {"command_r", "command-r", "", false},
    {"starcoder2", "starcoder2", "", true},
    // 64 layers: Command R+'s per-head Q/K LayerNorms (a narrow FFN keeps it small).
    {"command_r_plus", "command-r", "--n-layer 64 --n-ff 256", false, false},
    // Mixtures of experts (8 experts, 2 per token): routing, expert products, weighted sums.
    {"qwen3moe", "qwen3moe", "", false},
    {"mixtral", "llama", "--n-expert 8 --n-expert-used 2 --n-ff 128", false},
    {"olmoe", "olmoe", "", false},
    {"granitemoe", "granitemoe", "", false},
    // Latent attention, a dense leading block, shared experts, sigmoid routing with a bias and
    // grouped selection (4 groups, 2 used). Against the oracle with flash attention, as llama.cpp
    // runs these files by default (tests/references/oracle_probs_flash.mjs: node-llama-cpp turns
    // it off when key and value heads differ in size, and its other path rounds Q and the softmax
    // weights to F16; with it on, the oracle matches native llama.cpp to a KL of 3e-8).
    // The three-layer file (one dense, two MoE layers) in F32 only. Quantized, two MoE layers of
    // random weights are chaotic: a last-bit difference that rounds one activation of a Q8_0
    // product the other way moves the product's outputs by ~1e-3, which reorders experts whose
    // selection scores lie within ~5e-3 in the next router. Seeds 11-16 on the three-layer file
    // (2026-12-05, against this oracle): one to five positions in 84 pick other experts, each with
    // a KL of 0.1-0.3, so means of 1e-3-8e-3; sinter's own CPU and reference backends disagree at
    // such positions too. The quantized case therefore uses one dense and one MoE layer (every
    // feature is still there); seeds 11-16 give 10 of 12 files within the bounds (mean KL
    // 4e-5-1.9e-4), and a single flipped position in the other two.
    {"deepseek2", "deepseek2", "", false, false, false, 12, true},
    {"deepseek2_one_moe", "deepseek2", "--n-layer 2", false, true, false, 12, true},
    // DeepSeek-V2-Lite's features: queries projected directly, softmax routing over all experts,
    // no groups or renormalization (its attention in proportion to the head size, as the Lite
    // model's are to its 128). Seeds 11-13 (2026-12-05): Q8_0 mean KL 1.8e-4-1.9e-4, Q4_K_M
    // 3.3e-4-4.8e-4; with the Lite model's own attention sizes at this n_embd (a latent of 512
    // for heads of 32) every position moved by ~5e-4, in sinter's two backends against each
    // other too.
    {"deepseek2_v2_lite", "deepseek2", "--variant v2-lite", false, true, false, 11, true},
    // Attention sinks, biases everywhere, YaRN, windows on even layers, a biased router with
    // softmax over the chosen, biased experts and the clamped SwiGLU; MXFP4 experts as shipped.
    {"gpt_oss", "gpt-oss", "", false, true, true},
    // Hybrids: short convolutions carrying a state, attention with per-head Q/K norms every
    // third block (six blocks: KV layers 0-1 and recurrent layers 0-3 among them); with windows of
    // 16 on the attention layers; LFM2-MoE's dense first block, then sigmoid routing with a bias.
    {"lfm2", "lfm2", "", false},
    {"lfm2_swa", "lfm2", "--variant swa", false},
    {"lfm2moe", "lfm2moe", "", false},
    // Recurrent layers alone: token shifts, the WKV recurrences, per-head group norms; RWKV-6's
    // token-dependent shares and decays and its rescaled stream, RWKV-7's delta rule, value
    // residual and gate (three layers each, heads of 64).
    {"rwkv6", "rwkv6", "", false},
    {"rwkv7", "rwkv7", "", false},
    // Recurrent layers, no attention: Mamba-1 (3 layers of 256, inner 512, state 16, rank 64);
    // Falcon-Mamba's variant (dt, B and C RMS-normed); Mamba-2 (8 heads of 64 in 2 groups,
    // state 64, the gated grouped norm). A, D and the time steps as trained models have them.
    // Plain Mamba-1 in F32 only: the oracle aborts on its Q8_0, Q4_K_M and F16 files
    // (GGML_ASSERT(*cur_backend_id != -1) in ggml_backend_sched_split_graph), apparently unable
    // to place ssm_dt's product with a strided view of ssm_x's output; it runs BF16 files (a KL
    // of 3e-6 against sinter) and Falcon-Mamba's quantized ones, whose normed dt is contiguous
    // and which cover the same products. Those are sensitive: a last-bit difference (the CPU's
    // SIMD e^x in the scan) that flips one activation's Q8_K rounding moves later positions, so
    // that sinter's CPU and reference backends differ by a mean KL of 1.2e-4..2.7e-4 on the
    // Q4_K_M files of seeds 11-13; against the oracle (2026-12-07): Q8_0 at most 1.7e-5,
    // Q4_K_M 4e-5..1.4e-4 (1.4e-4 at seed 11, top-1 0.964).
    {"mamba", "mamba", "", false, false},
    {"falcon_mamba", "mamba", "--variant falcon", false},
    {"mamba2", "mamba2", "", false},
    // Hybrids with Mamba layers. Falcon-H1: attention (heads of 64, wider than n_embd / n_head,
    // NeoX RoPE) and Mamba-2 (inner size 1.5·n_embd: 8 heads of 48 in 2 groups, the gated
    // grouped norm) side by side in each of three blocks, every block in both the KV cache and
    // the recurrent state. Jamba: Mamba-1 with weighted dt/B/C norms in blocks 0, 1 and 3,
    // attention without RoPE in block 2, experts (8, 2 per token, softmax over all, not
    // renormalized) in blocks 1 and 3. Seeds 11-13 against this oracle (2026-12-07): F32 mean KL
    // under 1.3e-7 on both backends; Q8_0 and Q4_K_M at most 1.5e-4 (top-1 ≥ 0.976) for both.
    {"falcon_h1", "falcon-h1", "", false},
    {"jamba", "jamba", "", false},
    // Mamba-2 hybrids (four blocks of 256 in Granite's, six in Nemotron's; Mamba-2 heads of 64,
    // state 64). Granite 4.0-H: Mamba-2 in blocks 0, 1, 3 and NoPE attention in block 2, every
    // Granite multiplier, softmax-routed experts with a shared one; its "bamba" variant dense
    // FFNs and RoPE. Nemotron-H: blocks M - M * - (Mamba-2 in 2 groups, ReLU² FFN, NoPE
    // attention); its MoE: ReLU² experts without gates, sigmoid routing with a bias, weights
    // renormalized and scaled by 2.5, a ReLU² shared expert; "latent": the experts at n_embd / 2
    // between latent projections, the router reading the hidden state. 2026-12-07, seed 11: F32
    // max |dp| 1e-7..5e-7; Q8_0 mean KL 4e-6..8e-5 (top-1 0.964..1); Q4_K_M 1e-5..1e-4. Seeds
    // 12-16 (Q8_0 and Q4_K_M at 12-13, Q8_0 of the MoE cases at 14-16) are within the bounds
    // (mean KL ≤ 9e-5) but for one file: the latent case's Q8_0 at seed 12, whose position 82
    // alone picks other experts in the oracle (KL 0.18, mean 2.2e-3); sinter's CPU and reference
    // backends agree to the bit there, the routing flip of the deepseek2 entry above.
    {"granitehybrid", "granitehybrid", "", false},
    {"granitehybrid_bamba", "granitehybrid", "--variant bamba", false},
    {"nemotron_h", "nemotron_h", "", false},
    {"nemotron_h_moe", "nemotron_h_moe", "", false},
    {"nemotron_h_moe_latent", "nemotron_h_moe", "--variant latent", false},
    // The latent file with Nemotron 3 Super's multi-token-prediction block appended (block_count
    // and the per-layer arrays count it, nextn_predict_layers 1): bound, not run, as llama.cpp's
    // main graph does. F32 alone: the blocks that run are the latent case's.
    {"nemotron_h_moe_mtp", "nemotron_h_moe", "--variant latent-mtp", false, false},
    // Gated delta nets (Qwen 3.5): four blocks of 256, three delta nets (2 key heads and 4 value
    // heads of 64, value head h reading key head h % 2, a convolution of 4, L2-normed q and k,
    // the gated RMS norm) then gated attention (8 query heads of 32 over 4 KV heads, a sigmoid
    // gate from the double-width query projection, per-head Q/K norms, RoPE over 8 of 32 values
    // in M-RoPE sections [2, 1, 1]); qwen35moe with 8 softmax-routed experts (2 used,
    // renormalized) and a sigmoid-gated shared expert.
    {"qwen35", "qwen35", "", false},
    {"qwen35moe", "qwen35moe", "", false},
    // Qwen3-Next: the MoE blocks of qwen35moe, value heads sharing key heads in groups (h / 2),
    // the fused beta/alpha projection, plain NeoX RoPE.
    {"qwen3next", "qwen3next", "", false},
    // Kimi Linear: three KDA blocks (three short convolutions, the delta rule with a decay per
    // key channel, a sigmoid-gated output norm) with dense FFNs, then latent attention without
    // RoPE and sigmoid-routed experts with a bias and a shared expert. F32 with the experts; the
    // quantized types on the variant without experts: a random router's close scores flip on
    // quantization's last bits (0.1-0.3 KL at 1-3 positions of 84 at seeds 11-17, as deepseek2's
    // three-layer file; in F32 the reference backend's last bits flip one at seed 11, none at
    // 12-15). The oracle runs these files with flash attention: without it, it aborts
    // on Q8_0 and F16 files (GGML_ASSERT(*cur_backend_id != -1) in ggml-backend.cpp).
    {"kimi_linear", "kimi-linear", "", false, false, false, 12, true},
    {"kimi_linear_dense", "kimi-linear", "--variant dense", false, true, false, 11, true},
    // Qwen 3.5 with the multi-token-prediction block llama.cpp's converter keeps by default: bound,
    // not run, as llama.cpp's main graph does. F32 alone: the blocks that run are qwen35's.
    {"qwen35_mtp", "qwen35", "--variant mtp", false, false},
};

std::string arch_model(const ArchCase& c, const std::string& type) {
  static std::map<std::string, std::string> made;
  const std::string key = std::string("arch-") + c.name + "-" + type;
  if (made.count(key) != 0) return made[key];
  const std::string dir = testing::scratch_dir() + "/../";
  const std::string f32 = dir + "arch-" + c.name + "-f32.gguf";
  const std::string sinter = testing::shell_quote(testing::sinter_binary());
  if (made.count(std::string("arch-") + c.name + "-f32") == 0) {
    const auto result =
        testing::run_command(sinter + " synth " + c.architecture + " " + testing::shell_quote(f32) +
                             " --dims small --n-embd 256 --seed " + std::to_string(c.seed) + " " + c.flags);
    EXPECT_EQ(result.exit_status, 0) << result.err;
    made[std::string("arch-") + c.name + "-f32"] = f32;
  }
  if (type == "f32") return f32;
  const std::string path = dir + key + ".gguf";
  const auto result = testing::run_command(sinter + " quantize " + testing::shell_quote(f32) + " " +
                                           testing::shell_quote(path) + " " + type);
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return made[key] = path;
}

class ArchProbs : public ::testing::TestWithParam<std::tuple<int, const char*, const char*>> {};

TEST_P(ArchProbs, WithinTheBoundsAgainstTheOracle) {
  const ArchCase& c = kArchCases[std::get<0>(GetParam())];
  const std::string type = std::get<1>(GetParam());
  const std::string backend = std::get<2>(GetParam());
  const std::string model = arch_model(c, type);
  const auto ids = sequence(1024, 84);
  const Distribution& oracle = oracle_distribution(model, ids, c.flash_attention);
  const Agreement a = compare(oracle, sinter_probs(model, backend, ids));
  std::printf("%s %s %s: max|dp| %.3g, mean KL %.3g, top-1 %.3f\n", c.name, type.c_str(), backend.c_str(),
              a.max_dp, a.mean_kl, a.top1);
  if (type == "f32") {
    // llama.cpp's GELU rounds its input and result to F16 (a table lookup): a relative error up
    // to 2^-11 per activation that exact GELU does not share. Emulating the table brings the
    // difference under 1e-4 (measured: 2e-4 -> 4e-5 on gemma); sinter keeps the exact function.
    EXPECT_LE(a.max_dp, c.gelu ? 1e-3 : 1e-4);
  } else {
    EXPECT_LE(a.mean_kl, 5e-4);
    EXPECT_LE(a.max_dp, 1e-2);
    EXPECT_GE(a.top1, 0.9);
  }
}

// Each case on the CPU in F32, Q8_0 and Q4_K_M (F32 alone where not `quantized`), and on the
// reference backend in F32.
std::vector<std::tuple<int, const char*, const char*>> arch_params() {
  std::vector<std::tuple<int, const char*, const char*>> out;
  for (int i = 0; i < static_cast<int>(std::size(kArchCases)); ++i) {
    for (const char* type : {"f32", "q8_0", "Q4_K_M"}) {
      if (kArchCases[i].quantized || std::string(type) == "f32") out.emplace_back(i, type, "cpu");
    }
    if (kArchCases[i].mxfp4) out.emplace_back(i, "MXFP4_MOE", "cpu");
    out.emplace_back(i, "f32", "reference");
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Architectures, ArchProbs, ::testing::ValuesIn(arch_params()),
                         [](const auto& param_info) {
                           return std::string(kArchCases[std::get<0>(param_info.param)].name) + "_" +
                                  std::get<1>(param_info.param) + "_" + std::get<2>(param_info.param);
                         });

}  // namespace
}  // namespace sinter
