// Hyper-parameters that disagree with the file, or make no sense, reach `sinter inspect` and
// `sinter run` as a short error and exit status 1: never a crash, a huge allocation, a
// megabyte-long message or invalid JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
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

class InspectLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir();
    base_ = dir_ + "/tiny.gguf";
    ASSERT_EQ(sinter("synth llama " + shell_quote(base_) + " --dims tiny").exit_status, 0);
  }

  // A copy of the tiny model with its metadata edited.
  std::string edited(const std::string& name, const std::function<void(Metadata&)>& edit) {
    auto file = GgufFile::open(base_);
    EXPECT_TRUE(file.ok());
    GgufWriter writer;
    for (const auto& [key, value] : file->metadata().entries()) writer.metadata().set(key, value);
    edit(writer.metadata());
    for (const auto& t : file->tensors()) {
      EXPECT_TRUE(
          writer.add_tensor_bytes(t.name, t.type, t.shape, std::vector<uint8_t>(t.data, t.data + t.bytes)));
    }
    const std::string path = dir_ + "/" + name;
    EXPECT_TRUE(writer.write(path).ok());
    return shell_quote(path);
  }

  std::string dir_, base_;
};

// Exit 1 (not a signal, not success) with a short message containing `words`.
void expect_short_error(const testing::CommandResult& result, const std::string& words) {
  EXPECT_EQ(result.exit_status, 1) << result.err.substr(0, 500);
  EXPECT_LT(result.err.size(), 2000u) << result.err.substr(0, 500);
  EXPECT_NE(result.err.find(words), std::string::npos) << result.err.substr(0, 500);
}

TEST_F(InspectLimits, HugeBlockCounts) {
  for (uint32_t blocks : {100000u, 1000000u, 1u << 31, 4294967295u}) {
    SCOPED_TRACE(blocks);
    const std::string path =
        edited("blocks.gguf", [&](Metadata& m) { m.set("llama.block_count", GgufValue::of_u32(blocks)); });
    const auto inspect = sinter("inspect " + path);
    expect_short_error(inspect, "llama.block_count");
    EXPECT_LT(inspect.out.size(), 4000u);
    expect_short_error(sinter("run -m " + path + " -p hi -n 1"), "llama.block_count");
  }
}

TEST_F(InspectLimits, ContextLengthBeyondInt32) {
  const std::string path = edited("ctx.gguf", [](Metadata& m) {
    m.set("llama.context_length", GgufValue::of_u32(std::numeric_limits<uint32_t>::max()));
  });
  const auto inspect = sinter("inspect " + path + " --json");
  expect_short_error(inspect, "llama.context_length");
  const auto json = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(json["loadable"], false);
  EXPECT_GE(json["n_ctx_train"].get<int64_t>(), 0);
  expect_short_error(sinter("run -m " + path + " -p hi -n 1"), "llama.context_length");
}

TEST_F(InspectLimits, NonFiniteFloatsGiveValidJsonAndAnError) {
  const std::string path = edited("nan.gguf", [](Metadata& m) {
    m.set("llama.rope.freq_base", GgufValue::of_f32(std::numeric_limits<float>::quiet_NaN()));
    m.set("general.some_float", GgufValue::of(-std::numeric_limits<double>::infinity()));
  });
  const auto inspect = sinter("inspect " + path + " --json");
  expect_short_error(inspect, "llama.rope.freq_base");
  const auto json = nlohmann::json::parse(inspect.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << inspect.out;
  EXPECT_EQ(json["loadable"], false);
  // Non-finite numbers are written as the strings "nan", "inf", "-inf".
  EXPECT_EQ(json["metadata"]["llama.rope.freq_base"], "nan");
  EXPECT_EQ(json["metadata"]["general.some_float"], "-inf");
  expect_short_error(sinter("run -m " + path + " -p hi -n 1"), "llama.rope.freq_base");
}

}  // namespace
}  // namespace sinter
