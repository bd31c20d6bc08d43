// The HTTP transport under hostile and unusual clients, over raw sockets: slow headers and bodies
// (408, and /health answers meanwhile), per-client connection caps, bodies over --max-body
// however framed (413), header floods (431), half-closed clients, clients that hang up on a
// non-streaming request (cancelled at once), endless requests (--max-tokens), and SIGTERM with
// streams running and queued (each ends with a final object, the server exits 0).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "server_process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

using namespace std::chrono_literals;

// A TCP connection from `source` (any address of 127.0.0.0/8) to the server.
class RawClient {
 public:
  RawClient(int port, const char* source = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, source, &local.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local));
    sockaddr_in remote{};
    remote.sin_family = AF_INET;
    remote.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&remote), sizeof(remote)) == 0;
  }
  ~RawClient() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool connected() const { return connected_; }
  bool send(const std::string& data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  void shutdown_sending() { ::shutdown(fd_, SHUT_WR); }
  // Reads until the server closes or `limit` passes.
  std::string read_all(std::chrono::milliseconds limit = 20s) { return read_until("", limit); }
  // Reads until `marker` has arrived (empty: until the server closes), or `limit` passes.
  std::string read_until(const std::string& marker, std::chrono::milliseconds limit = 20s) {
    std::string data;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while ((marker.empty() || data.find(marker) == std::string::npos) &&
           std::chrono::steady_clock::now() < deadline) {
      pollfd poller{fd_, POLLIN, 0};
      if (::poll(&poller, 1, 50) <= 0) continue;
      char buffer[65536];
      const ssize_t got = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (got <= 0) break;
      data.append(buffer, static_cast<size_t>(got));
    }
    return data;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

int status_of(const std::string& answer) {
  // The final status line (after any interim 1xx answers).
  size_t at = 0;
  int status = -1;
  while ((at = answer.find("HTTP/1.1 ", at)) != std::string::npos) {
    status = std::atoi(answer.c_str() + at + 9);
    at += 9;
    if (status >= 200) break;
  }
  return status;
}

std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         extra + "\r\n" + body;
}

class Transport : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ServerProcess::start({"-m", stories_model(), "--parallel", "1", "-t", "1", "--max-body",
                                    "65536", "--header-timeout", "1s", "--body-timeout", "1500ms",
                                    "--max-connections-per-client", "8", "--max-tokens", "48", "--overflow",
                                    "shift"});
    ASSERT_NE(server_, nullptr);
  }
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(Transport, SlowClientsHoldNoWorkerAndTimeOut) {
  // Sixteen clients from 127.0.0.2 that send their headers a byte at a time: eight are let in
  // (the per-client cap), the others are refused at once with 503.
  std::vector<std::unique_ptr<RawClient>> slow;
  int refused = 0;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(std::make_unique<RawClient>(server_->port(), "127.0.0.2"));
    ASSERT_TRUE(slow.back()->connected());
    slow.back()->send("G");
  }
  std::this_thread::sleep_for(200ms);  // well within the 1 s header deadline
  for (auto& client : slow) {
    const std::string answer = client->read_until("\r\n\r\n", 10ms);
    if (!answer.empty()) {
      EXPECT_EQ(status_of(answer), 503) << answer;
      ++refused;
    }
  }
  EXPECT_EQ(refused, 8);
  // Meanwhile the server answers everyone else.
  EXPECT_EQ(http_get(*server_, "/health").status, 200);
  const HttpAnswer generated = http_post(*server_, "/api/generate",
                                         Json{{"model", "stories260K"},
                                              {"prompt", "Once"},
                                              {"stream", false},
                                              {"options", {{"num_predict", 4}}}});
  EXPECT_EQ(generated.status, 200) << generated.body;
  // The slow ones are answered 408 once their header time is up, and closed.
  for (auto& client : slow) {
    const std::string answer = client->read_all(5s);
    if (answer.empty()) continue;  // a refused one, already closed
    EXPECT_EQ(status_of(answer), 408) << answer;
    EXPECT_NE(answer.find("headers did not arrive"), std::string::npos) << answer;
  }
  // A body that trickles is cut at the body deadline.
  RawClient trickle(server_->port());
  trickle.send("POST /api/generate HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n{");
  const std::string answer = trickle.read_all(5s);
  EXPECT_EQ(status_of(answer), 408) << answer;
  EXPECT_NE(answer.find("body did not arrive"), std::string::npos) << answer;
}

TEST_F(Transport, BodyAndHeaderLimitsHoldHoweverFramed) {
  // 3 MiB chunked where the limit is 64 KiB: 413 naming that limit, and the server's memory
  // does not grow by the body.
  RawClient chunked(server_->port());
  chunked.send("POST /api/generate HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
  const std::string piece(64 * 1024, ' ');
  char size[16];
  std::snprintf(size, sizeof(size), "%zx\r\n", piece.size());
  for (int i = 0; i < 48; ++i) {
    if (!chunked.send(size + piece + "\r\n")) break;
  }
  const std::string answer = chunked.read_all(5s);
  EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 300);
  EXPECT_NE(answer.find("limit of 65536 bytes"), std::string::npos) << answer.substr(0, 300);

  // The same with Content-Length is refused before the body is read.
  RawClient sized(server_->port());
  sized.send("POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: 3145728\r\n\r\n");
  const std::string sized_answer = sized.read_all(5s);
  EXPECT_EQ(status_of(sized_answer), 413);
  EXPECT_NE(sized_answer.find("\"message\""), std::string::npos) << "OpenAI's error shape: " << sized_answer;

  // Ten thousand headers: 431 once the count or the bytes pass the limit.
  RawClient flood(server_->port());
  std::string headers = "GET /health HTTP/1.1\r\nHost: t\r\n";
  for (int i = 0; i < 10000; ++i) headers += "X-Flood-" + std::to_string(i) + ": 1\r\n";
  flood.send(headers + "\r\n");
  EXPECT_EQ(status_of(flood.read_all(5s)), 431);
  EXPECT_LT(peak_rss(server_->pid()), size_t{256} << 20);
  EXPECT_EQ(http_get(*server_, "/health").status, 200);
}

// Many large bodies at once: the bytes being received are bounded (4 x --max-body), beyond
// that a request gets 503 while the others go on.
TEST_F(Transport, BodiesBeingReceivedAreBoundedInAll) {
  std::vector<std::unique_ptr<RawClient>> senders;
  const std::string part(60000, ' ');
  int refused = 0;
  for (int i = 0; i < 6; ++i) {
    senders.push_back(std::make_unique<RawClient>(server_->port(), i < 3 ? "127.0.0.3" : "127.0.0.4"));
    senders.back()->send("POST /api/generate HTTP/1.1\r\nHost: t\r\nContent-Length: 65000\r\n\r\n" + part);
    std::this_thread::sleep_for(50ms);
  }
  for (auto& sender : senders) {
    const std::string answer = sender->read_until("\r\n\r\n", 100ms);
    if (answer.empty()) continue;
    EXPECT_EQ(status_of(answer), 503) << answer;
    ++refused;
  }
  EXPECT_EQ(refused, 2);  // 4 x 60000 bytes fit in 4 x 65536, the fifth and sixth do not
  EXPECT_EQ(http_get(*server_, "/health").status, 200);
}

TEST_F(Transport, HalfClosedClientGetsItsAnswer) {
  RawClient client(server_->port());
  client.send(post("/api/generate",
                   R"({"model":"stories260K","prompt":"Once","stream":false,"options":{"num_predict":4}})"));
  client.shutdown_sending();
  const std::string answer = client.read_all();
  EXPECT_EQ(status_of(answer), 200) << answer;
  EXPECT_NE(answer.find("\"done\":true"), std::string::npos) << answer;

  // Form-encoded, as curl -d sends it, larger than 8 KiB: read as JSON.
  std::string body = R"({"model":"stories260K","prompt":"Once","stream":false,"options":{"num_predict":2}})";
  body.insert(body.size() - 1, std::string(20000, ' '));
  RawClient form(server_->port());
  form.send(post("/api/generate", body,
                 "Content-Type: application/x-www-form-urlencoded\r\nConnection: close\r\n"));
  EXPECT_EQ(status_of(form.read_all()), 200);
}

// Sends `request` (a long non-streaming generation), waits until it runs, hangs up, and checks that
// the request is cancelled within 5 s.
void expect_hang_up_cancels(const ServerProcess& server, const std::string& request) {
  {
    RawClient client(server.port());
    client.send(request);
    ASSERT_TRUE(eventually([&] {
      return metric_value(http_get(server, "/metrics").body,
                          "sinter_active_sequences{model=\"stories260K\"}") == 1;
    }));
  }  // hangs up
  EXPECT_TRUE(eventually(
      [&] {
        return metric_value(http_get(server, "/metrics").body,
                            "sinter_requests_cancelled_total{model=\"stories260K\"}") == 1;
      },
      5s));
}

// A generation without a limit (the fixture's server has one of 48 tokens).
const std::string kEndless = R"({"model":"stories260K","prompt":"Once","stream":false,)"
                             R"("options":{"num_predict":1000000}})";

TEST_F(Transport, ClientThatHangsUpIsCancelledAtOnce) {
  auto server =
      ServerProcess::start({"-m", stories_model(), "--parallel", "1", "-t", "1", "--overflow", "shift"});
  ASSERT_NE(server, nullptr);
  expect_hang_up_cancels(*server, post("/api/generate", kEndless));
  // The slot is free: the next request runs at once (--parallel 1).
  const HttpAnswer next = http_post(*server, "/api/generate",
                                    Json{{"model", "stories260K"},
                                         {"prompt", "Once"},
                                         {"stream", false},
                                         {"options", {{"num_predict", 4}}}});
  EXPECT_EQ(next.status, 200) << next.body;
}

// An HTTP/1.0 client cannot be probed with an interim answer: its hang-up (end of input) used
// to go unnoticed, and its generation ran on for nobody.
TEST_F(Transport, Http10ClientThatHangsUpIsCancelled) {
  auto server =
      ServerProcess::start({"-m", stories_model(), "--parallel", "1", "-t", "1", "--overflow", "shift"});
  ASSERT_NE(server, nullptr);
  expect_hang_up_cancels(*server, "POST /api/generate HTTP/1.0\r\nContent-Length: " +
                                      std::to_string(kEndless.size()) + "\r\n\r\n" + kEndless);
}

TEST_F(Transport, EndlessRequestsStopAtTheServerLimit) {
  const Json answer = http_post(*server_, "/api/generate",
                                Json{{"model", "stories260K"},
                                     {"prompt", "Once"},
                                     {"stream", false},
                                     {"options", {{"num_predict", 2000000000}, {"num_ctx", 64}}}})
                          .json();
  EXPECT_EQ(answer["done_reason"], "length") << answer;
  EXPECT_EQ(answer["eval_count"], 48) << answer;
}

TEST(TransportShutdown, SigtermDrainsStreamsAndClosesIdleConnections) {
  auto server = ServerProcess::start({"-m", stories_model(), "--parallel", "1", "-t", "1", "--overflow",
                                      "shift", "--shutdown-grace", "500ms"});
  ASSERT_NE(server, nullptr);
  // An idle keep-alive connection, and three streams: one running, two queued.
  RawClient idle(server->port());
  idle.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_NE(idle.read_until("\"ok\"").find("200 OK"), std::string::npos);
  std::vector<std::unique_ptr<RawClient>> streams;
  for (int i = 0; i < 3; ++i) {
    streams.push_back(std::make_unique<RawClient>(server->port()));
    streams.back()->send(post("/api/generate", R"({"model":"stories260K","prompt":"Once",)"
                                               R"("options":{"num_predict":100000}})"));
  }
  ASSERT_TRUE(eventually([&] {
    return metric_value(http_get(*server, "/metrics").body,
                        "sinter_queued_requests{model=\"stories260K\"}") == 2;
  }));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(server->stop(), 0) << server->log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "idle connections must not hold the exit";
  EXPECT_TRUE(idle.read_all(1s).empty());  // closed without an answer
  for (auto& stream : streams) {
    const std::string answer = stream->read_all(2s);
    ASSERT_EQ(status_of(answer), 200) << answer;
    // The last NDJSON object is a final one: done, with the reason it was cut.
    const size_t end = answer.rfind("}\n");
    ASSERT_NE(end, std::string::npos) << answer;
    const size_t begin = answer.rfind("\n{", end);
    const Json last = Json::parse(answer.substr(begin + 1, end - begin), nullptr, false);
    EXPECT_EQ(last["done"], true) << last;
    EXPECT_EQ(last["done_reason"], "error") << last;
    EXPECT_NE(last["error"].get<std::string>().find("shutting down"), std::string::npos) << last;
    EXPECT_NE(answer.find("\r\n0\r\n\r\n"), std::string::npos) << "the chunked body is terminated";
  }
}

}  // namespace
}  // namespace sinter::testing
