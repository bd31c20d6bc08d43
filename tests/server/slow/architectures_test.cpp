// `sinter serve` serves every architecture through both APIs: a random-weight model of each
// (with stories260K's tokenizer) answers Ollama's /api/generate and OpenAI's /v1/completions
// with the same greedy tokens, streamed and not.
#include <gtest/gtest.h>

#include <thread>

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

// Four requests at once (--parallel 4), two through each API, each answer equal to the same
// request alone: sequences of different lengths share the passes of every kind of model
// (attention, recurrent, hybrid).
TEST_P(ServeArchitecture, ConcurrentRequestsEqualTheirSequentialRuns) {
  auto server = ServerProcess::start({"-m", synth_model(GetParam()), "-t", "1", "--parallel", "4"});
  ASSERT_NE(server, nullptr);
  const std::vector<std::string> prompts = {"Once upon a time", "The cat", "A little girl named Lily went",
                                            "He"};
  const auto ask = [&](size_t i) {
    const int tokens = 6 + static_cast<int>(i) * 3;
    if (i % 2 == 0) {
      const HttpAnswer a = http_post(*server, "/api/generate",
                                     Json{{"model", GetParam()},
                                          {"prompt", prompts[i]},
                                          {"stream", false},
                                          {"options", {{"num_predict", tokens}, {"temperature", 0}}}});
      return a.status == 200 ? a.json()["response"].get<std::string>() : "status " + std::to_string(a.status);
    }
    const HttpAnswer a = http_post(
        *server, "/v1/completions",
        Json{{"model", GetParam()}, {"prompt", prompts[i]}, {"max_tokens", tokens}, {"temperature", 0}});
    return a.status == 200 ? a.json()["choices"][0]["text"].get<std::string>()
                           : "status " + std::to_string(a.status);
  };
  std::vector<std::string> alone(prompts.size()), together(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) alone[i] = ask(i);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i) clients.emplace_back([&, i] { together[i] = ask(i); });
  for (auto& client : clients) client.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(together[i], alone[i]) << prompts[i];
    EXPECT_EQ(alone[i].rfind("status ", 0), std::string::npos) << alone[i];
  }
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
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace sinter::testing
