// HTTP request framing: the request line, headers, Content-Length and chunked bodies, fed in
// pieces whose sizes the input chooses; pipelined requests are parsed one after another.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/http/request_parser.h"

using sinter::server::http::ParserLimits;
using sinter::server::http::RequestParser;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t step = 1 + data[0] % 64;  // the piece size
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  ParserLimits limits;
  limits.max_header_bytes = 2048;
  limits.max_headers = 16;
  limits.max_body_bytes = 4096;
  RequestParser parser(limits);
  while (!input.empty()) {
    const std::string_view piece = input.substr(0, step);
    const size_t used = parser.feed(piece);
    if (used > piece.size()) std::abort();
    input.remove_prefix(used);
    if (parser.state() == RequestParser::State::kError) {
      const int status = parser.error().status;
      if (status < 400 || status > 505 || parser.error().message.empty()) std::abort();
      break;
    }
    if (parser.state() == RequestParser::State::kComplete) {
      const auto request = parser.take_request();
      if (request.body.size() > limits.max_body_bytes || request.headers.size() > limits.max_headers)
        std::abort();
      if (request.path.empty()) std::abort();
      parser.reset();
    }
  }
  return 0;
}
