// Black-box test support: a real `sinter serve` process on 127.0.0.1 (port chosen by the system)
// and an HTTP client (cpp-httplib's) to talk to it: plain requests, NDJSON and SSE streams.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace sinter::testing {

using Json = nlohmann::json;

class ServerProcess {
 public:
  // Starts `sinter serve ARGS --host 127.0.0.1 --port 0`, reads the port it printed and waits
  // until /health answers 200 (or, when not `require_ready`, anything). Fails the test (and
  // returns nullptr) otherwise.
  static std::unique_ptr<ServerProcess> start(const std::vector<std::string>& args,
                                              bool require_ready = true);
  ~ServerProcess();

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then the exit status (-1 when it had to be killed).
  int stop();
  bool running();
  std::string log() const;  // stderr so far

  std::unique_ptr<httplib::Client> client(int read_timeout_seconds = 300) const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

struct HttpAnswer {
  int status = -1;  // -1: no answer (connection error)
  std::string body;
  httplib::Headers headers;
  Json json() const;  // the body parsed (a failed test and null when it is not JSON)
  std::string header(const std::string& key) const;
};

HttpAnswer http_get(const ServerProcess& server, const std::string& path);
HttpAnswer http_post(const ServerProcess& server, const std::string& path, const std::string& body,
                     const std::string& content_type = "application/json");
HttpAnswer http_post(const ServerProcess& server, const std::string& path, const Json& body);

// A streamed answer, split into its JSON objects (NDJSON lines, or SSE "data:" events).
struct StreamAnswer {
  int status = -1;
  std::string content_type;
  std::vector<Json> objects;
  std::vector<double> arrival_seconds;  // when each object arrived, from the request's start
  bool done_marker = false;             // SSE "data: [DONE]" seen last
  bool cancelled = false;               // stopped early by `keep_going`
  std::string raw;
  std::string error_body;  // the body of a non-200 answer
};

// Streams a POST; `keep_going` (if given) sees each object and returns false to hang up.
StreamAnswer http_stream(const ServerProcess& server, const std::string& path, const Json& body, bool sse,
                         const std::function<bool(const Json&)>& keep_going = {});

// Prometheus text: the value of the sample with exactly this name and label set (e.g.
// `sinter_http_requests_total{endpoint="/api/generate",status="200"}`), or -1 when absent.
double metric_value(const std::string& metrics_text, const std::string& sample);

// Polls `condition` every 20 ms until it holds (true) or `limit` passes (false). Metrics are
// updated just after an answer is sent, so a client that has its answer may scrape too early.
template <class Condition>
bool eventually(Condition condition, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// `text` as it reads after a trip through JSON: bytes that are not UTF-8 (a random-weight model
// generates them) become U+FFFD, as the server writes them.
std::string as_json_text(const std::string& text);

// Peak resident memory of a process, in bytes (VmHWM of /proc/PID/status).
size_t peak_rss(pid_t pid);

// A random-weight llama model (`sinter synth llama --dims DIMS`) written into `dir`.
std::string synth_model(const std::string& dir, const std::string& name, const std::string& dims = "tiny");

}  // namespace sinter::testing

namespace sinter::testing {

// A folder with stories260K.gguf (linked) and a random-weight tiny llama, "random-tiny.gguf".
std::string make_models_dir();

// One `sinter serve --models DIR --parallel 2 -t 1` process per test, over make_models_dir().
class ModelsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    models_ = make_models_dir();
    server_ = ServerProcess::start({"--models", models_, "--parallel", "2", "-t", "1"});
    ASSERT_NE(server_, nullptr);
  }
  std::string models_;
  std::unique_ptr<ServerProcess> server_;
};

}  // namespace sinter::testing
