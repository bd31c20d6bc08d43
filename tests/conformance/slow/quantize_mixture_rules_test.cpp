// sinter's per-tensor types against llama.cpp's: each model below is quantized by llama.cpp's
// own llama_model_quantize to every mixture, and each tensor's type in llama.cpp's file must be
// the type in sinter's plan. The models are chosen so that every rule of
// src/model/quantize/tensor_rules.cpp is reached: layer counts where the "more bits" layers,
// first eighth and first sixteenth differ, GQA 1/2/8, the 70B and 65B classes, 8 experts,
// Falcon (fused QKV), tied embeddings, and rows that fit no K-quant or not even 32-value blocks.
// (The model `sinter synth` writes for the conformance test is checked the same way, tensor by
// tensor against llama.cpp's file, in quantize_conformance_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "llama_cpp_quantizer.h"
#include "model/quantize/quantize_plan.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::LlamaCppQuantizer;

struct TensorShape {
  std::string name;
  std::vector<int64_t> shape;
};

// The rules read only names, row lengths and hyper-parameters, so the models here are sketches:
// every matrix has its real row length but only two rows (or two rows per expert), which keeps
// quantizing 80 layers to 19 mixtures fast. llama.cpp's quantizer does not check shapes against
// the architecture.
constexpr int64_t kRows = 2;

struct ModelSketch {
  std::string architecture = "llama";
  std::vector<std::pair<std::string, uint32_t>> keys;  // without the "{arch}." prefix
  std::string epsilon_key = "attention.layer_norm_rms_epsilon";
  std::vector<TensorShape> tensors;
};

void write_model(const std::string& path, const ModelSketch& sketch) {
  GgufWriter writer;
  Metadata& md = writer.metadata();
  md.set("general.architecture", GgufValue::of_string(sketch.architecture));
  for (const auto& [key, value] : sketch.keys)
    md.set(sketch.architecture + "." + key, GgufValue::of_u32(value));
  md.set(sketch.architecture + "." + sketch.epsilon_key, GgufValue::of_f32(1e-5f));
  md.set(sketch.architecture + ".context_length", GgufValue::of_u32(256));
  for (const TensorShape& t : sketch.tensors) {
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    std::vector<float> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      values[static_cast<size_t>(i)] =
          0.05f * std::sin(0.37f * static_cast<float>(i) + static_cast<float>(t.name.size()));
    }
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    ASSERT_TRUE(writer.add_tensor_bytes(t.name, DType::F32, t.shape, std::move(bytes)).ok()) << t.name;
  }
  const auto status = writer.write(path);
  ASSERT_TRUE(status.ok()) << status.error().message();
}

struct Dims {
  uint32_t n_layer, n_embd, n_ff, n_head, n_head_kv;
  uint32_t n_expert = 0;  // > 0: Mixtral-style expert tensors and a router
  bool tied = false;      // no output.weight
};

// A llama-style model: token_embd, output, per layer attention and FFN (or experts).
ModelSketch llama_sketch(const Dims& d) {
  ModelSketch sketch;
  sketch.keys = {{"embedding_length", d.n_embd},           {"block_count", d.n_layer},
                 {"feed_forward_length", d.n_ff},          {"attention.head_count", d.n_head},
                 {"attention.head_count_kv", d.n_head_kv}, {"rope.dimension_count", d.n_embd / d.n_head}};
  if (d.n_expert > 0) {
    sketch.keys.push_back({"expert_count", d.n_expert});
    sketch.keys.push_back({"expert_used_count", 2});
  }
  auto& t = sketch.tensors;
  t.push_back({"token_embd.weight", {d.n_embd, kRows}});
  t.push_back({"output_norm.weight", {d.n_embd}});
  if (!d.tied) t.push_back({"output.weight", {d.n_embd, kRows}});
  for (uint32_t l = 0; l < d.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_norm.weight", {d.n_embd}});
    for (const char* name : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight"}) {
      t.push_back({p + name, {d.n_embd, kRows}});
    }
    t.push_back({p + "ffn_norm.weight", {d.n_embd}});
    if (d.n_expert > 0) {
      t.push_back({p + "ffn_gate_inp.weight", {d.n_embd, d.n_expert}});
      t.push_back({p + "ffn_gate_exps.weight", {d.n_embd, kRows, d.n_expert}});
      t.push_back({p + "ffn_up_exps.weight", {d.n_embd, kRows, d.n_expert}});
      t.push_back({p + "ffn_down_exps.weight", {d.n_ff, kRows, d.n_expert}});
    } else {
      t.push_back({p + "ffn_gate.weight", {d.n_embd, kRows}});
      t.push_back({p + "ffn_up.weight", {d.n_embd, kRows}});
      t.push_back({p + "ffn_down.weight", {d.n_ff, kRows}});
    }
  }
  return sketch;
}

// Falcon: fused attn_qkv (treated like attn_v), no ffn_gate, and its own ffn_down rules.
ModelSketch falcon_sketch(uint32_t n_layer, uint32_t n_embd, uint32_t n_ff) {
  ModelSketch sketch;
  sketch.architecture = "falcon";
  sketch.epsilon_key = "attention.layer_norm_epsilon";
  sketch.keys = {{"embedding_length", n_embd},
                 {"block_count", n_layer},
                 {"feed_forward_length", n_ff},
                 {"attention.head_count", 8},
                 {"attention.head_count_kv", 1}};
  auto& t = sketch.tensors;
  t.push_back({"token_embd.weight", {n_embd, kRows}});
  t.push_back({"output_norm.weight", {n_embd}});
  t.push_back({"output_norm.bias", {n_embd}});
  t.push_back({"output.weight", {n_embd, kRows}});
  for (uint32_t l = 0; l < n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_norm.weight", {n_embd}});
    t.push_back({p + "attn_norm.bias", {n_embd}});
    t.push_back({p + "attn_qkv.weight", {n_embd, kRows}});
    t.push_back({p + "attn_output.weight", {n_embd, kRows}});
    t.push_back({p + "ffn_up.weight", {n_embd, kRows}});
    t.push_back({p + "ffn_down.weight", {n_ff, kRows}});
  }
  return sketch;
}

// Compares sinter's plan with llama.cpp's file for every mixture; returns the mismatches.
int compare_all_mixtures(const std::string& model_path, const std::string& dir, bool pure = false) {
  auto model = GgufFile::open(model_path);
  EXPECT_TRUE(model.ok()) << model.error().message();
  if (!model.ok()) return 1;
  int mismatches = 0;
  for (const Mixture& m : all_mixtures()) {
    const std::string out = dir + "/llama-" + std::string(m.name) + ".gguf";
    const std::string problem = LlamaCppQuantizer::instance().quantize(model_path, out, m.file_type, 2, pure);
    EXPECT_EQ(problem, "") << m.name;
    if (!problem.empty()) continue;
    auto reference = GgufFile::open(out);
    EXPECT_TRUE(reference.ok()) << reference.error().message();
    if (!reference.ok()) continue;
    auto plan = plan_quantization(*model, QuantizeOptions{m.id, pure});
    EXPECT_TRUE(plan.ok()) << plan.error().message();
    if (!plan.ok()) continue;
    EXPECT_EQ(reference->metadata().get<uint32_t>("general.file_type").value_or(9999), m.file_type) << m.name;
    for (const TensorPlan& t : plan->tensors) {
      const GgufTensorInfo* theirs = reference->find_tensor(t.name);
      if (theirs == nullptr) {
        ADD_FAILURE() << m.name << ": llama.cpp wrote no " << t.name;
        ++mismatches;
        continue;
      }
      if (theirs->type != t.target_type) {
        ADD_FAILURE() << model_path << " " << m.name << (pure ? " (pure)" : "") << ": " << t.name << " ("
                      << weight_role_name(t.role) << "): sinter " << dtype_name(t.target_type)
                      << ", llama.cpp " << dtype_name(theirs->type);
        ++mismatches;
      }
    }
  }
  return mismatches;
}

class QuantizeMixtureRules : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!LlamaCppQuantizer::instance().available()) {
      SINTER_SKIP_WITHOUT_REFERENCE(LlamaCppQuantizer::instance().problem());
    }
  }
};

TEST_F(QuantizeMixtureRules, DenseModelsOfManyShapes) {
  const std::string dir = testing::scratch_dir();
  struct Shape {
    const char* name;
    Dims dims;
  };
  const Shape shapes[] = {
      // GQA 8 (the Q2_K and IQ4 attn_v rules), 8 layers: the first eighth is layer 0
      {"gqa8-8layers", {8, 256, 512, 8, 1}},
      // 20 layers without GQA: first sixteenth, the more-bits pattern; rows of 64 fit no K-quant
      {"mha-20layers-rows64", {20, 64, 96, 4, 4}},
      // rows of 80 fit no 32-value block either: F16 fallbacks, and the output's Q8_0 → F16
      {"rows80-9layers", {9, 80, 160, 4, 2}},
      // 33 layers, ffn_down rows of 256 but all other rows 288
      {"mixed-33layers", {33, 288, 256, 6, 2}},
      // 37 layers with GQA 4
      {"gqa4-37layers", {37, 512, 1024, 8, 2}},
      // llama with 80 layers and GQA is llama.cpp's 70B class (attn_v Q3_K/Q4_K → Q5_K);
      // without GQA it is the 65B class (no change)
      {"llama-70b-class", {80, 256, 256, 8, 1}},
      {"llama-65b-class", {80, 256, 256, 4, 4}},
      // a tied token embedding gets the output's type
      {"tied-embeddings", {2, 128, 256, 4, 4, 0, true}},
      // 8 experts (Mixtral): attn_k/attn_v Q8_0, attn_output Q5_K, experts by their layer
      {"8-experts", {4, 256, 512, 8, 2, 8}},
      {"4-experts", {6, 256, 512, 8, 8, 4}},
  };
  for (const Shape& shape : shapes) {
    SCOPED_TRACE(shape.name);
    const std::string path = dir + "/" + shape.name + ".gguf";
    write_model(path, llama_sketch(shape.dims));
    EXPECT_EQ(compare_all_mixtures(path, dir), 0);
  }
}

TEST_F(QuantizeMixtureRules, Falcon) {
  const std::string dir = testing::scratch_dir();
  for (uint32_t n_layer : {20u, 32u}) {
    const std::string path = dir + "/falcon" + std::to_string(n_layer) + ".gguf";
    write_model(path, falcon_sketch(n_layer, 256, 1024));
    EXPECT_EQ(compare_all_mixtures(path, dir), 0);
  }
}

TEST_F(QuantizeMixtureRules, PureKeepsTheDefaultTypeButStillFallsBack) {
  const std::string dir = testing::scratch_dir();
  const std::string path = dir + "/pure.gguf";
  write_model(path, llama_sketch({4, 96, 256, 4, 2}));
  EXPECT_EQ(compare_all_mixtures(path, dir, /*pure=*/true), 0);
}

}  // namespace
}  // namespace sinter
