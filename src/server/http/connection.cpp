#include "server/http/connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "sinter/result.h"

namespace sinter::server::http {
namespace {

constexpr std::string_view kProcessing = "HTTP/1.1 102 Processing\r\n\r\n";

std::string http_date() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  const size_t size = std::strftime(text, sizeof(text), "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return std::string(text, size);
}

bool is_framing_header(std::string_view name) {
  return equals_ignoring_case(name, "Content-Length") || equals_ignoring_case(name, "Transfer-Encoding") ||
         equals_ignoring_case(name, "Connection");
}

int milliseconds_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

// A stream's pieces as chunks (HTTP/1.1) or raw bytes (HTTP/1.0), the head with the first.
class StreamSink : public ChunkSink {
 public:
  StreamSink(Connection& connection, const Request& request, const Response& response, bool keep_alive,
             std::chrono::milliseconds timeout)
      : connection_(connection),
        request_(request),
        response_(response),
        keep_alive_(keep_alive),
        chunked_(request.minor_version >= 1),
        timeout_(timeout) {}

  bool write(std::string_view data) override {
    if (connection_.gone) return false;
    if (data.empty()) return true;
    std::string out = take_head();
    if (chunked_) {
      char size[24];
      std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
      out += size;
      out += data;
      out += "\r\n";
    } else {
      out += data;
    }
    if (!connection_.send_or_keep(out)) return false;
    // A client that reads slower than the stream is written holds the stream back, not memory.
    return connection_.out.size() <= Connection::kStreamBacklog ||
           connection_.flush_until(Connection::kStreamBacklog / 2, Clock::now() + timeout_);
  }

  // The end of the body (the head too when nothing was written); the I/O thread sends what the
  // socket does not take now.
  bool finish() {
    if (connection_.gone) return false;
    std::string out = take_head();
    if (chunked_) out += "0\r\n\r\n";
    return out.empty() || connection_.send_or_keep(out);
  }

 private:
  std::string take_head() {
    if (connection_.response_started) return {};
    connection_.response_started = true;
    return response_head(request_, response_, keep_alive_, false);
  }

  Connection& connection_;
  const Request& request_;
  const Response& response_;
  bool keep_alive_;
  bool chunked_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

Connection::~Connection() {
  if (fd >= 0) ::close(fd);
}

bool Connection::check_gone(bool may_probe) {
  if (gone) return true;
  pollfd poller{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&poller, 1, 0) > 0) {
    if ((poller.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
      gone = true;
      return true;
    }
    // Bytes of a next request are kept for later (up to a request head's size); a read of zero
    // bytes is the client's FIN.
    while (!input_closed && pending.size() < kPendingLimit) {
      char buffer[4096];
      const ssize_t got = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (got > 0) {
        pending.append(buffer, static_cast<size_t>(got));
      } else if (got == 0) {
        input_closed = true;
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      } else {
        gone = true;
        return true;
      }
    }
  }
  if (input_closed && !may_probe) {
    gone = true;  // HTTP/1.0 has no interim answer to probe with: its client hung up
    return true;
  }
  if (input_closed && !probed && !response_started) {
    probed = true;
    const ssize_t sent = ::send(fd, kProcessing.data(), kProcessing.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) gone = true;
  }
  return gone;
}

// Sends from the front of `data` until the socket would block; the bytes sent, or -1 on failure.
ssize_t send_some(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t sent = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent > 0) {
      done += static_cast<size_t>(sent);
    } else if (sent < 0 && errno == EINTR) {
      continue;
    } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else {
      return -1;
    }
  }
  return static_cast<ssize_t>(done);
}

bool Connection::send_or_keep(std::string_view data) {
  if (gone) return false;
  if (!out.empty()) {
    out.append(data);
    return flush_now();
  }
  const ssize_t sent = send_some(fd, data);
  if (sent < 0) {
    gone = true;
    return false;
  }
  out.assign(data.substr(static_cast<size_t>(sent)));
  return true;
}

bool Connection::flush_now() {
  if (gone) return false;
  if (out.empty()) return true;
  const ssize_t sent = send_some(fd, out);
  if (sent < 0) {
    gone = true;
    return false;
  }
  out.erase(0, static_cast<size_t>(sent));
  return true;
}

bool Connection::flush_until(size_t keep, Clock::time_point until) {
  // Waits in short slices, so that the end of the shutdown grace (`cut`) is seen soon.
  constexpr int kSliceMs = 100;
  while (!gone && out.size() > keep) {
    if (!flush_now()) break;
    if (out.size() <= keep) break;
    const int wait = std::min(milliseconds_until(until), kSliceMs);
    if (wait <= 0 || (cut != nullptr && cut->load())) {
      gone = true;  // the client reads nothing within the write timeout, or the server stops
      break;
    }
    pollfd poller{fd, POLLOUT, 0};
    if (::poll(&poller, 1, wait) > 0 && (poller.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) gone = true;
  }
  return !gone;
}

bool wants_keep_alive(const Request& request) {
  const std::string* connection = request.header("Connection");
  bool close = false;
  bool keep = false;
  if (connection != nullptr) {
    std::string_view value = *connection;
    while (!value.empty()) {
      const size_t comma = value.find(',');
      std::string_view option = value.substr(0, comma);
      while (!option.empty() && option.front() == ' ') option.remove_prefix(1);
      while (!option.empty() && option.back() == ' ') option.remove_suffix(1);
      if (equals_ignoring_case(option, "close")) close = true;
      if (equals_ignoring_case(option, "keep-alive")) keep = true;
      if (comma == std::string_view::npos) break;
      value.remove_prefix(comma + 1);
    }
  }
  return request.minor_version >= 1 ? !close : keep && !close;
}

std::string response_head(const Request& request, const Response& response, bool keep_alive, bool head_only) {
  std::string head = concat("HTTP/1.1 ", response.status, " ", reason_phrase(response.status), "\r\n");
  for (const Headers::Field& field : response.headers.fields()) {
    if (is_framing_header(field.name)) continue;
    head += field.name;
    head += ": ";
    head += field.value;
    head += "\r\n";
  }
  if (response.stream) {
    if (!response.headers.has("Content-Type"))
      head += "Content-Type: " + response.stream->content_type + "\r\n";
    if (request.minor_version >= 1) head += "Transfer-Encoding: chunked\r\n";
  } else if (response.status >= 200 && response.status != 204 && response.status != 304) {
    head += concat("Content-Length: ", response.body.size(), "\r\n");
  }
  (void)head_only;  // a HEAD answer announces the length of the body it leaves out
  head += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  head += "Date: " + http_date() + "\r\n\r\n";
  return head;
}

bool write_response(Connection& connection, const Request& request, Response& response, bool keep_alive,
                    std::chrono::milliseconds write_timeout) {
  const bool may_probe = request.minor_version >= 1;
  if (!response.stream) {
    const bool head_only = request.method == "HEAD";
    std::string out = response_head(request, response, keep_alive, head_only);
    if (!head_only) out += response.body;
    connection.response_started = true;
    return connection.send_or_keep(out) && keep_alive;
  }
  StreamingBody& stream = *response.stream;
  if (request.minor_version == 0) keep_alive = false;  // the body ends with the connection
  StreamSink sink(connection, request, response, keep_alive, write_timeout);
  PumpResult result = PumpResult::kMore;
  while (result == PumpResult::kMore) {
    result = stream.pump(sink);
    if (result == PumpResult::kMore && (!connection.flush_now() || connection.check_gone(may_probe)))
      result = PumpResult::kAbandoned;
  }
  const bool completed = result == PumpResult::kFinished && sink.finish();
  if (stream.on_end) stream.on_end(completed);
  return completed && keep_alive;
}

}  // namespace sinter::server::http
