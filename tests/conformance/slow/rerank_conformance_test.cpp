// Reranking scores of random-weight reranker-shaped files (a BERT with cls and cls.output heads,
// a Qwen3 with yes/no rows, a jina-bert-v2 with its one-score tanh head; bert-base-uncased's
// WordPiece vocabulary) against llama.cpp:
// `sinter rerank --probability` (all documents in one call, so packed into one pass) against
// the oracle's `rank` (node-llama-cpp's rankAll): within 1e-3 for F32. Q8_0 is held to 5e-3:
// both engines quantize activations to Q8_0 for each product, and those rounding differences
// reach the one score the head projects (measured up to 3.7e-3; on the BERT file llama.cpp's
// own F32-to-Q8_0 shift is up to 1.6e-3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

// BERT (cls + cls.output heads, a sigmoid in the oracle) and Qwen3-Reranker-shaped (the yes/no
// rows and a softmax, no sigmoid), both over the WordPiece vocabulary: node-llama-cpp tokenizes
// a SentencePiece query without its leading space, llama-server (and sinter) with it.
struct Case {
  const char* architecture;
  const char* preset;
  const char* type;
};
const Case kCases[] = {{"bert", "small", "f32"},         {"bert", "small", "q8_0"},
                       {"qwen3", "tiny", "f32"},         {"qwen3", "tiny", "q8_0"},
                       {"jina-bert-v2", "small", "f32"}, {"jina-bert-v2", "small", "q8_0"}};

std::string reranker(const Case& c) {
  const std::string path = testing::scratch_dir() + "/../" + c.architecture + "-reranker-" + c.type + ".gguf";
  const std::string dir = testing::bert_tokenizer_dir();
  const auto result =
      testing::run_sinter("synth " + std::string(c.architecture) + " " + testing::shell_quote(path) +
                          " --dims " + c.preset + " --pooling rank --seed 4 --type " + c.type +
                          " --tokenizer " + testing::shell_quote(dir + "/tokenizer.json") +
                          " --tokenizer-config " + testing::shell_quote(dir + "/tokenizer_config.json"));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return path;
}

class RerankConformance : public ::testing::TestWithParam<int> {};

TEST_P(RerankConformance, ScoresAgainstTheOracle) {
  const Case& c = kCases[GetParam()];
  const std::string type = c.type;
  const std::string model = reranker(c);
  const std::string query = "what does a fox jump over";
  std::string long_document;
  for (int i = 0; i < 150; ++i) long_document += i % 3 == 0 ? "the lazy dog " : "dense retrieval ";
  const std::vector<std::string> documents = {"the quick brown fox jumps over the lazy dog", "hello",
                                              "embeddings for local search", long_document};
  std::string arguments =
      "rerank --probability -m " + testing::shell_quote(model) + " " + testing::shell_quote(query);
  for (const auto& document : documents) arguments += " " + testing::shell_quote(document);
  const auto ours = testing::run_sinter(arguments);
  ASSERT_EQ(ours.exit_status, 0) << ours.err;
  const auto oracle = testing::oracle_rank(model, query, documents);
  ASSERT_EQ(oracle.size(), documents.size());
  std::istringstream lines(ours.out);
  double spread = 0;
  for (size_t i = 0; i < documents.size(); ++i) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << "sinter printed fewer scores than documents";
    size_t index = 0;
    double score = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%zu\t%lf", &index, &score), 2) << line;
    EXPECT_EQ(index, i) << "without --sort the documents are printed in order";
    std::printf("%s reranker %s, document %zu: sinter %.6f, oracle %.6f, |diff| %.2e\n", c.architecture,
                type.c_str(), i, score, oracle[i], std::abs(score - oracle[i]));
    EXPECT_NEAR(score, oracle[i], type == "f32" ? 1e-3 : 5e-3) << "document " << i;
    spread = std::max(spread, std::abs(oracle[i] - oracle[0]));
  }
  // The documents score differently: a test of scores that all sit at one value would prove little.
  EXPECT_GT(spread, 1e-2);
  // --sort prints the same lines, highest score first.
  const auto sorted = testing::run_sinter(arguments + " --sort");
  ASSERT_EQ(sorted.exit_status, 0) << sorted.err;
  std::istringstream sorted_lines(sorted.out);
  double previous = 2.0;
  size_t count = 0;
  for (std::string line; std::getline(sorted_lines, line); ++count) {
    size_t index = 0;
    double score = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%zu\t%lf", &index, &score), 2) << line;
    ASSERT_LT(index, documents.size());
    EXPECT_EQ(line.substr(line.rfind('\t') + 1), documents[index]);
    EXPECT_LE(score, previous);
    previous = score;
  }
  EXPECT_EQ(count, documents.size());
}

INSTANTIATE_TEST_SUITE_P(Models, RerankConformance, ::testing::Range(0, static_cast<int>(std::size(kCases))),
                         [](const ::testing::TestParamInfo<int>& param) {
                           const Case& c = kCases[param.param];
                           std::string name = std::string(c.architecture) + "_" + c.type;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace sinter
