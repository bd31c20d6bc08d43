// The HTTP request parser alone: framing, limits and their statuses, byte-at-a-time feeding.
#include <gtest/gtest.h>

#include <string>

#include "server/cors.h"
#include "server/http/request_parser.h"
#include "server/http/router.h"

namespace sinter::server::http {
namespace {

ParserLimits small_limits() {
  ParserLimits limits;
  limits.max_header_bytes = 1024;
  limits.max_headers = 8;
  limits.max_body_bytes = 100;
  return limits;
}

// Feeds `input` in pieces of `step` bytes; returns the parser after the last piece it took.
RequestParser parse(const std::string& input, size_t step = 0, ParserLimits limits = small_limits()) {
  RequestParser parser(limits);
  if (step == 0) step = input.size();
  for (size_t at = 0; at < input.size() && parser.state() == RequestParser::State::kIncomplete; at += step) {
    parser.feed(std::string_view(input).substr(at, step));
  }
  return parser;
}

TEST(HttpParser, ContentLengthBodyInAnySplit) {
  const std::string input =
      "POST /api/generate?x=1 HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\n"
      "Content-Length: 11\r\n\r\n{\"a\": true}";
  for (size_t step : {size_t{1}, size_t{2}, size_t{7}, input.size()}) {
    RequestParser parser = parse(input, step);
    ASSERT_EQ(parser.state(), RequestParser::State::kComplete) << step;
    const Request request = parser.take_request();
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.path, "/api/generate");
    EXPECT_EQ(request.query, "x=1");
    EXPECT_EQ(request.body, "{\"a\": true}");
    EXPECT_EQ(request.minor_version, 1);
    EXPECT_EQ(request.headers.get("content-type"), "application/x-www-form-urlencoded");
  }
}

TEST(HttpParser, ChunkedBodyWithExtensionsAndTrailers) {
  const std::string input =
      "POST /v1/completions HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4;name=value\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Trailer: 1\r\n\r\n";
  for (size_t step : {size_t{1}, size_t{3}, input.size()}) {
    RequestParser parser = parse(input, step);
    ASSERT_EQ(parser.state(), RequestParser::State::kComplete) << step;
    EXPECT_EQ(parser.request().body, "Wikipedia");
    EXPECT_FALSE(parser.request().headers.has("X-Trailer"));
  }
}

TEST(HttpParser, PipelinedRequestsAreSeparated) {
  const std::string first = "GET /health HTTP/1.1\r\nHost: h\r\n\r\n";
  const std::string input = first + "GET /api/tags HTTP/1.1\r\nHost: h\r\n\r\n";
  RequestParser parser(small_limits());
  const size_t used = parser.feed(input);
  EXPECT_EQ(used, first.size());
  ASSERT_EQ(parser.state(), RequestParser::State::kComplete);
  EXPECT_EQ(parser.take_request().path, "/health");
  parser.reset();
  EXPECT_EQ(parser.feed(std::string_view(input).substr(used)), input.size() - used);
  EXPECT_EQ(parser.take_request().path, "/api/tags");
}

TEST(HttpParser, BodyLimitHoldsHoweverTheBodyIsFramed) {
  const RequestParser by_length = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 101\r\n\r\n");
  ASSERT_EQ(by_length.state(), RequestParser::State::kError);
  EXPECT_EQ(by_length.error().status, 413);
  EXPECT_NE(by_length.error().message.find("limit of 100 bytes"), std::string::npos);

  // 60 + 60 bytes in two chunks: refused at the second chunk's size line, before its data.
  const std::string chunk(60, 'x');
  const RequestParser chunked = parse(
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3c\r\n" + chunk + "\r\n3c\r\n", 5);
  ASSERT_EQ(chunked.state(), RequestParser::State::kError);
  EXPECT_EQ(chunked.error().status, 413);
  EXPECT_NE(chunked.error().message.find("limit of 100 bytes"), std::string::npos);
  const RequestParser huge_chunk =
      parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n");
  EXPECT_EQ(huge_chunk.error().status, 413);
}

TEST(HttpParser, HeaderLimitsAnswer431And414) {
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 9; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  const RequestParser counted = parse(many + "\r\n", 3);
  ASSERT_EQ(counted.state(), RequestParser::State::kError);
  EXPECT_EQ(counted.error().status, 431);

  const RequestParser large = parse("GET / HTTP/1.1\r\nX-Big: " + std::string(2000, 'a'), 100);
  ASSERT_EQ(large.state(), RequestParser::State::kError);
  EXPECT_EQ(large.error().status, 431);

  const RequestParser long_line = parse("GET /" + std::string(2000, 'a'), 100);
  ASSERT_EQ(long_line.state(), RequestParser::State::kError);
  EXPECT_EQ(long_line.error().status, 414);
}

TEST(HttpParser, MalformedRequestsAreRefusedWithTheirStatus) {
  const struct {
    const char* input;
    int status;
  } cases[] = {
      {"GARBAGE\r\n\r\n", 400},
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"GET / HTTX/1.1\r\n\r\n", 400},
      {"GET noslash HTTP/1.1\r\n\r\n", 400},
      {"GET /%zz HTTP/1.1\r\n\r\n", 400},
      {"GET /%00 HTTP/1.1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: h\r\nNo colon here\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: h\r\nBad Name: v\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: h\r\nA: b\r\n folded\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +2\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400},
      {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nExpect: magic\r\n\r\n", 417},
  };
  for (const auto& c : cases) {
    const RequestParser parser = parse(c.input);
    ASSERT_EQ(parser.state(), RequestParser::State::kError) << c.input;
    EXPECT_EQ(parser.error().status, c.status) << c.input;
    EXPECT_FALSE(parser.error().message.empty());
  }
}

TEST(HttpParser, ExpectContinueAbsoluteFormAndHttp10) {
  RequestParser parser(small_limits());
  parser.feed(
      "POST http://localhost:11434/api/chat HTTP/1.1\r\nHost: localhost:11434\r\n"
      "Content-Length: 2\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_TRUE(parser.headers_done());
  EXPECT_TRUE(parser.expects_continue());
  EXPECT_EQ(parser.state(), RequestParser::State::kIncomplete);
  EXPECT_EQ(parser.request().path, "/api/chat");
  parser.feed("{}");
  EXPECT_EQ(parser.state(), RequestParser::State::kComplete);

  const RequestParser old = parse("\r\nGET /v1/models/a%3Ab HTTP/1.0\n\n");
  ASSERT_EQ(old.state(), RequestParser::State::kComplete);
  EXPECT_EQ(old.request().minor_version, 0);
  EXPECT_EQ(old.request().path, "/v1/models/a:b");

  const RequestParser upper = parse("GET HTTPS://localhost:11434/api/tags?x=1 HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_EQ(upper.state(), RequestParser::State::kComplete);
  EXPECT_EQ(upper.request().path, "/api/tags");
  EXPECT_EQ(upper.request().query, "x=1");
}

// RFC 9112 §3.2: an HTTP/1.1 request needs a Host, no request may have two, and an invalid one
// is refused (Go's net/http and nginx answer 400 too). HTTP/1.0 may go without.
TEST(HttpParser, Http11NeedsExactlyOneValidHost) {
  for (const char* refused : {
           "GET / HTTP/1.1\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
           "GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a%zz\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: user@a\r\n\r\n",
       }) {
    const RequestParser parser = parse(refused);
    ASSERT_EQ(parser.state(), RequestParser::State::kError) << refused;
    EXPECT_EQ(parser.error().status, 400) << refused;
    EXPECT_NE(parser.error().message.find("Host"), std::string::npos) << parser.error().message;
  }
  for (const char* accepted : {
           "GET / HTTP/1.1\r\nHost: localhost:11434\r\n\r\n",
           "GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: my-host.example%2d.org\r\n\r\n",
           "GET / HTTP/1.1\r\nHost:\r\n\r\n",
           "GET / HTTP/1.0\r\n\r\n",
       }) {
    EXPECT_EQ(parse(accepted).state(), RequestParser::State::kComplete) << accepted;
  }
}

// RFC 9110 §5.5: a field value is visible characters, obs-text, SP and HTAB; any other control
// character is refused, in headers and trailers alike. Header names are tokens (§5.1).
TEST(HttpParser, ControlCharactersInFieldValuesAndBadNamesAreRefused) {
  const std::string head = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (const std::string& value : {std::string("a\x01b"), std::string("a\x1b[31m"), std::string("a\x7f"),
                                   std::string("a\rb"), std::string("a\0b", 3), std::string("\x0b")}) {
    const RequestParser parser = parse(head + "X-Value: " + value + "\r\n\r\n");
    ASSERT_EQ(parser.state(), RequestParser::State::kError) << value;
    EXPECT_EQ(parser.error().status, 400);
    EXPECT_NE(parser.error().message.find("control character"), std::string::npos);
  }
  const RequestParser trailer =
      parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: \x05\r\n\r\n");
  EXPECT_EQ(trailer.state(), RequestParser::State::kError);
  const RequestParser fine = parse(head + "X-Value: tab\there, caf\xc3\xa9 \t\r\n\r\n");
  ASSERT_EQ(fine.state(), RequestParser::State::kComplete);
  EXPECT_EQ(fine.request().headers.get("x-value"), "tab\there, caf\xc3\xa9");

  for (const char* line : {"X(y): v", "X y: v", "X\x01: v", ": v", "Host : h", "X\xc3\xa9: v"}) {
    const RequestParser parser = parse(head + line + "\r\n\r\n");
    ASSERT_EQ(parser.state(), RequestParser::State::kError) << line;
    EXPECT_EQ(parser.error().status, 400);
  }
}

// Inputs on which the differential fuzz target (fuzz/http_diff_fuzz.cpp) found sinter reading
// otherwise than Boost.Beast and sinter was wrong; each is kept in fuzz/corpus/http_diff/found_*.
TEST(HttpParser, WhatTheDifferentialFuzzerFound) {
  const std::string host = "Host: h\r\n";
  const std::string chunked = "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n";
  const struct {
    std::string input;
    int status;  // 0: accepted
  } cases[] = {
      // A control character in the request-target (RFC 9112 §3.2, RFC 3986 §2).
      {std::string("POST /api/gener\x01\x90") + "ate HTTP/1.1\r\n" + host + "\r\n", 400},
      {"GET /a\x7f HTTP/1.1\r\n" + host + "\r\n", 400},
      {"GET /a\tb HTTP/1.1\r\n" + host + "\r\n", 400},
      {"GET /caf\xc3\xa9 HTTP/1.1\r\n" + host + "\r\n", 0},
      // A bare LF after a chunk's data, in a chunk-size line and in the trailers: Beast wants
      // CRLF; where a chunked body ends must not depend on who reads it (request smuggling).
      {chunked + "6\r\nhello\r\n0\r\n\r\n", 400},
      {chunked + "5\nhello\r\n0\r\n\r\n", 400},
      {chunked + "5\r\nhello\r\n0\r\n\n", 400},
      {chunked + "0\r\nX: 1\n\r\n", 400},
      {"POST / HTTP/1.1\n" + host + "Transfer-Encoding: chunked\n\n5\r\nhello\r\n0\r\n\r\n", 0},
      // Chunk extensions were cut off unread; they follow RFC 9112 §7.1.1 now, and the chunk size
      // starts the line (no whitespace around it but the BWS before ';').
      {chunked + std::string("0;\0\0last\r\n\r\n", 12), 400},
      {chunked + "1;q=\"open\r\nX\r\n0\r\n\r\n", 400},
      {chunked + "1;q=\"a\x01\"\r\nX\r\n0\r\n\r\n", 400},
      {chunked + "1;\r\nX\r\n0\r\n\r\n", 400},
      {chunked + "1;a=\r\nX\r\n0\r\n\r\n", 400},
      {chunked + "1;a \r\nX\r\n0\r\n\r\n", 400},
      {chunked + "1 \r\nX\r\n0\r\n\r\n", 400},
      {chunked + " 1\r\nX\r\n0\r\n\r\n", 400},
      {chunked + "1 ; a = \"q\\\"\xc3\xa9\" ;b;c=d\r\nX\r\n0;last\r\n\r\n", 0},
      {chunked + "00000000000000000001\r\nX\r\n0\r\n\r\n", 0},
      {chunked + "10000000000000000\r\n", 413},
      // A lone CR before the request line was skipped as if it were an empty line (RFC 9112 §2.2
      // allows skipping CRLF, and a bare LF, not CR).
      {"\rPOST /api/generate HTTP/1.1\r\n" + host + "\r\n", 400},
      {"\r\r\nGET / HTTP/1.1\r\n" + host + "\r\n", 400},
      {"\r\n\nGET / HTTP/1.1\r\n" + host + "\r\n", 0},
      // An absolute-form target whose scheme is not in lower case (schemes ignore case, RFC 3986
      // §3.1).
      {"POST Https://localhost/api/chat HTTP/1.1\r\n" + host + "\r\n", 0},
      {"GET HTTP://localhost HTTP/1.1\r\n" + host + "\r\n", 0},
      // An empty Transfer-Encoding after "chunked" was let through. Every Transfer-Encoding field
      // lists a coding now, and chunked comes once.
      {"POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nTransfer-Encoding:\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: ,\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked, chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
       400},
      {"POST / HTTP/1.0\r\nTransfer-Encoding: gzip\r\n\r\n", 400},
  };
  for (const auto& c : cases) {
    for (size_t step : {size_t{0}, size_t{1}, size_t{3}}) {
      const RequestParser parser = parse(c.input, step);
      if (c.status == 0) {
        EXPECT_EQ(parser.state(), RequestParser::State::kComplete)
            << c.input << ": " << parser.error().message;
      } else {
        ASSERT_EQ(parser.state(), RequestParser::State::kError) << c.input << " in pieces of " << step;
        EXPECT_EQ(parser.error().status, c.status) << c.input << " in pieces of " << step;
      }
    }
  }
}

TEST(HttpRouter, MethodsParametersAndUnknownPaths) {
  Router router;
  int called = 0;
  router.add("POST", "/api/chat", [&](Request&, Response&) { called = 1; });
  router.add("GET", "/v1/models/{id}", [&](Request&, Response&) { called = 2; });
  router.add("GET", "/v1/models", [&](Request&, Response&) { called = 3; });

  Router::Match wrong = router.find("GET", "/api/chat");
  EXPECT_EQ(wrong.handler, nullptr);
  EXPECT_EQ(wrong.allowed, std::vector<std::string>{"POST"});
  Router::Match model = router.find("GET", "/v1/models/org/name:latest");
  ASSERT_NE(model.handler, nullptr);
  EXPECT_EQ(model.params, std::vector<std::string>{"org/name:latest"});
  EXPECT_EQ(model.pattern, "/v1/models/{id}");
  Router::Match head = router.find("HEAD", "/v1/models");
  ASSERT_NE(head.handler, nullptr);
  Request request;
  Response response;
  (*head.handler)(request, response);
  EXPECT_EQ(called, 3);
  EXPECT_TRUE(router.find("GET", "/v1/models/").allowed.empty());
  EXPECT_TRUE(router.find("GET", "/nothing").allowed.empty());
}

TEST(Cors, LocalOriginsByDefaultAndPatternsGiven) {
  const CorsPolicy policy(split_origins("https://*.example.com, http://tool:8080"));
  for (const char* allowed :
       {"http://localhost", "http://localhost:3000", "https://127.0.0.1:8443", "http://[::1]:5173",
        "app://obsidian.md", "https://chat.example.com", "http://tool:8080"}) {
    EXPECT_TRUE(policy.allows(allowed)) << allowed;
  }
  for (const char* refused : {"https://evil.com", "http://localhost.evil.com", "http://tool:8081",
                              "https://example.com.evil.org", "null"}) {
    EXPECT_FALSE(policy.allows(refused)) << refused;
  }
  EXPECT_TRUE(CorsPolicy({"*"}).allows("https://anything.org"));
  EXPECT_TRUE(wildcard_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(wildcard_match("a*b*c", "aXXbYY"));
}

}  // namespace
}  // namespace sinter::server::http
