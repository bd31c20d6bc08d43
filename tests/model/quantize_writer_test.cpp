// Planning and writing a quantized model: the types of the plan, the bytes of each tensor (those
// of the reference quantizer on the same values), the metadata, fallbacks, requantization and
// copying, threads, and failures that leave nothing behind.
#include "model/quantize/quantize_writer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/thread_pool.h"
#include "gguf/gguf_writer.h"
#include "model/quantize/quantize_plan.h"
#include "model/synth.h"
#include "support/test_paths.h"
#include "tensor/convert.h"

namespace sinter {
namespace {

// A small llama model: rows of n_embd (256 fits every block) and n_ff.
std::string synth_model(const std::string& dir, const std::string& name, int32_t n_embd,
                        DType type = DType::F32, int32_t n_ff = 256) {
  SynthOptions options;
  options.preset = "tiny";
  options.dims.n_embd = n_embd;
  options.dims.n_head = 4;
  options.dims.n_head_kv = 2;
  options.dims.n_ff = n_ff;
  options.dims.n_vocab = 300;
  options.type = type;
  options.seed = 5;
  const std::string path = dir + "/" + name + ".gguf";
  const auto status = synthesize(options, path);
  EXPECT_TRUE(status.ok()) << status.error().message();
  return path;
}

QuantizePlan plan_for(const GgufFile& file, MixtureId mixture) {
  auto plan = plan_quantization(file, QuantizeOptions{mixture, false});
  EXPECT_TRUE(plan.ok()) << plan.error().message();
  return plan.ok() ? *plan : QuantizePlan{};
}

std::vector<float> as_f32(const GgufTensorInfo& t) {
  std::vector<float> values(static_cast<size_t>(t.element_count()));
  EXPECT_TRUE(dequantize_rows(t.type, t.data, t.row_length(), t.row_count(), values.data()).ok());
  return values;
}

TEST(QuantizeWriter, WritesThePlannedTypesAndTheReferenceQuantizersBytes) {
  const std::string dir = testing::scratch_dir();
  const std::string input = synth_model(dir, "f32", 256);
  auto file = GgufFile::open(input);
  ASSERT_TRUE(file.ok());
  const QuantizePlan plan = plan_for(*file, MixtureId::kQ4_K_M);
  ASSERT_EQ(plan.tensors.size(), file->tensors().size());
  EXPECT_TRUE(plan.warnings().empty());
  EXPECT_EQ(plan.model.n_layer, 2);
  EXPECT_EQ(plan.model.n_gqa, 2);

  const std::string output = dir + "/q4_k_m.gguf";
  ASSERT_TRUE(write_quantized_model(*file, plan, output).ok());
  auto written = GgufFile::open(output);
  ASSERT_TRUE(written.ok()) << written.error().message();
  ASSERT_EQ(written->tensors().size(), file->tensors().size());
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const GgufTensorInfo& in = file->tensors()[i];
    const GgufTensorInfo& out = written->tensors()[i];
    const TensorPlan& t = plan.tensors[i];
    EXPECT_EQ(out.name, in.name);
    EXPECT_EQ(out.shape, in.shape);
    EXPECT_EQ(out.type, t.target_type) << t.name;
    // The reference quantizer on the original values, byte for byte.
    std::vector<uint8_t> expected(t.target_bytes());
    ASSERT_TRUE(quantize_rows(t.target_type, reinterpret_cast<const float*>(in.data), in.row_length(),
                              in.row_count(), expected.data())
                    .ok());
    ASSERT_EQ(out.bytes, expected.size()) << t.name;
    EXPECT_EQ(std::memcmp(out.data, expected.data(), expected.size()), 0) << t.name;
  }
  // Vectors stay F32; the mixture's choices for a 2-layer model with GQA 2.
  EXPECT_EQ(written->find_tensor("output_norm.weight")->type, DType::F32);
  EXPECT_EQ(written->find_tensor("blk.1.attn_norm.weight")->type, DType::F32);
  EXPECT_EQ(written->find_tensor("output.weight")->type, DType::Q6_K);
  EXPECT_EQ(written->find_tensor("token_embd.weight")->type, DType::Q4_K);
  EXPECT_EQ(written->find_tensor("blk.0.attn_v.weight")->type, DType::Q4_K);
  EXPECT_EQ(written->find_tensor("blk.1.attn_v.weight")->type, DType::Q6_K);
  EXPECT_EQ(written->find_tensor("blk.0.ffn_down.weight")->type, DType::Q4_K);
  EXPECT_EQ(written->find_tensor("blk.1.ffn_down.weight")->type, DType::Q6_K);
  EXPECT_EQ(written->find_tensor("blk.0.attn_q.weight")->type, DType::Q4_K);

  // Metadata: all of the input's, with llama.cpp's file type and quantization version.
  const Metadata& md = written->metadata();
  EXPECT_EQ(md.get<uint32_t>("general.file_type").value_or(0), 15u);
  EXPECT_EQ(md.get<uint32_t>("general.quantization_version").value_or(0), kQuantizationVersion);
  for (const auto& [key, value] : file->metadata().entries()) {
    if (key == "general.file_type") continue;
    const GgufValue* copied = md.find_value(key);
    ASSERT_NE(copied, nullptr) << key;
    EXPECT_TRUE(*copied == value) << key;
  }
}

TEST(QuantizeWriter, ThreadsChangeNothing) {
  const std::string dir = testing::scratch_dir();
  auto file = GgufFile::open(synth_model(dir, "f32", 256));
  ASSERT_TRUE(file.ok());
  const QuantizePlan plan = plan_for(*file, MixtureId::kQ3_K_M);
  ThreadPool pool(3);
  ASSERT_TRUE(write_quantized_model(*file, plan, dir + "/one.gguf").ok());
  size_t progress_calls = 0, last_done = 0, last_total = 0;
  ASSERT_TRUE(write_quantized_model(*file, plan, dir + "/three.gguf", &pool, [&](size_t done, size_t total) {
                ++progress_calls;
                EXPECT_GE(done, last_done);
                last_done = done;
                last_total = total;
              }).ok());
  EXPECT_EQ(progress_calls, plan.tensors.size());
  EXPECT_EQ(last_done, last_total);
  EXPECT_EQ(last_total, plan.target_bytes());
  EXPECT_TRUE(std::filesystem::file_size(dir + "/one.gguf") ==
              std::filesystem::file_size(dir + "/three.gguf"));
  auto one = GgufFile::open(dir + "/one.gguf");
  auto three = GgufFile::open(dir + "/three.gguf");
  ASSERT_TRUE(one.ok() && three.ok());
  for (size_t i = 0; i < one->tensors().size(); ++i) {
    const auto& a = one->tensors()[i];
    const auto& b = three->tensors()[i];
    ASSERT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(std::memcmp(a.data, b.data, a.bytes), 0) << a.name;
  }
}

TEST(QuantizeWriter, RowsThatDoNotFitFallBackAndSaySo) {
  const std::string dir = testing::scratch_dir();
  // rows of 64 fit no K-quant; ffn_down rows of 96 neither
  auto file = GgufFile::open(synth_model(dir, "rows64", 64, DType::F32, 96));
  ASSERT_TRUE(file.ok());
  const QuantizePlan plan = plan_for(*file, MixtureId::kQ4_K_M);
  const TensorPlan* q = nullptr;
  for (const TensorPlan& t : plan.tensors) {
    if (t.name == "blk.0.attn_q.weight") q = &t;
  }
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->chosen_type, DType::Q4_K);
  EXPECT_EQ(q->target_type, DType::Q5_0);
  EXPECT_TRUE(q->fell_back());
  const auto warnings = plan.warnings();
  bool mentioned = false;
  for (const std::string& line : warnings) {
    mentioned = mentioned || line ==
                                 "blk.0.attn_q.weight: row length 64 is not a multiple of 256 (the block of "
                                 "q4_K): falling back to q5_0";
  }
  EXPECT_TRUE(mentioned) << (warnings.empty() ? "no warnings" : warnings.front());
  ASSERT_TRUE(write_quantized_model(*file, plan, dir + "/out.gguf").ok());
  auto written = GgufFile::open(dir + "/out.gguf");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->find_tensor("blk.0.attn_q.weight")->type, DType::Q5_0);
  EXPECT_EQ(written->find_tensor("output.weight")->type, DType::Q8_0);  // Q6_K does not fit
}

TEST(QuantizeWriter, RequantizesWithAWarningAndCopiesWhatAlreadyHasItsType) {
  const std::string dir = testing::scratch_dir();
  auto file = GgufFile::open(synth_model(dir, "q8_0", 256, DType::Q8_0));
  ASSERT_TRUE(file.ok());

  // Q8_0 → Q4_0: every matrix is requantized (through F32), and the tool warns.
  const QuantizePlan to_q4 = plan_for(*file, MixtureId::kQ4_0);
  size_t requantized = 0;
  for (const TensorPlan& t : to_q4.tensors) requantized += t.requantized();
  EXPECT_GT(requantized, 0u);
  const auto warnings = to_q4.warnings();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.front().find("requantizing q8_0 to"), std::string::npos) << warnings.front();
  ASSERT_TRUE(write_quantized_model(*file, to_q4, dir + "/q4_0.gguf").ok());
  auto q4 = GgufFile::open(dir + "/q4_0.gguf");
  ASSERT_TRUE(q4.ok());
  const GgufTensorInfo* source = file->find_tensor("blk.0.ffn_up.weight");
  const GgufTensorInfo* result = q4->find_tensor("blk.0.ffn_up.weight");
  ASSERT_EQ(result->type, DType::Q4_0);
  const std::vector<float> widened = as_f32(*source);
  std::vector<uint8_t> expected(result->bytes);
  ASSERT_TRUE(
      quantize_rows(DType::Q4_0, widened.data(), source->row_length(), source->row_count(), expected.data())
          .ok());
  EXPECT_EQ(std::memcmp(result->data, expected.data(), expected.size()), 0);

  // Q8_0 → Q8_0: nothing to convert; the bytes are copied as they are, no warnings.
  const QuantizePlan same = plan_for(*file, MixtureId::kQ8_0);
  EXPECT_TRUE(same.warnings().empty());
  ASSERT_TRUE(write_quantized_model(*file, same, dir + "/q8_0.gguf").ok());
  auto copy = GgufFile::open(dir + "/q8_0.gguf");
  ASSERT_TRUE(copy.ok());
  for (const GgufTensorInfo& t : file->tensors()) {
    const GgufTensorInfo* c = copy->find_tensor(t.name);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->type, t.type) << t.name;
    ASSERT_EQ(c->bytes, t.bytes);
    EXPECT_EQ(std::memcmp(c->data, t.data, t.bytes), 0) << t.name;
  }
}

TEST(QuantizeWriter, F16InputIsNotARequantization) {
  const std::string dir = testing::scratch_dir();
  auto file = GgufFile::open(synth_model(dir, "f16", 256, DType::F16));
  ASSERT_TRUE(file.ok());
  const QuantizePlan plan = plan_for(*file, MixtureId::kQ5_K_M);
  EXPECT_TRUE(plan.warnings().empty());
  ASSERT_TRUE(write_quantized_model(*file, plan, dir + "/out.gguf").ok());
  auto written = GgufFile::open(dir + "/out.gguf");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->find_tensor("blk.0.attn_q.weight")->type, DType::Q5_K);
  EXPECT_EQ(written->metadata().get<uint32_t>("general.file_type").value_or(0), 17u);
}

TEST(QuantizeWriter, KeepsIntegerTensorsAndDropsSplitKeys) {
  const std::string dir = testing::scratch_dir();
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  writer.metadata().set("llama.block_count", GgufValue::of_u32(1));
  writer.metadata().set("split.no", GgufValue::of(uint16_t{0}));
  writer.metadata().set("split.count", GgufValue::of(uint16_t{1}));
  std::vector<uint8_t> floats(64 * 2 * sizeof(float), 0);
  std::vector<uint8_t> ints(64 * 2 * sizeof(int32_t), 7);
  ASSERT_TRUE(writer.add_tensor_bytes("blk.0.ffn_up.weight", DType::F32, {64, 2}, floats).ok());
  ASSERT_TRUE(writer.add_tensor_bytes("blk.0.lookup.weight", DType::I32, {64, 2}, ints).ok());
  ASSERT_TRUE(writer.write(dir + "/in.gguf").ok());
  auto file = GgufFile::open(dir + "/in.gguf");
  ASSERT_TRUE(file.ok()) << file.error().message();
  const QuantizePlan plan = plan_for(*file, MixtureId::kQ4_0);
  ASSERT_TRUE(write_quantized_model(*file, plan, dir + "/out.gguf").ok());
  auto written = GgufFile::open(dir + "/out.gguf");
  ASSERT_TRUE(written.ok()) << written.error().message();
  EXPECT_EQ(written->find_tensor("blk.0.ffn_up.weight")->type, DType::Q4_0);
  EXPECT_EQ(written->find_tensor("blk.0.lookup.weight")->type, DType::I32);
  EXPECT_FALSE(written->metadata().contains("split.no"));
  EXPECT_FALSE(written->metadata().contains("split.count"));
}

TEST(QuantizeWriter, ModelFactsFromTheMetadata) {
  const std::string dir = testing::scratch_dir();
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  // per-layer head counts (arrays), no block_count: layers are counted from tensor names
  writer.metadata().set("llama.attention.head_count", GgufValue::of_i32s({32, 32, 32}));
  writer.metadata().set("llama.attention.head_count_kv", GgufValue::of_i32s({8, 8, 8}));
  writer.metadata().set("llama.expert_count", GgufValue::of_u32(8));
  std::vector<uint8_t> bytes(32 * 2 * sizeof(float), 0);
  for (const char* name : {"blk.0.attn_v.weight", "blk.2.attn_v.weight"}) {
    ASSERT_TRUE(writer.add_tensor_bytes(name, DType::F32, {32, 2}, bytes).ok());
  }
  ASSERT_TRUE(writer.write(dir + "/facts.gguf").ok());
  auto file = GgufFile::open(dir + "/facts.gguf");
  ASSERT_TRUE(file.ok());
  std::vector<std::string> assumptions;
  auto facts = read_model_facts(*file, &assumptions);
  ASSERT_TRUE(facts.ok()) << facts.error().message();
  EXPECT_EQ(facts->architecture, "llama");
  EXPECT_EQ(facts->n_layer, 3);
  EXPECT_EQ(facts->n_gqa, 4);
  EXPECT_EQ(facts->n_expert, 8);
  EXPECT_FALSE(facts->is_70b);
  ASSERT_EQ(assumptions.size(), 1u);
  EXPECT_NE(assumptions.front().find("llama.block_count"), std::string::npos);
}

TEST(QuantizeWriter, AFailedWriteLeavesNothing) {
  const std::string dir = testing::scratch_dir();
  auto file = GgufFile::open(synth_model(dir, "f32", 256));
  ASSERT_TRUE(file.ok());
  const QuantizePlan plan = plan_for(*file, MixtureId::kQ8_0);
  const std::string output = dir + "/missing-folder/out.gguf";
  EXPECT_FALSE(write_quantized_model(*file, plan, output).ok());
  EXPECT_FALSE(std::filesystem::exists(output));
  // A plan made for another model is refused.
  QuantizePlan wrong = plan;
  wrong.tensors.pop_back();
  EXPECT_FALSE(write_quantized_model(*file, wrong, dir + "/out.gguf").ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.gguf"));
}

}  // namespace
}  // namespace sinter
