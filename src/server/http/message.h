// HTTP/1.1 messages as the server's handlers see them: a parsed request and the response a
// handler fills in, either whole (a body) or streamed (a pump that writes chunks as they come).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::server::http {

// Case-insensitive header names (RFC 9110 §5.1), in the order they came.
class Headers {
 public:
  struct Field {
    std::string name;
    std::string value;
  };

  // The first field named `name`, or nullptr.
  const std::string* find(std::string_view name) const;
  std::string get(std::string_view name) const { return find(name) ? *find(name) : std::string(); }
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // Replaces every field named `name` by one.
  void set(std::string_view name, std::string value);
  void add(std::string name, std::string value) { fields_.push_back({std::move(name), std::move(value)}); }

  const std::vector<Field>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }

 private:
  std::vector<Field> fields_;
};

bool equals_ignoring_case(std::string_view a, std::string_view b);

struct Request {
  std::string method;     // "GET", "POST", ...
  std::string target;     // as sent: "/api/tags?x=1"
  std::string path;       // percent-decoded, without the query: "/api/tags"
  std::string query;      // after '?', undecoded
  int minor_version = 1;  // HTTP/1.minor
  Headers headers;
  std::string body;  // de-chunked
  std::string client_address;
  std::vector<std::string> path_params;  // what a route's "{id}" matched

  // Whether the client has gone away (closed or reset its connection). Cheap; a handler that
  // waits polls it. Unset (tests, requests not from a socket): never gone.
  std::function<bool()> client_gone_check;
  bool client_gone() const { return client_gone_check && client_gone_check(); }

  const std::string* header(std::string_view name) const { return headers.find(name); }
};

// Where a streamed response's pieces go. write() is false once the client is gone.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual bool write(std::string_view data) = 0;
};

enum class PumpResult {
  kMore,      // call again (nothing may have been written: the pump waits a little, then returns)
  kFinished,  // the answer is complete
  kAbandoned  // the answer was cut (the client is gone, or the pump gave up)
};

// A response whose body is produced while it is sent. The status line and headers go out with
// the first piece written (a stream that waits in a queue has sent nothing yet, so the server can
// still tell whether its client is there: see connection.h).
struct StreamingBody {
  std::string content_type;
  std::function<PumpResult(ChunkSink&)> pump;
  // Called once when the stream is over; `completed`: every piece reached the socket and the
  // pump finished.
  std::function<void(bool completed)> on_end;
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  std::optional<StreamingBody> stream;

  void set_content(std::string content, std::string_view content_type) {
    body = std::move(content);
    headers.set("Content-Type", std::string(content_type));
  }
  void set_header(std::string_view name, std::string value) { headers.set(name, std::move(value)); }
};

// "OK", "Not Found", ... ("Unknown" for codes without a phrase here).
const char* reason_phrase(int status);

}  // namespace sinter::server::http
