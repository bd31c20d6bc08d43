// Bad input to the `sinter` tool: each is a clear message and a non-zero exit, never a crash.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::run_command;
using testing::shell_quote;

const auto& sinter = testing::run_sinter;

std::string stories() { return shell_quote(testing::stories_model()); }

void expect_error(const testing::CommandResult& result, const std::string& words) {
  EXPECT_NE(result.exit_status, 0);
  EXPECT_NE(result.exit_status, -1) << "crashed";  // killed by a signal
  EXPECT_NE(result.err.find(words), std::string::npos) << "stderr: " << result.err;
}

TEST(CliErrors, RunRejectsBadArguments) {
  expect_error(sinter("run -m " + stories() + " -p ''"), "prompt is empty");
  expect_error(sinter("run -m " + stories() + " -p hello -n 0"), "-n must be positive");
  expect_error(sinter("run -m " + stories() + " -p hello --temp -1"), "temperature");
  expect_error(sinter("run -m " + stories() + " -p hello --top-p 1.5"), "top_p");
  expect_error(sinter("run -m " + stories() + " -p hello --top-p 0"), "top_p");
  expect_error(sinter("run -m /nonexistent.gguf -p hello"), "/nonexistent.gguf");
  expect_error(sinter("run -m " + stories() + " -p hello --overflow sideways"), "--overflow");
}

TEST(CliErrors, PromptLongerThanTheContextUnderTheErrorPolicy) {
  const auto result = sinter("run -m " + stories() + " -c 8 -p 'Once upon a time there was a little girl named Lily'");
  expect_error(result, "context");
  // The shift policy accepts it and generates.
  const auto shifted = sinter("run -m " + stories() + " -c 8 --overflow shift -n 5 --temp 0 --output ids -p " +
                              shell_quote("Once upon a time there was a little girl named Lily"));
  EXPECT_EQ(shifted.exit_status, 0) << shifted.err;
}

TEST(CliErrors, ProbsRejectsIdsOutsideTheVocabulary) {
  expect_error(sinter("probs " + stories() + " 1,2,512"), "outside the vocabulary");
  expect_error(sinter("probs " + stories() + " 1,x"), "token id");
  expect_error(sinter("probs " + stories() + " 1,-4"), "outside the vocabulary");
}

TEST(CliErrors, ModelThatIsNotLoadable) {
  const std::string path = testing::scratch_dir() + "/unknown-arch.gguf";
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("mamba9"));
  ASSERT_TRUE(writer.write(path));
  expect_error(sinter("run -m " + shell_quote(path) + " -p hello"), "mamba9");
  const auto inspect = sinter("inspect " + shell_quote(path));
  expect_error(inspect, "mamba9");
  EXPECT_NE(inspect.out.find("loadable       no"), std::string::npos) << inspect.out;
  expect_error(sinter("inspect " + shell_quote(testing::scratch_dir() + "/missing.gguf")), "missing.gguf");
}

TEST(CliInspect, Stories260KDiagnosis) {
  const auto result = sinter("inspect " + stories() + " --json");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["architecture"], "llama");
  EXPECT_EQ(json["loadable"], true);
  EXPECT_EQ(json["n_layer"], 5);
  EXPECT_EQ(json["n_vocab"], 512);
  EXPECT_EQ(json["config"]["llama.block_count"], 5);
  EXPECT_EQ(json["tensors_by_type"]["f32"]["count"], 48);
  EXPECT_EQ(json["payload_bytes"], json["f32_bytes"]);
  EXPECT_EQ(json["n_params"], 292800);
  bool freq_base_defaulted = false;
  for (const auto& entry : json["defaults_used"]) freq_base_defaulted |= entry["key"] == "llama.rope.freq_base";
  EXPECT_TRUE(freq_base_defaulted);
  EXPECT_EQ(json["metadata"]["tokenizer.ggml.tokens"]["length"], 512);
  EXPECT_GT(json["memory"]["kv_cache_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(json["memory"]["compute_bytes"].get<uint64_t>(), 0u);
  // --ctx changes the estimate: the KV cache is proportional to the context.
  const auto small = nlohmann::json::parse(sinter("inspect " + stories() + " --json --ctx 256").out);
  EXPECT_EQ(small["memory"]["kv_cache_bytes"].get<uint64_t>() * 8, json["memory"]["kv_cache_bytes"].get<uint64_t>());
  // One pool per attention window: llama has full attention only.
  const auto& pools = small["memory"]["kv_pools"];
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0]["window"], 0);
  EXPECT_EQ(pools[0]["layers"], 5);
  EXPECT_EQ(pools[0]["cells"], 256);
  EXPECT_EQ(pools[0]["bytes"], small["memory"]["kv_cache_bytes"]);
}

TEST(CliInspect, SchemaReportsMissingAndMisshapenTensors) {
  // A synthetic model with one tensor left out.
  const std::string full = testing::scratch_dir() + "/full.gguf";
  ASSERT_EQ(sinter("synth llama " + shell_quote(full) + " --dims tiny").exit_status, 0);
  const auto ok = sinter("inspect " + shell_quote(full) + " --schema");
  EXPECT_EQ(ok.exit_status, 0) << ok.out << ok.err;
  const auto tensors = nlohmann::json::parse(sinter("inspect " + shell_quote(full) + " --tensors --json").out);
  EXPECT_EQ(tensors[0]["name"], "token_embd.weight");

  // Copy it without blk.0.ffn_up.weight and with blk.1.attn_q.weight cut to half its rows.
  auto file = GgufFile::open(full);
  ASSERT_TRUE(file);
  GgufWriter writer;
  for (const auto& [key, value] : file->metadata().entries()) writer.metadata().set(key, value);
  for (const auto& t : file->tensors()) {
    if (t.name == "blk.0.ffn_up.weight") continue;
    std::vector<int64_t> shape = t.shape;
    uint64_t bytes = t.bytes;
    if (t.name == "blk.1.attn_q.weight") {
      shape[1] /= 2;
      bytes /= 2;
    }
    ASSERT_TRUE(writer.add_tensor_bytes(t.name, t.type, shape, std::vector<uint8_t>(t.data, t.data + bytes)));
  }
  const std::string broken = testing::scratch_dir() + "/broken.gguf";
  ASSERT_TRUE(writer.write(broken));
  const auto schema = sinter("inspect " + shell_quote(broken) + " --schema --json");
  EXPECT_EQ(schema.exit_status, 1);
  const auto json = nlohmann::json::parse(schema.out);
  ASSERT_EQ(json["missing"].size(), 1u);
  EXPECT_EQ(json["missing"][0]["tensor"], "blk.0.ffn_up.weight");
  ASSERT_EQ(json["mismatched"].size(), 1u);
  EXPECT_EQ(json["mismatched"][0]["tensor"], "blk.1.attn_q.weight");
  expect_error(sinter("inspect " + shell_quote(broken)), "blk.0.ffn_up.weight");
  expect_error(sinter("run -m " + shell_quote(broken) + " -p hi"), "blk.0.ffn_up.weight");
}

TEST(CliSynth, SameSeedSameBytes) {
  const std::string a = testing::scratch_dir() + "/a.gguf", b = testing::scratch_dir() + "/b.gguf";
  ASSERT_EQ(sinter("synth llama " + shell_quote(a) + " --dims tiny --seed 5 --type q8_0").exit_status, 0);
  ASSERT_EQ(sinter("synth llama " + shell_quote(b) + " --dims tiny --seed 5 --type q8_0").exit_status, 0);
  EXPECT_EQ(run_command("cmp " + shell_quote(a) + " " + shell_quote(b)).exit_status, 0);
  ASSERT_EQ(sinter("synth llama " + shell_quote(b) + " --dims tiny --seed 6 --type q8_0").exit_status, 0);
  EXPECT_NE(run_command("cmp -s " + shell_quote(a) + " " + shell_quote(b)).exit_status, 0);
  expect_error(sinter("synth llama " + shell_quote(b) + " --type q9_9"), "q9_9");
  expect_error(sinter("synth gpt99 " + shell_quote(b)), "gpt99");
}

}  // namespace
}  // namespace sinter
