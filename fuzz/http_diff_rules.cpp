// The input as sinter frames it, and the rules: each names a difference by design between sinter
// and Beast, and says on what bytes it holds.
#include <boost/beast/http/error.hpp>
#include <cctype>
#include <cstdint>

#include "http_diff.h"

namespace http_diff {
namespace {

namespace beast_http = boost::beast::http;

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && equals_ignoring_case(text.substr(0, prefix.size()), prefix);
}

// A chunked body that starts at `at`, walked as sinter frames it (a line ends at LF): its
// chunk-size lines, its trailer lines, and where the trailer section starts and ends (the end of
// the input when it is cut short).
struct Chunked {
  std::vector<std::string_view> size_lines;
  std::vector<std::string_view> trailer_lines;
  size_t trailers_begin = std::string_view::npos;
  size_t trailers_end = std::string_view::npos;
};

// The line that starts at `at` without its line end, and `at` moved past it; false if cut short.
bool next_line(std::string_view raw, size_t& at, std::string_view& line) {
  const size_t newline = raw.find('\n', at);
  if (newline == std::string_view::npos) return false;
  line = raw.substr(at, newline - at);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  at = newline + 1;
  return true;
}

Chunked walk_chunked(std::string_view raw, size_t at) {
  Chunked chunked;
  std::string_view line;
  while (next_line(raw, at, line)) {
    chunked.size_lines.push_back(line);
    uint64_t size = 0;  // saturated: past the input is past it
    for (size_t i = 0; i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i])); ++i) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(line[i])));
      if (size < (uint64_t{1} << 56))
        size = size * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    if (size == 0) {
      chunked.trailers_begin = at;
      break;
    }
    if (size > raw.size() - at) return chunked;
    at += size;
    if (!next_line(raw, at, line)) return chunked;
  }
  if (chunked.trailers_begin == std::string_view::npos) return chunked;
  chunked.trailers_end = raw.size();
  while (next_line(raw, at, line)) {
    if (line.empty()) {
      chunked.trailers_end = at;
      break;
    }
    chunked.trailer_lines.push_back(line);
  }
  return chunked;
}

// Whether a quoted-string in `line` holds a control character other than HTAB, raw or after
// a '\\'.
bool has_control_in_quotes(std::string_view line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') {
      quoted = !quoted;
      continue;
    }
    if (quoted && line[i] == '\\' && i + 1 < line.size()) ++i;
    const auto byte = static_cast<unsigned char>(line[i]);
    if (quoted && byte != '\t' && (byte < 0x20 || byte == 0x7f)) return true;
  }
  return false;
}

// Whether a quoted-string opened in `line` is still open at its end ('\\' escapes a byte).
bool has_open_quote(std::string_view line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') {
      quoted = !quoted;
    } else if (quoted && line[i] == '\\') {
      ++i;
    }
  }
  return quoted;
}

size_t count_fields(const Message& message, std::string_view name) {
  size_t n = 0;
  for (const Field& field : message.fields) n += equals_ignoring_case(field.name, name) ? 1 : 0;
  return n;
}

const Field* first_field(const Message& message, std::string_view name) {
  for (const Field& field : message.fields) {
    if (equals_ignoring_case(field.name, name)) return &field;
  }
  return nullptr;
}

// Host = uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986 §3.2.2), written apart from sinter's.
bool host_is_valid(std::string_view host) {
  const auto allowed = [](char c, bool in_brackets) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z')) return true;
    if (in_brackets && c == ':') return true;
    return std::string_view("-._~!$&'()*+,;=").find(c) != std::string_view::npos;
  };
  std::string_view port;
  if (!host.empty() && host[0] == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    for (char c : host.substr(1, close - 1)) {
      if (!allowed(c, true)) return false;
    }
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return false;
      port = host.substr(close + 2);
    }
  } else {
    const size_t colon = host.find(':');
    if (colon != std::string_view::npos) port = host.substr(colon + 1);
    const std::string_view name = host.substr(0, colon);
    for (size_t i = 0; i < name.size(); ++i) {
      if (name[i] == '%' && i + 2 < name.size() && std::isxdigit(static_cast<unsigned char>(name[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(name[i + 2]))) {
        i += 2;
      } else if (!allowed(name[i], false)) {
        return false;
      }
    }
  }
  for (char c : port) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The target forms sinter serves (RFC 9112 §3.2): origin-form, absolute-form with an http or
// https scheme, asterisk-form; its path must percent-decode (RFC 3986 §2.1) to no NUL.
bool target_is_served(std::string_view target) {
  if (starts_with_ignoring_case(target, "http://") || starts_with_ignoring_case(target, "https://")) {
    const size_t slash = target.find('/', target.find("//") + 2);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  const std::string_view path = target.substr(0, target.find('?'));
  if (path != "*" && (path.empty() || path[0] != '/')) return false;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') continue;
    if (i + 2 >= path.size() || !std::isxdigit(static_cast<unsigned char>(path[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(path[i + 2])) || path.substr(i + 1, 2) == "00") {
      return false;
    }
    i += 2;
  }
  return true;
}

// #token with empty elements allowed (RFC 9110 §5.6.1): what Beast wants of Connection.
bool is_token_list(std::string_view value) {
  const std::string_view tchar = "!#$%&'*+-.^_`|~";
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view element = value.substr(0, comma);
    while (!element.empty() && (element.front() == ' ' || element.front() == '\t')) element.remove_prefix(1);
    while (!element.empty() && (element.back() == ' ' || element.back() == '\t')) element.remove_suffix(1);
    for (char c : element) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && tchar.find(c) == std::string_view::npos)
        return false;
    }
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
  }
  return true;
}

}  // namespace

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

size_t raw_offset(const Normalized& normalized, size_t offset) {
  size_t before = 0;
  while (before < normalized.inserted_at.size() && normalized.inserted_at[before] < offset) ++before;
  return offset + normalized.skipped - before;
}

Normalized normalize_head(std::string_view raw) {
  Normalized out;
  size_t at = 0;
  for (;;) {
    if (raw.substr(at, 1) == "\n") {
      at += 1;
    } else if (raw.substr(at, 2) == "\r\n") {
      at += 2;
    } else {
      break;
    }
  }
  out.skipped = at;
  while (at < raw.size()) {
    const size_t newline = raw.find('\n', at);
    if (newline == std::string_view::npos) break;
    std::string_view line = raw.substr(at, newline - at);
    out.bytes.append(line);
    if (line.empty() || line.back() != '\r') {
      out.bytes.push_back('\r');
      ++out.inserted;
      out.inserted_at.push_back(out.bytes.size() - 1);
    } else {
      line.remove_suffix(1);
    }
    out.bytes.push_back('\n');
    at = newline + 1;
    if (line.empty() && !out.head_lines.empty()) {
      out.head_end = at;
      break;
    }
    out.head_lines.push_back(line);
  }
  out.bytes.append(raw.substr(at));
  return out;
}

const char* sinter_refusal_by_design(std::string_view raw, const Normalized& normalized,
                                     const SinterReading& sinter, const BeastReading& beast) {
  const Message& head = beast.message;
  const Chunked chunked = beast.chunked && normalized.head_end != std::string_view::npos
                              ? walk_chunked(raw, normalized.head_end)
                              : Chunked{};

  // sinter bounds the head as a whole, with the empty lines before it and the trailers after
  // the body; Beast bounds the request line and the header fields each, and not the trailers.
  if (sinter.status == 414 || sinter.status == 431 ||
      (sinter.status == 400 && normalized.skipped > kHeadLimit)) {
    size_t counted = normalized.head_end == std::string_view::npos ? raw.size() : normalized.head_end;
    if (chunked.trailers_begin != std::string_view::npos)
      counted += chunked.trailers_end - chunked.trailers_begin;
    if (counted > kHeadLimit) return "head bytes counted as a whole";
  }
  // RFC 9112 §3.2: 400 for an HTTP/1.1 request without Host, and for any with several or an
  // invalid one. Beast leaves Host to the application.
  if (sinter.status == 400) {
    const size_t hosts = count_fields(head, "Host");
    if (hosts > 1 || (hosts == 0 && head.version >= 11)) return "Host missing or repeated";
    if (hosts == 1 && !host_is_valid(first_field(head, "Host")->value)) return "Host invalid";
  }
  // RFC 9112 §5.2: obs-fold is refused (400) rather than joined (Beast joins it with a space);
  // nginx refuses it too. The same for trailers.
  if (sinter.status == 400) {
    for (size_t i = 1; i < normalized.head_lines.size(); ++i) {
      const std::string_view line = normalized.head_lines[i];
      if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) return "obs-fold";
    }
    for (std::string_view line : chunked.trailer_lines) {
      if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) return "obs-fold";
    }
  }
  // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 request means faulty framing (400); Beast
  // reads HTTP/1.0 chunked bodies.
  const size_t codings = count_fields(head, "Transfer-Encoding");
  if (sinter.status == 400 && codings > 0 && head.version == 10) return "Transfer-Encoding in HTTP/1.0";
  // RFC 9112 §6.1: sinter decodes chunked alone, once, and answers 501 to a coding it does not
  // know (400 to an empty Transfer-Encoding or chunked twice); Beast takes a chunked
  // body whatever precedes the last "chunked", and reads a request whose last coding is not
  // chunked as having no body.
  if ((sinter.status == 400 || sinter.status == 501) && codings > 0) {
    std::vector<std::string_view> elements;
    bool empty_field = false;
    for (const Field& field : head.fields) {
      if (!equals_ignoring_case(field.name, "Transfer-Encoding")) continue;
      const size_t before = elements.size();
      std::string_view list = field.value;
      while (!list.empty()) {
        const size_t comma = list.find(',');
        std::string_view element = list.substr(0, comma);
        while (!element.empty() && (element.front() == ' ' || element.front() == '\t'))
          element.remove_prefix(1);
        while (!element.empty() && (element.back() == ' ' || element.back() == '\t'))
          element.remove_suffix(1);
        if (!element.empty()) elements.push_back(element);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
      empty_field = empty_field || elements.size() == before;
    }
    if (empty_field || elements.size() != 1 || !equals_ignoring_case(elements[0], "chunked")) {
      return "Transfer-Encoding other than one chunked";
    }
  }
  // RFC 9110 §8.6 lets a recipient refuse a repeated Content-Length or a list of the same
  // length ("2, 2"); sinter refuses them, as nginx does, Beast takes them.
  if (sinter.status == 400) {
    const Field* length = first_field(head, "Content-Length");
    if (count_fields(head, "Content-Length") > 1 ||
        (length != nullptr && length->value.find_first_not_of("0123456789") != std::string::npos)) {
      return "Content-Length repeated or a list";
    }
  }
  // RFC 9110 §10.1.1: a server may answer 417 to an Expect other than 100-continue; sinter does
  // when the request has a body. Beast leaves Expect to the application.
  if (sinter.status == 417) {
    const Field* expect = first_field(head, "Expect");
    if (expect != nullptr && !equals_ignoring_case(expect->value, "100-continue")) return "Expect";
  }
  // Beast 1.74 reads a quoted-string in a chunk extension on past the line's CRLF and waits
  // for the closing quote; sinter ends the chunk-size line at its CRLF and refuses the open
  // quote (RFC 9112 §7.1.1).
  if (sinter.status == 400) {
    for (std::string_view line : chunked.size_lines) {
      if (has_open_quote(line)) return "quoted chunk extension open at the line end";
      // Beast takes any byte in a quoted-string; RFC 9110 §5.6.4 allows HTAB, SP, visible
      // characters and obs-text, raw or escaped.
      if (has_control_in_quotes(line)) return "control character in a quoted chunk extension";
    }
  }
  // Beast takes any target of visible characters; sinter serves the forms of RFC 9112 §3.2 and
  // decodes the path.
  if (sinter.status == 400 && !target_is_served(head.target)) return "target form or escapes";
  return nullptr;
}

const char* beast_refusal_by_design(std::string_view raw, const Normalized& normalized,
                                    const BeastReading& beast) {
  const boost::system::error_code error = beast.error;
  // RFC 9110 §2.5: a message of a later HTTP/1.x minor version is read as the highest 1.x the
  // server knows; Beast takes 1.0 and 1.1 only.
  if (error == beast_http::error::bad_version) {
    std::string_view line = raw.substr(normalized.skipped);
    line = line.substr(0, line.find('\n'));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view version = line.substr(line.rfind(' ') + 1);
    if (version.size() == 8 && version.substr(0, 7) == "HTTP/1." && version[7] >= '2' && version[7] <= '9') {
      return "HTTP/1.x, x > 1";
    }
  }
  // Beast checks that Connection and Proxy-Connection are lists of tokens; sinter reads the
  // Connection tokens it knows and ignores the rest, as Go's net/http does.
  if (error == beast_http::error::bad_value) {
    for (size_t i = 1; i < normalized.head_lines.size(); ++i) {
      const std::string_view line = normalized.head_lines[i];
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string_view name = line.substr(0, colon);
      if ((equals_ignoring_case(name, "Connection") || equals_ignoring_case(name, "Proxy-Connection")) &&
          !is_token_list(line.substr(colon + 1))) {
        return "Connection not a token list";
      }
    }
  }
  // Beast applies its framing checks to trailer fields (Content-Length, Transfer-Encoding,
  // Connection); sinter reads trailers and drops them (RFC 9110 §6.5.1: framing fields may not be
  // trailers, and a recipient must not merge them into the head).
  if (beast.header_done && beast.chunked &&
      (error == beast_http::error::bad_content_length || error == beast_http::error::bad_transfer_encoding ||
       error == beast_http::error::bad_value) &&
      normalized.head_end != std::string_view::npos) {
    for (std::string_view line : walk_chunked(raw, normalized.head_end).trailer_lines) {
      for (std::string_view name :
           {"Content-Length", "Transfer-Encoding", "Connection", "Proxy-Connection"}) {
        if (starts_with_ignoring_case(line, name)) return "framing fields in trailers";
      }
    }
  }
  return nullptr;
}

bool refused_in_the_same_place(std::string_view ended, const Normalized& normalized,
                               const BeastReading& beast, const SinterReading& sinter) {
  if (beast.error == beast_http::error::header_limit) {
    return sinter.status == 414 || sinter.status == 431 || (sinter.status == 400 && normalized.skipped > 0);
  }
  // The start of the line Beast stopped in (it may have stepped past a bad CR).
  size_t beast_at = raw_offset(normalized, beast.consumed);
  beast_at = beast_at == 0 ? 0 : ended.rfind('\n', beast_at - 1) + 1;  // npos + 1 == 0
  if (sinter.error_at < beast_at) return false;
  if (beast.header_done) return true;
  // Beast checks Content-Length and Transfer-Encoding field by field, sinter once the head is in
  // (or it refuses a later line of the head first).
  if (beast.error == beast_http::error::bad_content_length ||
      beast.error == beast_http::error::bad_transfer_encoding) {
    return sinter.error_at <= normalize_head(ended).head_end;
  }
  // The line Beast refused, with the lines folded onto it (obs-fold, which Beast joins).
  size_t line_end = ended.find('\n', beast_at);
  while (line_end != std::string_view::npos && line_end + 1 < ended.size() &&
         (ended[line_end + 1] == ' ' || ended[line_end + 1] == '\t')) {
    line_end = ended.find('\n', line_end + 1);
  }
  return line_end != std::string_view::npos && sinter.error_at <= line_end + 1;
}

}  // namespace http_diff
