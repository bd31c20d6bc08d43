// The whole HTTP transport, driven as a client drives it: each input is a byte stream written
// to a connection (an end of a socketpair given to Transport::adopt) in pieces of arbitrary
// sizes, so requests are split anywhere, pipelined, and followed or not by a half-close. The
// handlers answer whole, streamed or large bodies. What comes back must be a sequence of valid
// HTTP/1.1 responses (interim 1xx, then a status line, headers, and a body framed by
// Content-Length or chunked, or ended by the close); after a half-close the server must close
// the connection within a deadline (no hang); no crash, leak or sanitizer report.
//
// The first input byte chooses how: bit 0 half-close after writing, bits 1-7 seed the piece
// sizes. Seeds: fuzz/corpus/transport/.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "server/http/transport.h"

namespace {

using namespace sinter::server::http;
using Clock = std::chrono::steady_clock;

void answer(Request& request, Response& response) {
  if (request.path == "/stream") {
    // A few pieces, as many as the query has characters (at most 8).
    auto left = std::make_shared<size_t>(std::min<size_t>(request.query.size(), 8));
    response.stream =
        StreamingBody{"text/plain",
                      [left](ChunkSink& sink) {
                        if (*left == 0) return PumpResult::kFinished;
                        --*left;
                        return sink.write("piece\n") ? PumpResult::kMore : PumpResult::kAbandoned;
                      },
                      {}};
    return;
  }
  if (request.path == "/big") {
    response.set_content(std::string(300 * 1024, 'b'), "text/plain");
    return;
  }
  response.set_content(request.method + " " + std::to_string(request.body.size()), "text/plain");
}

Transport& transport() {
  static Transport* served = [] {
    TransportOptions options;
    options.header_timeout = std::chrono::milliseconds(300);
    options.body_timeout = std::chrono::milliseconds(300);
    options.idle_timeout = std::chrono::milliseconds(300);
    options.write_timeout = std::chrono::milliseconds(1000);
    options.limits.max_body_bytes = 4096;
    options.limits.max_header_bytes = 2048;
    options.limits.max_headers = 16;
    options.max_workers = 4;
    auto made = Transport::listen(
        options, answer,
        [](const Request&, int status, const std::string& message, Response& response) {
          response.status = status;
          response.set_content(message, "text/plain");
        },
        [](const Request&, int) {});
    if (!made) __builtin_trap();
    Transport* transport = made.value().release();
    std::thread([transport] { (void)transport->run(); }).detach();
    return transport;
  }();
  return *served;
}

// Reads what the server sends until it closes or `deadline`; false on a timeout.
bool read_all(int fd, std::string& out, Clock::time_point deadline) {
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd poller{fd, POLLIN, 0};
    if (::poll(&poller, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got <= 0) return true;
    out.append(buffer, static_cast<size_t>(got));
  }
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// Checks that `data` is a sequence of HTTP/1.1 responses; traps otherwise. `whole`: the server
// closed the connection, so the last response must be complete too (else it may be cut where
// the client stopped reading).
void check_responses(std::string_view data, bool whole) {
  const auto cut = [whole] {
    if (whole) __builtin_trap();
  };
  while (!data.empty()) {
    if (data.size() < 13) return cut();
    if (data.substr(0, 9) != "HTTP/1.1 ") __builtin_trap();
    const int status = std::atoi(std::string(data.substr(9, 3)).c_str());
    if (status < 100 || status > 599) __builtin_trap();
    const size_t head_end = data.find("\r\n\r\n");
    if (head_end == std::string_view::npos) return cut();
    const std::string_view head = data.substr(0, head_end);
    data.remove_prefix(head_end + 4);
    if (status < 200) continue;  // interim: the final answer follows
    long long length = -1;
    bool chunked = false;
    for (size_t at = head.find("\r\n"); at != std::string_view::npos;) {
      const size_t next = head.find("\r\n", at + 2);
      const std::string_view field =
          head.substr(at + 2, next == std::string_view::npos ? std::string_view::npos : next - at - 2);
      const size_t colon = field.find(':');
      if (colon == std::string_view::npos) __builtin_trap();
      const std::string_view name = field.substr(0, colon);
      const std::string value(field.substr(colon + 2));
      if (equals_ignoring_case(name, "Content-Length")) length = std::atoll(value.c_str());
      if (equals_ignoring_case(name, "Transfer-Encoding")) chunked = value == "chunked";
      at = next;
    }
    if (chunked) {
      for (;;) {
        const size_t line_end = data.find("\r\n");
        if (line_end == std::string_view::npos) return cut();
        const size_t size = std::strtoul(std::string(data.substr(0, line_end)).c_str(), nullptr, 16);
        if (data.size() < line_end + 2 + size + 2) return cut();
        data.remove_prefix(line_end + 2 + size + 2);
        if (size == 0) break;
      }
    } else if (length >= 0) {
      if (static_cast<size_t>(length) > data.size()) return cut();
      data.remove_prefix(static_cast<size_t>(length));
    } else {
      return;  // a body that ends with the connection (an HTTP/1.0 stream)
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const bool half_close = (data[0] & 1) != 0;
  uint32_t seed = data[0] >> 1;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return 0;
  transport().adopt(pair[0], "fuzz");
  const int client = pair[1];
  for (size_t at = 0; at < stream.size();) {
    seed = seed * 1103515245u + 12345u;
    const size_t piece = std::min<size_t>(stream.size() - at, 1 + (seed >> 16) % 64);
    if (::send(client, stream.data() + at, piece, MSG_NOSIGNAL) < 0) break;
    at += piece;
    if ((seed >> 8) % 4 == 0) std::this_thread::yield();  // let the server read a piece alone
  }
  std::string answers;
  if (half_close) {
    ::shutdown(client, SHUT_WR);
    // Everything it received is answered, then it closes: no hang.
    if (!read_all(client, answers, Clock::now() + std::chrono::seconds(5))) __builtin_trap();
  } else {
    // Without the client's FIN the server closes at a deadline (or keeps the connection): read
    // a moment, then hang up.
    read_all(client, answers, Clock::now() + std::chrono::milliseconds(30));
  }
  ::close(client);
  check_responses(answers, half_close);
  return 0;
}
