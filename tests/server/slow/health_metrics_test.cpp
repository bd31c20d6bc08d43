// GET /health and GET /metrics (Prometheus text format).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "server_process.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

TEST(Health, ReadyWithOneModelAndErrorForABrokenOne) {
  auto server = ServerProcess::start({"-m", stories_model(), "-t", "1"});
  ASSERT_NE(server, nullptr);
  const HttpAnswer health = http_get(*server, "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.json(), (Json{{"status", "ok"}}));
  // -m loads the model at start.
  const Json ps = http_get(*server, "/api/ps").json();
  ASSERT_EQ(ps["models"].size(), 1u);
  EXPECT_EQ(ps["models"][0]["name"], "stories260K:latest");
  EXPECT_EQ(server->stop(), 0);

  const std::string broken = scratch_dir() + "/broken.gguf";
  std::ofstream(broken) << "GGUF but not really";
  auto bad = ServerProcess::start({"-m", broken}, false);
  ASSERT_NE(bad, nullptr);
  // The model loads in the background: /health says "loading" (503) until the load has failed.
  HttpAnswer failed;
  EXPECT_TRUE(eventually([&] { return (failed = http_get(*bad, "/health")).status != 503; }));
  EXPECT_EQ(failed.status, 500);
  EXPECT_EQ(failed.json()["status"], "error");
  EXPECT_NE(failed.json()["error"].get<std::string>().find("broken.gguf"), std::string::npos) << failed.body;
  // Requests name the problem too.
  const HttpAnswer request = http_post(*bad, "/api/generate", Json{{"model", "broken"}, {"prompt", "Hi"}});
  EXPECT_EQ(request.status, 500);
  EXPECT_NE(request.json()["error"].get<std::string>().find("broken.gguf"), std::string::npos)
      << request.body;
}

TEST(Health, CommandLineErrors) {
  const auto serve = [](const std::string& args) {
    return run_command(shell_quote(sinter_binary()) + " serve " + args + " --port 0");
  };
  EXPECT_NE(serve("").err.find("give either -m MODEL or --models DIR"), std::string::npos);
  EXPECT_NE(serve("-m /nonexistent.gguf").err.find("model file /nonexistent.gguf does not exist"),
            std::string::npos);
  EXPECT_NE(serve("--models /nonexistent").err.find("model folder /nonexistent does not exist"),
            std::string::npos);
  EXPECT_NE(serve("-m x --parallel 0").err.find("--parallel must be between 1 and 64"), std::string::npos);
  EXPECT_NE(serve("-m " + stories_model() + " --keep-alive soon").err.find("--keep-alive"),
            std::string::npos);
}

TEST(Metrics, PrometheusTextWithRequestsTokensLatenciesAndCache) {
  auto server = ServerProcess::start({"-m", stories_model(), "--parallel", "2", "-t", "1"});
  ASSERT_NE(server, nullptr);
  int64_t prompt_tokens = 0, generated = 0, inter_token = 0;
  for (int i = 0; i < 3; ++i) {
    // The same prompt three times: the second and third reuse the cached prefix.
    const Json answer = http_post(*server, "/api/generate",
                                  Json{{"model", "stories260K"},
                                       {"prompt", "Once upon a time there was a dog"},
                                       {"stream", false},
                                       {"options", {{"num_predict", 10 + i}}}})
                            .json();
    prompt_tokens += answer["prompt_eval_count"].get<int64_t>();
    generated += answer["eval_count"].get<int64_t>();
    inter_token += answer["eval_count"].get<int64_t>() - 1;
  }
  http_post(*server, "/api/generate", std::string("{bad"));
  http_get(*server, "/nowhere");

  HttpAnswer answer;
  ASSERT_TRUE(eventually([&] {
    answer = http_get(*server, "/metrics");
    // Counters are updated just after each answer is sent, on the server's threads: wait for all.
    return metric_value(answer.body, "sinter_requests_finished_total{model=\"stories260K\"}") == 3 &&
           metric_value(answer.body,
                        "sinter_http_requests_total{endpoint=\"/api/generate\",status=\"200\"}") == 3 &&
           metric_value(answer.body,
                        "sinter_http_requests_total{endpoint=\"/api/generate\",status=\"400\"}") == 1 &&
           metric_value(answer.body, "sinter_http_requests_total{endpoint=\"other\",status=\"404\"}") == 1 &&
           metric_value(answer.body, "sinter_active_sequences{model=\"stories260K\"}") == 0;
  })) << answer.body;
  ASSERT_EQ(answer.status, 200);
  EXPECT_EQ(answer.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& text = answer.body;
  const std::string model = "{model=\"stories260K\"}";
  EXPECT_EQ(metric_value(text, "sinter_http_requests_total{endpoint=\"/api/generate\",status=\"200\"}"), 3);
  EXPECT_EQ(metric_value(text, "sinter_http_requests_total{endpoint=\"/api/generate\",status=\"400\"}"), 1);
  EXPECT_EQ(metric_value(text, "sinter_http_requests_total{endpoint=\"other\",status=\"404\"}"), 1);
  EXPECT_EQ(metric_value(text, "sinter_prompt_tokens_total" + model), prompt_tokens);
  EXPECT_EQ(metric_value(text, "sinter_generated_tokens_total" + model), generated);
  EXPECT_EQ(metric_value(text, "sinter_requests_finished_total" + model), 3);
  EXPECT_EQ(metric_value(text, "sinter_requests_cancelled_total" + model), 0);
  EXPECT_EQ(metric_value(text, "sinter_prefix_cache_hits_total" + model), 2);
  EXPECT_GT(metric_value(text, "sinter_prompt_tokens_reused_total" + model), 0);
  EXPECT_EQ(metric_value(text, "sinter_model_loads_total" + model), 1);
  EXPECT_EQ(metric_value(text, "sinter_time_to_first_token_seconds_count" + model), 3);
  EXPECT_EQ(
      metric_value(text, "sinter_time_to_first_token_seconds_bucket{model=\"stories260K\",le=\"+Inf\"}"), 3);
  EXPECT_GT(metric_value(text, "sinter_time_to_first_token_seconds_sum" + model), 0);
  EXPECT_EQ(metric_value(text, "sinter_inter_token_latency_seconds_count" + model), inter_token);
  EXPECT_EQ(metric_value(text, "sinter_models_loaded"), 1);
  EXPECT_EQ(metric_value(text, "sinter_active_sequences" + model), 0);
  EXPECT_EQ(metric_value(text, "sinter_queued_requests" + model), 0);
  const double used = metric_value(text, "sinter_kv_cache_cells_used" + model);
  const double free = metric_value(text, "sinter_kv_cache_cells_free" + model);
  EXPECT_GT(used, 0);
  EXPECT_EQ(used + free, 2 * 2048);

  // Every sample belongs to a metric announced with # HELP and # TYPE; buckets rise.
  std::set<std::string> announced;
  std::istringstream lines(text);
  std::string last_series;
  double last_bucket = -1;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      announced.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) continue;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (family.size() > s.size() && family.compare(family.size() - s.size(), s.size(), s) == 0 &&
          announced.count(family.substr(0, family.size() - s.size()))) {
        family = family.substr(0, family.size() - s.size());
      }
    }
    EXPECT_TRUE(announced.count(family)) << line;
    const double value = std::stod(line.substr(line.rfind(' ') + 1));
    if (line.find("_bucket{") != std::string::npos) {
      const std::string series = line.substr(0, line.find("le=\""));
      if (series == last_series) {
        EXPECT_GE(value, last_bucket) << line;
      }
      last_series = series;
      last_bucket = value;
    }
  }
}

}  // namespace
}  // namespace sinter::testing
