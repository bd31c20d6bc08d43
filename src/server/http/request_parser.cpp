#include "server/http/request_parser.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "server/http/syntax.h"
#include "sinter/result.h"

namespace sinter::server::http {
namespace {

// A decimal Content-Length; false when it is not one or does not fit in 18 digits (leading zeros
// aside).
bool parse_length(std::string_view text, size_t& out) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  while (text.size() > 1 && text.front() == '0') text.remove_prefix(1);
  if (text.size() > 18) return false;
  size_t value = 0;
  for (char c : text) value = value * 10 + static_cast<size_t>(c - '0');
  out = value;
  return true;
}

// The comma-separated elements of a field value, trimmed, empty ones dropped.
template <class Fn>
void for_each_element(std::string_view value, Fn fn) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    const std::string_view element = trim_whitespace(value.substr(0, comma));
    if (!element.empty()) fn(element);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

// How a request's body is framed (RFC 9112 §6): chunked, by Content-Length, or not at all.
struct Framing {
  bool chunked = false;
  bool has_length = false;
  size_t length = 0;
  int status = 0;  // or the error's
  std::string error;
};

Framing read_framing(const Headers& headers, int minor_version) {
  Framing framing;
  size_t codings = 0;  // in all Transfer-Encoding fields
  const std::string* unsupported = nullptr;
  size_t lengths = 0;
  const auto error = [&](int status, std::string message) {
    framing.status = status;
    framing.error = std::move(message);
    return framing;
  };
  for (const Headers::Field& field : headers.fields()) {
    if (equals_ignoring_case(field.name, "Transfer-Encoding")) {
      size_t elements = 0;
      for_each_element(field.value, [&](std::string_view coding) {
        ++elements;
        if (!equals_ignoring_case(coding, "chunked") && unsupported == nullptr) unsupported = &field.value;
      });
      if (elements == 0) return error(400, "an empty Transfer-Encoding");
      codings += elements;
    } else if (equals_ignoring_case(field.name, "Content-Length")) {
      // One Content-Length, of digits. A repeated one, even with the same value, and a list
      // ("2, 2", which RFC 9110 §8.6 lets a recipient refuse) are refused, as nginx does: two
      // readers could take different lengths from them.
      if (++lengths > 1) return error(400, "a request must not have more than one Content-Length");
      if (!parse_length(field.value, framing.length)) {
        return error(400, concat("malformed Content-Length '", field.value, "'"));
      }
      framing.has_length = true;
    }
  }
  // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
  if (codings > 0 && minor_version == 0) return error(400, "Transfer-Encoding needs HTTP/1.1");
  if (unsupported != nullptr) {
    return error(501, concat("Transfer-Encoding '", *unsupported, "' is not supported (only chunked is)"));
  }
  if (codings > 1) return error(400, "chunked is applied more than once");
  framing.chunked = codings == 1;
  if (framing.chunked && framing.has_length) {
    return error(400, "a request must not have both Content-Length and Transfer-Encoding");
  }
  return framing;
}

}  // namespace

bool percent_decode_path(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    const int high = i + 1 < in.size() ? hex_value(in[i + 1]) : -1;
    const int low = i + 2 < in.size() ? hex_value(in[i + 2]) : -1;
    if (high < 0 || low < 0) return false;
    const char decoded = static_cast<char>(high * 16 + low);
    if (decoded == '\0') return false;
    out.push_back(decoded);
    i += 2;
  }
  return true;
}

void RequestParser::reset() {
  state_ = State::kIncomplete;
  phase_ = Phase::kRequestLine;
  error_ = {};
  request_ = {};
  line_.clear();
  header_bytes_ = 0;
  header_count_ = 0;
  body_remaining_ = 0;
  expects_continue_ = false;
}

Request RequestParser::take_request() {
  Request request = std::move(request_);
  request_ = {};
  return request;
}

void RequestParser::fail(int status, std::string message) {
  state_ = State::kError;
  error_ = {status, std::move(message)};
}

bool RequestParser::take_line(std::string_view data, size_t& used, size_t limit, bool counts_as_header) {
  const std::string_view rest = data.substr(used);
  const size_t newline = rest.find('\n');
  const size_t take = newline == std::string_view::npos ? rest.size() : newline + 1;
  if (counts_as_header) {
    header_bytes_ += take;
    if (header_bytes_ > limits_.max_header_bytes) {
      if (phase_ == Phase::kRequestLine) {
        fail(414,
             concat("the request line is longer than the limit of ", limits_.max_header_bytes, " bytes"));
      } else {
        fail(431,
             concat("the request headers are larger than the limit of ", limits_.max_header_bytes, " bytes"));
      }
      return false;
    }
  } else if (line_.size() + take > limit) {
    fail(400, phase_ == Phase::kChunkDataEnd ? std::string("a chunk's data is longer than its size")
                                             : concat("a chunk-size line is longer than ", limit, " bytes"));
    return false;
  }
  line_.append(rest.data(), take);
  used += take;
  if (newline == std::string_view::npos) return false;
  line_.pop_back();  // '\n'
  const bool crlf = !line_.empty() && line_.back() == '\r';
  if (crlf) line_.pop_back();
  // A bare LF ends a line of the head (RFC 9112 §2.2 allows it, as Go's net/http and nginx do),
  // not one of a chunked body: where a chunk ends decides where the next request starts, and a
  // proxy in front that reads a bare LF otherwise would see other requests than sinter
  // (request smuggling, as CVE-2025-22871 in Go's net/http).
  if (!crlf && phase_ > Phase::kBody) {
    fail(400, "a line of a chunked body ends in a bare LF (CRLF is required)");
    return false;
  }
  return true;
}

size_t RequestParser::feed(std::string_view data) {
  size_t used = 0;
  while (state_ == State::kIncomplete && used < data.size()) {
    switch (phase_) {
      case Phase::kRequestLine:
        // Empty lines before a request are ignored (RFC 9112 §2.2): CRLF or a bare LF. A lone CR
        // is no empty line: it stays in the request line, which it makes malformed.
        if (line_.empty() && (data[used] == '\n' || data.substr(used, 2) == "\r\n")) {
          const size_t empty_line = data[used] == '\n' ? 1 : 2;
          used += empty_line;
          header_bytes_ += empty_line;
          if (header_bytes_ > limits_.max_header_bytes) fail(400, "too many empty lines before the request");
          break;
        }
        if (take_line(data, used, 0, true) && !line_.empty()) on_request_line();  // empty: a split CRLF
        break;
      case Phase::kHeaders:
      case Phase::kTrailers:
        if (take_line(data, used, 0, true)) on_header_line(phase_ == Phase::kTrailers);
        break;
      case Phase::kBody: append_body(data, used, body_remaining_); break;
      case Phase::kChunkSize:
        if (take_line(data, used, limits_.max_chunk_line_bytes, false)) on_chunk_size_line();
        break;
      case Phase::kChunkData: append_body(data, used, body_remaining_); break;
      case Phase::kChunkDataEnd:
        // The CRLF after a chunk's data.
        if (take_line(data, used, 2, false)) {
          if (!line_.empty()) {
            fail(400, "a chunk's data is longer than its size");
          } else {
            line_.clear();
            phase_ = Phase::kChunkSize;
          }
        }
        break;
      case Phase::kDone: break;
    }
  }
  return used;
}

void RequestParser::append_body(std::string_view data, size_t& used, size_t count) {
  const size_t take = std::min(count, data.size() - used);
  request_.body.append(data.data() + used, take);
  used += take;
  body_remaining_ -= take;
  if (body_remaining_ > 0) return;
  if (phase_ == Phase::kChunkData) {
    phase_ = Phase::kChunkDataEnd;
  } else {
    phase_ = Phase::kDone;
    state_ = State::kComplete;
  }
}

void RequestParser::on_request_line() {
  const std::string line = std::move(line_);
  line_.clear();
  const size_t first_space = line.find(' ');
  const size_t last_space = line.rfind(' ');
  if (first_space == std::string::npos || first_space == last_space) {
    return fail(400, "malformed request line");
  }
  request_.method = line.substr(0, first_space);
  request_.target = line.substr(first_space + 1, last_space - first_space - 1);
  const std::string version = line.substr(last_space + 1);
  if (!is_token(request_.method)) return fail(400, "malformed request method");
  if (!is_target_text(request_.target)) return fail(400, "malformed request target");
  if (version.size() != 8 || version.compare(0, 5, "HTTP/") != 0 || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) ||
      !std::isdigit(static_cast<unsigned char>(version[7]))) {
    return fail(400, "malformed HTTP version");
  }
  if (version[5] != '1') return fail(505, concat(version, " is not supported (HTTP/1.0 and HTTP/1.1 are)"));
  request_.minor_version = version[7] - '0';

  std::string_view target = request_.target;
  const auto starts_with_scheme = [&](std::string_view scheme) {  // schemes ignore case (RFC 3986 §3.1)
    return target.size() >= scheme.size() && equals_ignoring_case(target.substr(0, scheme.size()), scheme);
  };
  if (starts_with_scheme("http://") || starts_with_scheme("https://")) {
    // absolute-form: the path starts after the authority.
    const size_t authority = target.find("//") + 2;
    const size_t slash = target.find('/', authority);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  const size_t question = target.find('?');
  const std::string_view raw_path = target.substr(0, question);
  if (question != std::string_view::npos) request_.query = std::string(target.substr(question + 1));
  if (raw_path != "*" && (raw_path.empty() || raw_path.front() != '/')) {
    return fail(400, "malformed request target");
  }
  if (!percent_decode_path(raw_path, request_.path))
    return fail(400, "malformed percent-encoding in the path");
  phase_ = Phase::kHeaders;
}

void RequestParser::on_header_line(bool trailer) {
  if (line_.empty()) {
    if (trailer) {
      phase_ = Phase::kDone;
      state_ = State::kComplete;
    } else {
      on_headers_end();
    }
    return;
  }
  const std::string line = std::move(line_);
  line_.clear();
  if (line.front() == ' ' || line.front() == '\t') return fail(400, "folded header lines are not accepted");
  if (++header_count_ > limits_.max_headers) {
    return fail(431, concat("the request has more than ", limits_.max_headers, " header fields"));
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return fail(400, "a header line has no ':'");
  const std::string_view name(line.data(), colon);
  if (!is_token(name)) return fail(400, "malformed header name");
  const std::string_view value = trim_whitespace(std::string_view(line).substr(colon + 1));
  if (!is_field_value(value)) {
    return fail(400, concat("the value of header '", name, "' holds a control character"));
  }
  if (trailer) return;  // trailers are read and counted, not kept
  request_.headers.add(std::string(name), std::string(value));
}

void RequestParser::on_headers_end() {
  const Headers& headers = request_.headers;
  // RFC 9112 §3.2: 400 for an HTTP/1.1 request without Host, and for any request with more than
  // one Host or an invalid one (Go's net/http and nginx refuse them too).
  size_t hosts = 0;
  const std::string* host = nullptr;
  for (const Headers::Field& field : headers.fields()) {
    if (equals_ignoring_case(field.name, "Host")) {
      ++hosts;
      host = &field.value;
    }
  }
  if (hosts > 1) return fail(400, "a request must not have more than one Host header");
  if (hosts == 0 && request_.minor_version >= 1) return fail(400, "an HTTP/1.1 request needs a Host header");
  if (host != nullptr && !is_valid_host(*host)) return fail(400, concat("malformed Host '", *host, "'"));
  const Framing framing = read_framing(headers, request_.minor_version);
  if (framing.status != 0) return fail(framing.status, framing.error);
  const bool chunked = framing.chunked;
  const bool has_length = framing.has_length;
  const size_t length = framing.length;
  if (has_length && length > limits_.max_body_bytes) {
    return fail(413, concat("the request body is larger than the limit of ", limits_.max_body_bytes,
                            " bytes (Content-Length ", length, ")"));
  }
  const bool has_body = chunked || length > 0;
  if (has_body && request_.minor_version >= 1) {
    if (const std::string* expect = headers.find("Expect")) {
      if (!equals_ignoring_case(*expect, "100-continue"))
        return fail(417, concat("Expect '", *expect, "' is not supported"));
      expects_continue_ = true;
    }
  }
  if (chunked) {
    phase_ = Phase::kChunkSize;
  } else if (length > 0) {
    phase_ = Phase::kBody;
    body_remaining_ = length;
    // Reserved up to 1 MiB: a client that announces a large body and sends it slowly holds no
    // more memory than it has sent (beyond that the string grows as the bytes come).
    request_.body.reserve(std::min<size_t>(length, 1 << 20));
  } else {
    phase_ = Phase::kDone;
    state_ = State::kComplete;
  }
}

void RequestParser::on_chunk_size_line() {
  // chunk-size [ chunk-ext ] (RFC 9112 §7.1): hex digits from the line's first byte, then
  // extensions, checked and ignored. Leading zeros do not count toward the size's width.
  const std::string_view line = line_;
  size_t digits = 0;
  while (digits < line.size() && hex_value(line[digits]) >= 0) ++digits;
  if (digits == 0) return fail(400, "malformed chunk size");
  if (!is_chunk_extension(line.substr(digits))) return fail(400, "malformed chunk extension");
  size_t first = 0;
  while (first + 1 < digits && line[first] == '0') ++first;
  // Past 15 hex digits (60 bits) a size is past any body limit, and could overflow.
  size_t size = digits - first > 15 ? SIZE_MAX : 0;
  for (size_t i = first; i < digits && size != SIZE_MAX; ++i)
    size = size * 16 + static_cast<size_t>(hex_value(line[i]));
  line_.clear();
  if (size > limits_.max_body_bytes - request_.body.size()) {
    return fail(413,
                concat("the request body is larger than the limit of ", limits_.max_body_bytes, " bytes"));
  }
  if (size == 0) {
    phase_ = Phase::kTrailers;
    return;
  }
  phase_ = Phase::kChunkData;
  body_remaining_ = size;
}

}  // namespace sinter::server::http
