// A bounded load test on loopback: a fixed number of streaming requests from concurrent clients
// against `sinter serve --parallel 1, 4, 8`, with a time limit. It reports throughput (generated
// tokens per second across clients) and time to first token (p50, p99) as seen by the clients;
// BENCHMARKS.md "Serving" holds the figures. Speed is reported, never asserted: the test fails
// only when a request fails or the time limit passes.
//
// SINTER_LOAD_MODEL (default stories260K), SINTER_LOAD_REQUESTS (64), SINTER_LOAD_CLIENTS (16),
// SINTER_LOAD_TOKENS (64), SINTER_LOAD_THREADS (2) change the load.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "server_process.h"
#include "sinter/result.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

using Clock = std::chrono::steady_clock;

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank.
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

const char* kPrompts[] = {"Once upon a time",
                          "Lily and Tom went to the park",
                          "The cat",
                          "One day, a big dog",
                          "Once upon a time, there was a king",
                          "Ben liked to play",
                          "The sun was hot",
                          "Sara had a doll"};

TEST(Load, ThroughputAndTimeToFirstToken) {
  const char* model_env = std::getenv("SINTER_LOAD_MODEL");
  const std::string model = model_env != nullptr && *model_env != '\0' ? model_env : stories_model();
  const int requests = env_int("SINTER_LOAD_REQUESTS", 64);
  const int clients = env_int("SINTER_LOAD_CLIENTS", 16);
  const int tokens = env_int("SINTER_LOAD_TOKENS", 64);
  const std::string threads = std::to_string(env_int("SINTER_LOAD_THREADS", 2));
  const auto time_limit = std::chrono::seconds(env_int("SINTER_LOAD_TIME_LIMIT", 300));
  std::printf("load: %s, %d requests from %d clients, %d tokens each, -t %s\n", model.c_str(), requests,
              clients, tokens, threads.c_str());
  std::printf(
      "| --parallel | requests | wall s | generated tokens | tokens/s | TTFT p50 ms | TTFT p99 ms |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const int parallel : {1, 4, 8}) {
    auto server = ServerProcess::start({"-m", model, "--parallel", std::to_string(parallel), "-t", threads,
                                        "--max-queue", std::to_string(requests)});
    ASSERT_NE(server, nullptr);
    const std::string name = std::filesystem::path(model).stem().string();
    // Warm up (the model is loaded at start; this touches every code path once).
    http_post(*server, "/api/generate",
              Json{{"model", name}, {"prompt", "Hi"}, {"stream", false}, {"options", {{"num_predict", 4}}}});

    std::atomic<int> next{0}, failed{0};
    std::atomic<int64_t> generated{0};
    std::mutex mutex;
    std::vector<double> ttft;
    std::vector<std::string> failures;  // the first few, to say what went wrong
    const auto start = Clock::now();
    const auto deadline = start + time_limit;
    std::vector<std::thread> workers;
    for (int c = 0; c < clients; ++c) {
      workers.emplace_back([&] {
        for (int i; (i = next++) < requests && Clock::now() < deadline;) {
          const Json request{{"model", name},
                             {"prompt", kPrompts[i % 8]},
                             {"options", {{"temperature", 0.8}, {"seed", i}, {"num_predict", tokens}}}};
          const StreamAnswer answer = http_stream(*server, "/api/generate", request, false);
          if (answer.status != 200 || answer.objects.empty() || answer.objects.back()["done"] != true) {
            ++failed;
            std::lock_guard<std::mutex> lock(mutex);
            if (failures.size() < 4) {
              failures.push_back(concat("request ", i, ": status ", answer.status, ", ",
                                        answer.objects.size(), " objects, error body '", answer.error_body,
                                        "', last object ",
                                        answer.objects.empty() ? "none" : answer.objects.back().dump()));
            }
            continue;
          }
          generated += answer.objects.back()["eval_count"].get<int64_t>();
          std::lock_guard<std::mutex> lock(mutex);
          ttft.push_back(answer.arrival_seconds.front());
        }
      });
    }
    for (auto& worker : workers) worker.join();
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_LT(Clock::now(), deadline) << "the load did not finish within the time limit";
    EXPECT_EQ(failed.load(), 0);
    for (const std::string& failure : failures) ADD_FAILURE() << failure;
    EXPECT_EQ(static_cast<int>(ttft.size()), requests);
    std::printf("| %d | %zu | %.2f | %lld | %.1f | %.1f | %.1f |\n", parallel, ttft.size(), wall,
                static_cast<long long>(generated.load()), static_cast<double>(generated.load()) / wall,
                percentile(ttft, 50) * 1e3, percentile(ttft, 99) * 1e3);
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace sinter::testing
