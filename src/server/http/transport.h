// The HTTP/1.1 transport: one I/O thread reads every connection without blocking (epoll) until
// it holds a whole request, then hands it to a worker; workers run the handler and write the
// answer, and give keep-alive connections back. A slow client therefore holds a socket and a
// buffer, never a worker: headers and bodies have deadlines (408), every limit of the request
// parser applies (413, 414, 431), and connections are capped in all and per client address.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "server/http/message.h"
#include "server/http/request_parser.h"
#include "sinter/result.h"

namespace sinter::server::http {

struct TransportOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: a free port (see Transport::port())
  ParserLimits limits;
  std::chrono::milliseconds header_timeout{10'000};  // first byte of a request -> end of its headers
  std::chrono::milliseconds body_timeout{60'000};    // end of the headers -> end of the body
  std::chrono::milliseconds idle_timeout{120'000};   // a keep-alive connection without a request
  std::chrono::milliseconds write_timeout{60'000};   // one write of an answer
  size_t max_connections = 1024;
  size_t max_connections_per_client = 64;  // per client IP address
  // Bytes of requests being received, all connections together (0: 4 x the body limit); a
  // request that would pass it gets 503, so many large bodies at once cannot exhaust memory.
  size_t max_receiving_bytes = 0;
};

// Answers a request (found in the route table or not).
using Handler = std::function<void(Request& request, Response& response)>;
// Fills in the answer to a request the transport refuses itself (malformed, over a limit, too
// slow); `request` holds what was parsed (its path once the request line was read).
using ErrorResponder =
    std::function<void(const Request& request, int status, const std::string& message, Response& response)>;
// Told of every answer sent (handled or refused), for logs and metrics.
using AnswerObserver = std::function<void(const Request& request, int status)>;

class Transport {
 public:
  static Result<std::unique_ptr<Transport>> listen(const TransportOptions& options, Handler handler,
                                                   ErrorResponder error_responder, AnswerObserver observer);
  ~Transport();

  int port() const;
  // Serves until shutdown() and every request being answered has ended.
  Status run();
  // Thread-safe: stops accepting, closes connections that are not being answered, and lets
  // run() return once the answers in progress have ended (their connections close after them).
  void shutdown();
  // Requests being answered now.
  size_t answering() const;

 private:
  struct Impl;
  explicit Transport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sinter::server::http
