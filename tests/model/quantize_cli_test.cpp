// `sinter quantize` as a user runs it: success, the notes on stderr, --dry-run, and the errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/gguf_file.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::run_command;
using testing::shell_quote;

std::string sinter() { return shell_quote(testing::sinter_binary()); }

std::string synth(const std::string& dir, const std::string& dims) {
  const std::string path = dir + "/model.gguf";
  const auto result =
      run_command(sinter() + " synth llama " + shell_quote(path) + " --dims tiny --n-vocab 300 " + dims);
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return path;
}

TEST(QuantizeCli, WritesTheFileAndSummarizes) {
  const std::string dir = testing::scratch_dir();
  const std::string input = synth(dir, "--n-embd 256 --n-ff 256");
  const std::string output = dir + "/out.gguf";
  const auto result = run_command(sinter() + " quantize " + shell_quote(input) + " " + shell_quote(output) +
                                  " q4_k_m --threads 2");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_NE(result.err.find("wrote " + output + " (Q4_K_M)"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("warning"), std::string::npos) << result.err;
  auto file = GgufFile::open(output);
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file->metadata().get<uint32_t>("general.file_type").value_or(0), 15u);
  EXPECT_EQ(file->find_tensor("blk.0.attn_q.weight")->type, DType::Q4_K);
}

TEST(QuantizeCli, SaysWhenATensorFallsBack) {
  const std::string dir = testing::scratch_dir();
  const std::string input = synth(dir, "--n-embd 64 --n-ff 128");
  const auto result = run_command(sinter() + " quantize " + shell_quote(input) + " " +
                                  shell_quote(dir + "/out.gguf") + " Q4_K_S");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_NE(
      result.err.find("sinter: warning: blk.0.attn_q.weight: row length 64 is not a multiple of 256 (the "
                      "block of q4_K): falling back to q5_0"),
      std::string::npos)
      << result.err;
}

TEST(QuantizeCli, WarnsWhenRequantizing) {
  const std::string dir = testing::scratch_dir();
  const std::string input = synth(dir, "--n-embd 256 --n-ff 256 --type q8_0");
  const auto result = run_command(sinter() + " quantize " + shell_quote(input) + " " +
                                  shell_quote(dir + "/out.gguf") + " Q4_0");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_NE(result.err.find("warning: blk.0.attn_q.weight: requantizing q8_0 to q4_0"), std::string::npos)
      << result.err;
}

TEST(QuantizeCli, DryRunListsTheTypesAndWritesNothing) {
  const std::string dir = testing::scratch_dir();
  const std::string input = synth(dir, "--n-embd 256 --n-ff 256");
  const std::string output = dir + "/out.gguf";
  const auto result = run_command(sinter() + " quantize " + shell_quote(input) + " " + shell_quote(output) +
                                  " Q3_K_M --dry-run");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_FALSE(std::filesystem::exists(output));
  EXPECT_NE(result.out.find("blk.0.attn_v.weight"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("f32      -> q5_K"), std::string::npos) << result.out;  // first two attn_v
  EXPECT_NE(result.out.find("Q3_K_M: "), std::string::npos) << result.out;
}

TEST(QuantizeCli, ClearErrors) {
  const std::string dir = testing::scratch_dir();
  const std::string input = synth(dir, "--n-embd 256 --n-ff 256");
  const std::string output = dir + "/out.gguf";
  struct Case {
    std::string arguments;
    std::string message;
  };
  const Case cases[] = {
      {shell_quote(input) + " " + shell_quote(output) + " Q9_K",
       "sinter: error: unknown quantization type 'Q9_K'; choose one of F32, F16, BF16, Q4_0"},
      {shell_quote(dir + "/absent.gguf") + " " + shell_quote(output) + " Q4_0",
       "sinter: error: cannot read " + dir + "/absent.gguf"},
      {shell_quote(dir) + " " + shell_quote(output) + " Q4_0", "sinter: error: cannot read " + dir},
      {shell_quote(input) + " " + shell_quote(dir + "/no/such/folder.gguf") + " Q4_0",
       "sinter: error: cannot write " + dir + "/no/such/folder.gguf"},
      {shell_quote(input) + " " + shell_quote(output) + " Q4_0 --threads -1",
       "sinter: error: --threads must be between 0 and "},
      {shell_quote(input) + " " + shell_quote(output), "type is required"},
  };
  for (const Case& c : cases) {
    const auto result = run_command(sinter() + " quantize " + c.arguments);
    EXPECT_NE(result.exit_status, 0) << c.arguments;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << c.arguments << "\n" << result.err;
  }
  // A file that is not GGUF.
  const std::string text = dir + "/text.gguf";
  ASSERT_EQ(run_command("echo hello > " + shell_quote(text)).exit_status, 0);
  const auto bad =
      run_command(sinter() + " quantize " + shell_quote(text) + " " + shell_quote(output) + " Q4_0");
  EXPECT_EQ(bad.exit_status, 1);
  EXPECT_NE(bad.err.find("sinter: error: cannot read " + text + ": "), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(output));
}

}  // namespace
}  // namespace sinter
