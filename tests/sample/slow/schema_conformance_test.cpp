// Schema conformance (issue 27): for every schema in tests/sample/data/schemas, the converted
// grammar constrains a real model (stories260K), and every output parses and validates against
// the schema with the reference validator (Debian's python3-jsonschema, validate_json.py).
//
// Two generators: llama.cpp's grammar engine through the oracle (greedy, one output: the
// converter checked on its own), and sinter's (`sinter run --grammar-file F --temp 0.8 --seed S`
// for several seeds: the converter and sinter's grammar sampler together).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sample/json_schema_grammar.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxTokens = 400;  // every corpus schema bounds its strings and arrays to finish sooner
constexpr const char* kPrompt = "Once upon a time";
constexpr const char* kValidatorPython = "/usr/bin/python3";  // Debian's, with python3-jsonschema

struct Generated {
  bool ok = false;
  std::string text;   // the model's output under the grammar
  std::string error;  // why there is no text
};

std::string sinter_binary() {
  if (const char* env = std::getenv("SINTER_BIN"); env != nullptr && *env != '\0') return env;
  return testing::sinter_binary();
}

Generated detokenize(const std::vector<int>& ids) {
  const auto result = testing::run_command(testing::shell_quote(sinter_binary()) + " detokenize " +
                                           testing::shell_quote(testing::stories_model()) + " " +
                                           testing::shell_quote(testing::join_ids(ids)));
  if (result.exit_status != 0) return {false, "", "sinter detokenize failed: " + result.err};
  return {true, result.out, ""};
}

// llama.cpp's grammar engine, greedy: `seed` is unused. Retries as the support's oracle calls do
// (the launcher can race with itself when tests run in parallel).
Generated generate_with_oracle(const std::string& grammar_file, uint64_t /*seed*/) {
  const std::string command =
      "ORACLE_THREADS=1 " + testing::shell_quote(testing::shared_dir() + "/oracle/run") + " grammar " +
      testing::shell_quote(testing::stories_model()) + " " + testing::shell_quote(grammar_file) + " " +
      std::to_string(kMaxTokens) + " " + testing::shell_quote(kPrompt);
  std::string failure;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto result = testing::run_command(command);
    if (result.exit_status != 0) {
      failure = "oracle failed: " + result.err;
      continue;
    }
    try {
      return detokenize(nlohmann::json::parse(result.out).get<std::vector<int>>());
    } catch (const std::exception& e) {
      failure = std::string("oracle printed non-JSON: ") + e.what();
    }
  }
  return {false, "", failure};
}

// sinter's own grammar sampler, sampling (temperature 0.8) with `seed`.
Generated generate_with_sinter(const std::string& grammar_file, uint64_t seed) {
  const auto result = testing::run_command(
      testing::shell_quote(sinter_binary()) + " run -m " + testing::shell_quote(testing::stories_model()) +
      " --grammar-file " + testing::shell_quote(grammar_file) + " --temp 0.8 --seed " + std::to_string(seed) +
      " -n " + std::to_string(kMaxTokens) + " -p " + testing::shell_quote(kPrompt));
  if (result.exit_status != 0) return {false, "", "sinter run failed: " + result.err};
  return {true, result.out, ""};
}

using Generator = Generated (*)(const std::string& grammar_file, uint64_t seed);
struct GeneratorRun {
  const char* who;
  Generator generate;
  uint64_t seed;
};
const GeneratorRun kRuns[] = {{"oracle", generate_with_oracle, 0},
                     {"sinter", generate_with_sinter, 1},
                     {"sinter", generate_with_sinter, 2},
                     {"sinter", generate_with_sinter, 3}};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> corpus() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(testing::source_dir() + "/tests/sample/data/schemas")) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class SchemaConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(SchemaConformance, OutputValidatesAgainstTheSchema) {
  if (!fs::exists(sinter_binary())) SINTER_SKIP_WITHOUT_REFERENCE("no sinter binary at " + sinter_binary());
  if (testing::run_command(std::string(kValidatorPython) + " -c 'import jsonschema'").exit_status != 0)
    SINTER_SKIP_WITHOUT_REFERENCE("python3-jsonschema is not installed (scripts/install-deps.sh)");
  const std::string schema_path =
      testing::source_dir() + "/tests/sample/data/schemas/" + GetParam() + ".json";
  auto grammar = json_schema_text_to_grammar(read_file(schema_path));
  ASSERT_TRUE(grammar.ok()) << grammar.error().message();
  const std::string dir = testing::scratch_dir();
  const std::string grammar_file = dir + "/schema.gbnf";
  std::ofstream(grammar_file, std::ios::binary) << *grammar;
  for (const GeneratorRun& run : kRuns) {
    const uint64_t seed = run.seed;
    const Generated generated = run.generate(grammar_file, seed);
    ASSERT_TRUE(generated.ok) << run.who << ": " << generated.error;
    const std::string text_file = dir + "/output-" + run.who + "-" + std::to_string(seed) + ".txt";
    std::ofstream(text_file, std::ios::binary) << generated.text;
    const auto verdict =
        testing::run_command(std::string(kValidatorPython) + " " +
                             testing::shell_quote(testing::source_dir() + "/tests/sample/validate_json.py") +
                             " " + testing::shell_quote(schema_path) + " " + testing::shell_quote(text_file));
    EXPECT_EQ(verdict.exit_status, 0)
        << run.who << " seed " << seed << ": " << verdict.out << verdict.err << "\ngrammar:\n"
        << *grammar;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, SchemaConformance, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name;
                           for (char c : param_info.param)
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace sinter
