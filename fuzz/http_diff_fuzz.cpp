// Differential fuzzing of the HTTP request parser against Boost.Beast's
// (http::request_parser<string_body>, Boost 1.74, a test-only dependency). The same bytes go to
// both, with the same limits on the head's bytes and the body's; they must agree on accept,
// reject or "needs more", and when both accept, on the framing: the bytes the request took, the
// method, target, version, header fields (in order; Beast keeps fields of one name together) and
// the de-chunked body. Then the rest of the input is parsed as the next request by both
// (pipelining). sinter is also fed in pieces, and must read the same as when fed at once.
//
// Where the two differ by design, the difference is explained by a named rule
// (http_diff_rules.cpp), checked on the input and on the other parser's reading of it, so that an
// explanation cannot cover a disagreement of another kind; docs/RELIABILITY.md lists the rules.
// Anything else is a bug in one of them, and traps with both readings printed.
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "http_diff.h"
#include "server/http/request_parser.h"

using namespace http_diff;

namespace {

namespace beast_http = boost::beast::http;
using sinter::server::http::ParserLimits;
using sinter::server::http::RequestParser;

// Inputs past this size are skipped: sinter's limits that Beast does not have (header count,
// chunk-size line length) are set beyond it, so they never decide.
constexpr size_t kMaxInput = 16 * 1024;

// Ends a line and the head or trailers after it, for the parser that has not judged yet: Beast
// reads the version only once 8 bytes of it are there, so the ending has 8.
constexpr char kEnding[] = "\r\n\r\n\r\n\r\n";

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kIncomplete: return "incomplete";
    case Outcome::kComplete: return "complete";
    case Outcome::kError: return "error";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// The two parsers.

ParserLimits sinter_limits() {
  ParserLimits limits;
  limits.max_header_bytes = kHeadLimit;
  limits.max_body_bytes = kBodyLimit;
  limits.max_headers = kMaxInput;
  limits.max_chunk_line_bytes = kMaxInput;
  return limits;
}

// Feeds `input` in pieces of `step` bytes (all at once when 0).
SinterReading read_with_sinter(std::string_view input, size_t step) {
  RequestParser parser(sinter_limits());
  SinterReading reading;
  if (step == 0) step = input.size() + 1;
  size_t at = 0;
  while (at < input.size() && parser.state() == RequestParser::State::kIncomplete) {
    const std::string_view piece = input.substr(at, step);
    const size_t used = parser.feed(piece);
    if (used > piece.size()) __builtin_trap();
    at += used;
    if (used < piece.size() && parser.state() == RequestParser::State::kIncomplete) __builtin_trap();
  }
  if (parser.headers_done() || parser.state() == RequestParser::State::kComplete) {
    const auto& request = parser.request();
    reading.message.method = request.method;
    reading.message.target = request.target;
    reading.message.version = 10 + request.minor_version;
    for (const auto& field : request.headers.fields())
      reading.message.fields.push_back({field.name, field.value});
    reading.message.body = request.body;
  }
  switch (parser.state()) {
    case RequestParser::State::kIncomplete: reading.outcome = Outcome::kIncomplete; break;
    case RequestParser::State::kComplete:
      reading.outcome = Outcome::kComplete;
      reading.consumed = at;
      break;
    case RequestParser::State::kError:
      reading.outcome = Outcome::kError;
      reading.status = parser.error().status;
      reading.error = parser.error().message;
      reading.error_at = at;
      break;
  }
  return reading;
}

BeastReading read_with_beast(std::string_view input, size_t head_limit) {
  beast_http::request_parser<beast_http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(head_limit));
  parser.body_limit(kBodyLimit);
  BeastReading reading;
  // Not eager at first: put() returns once the head is in, to copy the head before trailers
  // join its fields.
  while (!parser.is_done()) {
    boost::system::error_code error;
    const size_t used = parser.put(
        boost::asio::const_buffer(input.data() + reading.consumed, input.size() - reading.consumed), error);
    reading.consumed += used;
    if (parser.is_header_done() && !reading.header_done) {
      reading.header_done = true;
      reading.chunked = parser.chunked();
      const auto& request = parser.get();
      reading.message.method = std::string(request.method_string());
      reading.message.target = std::string(request.target());
      reading.message.version = static_cast<int>(request.version());
      // Beast keeps fields of one name together (a field goes after the last of its name).
      for (const auto& field : request) {
        reading.message.fields.push_back({std::string(field.name_string()), std::string(field.value())});
      }
      parser.eager(true);
    }
    if (error == beast_http::error::need_more) break;
    if (error) {
      reading.outcome = Outcome::kError;
      reading.error = error;
      return reading;
    }
    if (used == 0 && !parser.is_done()) break;
  }
  if (parser.is_done()) reading.outcome = Outcome::kComplete;
  if (reading.header_done) reading.message.body = parser.get().body();
  return reading;
}

// ---------------------------------------------------------------------------------------------
// The comparison.

// The fields in Beast's order: each after the last one of its name before it, else at the end.
std::vector<Field> group_by_name(const std::vector<Field>& fields) {
  std::vector<Field> grouped;
  for (const Field& field : fields) {
    auto at = grouped.end();
    for (auto it = grouped.begin(); it != grouped.end(); ++it) {
      if (equals_ignoring_case(it->name, field.name)) at = it + 1;
    }
    grouped.insert(at, field);
  }
  return grouped;
}

std::string printable(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n\n";
    } else if (u < 0x20 || u >= 0x7f || c == '\\') {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

std::string describe(const Message& message) {
  std::string out = message.method + " " + message.target + " " + std::to_string(message.version) + "\n";
  for (const Field& field : message.fields)
    out += "  [" + printable(field.name) + "]: [" + printable(field.value) + "]\n";
  out += "  body " + std::to_string(message.body.size()) + ": [" + printable(message.body) + "]\n";
  return out;
}

[[noreturn]] void disagree(std::string_view what, std::string_view input, const SinterReading& sinter,
                           const BeastReading& beast) {
  std::fprintf(stderr, "\n== sinter and Beast disagree: %.*s\n-- input:\n%s\n", static_cast<int>(what.size()),
               what.data(), printable(input).c_str());
  std::fprintf(stderr, "-- sinter: %s, consumed %zu, status %d %s\n%s", outcome_name(sinter.outcome),
               sinter.consumed, sinter.status, sinter.error.c_str(), describe(sinter.message).c_str());
  std::fprintf(stderr, "-- Beast: %s, consumed %zu, %s, head %s\n%s", outcome_name(beast.outcome),
               beast.consumed, beast.error.message().c_str(), beast.header_done ? "done" : "not done",
               describe(beast.message).c_str());
  __builtin_trap();
}

// HTTP_DIFF_VERBOSE=1 prints the rule that explains each difference (to see what a corpus covers).
size_t explained(const char* rule) {
  static const bool verbose = std::getenv("HTTP_DIFF_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "explained: %s\n", rule);
  return std::string_view::npos;
}

size_t piece_size(std::string_view input) {
  return 1 + (input.size() * 7 + static_cast<unsigned char>(input[0])) % 23;
}

// Compares the readings of the request at the front of `input`; the bytes it took when both
// accept it (then the next request follows), npos otherwise.
size_t compare_first_request(std::string_view input) {
  const SinterReading sinter = read_with_sinter(input, 0);
  const SinterReading split = read_with_sinter(input, piece_size(input));
  if (split.outcome != sinter.outcome || split.consumed != sinter.consumed || split.status != sinter.status ||
      (sinter.outcome == Outcome::kComplete && !(split.message == sinter.message))) {
    disagree("sinter fed in pieces reads otherwise", input, split, BeastReading{});
  }
  const Normalized normalized = normalize_head(input);
  const BeastReading beast = read_with_beast(normalized.bytes, kHeadLimit + normalized.inserted);

  if (sinter.outcome == beast.outcome) {
    if (sinter.outcome != Outcome::kComplete) return std::string_view::npos;
    const size_t beast_consumed = raw_offset(normalized, beast.consumed);
    if (sinter.consumed != beast_consumed) disagree("bytes consumed", input, sinter, beast);
    Message grouped = sinter.message;
    grouped.fields = group_by_name(sinter.message.fields);
    if (!(grouped == beast.message)) disagree("the request read", input, sinter, beast);
    return sinter.consumed;
  }

  switch (sinter.outcome) {
    case Outcome::kIncomplete:
      if (beast.outcome == Outcome::kError) {
        // The rules that say why Beast refused what sinter has read so far.
        if (const char* rule = beast_refusal_by_design(input, normalized, beast)) return explained(rule);
        // sinter judges a line once it is whole, Beast byte by byte: with the line and the head
        // ended, sinter must refuse too, or accept by an explained rule.
        const std::string ended = std::string(input) + kEnding;
        const SinterReading judged = read_with_sinter(ended, 0);
        if (judged.outcome == Outcome::kError &&
            refused_in_the_same_place(ended, normalized, beast, judged)) {
          return explained("a line judged once whole");
        }
        if (judged.message.version != 0) {  // the head is done (the body may wait)
          if (const char* rule = beast_refusal_by_design(ended, normalize_head(ended), beast)) {
            return explained(rule);
          }
        }
      }
      disagree("sinter needs more", input, sinter, beast);
    case Outcome::kError: {
      if (beast.outcome == Outcome::kComplete || beast.header_done) {
        if (const char* rule = sinter_refusal_by_design(input, normalized, sinter, beast))
          return explained(rule);
      }
      if (beast.outcome == Outcome::kIncomplete && (!beast.header_done || beast.chunked)) {
        // sinter refused before Beast had seen enough (a limit passed, a header or trailer line
        // judged alone): end the line and the head (or trailers) for Beast.
        const std::string ended = std::string(input) + kEnding;
        const Normalized normalized_ended = normalize_head(ended);
        const BeastReading judged =
            read_with_beast(normalized_ended.bytes, kHeadLimit + normalized_ended.inserted);
        if (judged.outcome == Outcome::kError) return explained("refused by Beast once the line ends");
        if (judged.header_done) {
          if (const char* rule = sinter_refusal_by_design(ended, normalized_ended, sinter, judged)) {
            return explained(rule);
          }
        }
      }
      disagree("sinter refuses", input, sinter, beast);
    }
    case Outcome::kComplete:
      if (beast.outcome == Outcome::kError) {
        if (const char* rule = beast_refusal_by_design(input, normalized, beast)) return explained(rule);
      }
      disagree("sinter accepts", input, sinter, beast);
  }
  return std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > kMaxInput) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // Pipelined: each request both accept is followed by the next.
  for (int request = 0; request < 8 && !input.empty(); ++request) {
    const size_t used = compare_first_request(input);
    if (used == std::string_view::npos || used == 0) break;
    input.remove_prefix(used);
  }
  return 0;
}
