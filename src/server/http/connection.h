// One client connection: the bytes of the request being read (by the transport's I/O thread),
// and, while a worker answers it, writing the response and telling whether the client is still
// there.
//
// Telling a client that went away from one that only closed its sending side: both send a FIN,
// so the server sees end-of-input either way. Only writing tells them apart: a closed socket
// answers a write with a reset. So when a request's input has ended before its answer has
// started, the worker sends an interim "HTTP/1.1 102 Processing" (which HTTP/1.1 clients skip,
// RFC 9110 §15.2); a client that is gone resets the connection, and the request is cancelled
// within a poll or two; a client that is only half-closed gets its answer.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "server/http/message.h"
#include "server/http/request_parser.h"

namespace sinter::server::http {

using Clock = std::chrono::steady_clock;

struct Connection {
  enum class Phase {
    kIdle,      // waiting for a request (keep-alive)
    kReading,   // part of a request is in
    kBusy,      // a worker answers it; the I/O thread does not touch it
    kDraining,  // an error answer was sent: input is read and dropped until the client closes
  };

  // The most bytes of a next request read while one is answered.
  static constexpr size_t kPendingLimit = 64 * 1024;

  Connection(int socket, std::string address, const ParserLimits& limits)
      : fd(socket), peer(std::move(address)), parser(limits) {}
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd = -1;
  std::string peer;  // the client's address, without the port
  RequestParser parser;
  std::string pending;  // bytes after a complete request (pipelining), fed when it is answered
  Phase phase = Phase::kIdle;
  Clock::time_point deadline;
  bool headers_seen = false;  // the deadline is the body's
  bool continue_sent = false;
  size_t drained_bytes = 0;
  size_t counted_bytes = 0;  // of this request, in the transport's receiving total

  // Worker side (the worker owns the socket while the phase is kBusy).
  bool input_closed = false;      // the client sent its FIN
  bool response_started = false;  // bytes of the final response went out
  bool probed = false;            // the 102 interim answer went out
  bool gone = false;              // reset, or a write failed

  // Whether the client has gone (see above); sends the probe when its input has ended.
  bool check_gone(bool may_probe);
  // Writes everything before `until`; false (and `gone`) on failure or timeout.
  bool send_all(std::string_view data, Clock::time_point until);
};

// The response's status line and headers: Content-Length for a whole body, chunked for a stream
// to an HTTP/1.1 client (an HTTP/1.0 client's stream ends when the connection closes).
std::string response_head(const Request& request, const Response& response, bool keep_alive, bool head_only);

// Writes the response (pumping a stream until it ends) with `write_timeout` for each write.
// Returns whether the connection can serve another request.
bool write_response(Connection& connection, const Request& request, Response& response, bool keep_alive,
                    std::chrono::milliseconds write_timeout);

// Whether the client asked to keep the connection (HTTP/1.1 unless "close"; 1.0 only with
// "keep-alive").
bool wants_keep_alive(const Request& request);

}  // namespace sinter::server::http
