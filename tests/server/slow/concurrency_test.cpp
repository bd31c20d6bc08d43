// Many clients at once: every answer complete and, with fixed seeds, identical to the same
// request run alone; a client that hangs up frees its sequence; a full queue answers 503.
#include <gtest/gtest.h>

#include <thread>

#include "server_process.h"

namespace sinter::testing {
namespace {

const char* kPrompts[] = {"Once upon a time",
                          "Lily and Tom went to the park",
                          "The cat",
                          "One day, a big dog",
                          "Once upon a time, there was a king",
                          "Ben liked to play",
                          "The sun was hot",
                          "Sara had a doll"};

struct Outcome {
  int status = -1;
  std::string text;
  Json final;
  size_t chunks = 0;
};

// Request i: a prompt, a seed, a length and an API of its own.
Json request_for(int i) {
  return Json{{"model", i % 4 == 3 ? "random-tiny" : "stories260K"},
              {"prompt", kPrompts[i % 8]},
              {"options", {{"temperature", 0.9}, {"seed", 1000 + i}, {"num_predict", 24 + (i % 5) * 8}}}};
}

Outcome stream_generate(const ServerProcess& server, const Json& request) {
  const StreamAnswer stream = http_stream(server, "/api/generate", request, false);
  Outcome outcome;
  outcome.status = stream.status;
  outcome.chunks = stream.objects.size();
  for (const Json& chunk : stream.objects) outcome.text += chunk.value("response", "");
  if (!stream.objects.empty()) outcome.final = stream.objects.back();
  return outcome;
}

TEST(Concurrency, SixteenStreamingClientsMatchTheSameRequestsAlone) {
  const std::string models = make_models_dir();
  auto server = ServerProcess::start({"--models", models, "--parallel", "4", "-t", "2"});
  ASSERT_NE(server, nullptr);
  constexpr int kClients = 16;
  std::vector<Outcome> alone(kClients), together(kClients);
  for (int i = 0; i < kClients; ++i) alone[static_cast<size_t>(i)] = stream_generate(*server, request_for(i));

  // Forward passes and generated tokens of stories260K, once `requests` requests have been counted.
  const auto counters = [&](int requests) {
    std::string text;
    EXPECT_TRUE(eventually([&] {
      text = http_get(*server, "/metrics").body;
      return metric_value(text, "sinter_http_requests_total{endpoint=\"/api/generate\",status=\"200\"}") ==
                 requests &&
             metric_value(text, "sinter_active_sequences{model=\"stories260K\"}") == 0;
    })) << text;
    return std::pair(metric_value(text, "sinter_forward_passes_total{model=\"stories260K\"}"),
                     metric_value(text, "sinter_generated_tokens_total{model=\"stories260K\"}"));
  };
  const auto before = counters(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back(
        [&, i] { together[static_cast<size_t>(i)] = stream_generate(*server, request_for(i)); });
  }
  for (auto& client : clients) client.join();
  // Continuous batching: sequences shared forward passes, so there were fewer passes than tokens.
  const auto after = counters(2 * kClients);
  EXPECT_LT(after.first - before.first, 0.75 * (after.second - before.second));

  for (int i = 0; i < kClients; ++i) {
    const Outcome& a = alone[static_cast<size_t>(i)];
    const Outcome& b = together[static_cast<size_t>(i)];
    const int n = request_for(i)["options"]["num_predict"];
    SCOPED_TRACE("request " + std::to_string(i));
    ASSERT_EQ(a.status, 200);
    ASSERT_EQ(b.status, 200);
    EXPECT_EQ(b.final["done"], true);
    EXPECT_EQ(b.final["eval_count"], a.final["eval_count"]);
    EXPECT_LE(b.final["eval_count"].get<int>(), n);
    if (b.final["done_reason"] == "length") {
      EXPECT_EQ(b.final["eval_count"], n);
    }
    EXPECT_EQ(b.final["done_reason"], a.final["done_reason"]);
    EXPECT_FALSE(b.text.empty());
    EXPECT_EQ(b.text, a.text);
    EXPECT_EQ(b.final["context"], a.final["context"]);
  }
  const std::string metrics = http_get(*server, "/metrics").body;
  EXPECT_EQ(metric_value(metrics, "sinter_parallel_sequences{model=\"stories260K\"}"), 4);
}

// The scheduler's figures for one model, read from /metrics.
struct ModelFigures {
  double active, queued, cancelled, generated;
};
ModelFigures figures(const ServerProcess& server, const std::string& model) {
  const std::string text = http_get(server, "/metrics").body;
  const std::string label = "{model=\"" + model + "\"}";
  return {metric_value(text, "sinter_active_sequences" + label),
          metric_value(text, "sinter_queued_requests" + label),
          metric_value(text, "sinter_requests_cancelled_total" + label),
          metric_value(text, "sinter_generated_tokens_total" + label)};
}

TEST(Concurrency, ClientThatHangsUpCancelsItsRequest) {
  const std::string models = make_models_dir();
  auto server = ServerProcess::start({"--models", models, "--parallel", "1", "-t", "1", "--ctx", "4096"});
  ASSERT_NE(server, nullptr);
  // Long requests (4000 tokens); the client hangs up after 5 chunks.
  const Json long_request{{"model", "stories260K"},
                          {"prompt", "Once upon a time"},
                          {"options", {{"num_predict", 4000}, {"seed", 1}}}};
  int seen = 0;
  const StreamAnswer first =
      http_stream(*server, "/api/generate", long_request, false, [&](const Json&) { return ++seen < 5; });
  EXPECT_TRUE(first.cancelled);
  EXPECT_EQ(first.objects.size(), 5u);
  ASSERT_TRUE(eventually([&] {
    const ModelFigures f = figures(*server, "stories260K");
    return f.cancelled == 1 && f.active == 0;
  })) << server->log();
  EXPECT_LT(figures(*server, "stories260K").generated, 4000);

  // OpenAI streams are cancelled the same way.
  int events = 0;
  const StreamAnswer sse = http_stream(
      *server, "/v1/completions",
      Json{{"model", "stories260K"}, {"prompt", "Once upon a time"}, {"max_tokens", 4000}, {"stream", true}},
      true, [&](const Json&) { return ++events < 3; });
  EXPECT_TRUE(sse.cancelled);
  ASSERT_TRUE(eventually([&] {
    const ModelFigures f = figures(*server, "stories260K");
    return f.cancelled == 2 && f.active == 0;
  }));
  EXPECT_LT(figures(*server, "stories260K").generated, 8000);

  // The sequence is free: the next request runs to its end.
  const Json after = http_post(*server, "/api/generate",
                               Json{{"model", "stories260K"},
                                    {"prompt", "The cat"},
                                    {"stream", false},
                                    {"options", {{"num_predict", 8}}}})
                         .json();
  EXPECT_EQ(after["eval_count"], 8);
}

TEST(Concurrency, RequestsBeyondTheQueueGet503WithRetryAfter) {
  const std::string models = make_models_dir();
  auto server = ServerProcess::start(
      {"--models", models, "--parallel", "1", "--max-queue", "1", "-t", "1", "--ctx", "4096"});
  ASSERT_NE(server, nullptr);
  // Load the model first so that every request below meets a running scheduler.
  http_post(*server, "/api/generate", Json{{"model", "stories260K"}});
  const Json holder{{"model", "stories260K"},
                    {"prompt", "Once upon a time"},
                    {"options", {{"num_predict", 4000}, {"seed", 3}}}};
  // One request runs and holds the only sequence; a second waits in the queue.
  std::atomic<bool> first_started{false};
  std::atomic<bool> release{false};
  std::thread running([&] {
    http_stream(*server, "/api/generate", holder, false, [&](const Json&) {
      first_started = true;
      return !release.load();
    });
  });
  ASSERT_TRUE(eventually([&] { return first_started.load(); }));
  std::atomic<int> queued_status{0};
  std::thread waiting([&] {
    const StreamAnswer answer =
        http_stream(*server, "/api/generate", holder, false, [&](const Json&) { return false; });
    queued_status = answer.status;
  });
  ASSERT_TRUE(eventually([&] { return figures(*server, "stories260K").queued == 1; })) << server->log();

  // The queue is full: a third request is refused at once, for every API.
  const HttpAnswer refused = http_post(*server, "/api/generate",
                                       Json{{"model", "stories260K"}, {"prompt", "Hi"}, {"stream", false}});
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(refused.header("Retry-After"), "1");
  EXPECT_NE(refused.json()["error"].get<std::string>().find("busy"), std::string::npos) << refused.body;
  const HttpAnswer refused_openai = http_post(
      *server, "/v1/chat/completions",
      Json{
          {"model", "stories260K"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"stream", true}});
  EXPECT_EQ(refused_openai.status, 503);
  EXPECT_EQ(refused_openai.header("Retry-After"), "1");
  EXPECT_EQ(refused_openai.json()["error"]["type"], "server_busy");
  // Other routes still answer.
  EXPECT_EQ(http_get(*server, "/health").status, 200);
  EXPECT_EQ(http_get(*server, "/api/tags").status, 200);

  release = true;
  running.join();
  waiting.join();
  EXPECT_EQ(queued_status.load(), 200);
  ASSERT_TRUE(eventually([&] {
    const ModelFigures f = figures(*server, "stories260K");
    return f.active == 0 && f.queued == 0;
  }));
  // Good requests all succeed afterwards.
  for (int i = 0; i < 3; ++i) {
    const HttpAnswer ok = http_post(*server, "/api/generate",
                                    Json{{"model", "stories260K"},
                                         {"prompt", "Hi"},
                                         {"stream", false},
                                         {"options", {{"num_predict", 4}}}});
    EXPECT_EQ(ok.status, 200);
  }
  // Counted: the load, the two long requests and the three above.
  std::string metrics;
  EXPECT_TRUE(eventually([&] {
    metrics = http_get(*server, "/metrics").body;
    return metric_value(metrics, "sinter_http_requests_total{endpoint=\"/api/generate\",status=\"200\"}") ==
           6;
  })) << metrics;
  EXPECT_EQ(metric_value(metrics, "sinter_http_requests_total{endpoint=\"/api/generate\",status=\"503\"}"),
            1);
  EXPECT_EQ(
      metric_value(metrics, "sinter_http_requests_total{endpoint=\"/v1/chat/completions\",status=\"503\"}"),
      1);
}

}  // namespace
}  // namespace sinter::testing
