// The OpenAI-style API of a real `sinter serve` process, field by field.
#include <gtest/gtest.h>

#include <regex>

#include "server_process.h"

namespace sinter::testing {
namespace {

class OpenAiApi : public ModelsServerTest {};

int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void expect_header(const Json& body, const std::string& object, const std::string& id_prefix) {
  EXPECT_EQ(body["object"], object);
  EXPECT_EQ(body["id"].get<std::string>().rfind(id_prefix, 0), 0u) << body["id"];
  EXPECT_GT(body["id"].get<std::string>().size(), id_prefix.size() + 8);
  EXPECT_EQ(body["model"], "stories260K");
  EXPECT_LE(std::abs(body["created"].get<int64_t>() - now_seconds()), 60);
  EXPECT_EQ(body["system_fingerprint"].get<std::string>().rfind("sinter-", 0), 0u);
}

const Json kMessages = Json::array({{{"role", "system"}, {"content", "You tell stories."}},
                                    {{"role", "user"}, {"content", "Tell me about a cat."}}});

TEST_F(OpenAiApi, ChatCompletionNonStreaming) {
  const HttpAnswer answer = http_post(
      *server_, "/v1/chat/completions",
      Json{{"model", "stories260K"}, {"messages", kMessages}, {"max_tokens", 12}, {"temperature", 0}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Json body = answer.json();
  expect_header(body, "chat.completion", "chatcmpl-");
  ASSERT_EQ(body["choices"].size(), 1u);
  const Json& choice = body["choices"][0];
  EXPECT_EQ(choice["index"], 0);
  EXPECT_EQ(choice["message"]["role"], "assistant");
  EXPECT_FALSE(choice["message"]["content"].get<std::string>().empty());
  EXPECT_TRUE(choice["logprobs"].is_null());
  EXPECT_EQ(choice["finish_reason"], "length");
  // The prompt is the ChatML rendering (stories260K has no template).
  const std::string chatml =
      "<|im_start|>system\nYou tell stories.<|im_end|>\n<|im_start|>user\nTell me about a cat.<|im_end|>\n"
      "<|im_start|>assistant\n";
  const Json tokens =
      http_post(*server_, "/api/tokenize", Json{{"model", "stories260K"}, {"content", chatml}}).json();
  EXPECT_EQ(body["usage"]["prompt_tokens"], tokens["tokens"].size());
  EXPECT_EQ(body["usage"]["completion_tokens"], 12);
  EXPECT_EQ(body["usage"]["total_tokens"], tokens["tokens"].size() + 12);
  // Same text as Ollama's /api/chat greedy.
  const Json ollama = http_post(*server_, "/api/chat",
                                Json{{"model", "stories260K"},
                                     {"messages", kMessages},
                                     {"stream", false},
                                     {"options", {{"temperature", 0}, {"num_predict", 12}}}})
                          .json();
  EXPECT_EQ(choice["message"]["content"], ollama["message"]["content"]);
  // The same messages again: the prompt comes from the prefix cache but for the token whose
  // logits start the reply.
  const Json again = http_post(*server_, "/v1/chat/completions",
                               Json{{"model", "stories260K"}, {"messages", kMessages}, {"max_tokens", 1}})
                         .json();
  EXPECT_EQ(again["usage"]["prompt_tokens_details"]["cached_tokens"], tokens["tokens"].size() - 1);
}

TEST_F(OpenAiApi, ChatCompletionStreamsServerSentEvents) {
  const Json request{{"model", "stories260K"},
                     {"messages", kMessages},
                     {"max_tokens", 20},
                     {"temperature", 0.8},
                     {"seed", 7},
                     {"stream", true}};
  const StreamAnswer stream = http_stream(*server_, "/v1/chat/completions", request, true);
  ASSERT_EQ(stream.status, 200) << stream.error_body;
  EXPECT_EQ(stream.content_type, "text/event-stream");
  EXPECT_TRUE(stream.done_marker);
  ASSERT_GE(stream.objects.size(), 3u);
  const std::string id = stream.objects[0]["id"];
  // First the role, then content deltas, then an empty delta with the finish reason.
  EXPECT_EQ(stream.objects[0]["choices"][0]["delta"], (Json{{"role", "assistant"}, {"content", ""}}));
  std::string text;
  for (size_t i = 0; i < stream.objects.size(); ++i) {
    const Json& chunk = stream.objects[i];
    expect_header(chunk, "chat.completion.chunk", "chatcmpl-");
    EXPECT_EQ(chunk["id"], id);
    EXPECT_FALSE(chunk.contains("usage"));
    ASSERT_EQ(chunk["choices"].size(), 1u);
    const Json& choice = chunk["choices"][0];
    EXPECT_EQ(choice["index"], 0);
    if (i + 1 < stream.objects.size()) {
      EXPECT_TRUE(choice["finish_reason"].is_null());
      if (i > 0) text += choice["delta"]["content"].get<std::string>();
    } else {
      EXPECT_EQ(choice["finish_reason"], "length");
      EXPECT_EQ(choice["delta"], Json::object());
    }
  }
  // The same seed without streaming gives the same text.
  Json whole_request = request;
  whole_request["stream"] = false;
  const Json whole = http_post(*server_, "/v1/chat/completions", whole_request).json();
  EXPECT_EQ(whole["choices"][0]["message"]["content"], text);

  // include_usage adds a last chunk with usage and no choices.
  whole_request["stream"] = true;
  whole_request["stream_options"] = {{"include_usage", true}};
  const StreamAnswer with_usage = http_stream(*server_, "/v1/chat/completions", whole_request, true);
  ASSERT_GE(with_usage.objects.size(), 2u);
  const Json& usage_chunk = with_usage.objects.back();
  EXPECT_EQ(usage_chunk["choices"], Json::array());
  EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], 20);
  EXPECT_EQ(usage_chunk["usage"]["prompt_tokens"], whole["usage"]["prompt_tokens"]);
  EXPECT_EQ(with_usage.objects[with_usage.objects.size() - 2]["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(with_usage.done_marker);
}

TEST_F(OpenAiApi, CompletionsStreamingAndNot) {
  const Json request{
      {"model", "stories260K"}, {"prompt", "Once upon a time"}, {"max_tokens", 24}, {"temperature", 0}};
  const Json whole = http_post(*server_, "/v1/completions", request).json();
  expect_header(whole, "text_completion", "cmpl-");
  ASSERT_EQ(whole["choices"].size(), 1u);
  EXPECT_EQ(whole["choices"][0]["index"], 0);
  EXPECT_TRUE(whole["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(whole["usage"]["completion_tokens"], 24);
  // Greedy: the same text as Ollama's raw /api/generate.
  const Json ollama = http_post(*server_, "/api/generate",
                                Json{{"model", "stories260K"},
                                     {"prompt", "Once upon a time"},
                                     {"raw", true},
                                     {"stream", false},
                                     {"options", {{"temperature", 0}, {"num_predict", 24}}}})
                          .json();
  EXPECT_EQ(whole["choices"][0]["text"], ollama["response"]);
  EXPECT_EQ(whole["usage"]["prompt_tokens"], ollama["prompt_eval_count"]);

  Json streamed_request = request;
  streamed_request["stream"] = true;
  const StreamAnswer stream = http_stream(*server_, "/v1/completions", streamed_request, true);
  ASSERT_EQ(stream.status, 200);
  EXPECT_TRUE(stream.done_marker);
  std::string text;
  for (size_t i = 0; i < stream.objects.size(); ++i) {
    const Json& chunk = stream.objects[i];
    expect_header(chunk, "text_completion", "cmpl-");
    text += chunk["choices"][0]["text"].get<std::string>();
    if (i + 1 < stream.objects.size()) {
      EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
    }
  }
  EXPECT_EQ(stream.objects.back()["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(text, whole["choices"][0]["text"]);

  // A prompt of token ids gives the same answer as its text.
  const Json ids =
      http_post(*server_, "/api/tokenize", Json{{"model", "stories260K"}, {"content", "Once upon a time"}})
          .json();
  Json by_ids = request;
  by_ids["prompt"] = ids["tokens"];
  EXPECT_EQ(http_post(*server_, "/v1/completions", by_ids).json()["choices"][0]["text"],
            whole["choices"][0]["text"]);
}

TEST_F(OpenAiApi, StopSeedAndLogitBias) {
  const Json base{
      {"model", "stories260K"}, {"prompt", "Once upon a time"}, {"max_tokens", 40}, {"temperature", 0}};
  const std::string text = http_post(*server_, "/v1/completions", base).json()["choices"][0]["text"];
  ASSERT_GT(text.size(), 20u);
  // A stop string ends the text before it, with finish_reason "stop".
  Json stop = base;
  stop["stop"] = text.substr(12, 3);
  const Json stopped = http_post(*server_, "/v1/completions", stop).json();
  EXPECT_EQ(stopped["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(stopped["choices"][0]["text"], text.substr(0, text.find(text.substr(12, 3))));
  stop["stop"] = Json::array({"zzzz", text.substr(5, 4)});
  EXPECT_EQ(http_post(*server_, "/v1/completions", stop).json()["choices"][0]["text"],
            text.substr(0, text.find(text.substr(5, 4))));

  // Fixed seeds repeat; different seeds (almost surely) differ.
  Json seeded{{"model", "stories260K"},
              {"prompt", "Once upon a time"},
              {"max_tokens", 40},
              {"temperature", 1.0},
              {"seed", 1234}};
  const Json a = http_post(*server_, "/v1/completions", seeded).json();
  const Json b = http_post(*server_, "/v1/completions", seeded).json();
  EXPECT_EQ(a["choices"][0]["text"], b["choices"][0]["text"]);
  seeded["seed"] = 4321;
  EXPECT_NE(http_post(*server_, "/v1/completions", seeded).json()["choices"][0]["text"],
            a["choices"][0]["text"]);

  // logit_bias +100 on one token makes greedy pick it every time; -100 bans the greedy choice.
  const Json piece = http_post(*server_, "/api/tokenize",
                               Json{{"model", "stories260K"}, {"content", "day"}, {"add_special", false}})
                         .json();
  ASSERT_EQ(piece["tokens"].size(), 1u);
  const int day = piece["tokens"][0];  // "▁day" (SentencePiece puts the space in front)
  Json forced = base;
  forced["max_tokens"] = 3;
  forced["logit_bias"] = {{std::to_string(day), 100}};
  EXPECT_EQ(http_post(*server_, "/v1/completions", forced).json()["choices"][0]["text"], " day day day");
  const Json first = http_post(*server_, "/api/generate",
                               Json{{"model", "stories260K"},
                                    {"prompt", "Once upon a time"},
                                    {"raw", true},
                                    {"stream", false},
                                    {"options", {{"temperature", 0}, {"num_predict", 1}}}})
                         .json();
  const int greedy = first["context"].back();
  Json banned = base;
  banned["max_tokens"] = 1;
  banned["logit_bias"] = {{std::to_string(greedy), -100}};
  const Json other = http_post(*server_, "/v1/completions", banned).json();
  EXPECT_NE(other["choices"][0]["text"], first["response"]);
}

TEST_F(OpenAiApi, Models) {
  const Json list = http_get(*server_, "/v1/models").json();
  EXPECT_EQ(list["object"], "list");
  ASSERT_EQ(list["data"].size(), 2u);
  EXPECT_EQ(list["data"][0]["id"], "random-tiny:latest");
  EXPECT_EQ(list["data"][1]["id"], "stories260K:latest");
  for (const Json& model : list["data"]) {
    EXPECT_EQ(model["object"], "model");
    EXPECT_EQ(model["owned_by"], "sinter");
    EXPECT_GT(model["created"].get<int64_t>(), 1600000000);
  }
  const Json one = http_get(*server_, "/v1/models/stories260K").json();
  EXPECT_EQ(one, list["data"][1]);
  EXPECT_EQ(http_get(*server_, "/v1/models/stories260K:latest").json(), one);
  const HttpAnswer missing = http_get(*server_, "/v1/models/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.json()["error"]["message"], "model 'nope' not found");
  EXPECT_EQ(missing.json()["error"]["type"], "not_found_error");
}

}  // namespace
}  // namespace sinter::testing
