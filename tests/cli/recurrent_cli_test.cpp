// Pure recurrent models (mamba2, mamba) through the `sinter` tool: `run` generates far past any
// --ctx (their memory does not grow with a sequence), `inspect` reports the recurrent state and
// its checkpoint budget instead of a KV cache, and hyper-parameters that cannot describe a
// Mamba layer, or weights of a type its ops cannot read, are a short error, never a crash or a
// huge allocation.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::shell_quote;

const auto& sinter = testing::run_sinter;

class RecurrentCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir();
    for (const char* architecture : {"mamba", "mamba2"}) {
      const std::string path = dir_ + "/" + architecture + ".gguf";
      ASSERT_EQ(
          sinter(std::string("synth ") + architecture + " " + shell_quote(path) + " --dims tiny").exit_status,
          0);
    }
  }
  std::string model(const char* architecture) const {
    return shell_quote(dir_ + "/" + architecture + ".gguf");
  }

  // A copy of the tiny mamba2 model with its metadata edited, and tensor `f16` (if any) stored
  // as F16.
  std::string edited(const std::string& name, const std::function<void(Metadata&)>& edit,
                     const std::string& f16 = "") {
    auto file = GgufFile::open(dir_ + "/mamba2.gguf");
    EXPECT_TRUE(file.ok());
    GgufWriter writer;
    for (const auto& [key, value] : file->metadata().entries()) writer.metadata().set(key, value);
    edit(writer.metadata());
    for (const auto& t : file->tensors()) {
      if (t.name == f16) {
        EXPECT_TRUE(writer.add_tensor_bytes(t.name, DType::F16, t.shape, std::vector<uint8_t>(t.bytes / 2)));
        continue;
      }
      EXPECT_TRUE(
          writer.add_tensor_bytes(t.name, t.type, t.shape, std::vector<uint8_t>(t.data, t.data + t.bytes)));
    }
    const std::string path = dir_ + "/" + name;
    EXPECT_TRUE(writer.write(path).ok());
    return shell_quote(path);
  }

  std::string dir_;
};

TEST_F(RecurrentCli, RunGeneratesFarPastTheContextSize) {
  for (const char* architecture : {"mamba", "mamba2"}) {
    const auto result =
        sinter("run -m " + model(architecture) +
               " -p 'Once upon a time' -n 200 -c 8 --temp 0 --ignore-eos --output ids -t 2 -v");
    ASSERT_EQ(result.exit_status, 0) << architecture << ": " << result.err;
    EXPECT_EQ(nlohmann::json::parse(result.out).size(), 200u) << architecture;
    EXPECT_NE(result.err.find("200 generated (length), 0 context shifts"), std::string::npos) << result.err;
  }
}

TEST_F(RecurrentCli, InspectReportsTheStateAndItsCheckpoints) {
  const auto text = sinter("inspect " + model("mamba2"));
  ASSERT_EQ(text.exit_status, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("recurrent state"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("checkpoints"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("KV cache"), std::string::npos) << "no attention layers: " << text.out;
  EXPECT_NE(text.out.find("mamba2.ssm.group_count = 2"), std::string::npos) << text.out;
  const auto json = sinter("inspect --json " + model("mamba2"));
  ASSERT_EQ(json.exit_status, 0) << json.err;
  const auto memory = nlohmann::json::parse(json.out)["memory"];
  EXPECT_EQ(memory["kv_cache_bytes"], 0);
  EXPECT_GT(memory["state_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(memory["state_checkpoint_bytes"].get<uint64_t>(), 0u);
  // The state does not depend on the context: the same at any --ctx.
  const auto small =
      nlohmann::json::parse(sinter("inspect --json --ctx 16 " + model("mamba2")).out)["memory"];
  EXPECT_EQ(small["state_bytes"], memory["state_bytes"]);
}

TEST_F(RecurrentCli, StateCheckpointsSetTheCheckpointBudget) {
  const auto memory =
      nlohmann::json::parse(sinter("inspect --json --state-checkpoints 3 " + model("mamba2")).out)["memory"];
  EXPECT_EQ(memory["state_checkpoint_bytes"], 3u << 20);
  // A budget below one state keeps no checkpoint; generation does not need one.
  const auto run = sinter("run -m " + model("mamba") +
                          " -p 'Once upon a time' -n 8 --temp 0 --state-checkpoints 1 --output ids -t 2");
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out).size(), 8u);
  const auto refused = sinter("inspect --state-checkpoints -1 " + model("mamba2"));
  EXPECT_EQ(refused.exit_status, 1);
  EXPECT_NE(refused.err.find("--state-checkpoints must be between 0 and"), std::string::npos) << refused.err;
}

TEST_F(RecurrentCli, ImpossibleSsmFilesAreShortErrors) {
  const auto refused = [&](const std::string& file, const std::string& expected) {
    for (const char* verb : {"inspect ", "run -p hi -n 2 -m "}) {
      const auto result = sinter(verb + file);
      EXPECT_EQ(result.exit_status, 1) << verb << file;
      const std::string all = result.out + result.err;
      EXPECT_NE(all.find(expected), std::string::npos) << verb << file << ": " << all;
      EXPECT_LT(all.size(), 20000u);
    }
  };
  refused(edited("groups.gguf", [](Metadata& md) { md.set("mamba2.ssm.group_count", GgufValue::of_u32(3)); }),
          "groups (ssm.group_count)");
  refused(edited("kernel.gguf", [](Metadata& md) { md.set("mamba2.ssm.conv_kernel", GgufValue::of_u32(1)); }),
          "ssm.conv_kernel 1 must be between 2 and 256");
  refused(edited("huge.gguf",
                 [](Metadata& md) {
                   md.set("mamba2.ssm.inner_size", GgufValue::of_u32(1u << 30));
                   md.set("mamba2.ssm.state_size", GgufValue::of_u32(1u << 30));
                 }),
          "more than 2^32 values");
  refused(
      edited("heads.gguf", [](Metadata& md) { md.set("mamba2.ssm.time_step_rank", GgufValue::of_u32(0)); }),
      "must be positive");
  // Weights the recurrent ops read as floats, matrices or not.
  const auto same = [](Metadata&) {};
  refused(edited("a.gguf", same, "blk.1.ssm_a"), "tensor 'blk.1.ssm_a' is f16; sinter expects f32");
  refused(edited("conv.gguf", same, "blk.0.ssm_conv1d.weight"),
          "tensor 'blk.0.ssm_conv1d.weight' is f16; sinter expects f32");
}

}  // namespace
}  // namespace sinter
