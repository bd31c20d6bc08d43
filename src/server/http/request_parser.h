// An incremental HTTP/1.x request parser (RFC 9112) with limits on everything a client sends:
// the request line and header bytes and the header count (431, or 414 for the request line),
// and the body's bytes however they are framed, Content-Length or chunked (413). Bytes are fed
// as they arrive, in any split; each byte is looked at a bounded number of times, so the cost
// is linear in the input. It takes no socket: the fuzz targets drive it alone, one of them
// against Boost.Beast's parser (docs/RELIABILITY.md). What two readers could frame differently
// is refused rather than guessed (RFC 9112 §11.2): a bare LF in a chunked body, a repeated
// Content-Length, Transfer-Encoding other than one chunked, obs-fold.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "server/http/message.h"

namespace sinter::server::http {

struct ParserLimits {
  size_t max_header_bytes = 64 * 1024;  // request line, headers and trailers together
  size_t max_headers = 100;             // header fields (trailers included)
  size_t max_body_bytes = 16 * 1024 * 1024;
  size_t max_chunk_line_bytes = 1024;  // a chunk's size line with its extensions
};

struct ParseError {
  int status = 400;
  std::string message;
};

class RequestParser {
 public:
  enum class State { kIncomplete, kComplete, kError };

  explicit RequestParser(const ParserLimits& limits) : limits_(limits) {}

  // Consumes bytes of the request from the front of `data` and returns how many it used: all of
  // them unless the request completed (the rest belongs to the next request) or failed.
  size_t feed(std::string_view data);

  State state() const { return state_; }
  // Whether any byte of a request has been seen (an idle keep-alive connection has none).
  bool started() const { return phase_ != Phase::kRequestLine || !line_.empty() || header_bytes_ > 0; }
  // The request line and the headers are in (the path, headers and body framing are known).
  bool headers_done() const { return phase_ > Phase::kHeaders; }
  // The client waits for "100 Continue" before it sends the body.
  bool expects_continue() const { return expects_continue_; }
  const ParseError& error() const { return error_; }
  // The request so far: complete once state() is kComplete; its path once headers_done().
  const Request& request() const { return request_; }
  Request take_request();

  // Ready for the next request on the same connection.
  void reset();

 private:
  enum class Phase { kRequestLine, kHeaders, kBody, kChunkSize, kChunkData, kChunkDataEnd, kTrailers, kDone };

  // Accumulates one line (to '\n'); false while it is incomplete.
  bool take_line(std::string_view data, size_t& used, size_t limit, bool counts_as_header);
  void fail(int status, std::string message);
  void on_request_line();
  void on_header_line(bool trailer);
  void on_headers_end();
  void on_chunk_size_line();
  void append_body(std::string_view data, size_t& used, size_t count);

  ParserLimits limits_;
  State state_ = State::kIncomplete;
  Phase phase_ = Phase::kRequestLine;
  ParseError error_;
  Request request_;
  std::string line_;
  size_t header_bytes_ = 0;
  size_t header_count_ = 0;
  size_t body_remaining_ = 0;  // of a Content-Length body or of the current chunk
  bool expects_continue_ = false;
};

// Decodes %XX escapes of a path; false on a bad escape or an encoded NUL.
bool percent_decode_path(std::string_view in, std::string& out);

}  // namespace sinter::server::http
