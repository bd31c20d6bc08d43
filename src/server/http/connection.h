// One client connection: the bytes of the request being read (by the transport's I/O thread),
// and, while a worker answers it, writing the response and telling whether the client is still
// there.
//
// Writing never holds a worker on a slow reader: a worker sends what the socket takes now and
// keeps the rest in `out`; a whole answer is then handed to the I/O thread, which finishes it as
// the client reads (kWriting). Only a stream whose unsent bytes pass kStreamBacklog waits for
// the client (up to the write timeout), as the stream cannot go on without it.
//
// Telling a client that went away from one that only closed its sending side: both send a FIN,
// so the server sees end-of-input either way. Only writing tells them apart: a closed socket
// answers a write with a reset. So when a request's input has ended before its answer has
// started, the worker sends an interim "HTTP/1.1 102 Processing" (which HTTP/1.1 clients skip,
// RFC 9110 §15.2); a client that is gone resets the connection, and the request is cancelled
// within a poll or two; a client that is only half-closed gets its answer.
#pragma once

#include <atomic>
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
    kWriting,   // the I/O thread sends the rest of an answer (`out`)
    kDraining,  // an error answer was sent: input is read and dropped until the client closes
  };

  // The most bytes of a next request read while one is answered.
  static constexpr size_t kPendingLimit = 64 * 1024;
  // Unsent bytes of a stream beyond which its worker waits for the client.
  static constexpr size_t kStreamBacklog = 256 * 1024;

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
  Clock::time_point idle_since;  // when it opened or last finished an answer
  bool spoke = false;  // a byte of a request ever arrived (a silent connection is closed first at a cap)
  bool headers_seen = false;  // the deadline is the body's
  bool continue_sent = false;
  size_t drained_bytes = 0;
  size_t counted_bytes = 0;  // of this request, in the transport's receiving total

  // Worker side (the worker owns the socket while the phase is kBusy).
  bool input_closed = false;      // the client sent its FIN
  bool response_started = false;  // bytes of the final response went out
  bool probed = false;            // the 102 interim answer went out
  bool gone = false;              // reset, or a write failed
  std::string out;                // answer bytes the socket has not taken yet
  bool keep_alive = false;        // after `out` is sent, the connection serves another request
  // The transport's: set when waiting on slow readers must stop (the shutdown grace is over).
  const std::atomic<bool>* cut = nullptr;

  // Whether the client has gone (see above); sends the probe when its input has ended. An
  // HTTP/1.0 client cannot be probed: its end of input is taken for a hang-up.
  bool check_gone(bool may_probe);
  // Sends what the socket takes now, and keeps the rest in `out`; false (and `gone`) on failure.
  bool send_or_keep(std::string_view data);
  // Waits until `out` holds at most `keep` bytes; false (and `gone`) on failure, when the client
  // reads nothing before `until`, or when `cut` is set.
  bool flush_until(size_t keep, Clock::time_point until);
  // Sends what it can of `out` without waiting; false (and `gone`) on failure.
  bool flush_now();
};

// The response's status line and headers: Content-Length for a whole body, chunked for a stream
// to an HTTP/1.1 client (an HTTP/1.0 client's stream ends when the connection closes).
std::string response_head(const Request& request, const Response& response, bool keep_alive, bool head_only);

// Writes the response (pumping a stream until it ends); what the socket does not take stays in
// `connection.out`. A stream waits at most `write_timeout` for a client that reads nothing.
// Returns whether the connection can serve another request once `out` is sent.
bool write_response(Connection& connection, const Request& request, Response& response, bool keep_alive,
                    std::chrono::milliseconds write_timeout);

// Whether the client asked to keep the connection (HTTP/1.1 unless "close"; 1.0 only with
// "keep-alive").
bool wants_keep_alive(const Request& request);

}  // namespace sinter::server::http
