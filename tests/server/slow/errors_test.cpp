// Bad requests get a 4xx/5xx with {"error": "..."} naming the problem, and the server keeps
// serving everyone else.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "server_process.h"

namespace sinter::testing {
namespace {

class Errors : public ::testing::Test {
 protected:
  void SetUp() override {
    models_ = make_models_dir();
    server_ =
        ServerProcess::start({"--models", models_, "--parallel", "2", "-t", "1", "--max-body", "65536"});
    ASSERT_NE(server_, nullptr);
  }
  std::string models_;
  std::unique_ptr<ServerProcess> server_;
};

// The answer has `status` and an error message containing `text`.
void expect_error(const HttpAnswer& answer, int status, const std::string& text, bool openai = false) {
  EXPECT_EQ(answer.status, status) << answer.body;
  const Json body = Json::parse(answer.body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << answer.body;
  const Json& error = openai ? body["error"]["message"] : body["error"];
  ASSERT_TRUE(error.is_string()) << answer.body;
  EXPECT_NE(error.get<std::string>().find(text), std::string::npos)
      << "'" << text << "' not in " << answer.body;
}

HttpAnswer generate(const ServerProcess& server, const Json& fields) {
  Json body{{"model", "stories260K"}, {"prompt", "Once upon a time"}, {"stream", false}};
  for (const auto& [key, value] : fields.items()) body[key] = value;
  return http_post(server, "/api/generate", body);
}

HttpAnswer openai(const ServerProcess& server, const Json& fields) {
  Json body{
      {"model", "stories260K"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}};
  for (const auto& [key, value] : fields.items()) body[key] = value;
  return http_post(server, "/v1/chat/completions", body);
}

TEST_F(Errors, MalformedBodiesAndWrongTypes) {
  expect_error(http_post(*server_, "/api/generate", std::string("{\"model\": \"stories260K\", ")), 400,
               "the request body is not valid JSON");
  expect_error(http_post(*server_, "/api/chat", std::string("[1, 2]")), 400,
               "must be a JSON object, got array");
  expect_error(http_post(*server_, "/api/generate", std::string("")), 400, "the request body is empty");
  expect_error(http_post(*server_, "/api/generate", std::string("{\"model\": \"a\xff\"}")), 400,
               "not valid JSON");
  expect_error(http_post(*server_, "/v1/completions", std::string("nonsense")), 400, "not valid JSON", true);
  expect_error(generate(*server_, {{"model", 5}}), 400, "model must be a string, got number 5");
  expect_error(generate(*server_, {{"model", ""}}), 400, "model is required");
  expect_error(generate(*server_, {{"prompt", Json::array({1})}}), 400, "prompt must be a string, got array");
  expect_error(generate(*server_, {{"stream", "yes"}}), 400,
               "stream must be true or false, got string \"yes\"");
  expect_error(generate(*server_, {{"options", {{"temperature", "hot"}}}}), 400,
               "options.temperature must be a number, got string \"hot\"");
  expect_error(generate(*server_, {{"options", {{"top_k", 1.5}}}}), 400,
               "options.top_k must be an integer, got number 1.5");
  expect_error(generate(*server_, {{"options", {{"stop", {"a", 3}}}}}), 400,
               "options.stop[1] must be a string");
  expect_error(generate(*server_, {{"options", "fast"}}), 400, "options must be an object");
  expect_error(generate(*server_, {{"context", {1, "two"}}}), 400, "context[1] must be a token id");
  expect_error(generate(*server_, {{"context", {1, 100000}}}), 400,
               "context[1]: token 100000 is outside the vocabulary");
  expect_error(http_post(*server_, "/api/chat", Json{{"model", "stories260K"}, {"messages", "hi"}}), 400,
               "messages must be an array");
  expect_error(http_post(*server_, "/api/chat", Json{{"model", "stories260K"}, {"messages", {"hi"}}}), 400,
               "messages[0] must be an object");
  expect_error(
      http_post(*server_, "/api/chat", Json{{"model", "stories260K"}, {"messages", {{{"content", "hi"}}}}}),
      400, "messages[0].role is required");
  expect_error(http_post(*server_, "/api/chat",
                         Json{{"model", "stories260K"}, {"messages", {{{"role", "user"}, {"content", 7}}}}}),
               400, "messages[0].content must be a string or an array of text parts");
  expect_error(openai(*server_, {{"messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}}}}}}}}),
               400, "only text parts are supported", true);
  expect_error(openai(*server_, {{"max_tokens", "many"}}), 400, "max_tokens must be an integer", true);
  expect_error(openai(*server_, {{"messages", Json::array()}}), 400, "messages is required", true);
  expect_error(http_post(*server_, "/v1/completions", Json{{"model", "stories260K"}}), 400,
               "prompt is required", true);
  expect_error(http_post(*server_, "/v1/completions", Json{{"model", "stories260K"}, {"prompt", {"a", "b"}}}),
               400, "only one prompt per request", true);
}

TEST_F(Errors, InvalidOptionValues) {
  expect_error(generate(*server_, {{"options", {{"temperature", -1}}}}), 400,
               "options.temperature must be >= 0");
  expect_error(generate(*server_, {{"options", {{"top_p", 1.5}}}}), 400, "options.top_p must be in [0, 1]");
  expect_error(generate(*server_, {{"options", {{"min_p", -0.1}}}}), 400, "options.min_p must be in [0, 1]");
  expect_error(generate(*server_, {{"options", {{"top_k", -3}}}}), 400,
               "options.top_k must be between 0 and");
  expect_error(generate(*server_, {{"options", {{"num_predict", 0}}}}), 400,
               "options.num_predict must be positive");
  expect_error(generate(*server_, {{"options", {{"num_ctx", 2}}}}), 400,
               "options.num_ctx must be between 16");
  expect_error(generate(*server_, {{"options", {{"repeat_penalty", 0}}}}), 400,
               "options.repeat_penalty must be > 0");
  expect_error(generate(*server_, {{"options", {{"repeat_last_n", -5}}}}), 400,
               "options.repeat_last_n must be between -1");
  expect_error(generate(*server_, {{"options", {{"stop", {""}}}}}), 400, "options.stop[0] is empty");
  expect_error(generate(*server_, {{"keep_alive", "5 minutes"}}), 400,
               "keep_alive: '5 minutes' is not a duration");
  expect_error(generate(*server_, {{"keep_alive", true}}), 400, "keep_alive must be a duration string");
  expect_error(openai(*server_, {{"temperature", 3}}), 400, "temperature must be in [0, 2], got 3", true);
  expect_error(openai(*server_, {{"presence_penalty", -2.5}}), 400, "presence_penalty must be in [-2, 2]",
               true);
  expect_error(openai(*server_, {{"n", 3}}), 400, "(--parallel)", true);
  expect_error(openai(*server_, {{"max_tokens", 0}}), 400, "max_tokens must be between 1 and", true);
  expect_error(openai(*server_, {{"logit_bias", {{"abc", 1}}}}), 400,
               "logit_bias: key 'abc' is not a token id", true);
  expect_error(openai(*server_, {{"logit_bias", {{"5", 500}}}}), 400,
               "logit_bias[\"5\"] must be a number in [-100, 100]", true);
  expect_error(openai(*server_, {{"logit_bias", {{"99999", 1}}}}), 400,
               "token 99999 is outside the vocabulary", true);
  expect_error(openai(*server_, {{"top_logprobs", 2}}), 400, "top_logprobs needs logprobs: true", true);
  expect_error(openai(*server_, {{"tools", {{{"type", "function"}}}}}), 400,
               "tools[0].function is required (an object)", true);
  expect_error(openai(*server_, {{"tool_choice", "required"}}), 400,
               "tool_choice is \"required\" but the request gives no tools", true);
  expect_error(openai(*server_, {{"functions", {{{"name", "f"}}}}}), 400, "functions are not supported",
               true);
  expect_error(openai(*server_, {{"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}}}},
                                 {"response_format", {{"type", "json_object"}}}}),
               400, "tools cannot be combined with grammar or response_format", true);
  expect_error(generate(*server_, {{"think", "max"}}), 400, "think must be true, false");
  expect_error(generate(*server_, {{"think", true}}), 400, "\"stories260K\" does not support thinking");
  expect_error(generate(*server_, {{"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}}}}}), 400,
               "tools are supported on /api/chat only");
  expect_error(openai(*server_, {{"response_format", {{"type", "xml"}}}}), 400,
               "response_format.type 'xml' is not supported (text, json_object, json_schema)", true);
  expect_error(generate(*server_, {{"format", "yaml"}}), 400,
               "format must be \"json\" or a JSON schema object");
  expect_error(generate(*server_, {{"images", {"aGk="}}}), 400, "images are not supported");
  expect_error(generate(*server_, {{"template", "{% if %}"}}), 400, "template (a Jinja chat template)");
  expect_error(generate(*server_, {{"template", "{{ .Prompt "}}), 400, "template (a Go template)");
  expect_error(generate(*server_, {{"options", {{"mirostat", 1}}}}), 400,
               "options.mirostat is not supported");
}

TEST_F(Errors, UnknownModelsRoutesAndLimits) {
  expect_error(generate(*server_, {{"model", "nope"}}), 404, "model 'nope' not found");
  expect_error(http_post(*server_, "/api/chat",
                         Json{{"model", "nope:7b"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}}),
               404, "model 'nope:7b' not found");
  expect_error(http_post(*server_, "/api/show", Json{{"model", "nope"}}), 404, "model 'nope' not found");
  expect_error(openai(*server_, {{"model", "gpt-4"}}), 404, "model 'gpt-4' not found", true);
  EXPECT_EQ(openai(*server_, {{"model", "gpt-4"}}).json()["error"]["type"], "not_found_error");

  expect_error(http_get(*server_, "/api/nothing"), 404, "no route for GET /api/nothing");
  expect_error(http_get(*server_, "/api/generate"), 405, "GET is not allowed on /api/generate (use POST)");
  expect_error(http_get(*server_, "/v1/nothing"), 404, "no route for GET /v1/nothing", true);
  expect_error(http_post(*server_, "/api/pull", Json{{"model", "llama3"}}), 501,
               "/api/pull is not supported");

  // Over the body limit (65536 bytes here).
  const std::string big(70000, 'a');
  expect_error(generate(*server_, {{"prompt", big}}), 413,
               "the request body is larger than the limit of 65536 bytes");

  // A prompt longer than the context (2048 tokens for stories260K) under the error policy.
  std::string long_prompt;
  for (int i = 0; i < 700; ++i) long_prompt += "the cat sat. ";
  expect_error(generate(*server_, {{"prompt", long_prompt}}), 400, "but the context holds 2048");
  expect_error(
      http_post(*server_, "/v1/completions", Json{{"model", "stories260K"}, {"prompt", long_prompt}}), 400,
      "but the context holds 2048", true);

  // After all that, the server still answers.
  const HttpAnswer good = generate(*server_, {{"options", {{"num_predict", 4}}}});
  EXPECT_EQ(good.status, 200);
  EXPECT_EQ(good.json()["eval_count"], 4);
}

// Bytes that are not HTTP at all.
std::string send_raw(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    (void)!write(fd, bytes.data(), bytes.size());
    shutdown(fd, SHUT_WR);
    char buffer[4096];
    timeval timeout{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) reply.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

TEST_F(Errors, FloodOfMalformedRequestsInterleavedWithGoodOnes) {
  // The answers good requests must give (greedy, so the same every time).
  const Json good_generate{{"model", "stories260K"},
                           {"prompt", "Once upon a time"},
                           {"stream", false},
                           {"options", {{"temperature", 0}, {"num_predict", 16}}}};
  const std::string expected = http_post(*server_, "/api/generate", good_generate).json()["response"];
  const Json good_chat{{"model", "random-tiny"},
                       {"messages", {{{"role", "user"}, {"content", "Hello"}}}},
                       {"max_tokens", 16},
                       {"temperature", 0}};
  const std::string expected_chat =
      http_post(*server_, "/v1/chat/completions", good_chat).json()["choices"][0]["message"]["content"];

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"/api/generate", "{"},
      {"/api/generate", "{\"model\": 1}"},
      {"/api/generate", "{\"model\": \"stories260K\", \"prompt\": \"x\", \"options\": {\"top_p\": 7}}"},
      {"/api/chat", "{\"model\": \"stories260K\", \"messages\": [{}]}"},
      {"/api/generate", "{\"model\": \"missing\", \"prompt\": \"x\"}"},
      {"/v1/chat/completions", "{\"model\": \"stories260K\", \"messages\": 3}"},
      {"/v1/completions", "{\"model\": \"stories260K\", \"prompt\": \"x\", \"max_tokens\": -1}"},
      {"/api/generate", std::string(70000, '{')},
      {"/api/show", "null"},
      {"/api/generate", "\xff\xfe\x00\x01"},
  };
  std::atomic<int> good_ok{0}, good_total{0}, bad_ok{0}, bad_total{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 12; ++i) {
        const auto& [path, body] = bad[static_cast<size_t>(t * 12 + i) % bad.size()];
        const HttpAnswer answer = http_post(*server_, path, body);
        ++bad_total;
        const Json error = Json::parse(answer.body, nullptr, false);
        if (answer.status >= 400 && answer.status < 500 && error.is_object() && error.contains("error"))
          ++bad_ok;
        if (i % 3 == 0) {
          ++good_total;
          if (t % 2 == 0) {
            const StreamAnswer stream =
                http_stream(*server_, "/api/generate",
                            Json{{"model", "stories260K"},
                                 {"prompt", "Once upon a time"},
                                 {"options", {{"temperature", 0}, {"num_predict", 16}}}},
                            false);
            std::string text;
            for (const Json& chunk : stream.objects) text += chunk.value("response", "");
            if (stream.status == 200 && text == expected && stream.objects.back()["done"] == true) ++good_ok;
          } else {
            const HttpAnswer chat = http_post(*server_, "/v1/chat/completions", good_chat);
            if (chat.status == 200 && chat.json()["choices"][0]["message"]["content"] == expected_chat)
              ++good_ok;
          }
        }
        if (i % 4 == 1) {
          const std::string reply = send_raw(server_->port(), "\x16\x03\x01 this is not HTTP\r\n\r\n");
          (void)reply;  // httplib answers 400 or closes; either way the server goes on
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(bad_ok.load(), bad_total.load());
  EXPECT_EQ(good_ok.load(), good_total.load());
  EXPECT_EQ(good_total.load(), 24);
  EXPECT_TRUE(server_->running());
  EXPECT_EQ(http_post(*server_, "/api/generate", good_generate).json()["response"], expected);
}

}  // namespace
}  // namespace sinter::testing
