// `sinter serve` serves every architecture through both APIs: a random-weight model of each
// (with stories260K's tokenizer) answers Ollama's /api/generate and OpenAI's /v1/completions
// with the same greedy tokens, streamed and not.
#include <gtest/gtest.h>

#include "model/registry.h"
#include "server/slow/server_process.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

std::string synth_model(const std::string& architecture) {
  const std::string path = scratch_dir() + "/" + architecture + ".gguf";
  const auto result =
      run_command(shell_quote(sinter_binary()) + " synth " + architecture + " " + shell_quote(path) +
                  " --dims tiny --seed 3 --vocab " + shell_quote(stories_model()));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return path;
}

class ServeArchitecture : public ::testing::TestWithParam<std::string> {};

TEST_P(ServeArchitecture, BothApisGenerateTheSameGreedyText) {
  auto server = ServerProcess::start({"-m", synth_model(GetParam()), "-t", "1", "--parallel", "2"});
  ASSERT_NE(server, nullptr);
  const Json options{{"num_predict", 12}, {"temperature", 0}};
  const HttpAnswer ollama = http_post(
      *server, "/api/generate",
      Json{{"model", GetParam()}, {"prompt", "Once upon a time"}, {"stream", false}, {"options", options}});
  ASSERT_EQ(ollama.status, 200) << ollama.body;
  EXPECT_EQ(ollama.json()["eval_count"], 12);
  const HttpAnswer openai = http_post(
      *server, "/v1/completions",
      Json{{"model", GetParam()}, {"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}});
  ASSERT_EQ(openai.status, 200) << openai.body;
  EXPECT_EQ(openai.json()["choices"][0]["text"], ollama.json()["response"]);
  const StreamAnswer streamed = http_stream(*server, "/v1/completions",
                                            Json{{"model", GetParam()},
                                                 {"prompt", "Once upon a time"},
                                                 {"max_tokens", 12},
                                                 {"temperature", 0},
                                                 {"stream", true}},
                                            /*sse=*/true);
  ASSERT_EQ(streamed.status, 200) << streamed.error_body;
  std::string text;
  for (const Json& chunk : streamed.objects) {
    if (chunk.contains("choices") && !chunk["choices"].empty()) text += chunk["choices"][0].value("text", "");
  }
  EXPECT_EQ(text, ollama.json()["response"].get<std::string>());
}

std::vector<std::string> architectures() {
  std::vector<std::string> out;
  for (const std::string& name : architecture_names()) {
    // Encoders (embedding models) generate nothing: runtime/embedding_test.cpp tests them.
    if (!name.starts_with("test_") && !find_architecture(name)->encoder) out.push_back(name);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registered, ServeArchitecture, ::testing::ValuesIn(architectures()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace sinter::testing
