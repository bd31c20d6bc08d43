// The HTTP/1.1 transport: one I/O thread reads every connection without blocking (epoll) until
// it holds a whole request, then hands it to a worker; workers run the handler and send what the
// socket takes of the answer, and give the connection back; the I/O thread sends the rest as the
// client reads it. A slow client therefore holds a socket and a buffer, never a worker (a stream
// waits for its reader only once a backlog has built up): headers and bodies have deadlines
// (408, from the moment a connection opens), every limit of the request parser applies (413, 414,
// 431), and connections are capped in all and per client address, the caps within the process's
// descriptor limit; at a cap, connections that never sent a byte, then idle ones, make room.
// Workers are bounded and leave when idle; a worker that cannot be started is not fatal. A
// request that takes more than its share of processor time yields to the others.
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
  std::chrono::milliseconds idle_timeout{30'000};    // a keep-alive connection between requests
  std::chrono::milliseconds write_timeout{60'000};   // a client that reads none of its answer
  // Capped by the process's descriptor limit (RLIMIT_NOFILE) less kReservedDescriptors.
  size_t max_connections = 1024;
  size_t max_connections_per_client = 64;  // per client IP address
  size_t max_workers = 256;                // requests answered at once; more wait for a worker
  // Processor time a request's worker may spend before it runs at the lowest priority for the
  // rest of that request (server/http/worker_cpu.h); 0: never.
  std::chrono::milliseconds heavy_request_cpu{200};
  // Bytes of requests being received, all connections together (0: 4 x the body limit); a
  // request larger than 64 KiB (or a sixteenth of the body limit) that would pass it gets 503,
  // so many large bodies at once cannot exhaust memory nor keep small requests out.
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
  // Thread-safe, after shutdown(): stops waiting on clients that do not read; answers still
  // being sent are dropped, so run() returns as soon as the handlers have.
  void cut();
  // Thread-safe: serves a socket that is already connected (an end of a socketpair, in the
  // transport's fuzz target) as a connection accepted from `peer`; the transport owns it.
  void adopt(int fd, std::string peer);
  // The most connections this transport keeps open (after the descriptor limit).
  size_t connection_cap() const;
  // Descriptors left to the rest of the process (model files, logs, pipes) below RLIMIT_NOFILE.
  static constexpr size_t kReservedDescriptors = 64;
  // Requests being answered now.
  size_t answering() const;

 private:
  struct Impl;
  explicit Transport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sinter::server::http
