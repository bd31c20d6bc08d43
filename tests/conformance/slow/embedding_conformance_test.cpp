// Pooled embeddings of random-weight BERT files against llama.cpp: `sinter embed` (the file's
// pooling, no normalization, all texts in one call, so packed into one pass) against the
// oracle's `embed` (one text per call), with bert-base-uncased's WordPiece vocabulary, on texts
// of 1 to about 500 tokens. Cosine similarity ≥ 0.9999 for F32 and ≥ 0.999 for Q8_0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

struct Case {
  const char* preset;
  const char* pooling;
  const char* architecture = "bert";
  // Texts: the first n of texts(). The synthetic vocabulary of decoders (no --tokenizer) is
  // about one token a character: two texts reach ~420 tokens.
  size_t n_texts = 3;
};
const Case kCases[] = {{"tiny", "mean"},
                       {"small", "cls"},
                       {"bge-small", "cls"},
                       {"tiny", "last", "qwen3", 2},
                       {"tiny", "mean", "nomic-bert"},
                       {"tiny", "mean", "jina-bert-v2"},
                       {"small", "cls", "jina-bert-v2"},
                       {"tiny", "mean", "gemma-embedding", 2},
                       {"small", "cls", "gemma-embedding", 2},
                       {"tiny", "mean", "modern-bert"},
                       {"small", "cls", "modern-bert"}};

std::string model_path(const Case& c, const std::string& type) {
  static std::map<std::string, std::string> made;
  const std::string arch = c.architecture;
  const std::string key = arch + "-" + c.preset + "-" + c.pooling + "-" + type;
  if (made.count(key) != 0) return made[key];
  const std::string path = testing::scratch_dir() + "/../" + key + ".gguf";
  std::string tokenizer;
  if (arch.find("bert") != std::string::npos) {
    const std::string dir = testing::bert_tokenizer_dir();
    tokenizer = " --tokenizer " + testing::shell_quote(dir + "/tokenizer.json") + " --tokenizer-config " +
                testing::shell_quote(dir + "/tokenizer_config.json");
  }
  const auto result =
      testing::run_sinter("synth " + arch + " " + testing::shell_quote(path) + " --dims " + c.preset +
                          " --pooling " + c.pooling + " --seed 3 --type " + type + tokenizer);
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return made[key] = path;
}

// Texts of 1, about 120 and 480 WordPiece tokens (before [CLS] and [SEP]). Each oracle call
// costs ~1.4 s of node start-up: three texts a case keep the suite's time in check.
std::vector<std::string> texts() {
  static const char* const kWords[] = {"the",    "quick", "brown",     "fox",      "jumps", "over",
                                       "lazy",   "dog",   "retrieval", "of",       "dense", "embeddings",
                                       "is",     "a",     "common",    "workload", "for",   "local",
                                       "models", "and",   "search"};
  std::vector<std::string> out = {"hello"};
  for (int words : {60, 235}) {
    std::string text;
    for (int i = 0; i < words; ++i) {
      if (i > 0) text += ' ';
      text += kWords[(i * 7 + words) % std::size(kWords)];
      if (i % 17 == 16) text += ".";
    }
    out.push_back(text);
  }
  return out;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / std::sqrt(na * nb);
}

class EmbeddingConformance : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(EmbeddingConformance, CosineAgainstTheOracle) {
  const Case& c = kCases[std::get<0>(GetParam())];
  const std::string type = std::get<1>(GetParam());
  const std::string model = model_path(c, type);
  auto inputs = texts();
  inputs.resize(std::min(inputs.size(), c.n_texts));
  std::string arguments = "embed -m " + testing::shell_quote(model) + " --normalize -1 --output jsonl";
  for (const auto& text : inputs) {
    arguments += ' ';
    arguments += testing::shell_quote(text);
  }
  const auto ours = testing::run_sinter(arguments);
  ASSERT_EQ(ours.exit_status, 0) << ours.err;
  std::istringstream lines(ours.out);
  const double bound = type == "f32" ? 0.9999 : 0.999;
  for (const auto& text : inputs) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << "sinter printed fewer vectors than texts";
    const auto mine = nlohmann::json::parse(line).get<std::vector<double>>();
    const auto oracle = testing::oracle_embed(model, text);
    ASSERT_EQ(mine.size(), oracle.size());
    const double similarity = cosine(mine, oracle);
    std::printf("%s %s %s %s, %zu characters: cosine %.8f\n", c.architecture, c.preset, c.pooling,
                type.c_str(), text.size(), similarity);
    EXPECT_GE(similarity, bound) << c.architecture << " " << c.preset << " " << c.pooling << " " << type
                                 << ", text of " << text.size() << " characters";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EmbeddingConformance,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kCases))),
                                            ::testing::Values("f32", "q8_0")),
                         [](const ::testing::TestParamInfo<std::tuple<int, const char*>>& param) {
                           const Case& c = kCases[std::get<0>(param.param)];
                           std::string name = std::string(c.architecture) + "_" + c.preset + "_" + c.pooling +
                                              "_" + std::get<1>(param.param);
                           for (char& ch : name)
                             if (ch == '-') ch = '_';  // nomic-bert
                           return name;
                         });

}  // namespace
}  // namespace sinter
