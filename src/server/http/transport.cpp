#include "server/http/transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/log.h"
#include "server/http/connection.h"
#include "server/http/worker_cpu.h"

namespace sinter::server::http {
namespace {

constexpr auto kSweepInterval = std::chrono::milliseconds(100);
// After an error answer, what a client still sends is read and dropped for this long (or this
// many bytes), so that closing does not reset the connection before the client read the answer.
constexpr auto kDrainTime = std::chrono::seconds(2);
constexpr size_t kDrainLimit = 8 * 1024 * 1024;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// Requests up to this size (or a sixteenth of the body limit, if less) are received whatever the
// large ones beside them hold.
constexpr size_t kSmallRequestBytes = 64 * 1024;

std::string address_text(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof(text));
    return text;
  }
  if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
      inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof(text));
    } else {
      inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
    }
    return text;
  }
  return "unknown";
}

// Sends what fits now; an answer the I/O thread writes is small and the socket's buffer empty.
void send_now(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return;
    data.remove_prefix(static_cast<size_t>(sent));
  }
}

Result<int> listen_socket(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const std::string service = std::to_string(port);
  if (const int status =
          getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &addresses);
      status != 0) {
    return make_error(ErrorCode::kIo, "cannot listen on ", host, ": ", gai_strerror(status));
  }
  int error = 0;
  for (addrinfo* address = addresses; address != nullptr; address = address->ai_next) {
    const int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            address->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, address->ai_addr, address->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      freeaddrinfo(addresses);
      return fd;
    }
    error = errno;
    ::close(fd);
  }
  freeaddrinfo(addresses);
  return make_error(ErrorCode::kIo, "cannot listen on ", host, ":", port, ": ", std::strerror(error),
                    error == EADDRINUSE ? " (is another server using the port?)" : "");
}

}  // namespace

struct Transport::Impl {
  TransportOptions options;
  Handler handler;
  ErrorResponder error_responder;
  AnswerObserver observer;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  // Kept open to be closed when accept() finds no descriptor left: the connection it then takes
  // is answered 503 and closed, instead of staying in the backlog (where epoll reports it again
  // and again) with its client waiting.
  int reserve_fd = -1;
  int port = 0;
  std::atomic<bool> shutting_down{false};
  std::atomic<bool> cutting{false};
  std::atomic<size_t> busy{0};
  size_t receiving_bytes = 0;  // bytes of requests being received (the I/O thread's)

  // The I/O thread's own.
  std::unordered_map<int, std::unique_ptr<Connection>> connections;
  std::unordered_map<std::string, size_t> per_client;
  Clock::time_point last_sweep;
  bool accept_paused = false;  // no descriptor to take a connection with: until the next sweep
  Clock::time_point last_accept_warning;
  size_t accept_failures = 0;  // since the last warning

  // Connections that workers answered, and sockets given by adopt().
  std::mutex returned_mutex;
  std::vector<Connection*> returned;
  std::vector<std::pair<int, std::string>> adopted;

  // The workers: started as requests need them up to max_workers, leaving after kWorkerIdle.
  std::mutex pool_mutex;
  std::condition_variable pool_wake;
  std::condition_variable pool_empty;
  std::deque<Connection*> jobs;
  size_t live_workers = 0;
  size_t idle_workers = 0;
  bool pool_stopping = false;
  WorkerCpuWatch cpu_watch;  // workers of heavy requests yield (server/http/worker_cpu.h)

  ~Impl();
  void wake();
  void accept_all();
  // Takes a new connection's socket under the caps (or refuses it).
  void add_connection(int fd, std::string peer);
  // Closes a connection of `peer` (any client when empty) that never sent a byte, else an idle
  // keep-alive one, the oldest first; false when there is none.
  bool make_room(const std::string& peer);
  void warn_accept(int error);
  void refuse_connection(int fd, const std::string& peer, const std::string& message);
  void on_readable(Connection& connection);
  void on_writable(Connection& connection);
  // Feeds bytes of a request; false when the connection was handed to a worker or closed.
  bool consume(Connection& connection, std::string_view data);
  void answer_error(Connection& connection, int status, const std::string& message);
  // Takes the connection's request out of the receiving total.
  void uncount(Connection& connection);
  void dispatch(Connection& connection);
  bool start_worker();
  void take_returned();
  // After an answer was sent: the next request (pipelined bytes, or wait for one), or close.
  void next_request(Connection& connection);
  void watch(Connection& connection, uint32_t events, int operation);
  void sweep();
  void close_connection(Connection& connection);
  void close_unanswered();
  void worker_loop();
  void serve(Connection& connection);
};

namespace {

constexpr auto kWorkerIdle = std::chrono::seconds(30);
// At a connection cap, a connection idle for this long (or half the header deadline, if less)
// may be closed to make room.
constexpr auto kEvictableAfter = std::chrono::seconds(1);
constexpr auto kAcceptWarningInterval = std::chrono::seconds(10);

}  // namespace

Transport::Impl::~Impl() {
  {
    std::unique_lock<std::mutex> lock(pool_mutex);
    pool_stopping = true;
    pool_wake.notify_all();
    pool_empty.wait(lock, [this] { return live_workers == 0; });
  }
  connections.clear();
  for (const int fd : {listen_fd, epoll_fd, wake_fd, reserve_fd}) {
    if (fd >= 0) ::close(fd);
  }
}

void Transport::Impl::wake() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(wake_fd, &one, sizeof(one));
}

void Transport::Impl::warn_accept(int error) {
  ++accept_failures;
  const auto now = Clock::now();
  if (now - last_accept_warning < kAcceptWarningInterval) return;
  log_warn("server", "accept: ", std::strerror(error), " (", accept_failures,
           " times since the last warning; ", connections.size(), " connections open)");
  last_accept_warning = now;
  accept_failures = 0;
}

void Transport::Impl::accept_all() {
  for (;;) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    int fd =
        ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&address), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (error == EINTR || error == ECONNABORTED) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) return;
      warn_accept(error);
      if ((error == EMFILE || error == ENFILE) && reserve_fd >= 0) {
        ::close(reserve_fd);
        reserve_fd = -1;
        fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&address), &length,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
          refuse_connection(fd, address_text(address), "the server has no file descriptors left; try again");
        }
        reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && reserve_fd >= 0) continue;
      }
      // Nothing to take a connection with: stop listening until the next sweep, not spin.
      accept_paused = true;
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    add_connection(fd, address_text(address));
  }
}

void Transport::Impl::add_connection(int fd, std::string peer) {
  if (connections.size() >= options.max_connections && !make_room("")) {
    refuse_connection(fd, peer,
                      concat("the server has its limit of ", options.max_connections, " connections"));
    return;
  }
  if (per_client[peer] >= options.max_connections_per_client && !make_room(peer)) {
    refuse_connection(
        fd, peer,
        concat(peer, " has the limit of ", options.max_connections_per_client, " connections open"));
    return;
  }
  ++per_client[peer];
  auto connection = std::make_unique<Connection>(fd, std::move(peer), options.limits);
  connection->cut = &cutting;
  connection->idle_since = Clock::now();
  // A connection's first request has the header deadline from the moment it opens: a socket
  // that says nothing does not hold a place for long.
  connection->deadline = connection->idle_since + options.header_timeout;
  Connection& added = *connection;
  connections.emplace(fd, std::move(connection));
  watch(added, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
}

bool Transport::Impl::make_room(const std::string& peer) {
  // Only connections idle for a while: in a burst, a connection whose first bytes the loop has not
  // read yet is not silent.
  const auto idle_before =
      Clock::now() - std::min<Clock::duration>(kEvictableAfter, options.header_timeout / 2);
  Connection* silent = nullptr;
  Connection* idle = nullptr;
  for (auto& [fd, connection] : connections) {
    if (connection->phase != Connection::Phase::kIdle || (!peer.empty() && connection->peer != peer) ||
        connection->idle_since > idle_before)
      continue;
    Connection*& oldest = connection->spoke ? idle : silent;
    if (oldest == nullptr || connection->idle_since < oldest->idle_since) oldest = connection.get();
  }
  Connection* victim = silent != nullptr ? silent : idle;
  if (victim == nullptr) return false;
  close_connection(*victim);
  return true;
}

void Transport::Impl::refuse_connection(int fd, const std::string& peer, const std::string& message) {
  Request request;
  request.client_address = peer;
  Response response;
  error_responder(request, 503, message, response);
  response.set_header("Retry-After", "1");
  send_now(fd, response_head(request, response, false, false) + response.body);
  observer(request, 503);
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

void Transport::Impl::watch(Connection& connection, uint32_t events, int operation) {
  epoll_event event{};
  event.events = events;
  event.data.fd = connection.fd;
  epoll_ctl(epoll_fd, operation, connection.fd, &event);
}

void Transport::Impl::on_readable(Connection& connection) {
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t got = ::recv(connection.fd, buffer, sizeof(buffer), 0);
    if (got > 0) {
      connection.spoke = true;
      if (connection.phase == Connection::Phase::kDraining) {
        connection.drained_bytes += static_cast<size_t>(got);
        if (connection.drained_bytes > kDrainLimit) return close_connection(connection);
        continue;
      }
      if (!consume(connection, std::string_view(buffer, static_cast<size_t>(got)))) return;
      continue;
    }
    if (got == 0) {
      if (connection.phase == Connection::Phase::kReading) {
        answer_error(connection, 400, "the connection closed before the request was complete");
      }
      return close_connection(connection);
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) close_connection(connection);
    return;
  }
}

void Transport::Impl::on_writable(Connection& connection) {
  if (!connection.flush_now()) return close_connection(connection);
  if (!connection.out.empty()) {
    connection.deadline = Clock::now() + options.write_timeout;  // it reads: more time
    return;
  }
  next_request(connection);
}

bool Transport::Impl::consume(Connection& connection, std::string_view data) {
  if (connection.phase == Connection::Phase::kIdle) {
    connection.phase = Connection::Phase::kReading;
    connection.deadline = Clock::now() + options.header_timeout;
  }
  RequestParser& parser = connection.parser;
  const size_t used = parser.feed(data);
  // What the request holds now (headers and body) counts against the receiving budget.
  uncount(connection);
  connection.counted_bytes = parser.request().body.size() + parser.request().target.size();
  receiving_bytes += connection.counted_bytes;
  // A small request is not refused for the large ones being received beside it (its bytes are
  // bounded by the connection cap in all).
  if (parser.state() != RequestParser::State::kError && receiving_bytes > options.max_receiving_bytes &&
      connection.counted_bytes > std::min(kSmallRequestBytes, options.limits.max_body_bytes / 16)) {
    uncount(connection);
    answer_error(connection, 503,
                 concat("the server is receiving more than ", options.max_receiving_bytes,
                        " bytes of requests at once; try again"));
    return true;
  }
  switch (parser.state()) {
    case RequestParser::State::kError:
      answer_error(connection, parser.error().status, parser.error().message);
      connection.drained_bytes += data.size() - used;
      return true;  // the caller reads on, to drain
    case RequestParser::State::kComplete:
      connection.pending.assign(data.substr(used));
      dispatch(connection);
      return false;
    case RequestParser::State::kIncomplete: break;
  }
  if (parser.headers_done() && !connection.headers_seen) {
    connection.headers_seen = true;
    connection.deadline = Clock::now() + options.body_timeout;
  }
  if (parser.expects_continue() && !connection.continue_sent) {
    connection.continue_sent = true;
    send_now(connection.fd, kContinue);
  }
  return true;
}

void Transport::Impl::uncount(Connection& connection) {
  receiving_bytes -= connection.counted_bytes;
  connection.counted_bytes = 0;
}

void Transport::Impl::answer_error(Connection& connection, int status, const std::string& message) {
  uncount(connection);
  Request request = connection.parser.request();
  request.body.clear();
  request.client_address = connection.peer;
  Response response;
  error_responder(request, status, message, response);
  if (status == 503) response.set_header("Retry-After", "1");
  send_now(connection.fd, response_head(request, response, false, false) + response.body);
  observer(request, status);
  ::shutdown(connection.fd, SHUT_WR);
  connection.phase = Connection::Phase::kDraining;
  connection.deadline = Clock::now() + kDrainTime;
}

void Transport::Impl::dispatch(Connection& connection) {
  uncount(connection);
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, connection.fd, nullptr);
  connection.phase = Connection::Phase::kBusy;
  connection.input_closed = false;
  connection.response_started = false;
  connection.probed = false;
  connection.gone = false;
  busy.fetch_add(1);
  bool unserved = false;
  {
    std::lock_guard<std::mutex> lock(pool_mutex);
    jobs.push_back(&connection);
    if (idle_workers >= jobs.size() || live_workers >= options.max_workers || start_worker()) {
      pool_wake.notify_one();
    } else if (live_workers == 0) {
      // No worker could be started and none runs: nobody would ever take the job.
      jobs.pop_back();
      unserved = true;
    }
  }
  if (unserved) {
    busy.fetch_sub(1);
    answer_error(connection, 503, "the server cannot start a thread to answer the request now; try again");
  }
}

// With pool_mutex held. A failed thread start (the system's limit of threads) is not fatal: the
// job waits for a worker that runs.
bool Transport::Impl::start_worker() {
  try {
    std::thread([this] { worker_loop(); }).detach();
  } catch (const std::system_error& e) {
    log_warn("server", "cannot start a worker thread (", live_workers, " running): ", e.what());
    return false;
  }
  ++live_workers;
  return true;
}

void Transport::Impl::worker_loop() {
  WorkerCpuWatch::Worker* const self = cpu_watch.add();
  const auto leave = [&] {  // with pool_mutex held
    cpu_watch.remove(self);
    if (--live_workers == 0) pool_empty.notify_all();
  };
  for (;;) {
    Connection* connection = nullptr;
    {
      std::unique_lock<std::mutex> lock(pool_mutex);
      ++idle_workers;
      const bool woken =
          pool_wake.wait_for(lock, kWorkerIdle, [this] { return pool_stopping || !jobs.empty(); });
      --idle_workers;
      if (jobs.empty()) {
        if (woken || pool_stopping || live_workers > 1) {  // stopping, or idle too long: leave
          leave();
          return;
        }
        continue;  // the last worker stays
      }
      connection = jobs.front();
      jobs.pop_front();
    }
    cpu_watch.begin(self);
    serve(*connection);
    if (cpu_watch.end(self)) {  // demoted for good: a fresh worker takes the next request
      std::lock_guard<std::mutex> lock(pool_mutex);
      leave();
      return;
    }
  }
}

void Transport::Impl::serve(Connection& connection) {
  Request request = connection.parser.take_request();
  request.client_address = connection.peer;
  const bool may_probe = request.minor_version >= 1;
  request.client_gone_check = [&connection, may_probe] { return connection.check_gone(may_probe); };
  Response response;
  const auto fail = [&](int status, const std::string& message) {
    log_warn("server", request.method, " ", request.path, ": ", message);
    response = Response{};
    error_responder(request, status, message, response);
    if (status == 503) response.set_header("Retry-After", "1");
  };
  try {
    handler(request, response);
  } catch (const std::bad_alloc&) {
    fail(503, "the server ran out of memory for this request; try again");
  } catch (const std::exception& e) {
    fail(500, concat("internal error: ", e.what()));
  }
  // Pipelined requests that came before the client's FIN are answered too.
  const bool more = !connection.pending.empty();
  bool keep_alive = wants_keep_alive(request) && !shutting_down.load() && (!connection.input_closed || more);
  try {
    keep_alive = write_response(connection, request, response, keep_alive, options.write_timeout);
  } catch (const std::exception& e) {  // a stream's producer that failed, or no memory
    log_warn("server", request.method, " ", request.path, ": the answer failed: ", e.what());
    connection.gone = true;
    keep_alive = false;
  }
  connection.keep_alive = keep_alive && !connection.gone;
  observer(request, response.status);
  {
    std::lock_guard<std::mutex> lock(returned_mutex);
    returned.push_back(&connection);
  }
  wake();
}

void Transport::Impl::take_returned() {
  std::vector<Connection*> answered;
  std::vector<std::pair<int, std::string>> sockets;
  {
    std::lock_guard<std::mutex> lock(returned_mutex);
    answered.swap(returned);
    sockets.swap(adopted);
  }
  for (auto& [fd, peer] : sockets) {
    if (shutting_down.load()) {
      ::close(fd);
    } else {
      add_connection(fd, std::move(peer));
    }
  }
  for (Connection* connection : answered) {
    busy.fetch_sub(1);
    if (connection->gone || cutting.load()) {
      close_connection(*connection);
    } else if (!connection->out.empty()) {
      // The rest of the answer goes out as the client reads it.
      connection->phase = Connection::Phase::kWriting;
      connection->deadline = Clock::now() + options.write_timeout;
      // Not EPOLLRDHUP: a client that half-closed and reads slowly would wake the loop forever.
      watch(*connection, EPOLLOUT, EPOLL_CTL_ADD);
    } else {
      next_request(*connection);
    }
  }
}

void Transport::Impl::next_request(Connection& connection) {
  if (!connection.keep_alive || (shutting_down.load() && connection.pending.empty())) {
    return close_connection(connection);
  }
  const bool was_watched = connection.phase == Connection::Phase::kWriting;
  connection.parser.reset();
  connection.phase = Connection::Phase::kIdle;
  connection.headers_seen = false;
  connection.continue_sent = false;
  connection.idle_since = Clock::now();
  connection.deadline = connection.idle_since + options.idle_timeout;
  if (!connection.pending.empty()) {
    const std::string pipelined = std::move(connection.pending);
    connection.pending.clear();
    if (was_watched) epoll_ctl(epoll_fd, EPOLL_CTL_DEL, connection.fd, nullptr);
    if (!consume(connection, pipelined)) return;  // dispatched (or closed)
    if (connection.phase == Connection::Phase::kDraining) {
      watch(connection, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
      return;
    }
    if (connection.input_closed) {
      // The client sent all it will: a request it did not finish gets the usual answer.
      answer_error(connection, 400, "the connection closed before the request was complete");
      return close_connection(connection);
    }
    watch(connection, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
    return;
  }
  if (connection.input_closed) return close_connection(connection);
  watch(connection, EPOLLIN | EPOLLRDHUP, was_watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD);
}

void Transport::Impl::sweep() {
  const auto now = Clock::now();
  if (now - last_sweep < kSweepInterval) return;
  last_sweep = now;
  cpu_watch.sweep(options.heavy_request_cpu);
  if (accept_paused && listen_fd >= 0 && !shutting_down.load()) {
    accept_paused = false;
    if (reserve_fd < 0) reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = listen_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &event);
  }
  std::vector<Connection*> expired;
  for (auto& [fd, connection] : connections) {
    if (connection->phase != Connection::Phase::kBusy && now >= connection->deadline) {
      expired.push_back(connection.get());
    }
  }
  for (Connection* connection : expired) {
    if (connection->phase == Connection::Phase::kReading) {
      const auto limit = connection->headers_seen ? options.body_timeout : options.header_timeout;
      answer_error(*connection, 408,
                   concat("the request ", connection->headers_seen ? "body" : "headers",
                          " did not arrive within ", std::chrono::duration<double>(limit).count(), " s"));
    } else {
      close_connection(*connection);
    }
  }
}

void Transport::Impl::close_connection(Connection& connection) {
  uncount(connection);
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, connection.fd, nullptr);
  if (auto it = per_client.find(connection.peer); it != per_client.end() && --it->second == 0) {
    per_client.erase(it);
  }
  connections.erase(connection.fd);
}

// Shutting down: connections without an answer in progress close; answers being sent finish,
// unless the grace is over (cut).
void Transport::Impl::close_unanswered() {
  std::vector<Connection*> waiting;
  for (auto& [fd, connection] : connections) {
    const Connection::Phase phase = connection->phase;
    if (phase != Connection::Phase::kBusy && (phase != Connection::Phase::kWriting || cutting.load())) {
      waiting.push_back(connection.get());
    }
  }
  for (Connection* connection : waiting) close_connection(*connection);
}

Transport::Transport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() = default;

Result<std::unique_ptr<Transport>> Transport::listen(const TransportOptions& options, Handler handler,
                                                     ErrorResponder error_responder,
                                                     AnswerObserver observer) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.max_receiving_bytes == 0)
    impl->options.max_receiving_bytes = 4 * options.limits.max_body_bytes;
  // Connections within the descriptor limit: past it accept() fails before the cap is reached.
  if (rlimit limit{}; getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const size_t descriptors =
        limit.rlim_cur > kReservedDescriptors + 1 ? limit.rlim_cur - kReservedDescriptors : 1;
    impl->options.max_connections = std::min(impl->options.max_connections, descriptors);
  }
  impl->options.max_workers = std::max<size_t>(impl->options.max_workers, 1);
  impl->reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  impl->handler = std::move(handler);
  impl->error_responder = std::move(error_responder);
  impl->observer = std::move(observer);
  SINTER_ASSIGN(impl->listen_fd, listen_socket(options.host, options.port));
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(impl->listen_fd, reinterpret_cast<sockaddr*>(&bound), &length);
  impl->port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                                 : reinterpret_cast<sockaddr_in&>(bound).sin_port);
  impl->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  impl->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->epoll_fd < 0 || impl->wake_fd < 0) {
    return make_error(ErrorCode::kIo, "cannot set up the server's event loop: ", std::strerror(errno));
  }
  for (const int fd : {impl->listen_fd, impl->wake_fd}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(impl->epoll_fd, EPOLL_CTL_ADD, fd, &event);
  }
  return std::unique_ptr<Transport>(new Transport(std::move(impl)));
}

int Transport::port() const { return impl_->port; }

size_t Transport::answering() const { return impl_->busy.load(); }

size_t Transport::connection_cap() const { return impl_->options.max_connections; }

void Transport::shutdown() {
  impl_->shutting_down.store(true);
  impl_->wake();
}

void Transport::adopt(int fd, std::string peer) {
  {
    std::lock_guard<std::mutex> lock(impl_->returned_mutex);
    impl_->adopted.emplace_back(fd, std::move(peer));
  }
  impl_->wake();
}

void Transport::cut() {
  impl_->cutting.store(true);
  impl_->wake();
}

Status Transport::run() {
  Impl& impl = *impl_;
  bool listening = true;
  epoll_event events[64];
  for (;;) {
    if (impl.shutting_down.load()) {
      if (listening) {
        listening = false;
        epoll_ctl(impl.epoll_fd, EPOLL_CTL_DEL, impl.listen_fd, nullptr);
        ::close(impl.listen_fd);
        impl.listen_fd = -1;
      }
      impl.close_unanswered();
      if (impl.busy.load() == 0 && impl.connections.empty()) break;
    }
    const int count = epoll_wait(impl.epoll_fd, events, 64, static_cast<int>(kSweepInterval.count()));
    if (count < 0 && errno != EINTR) {
      return make_error(ErrorCode::kIo, "the server's event loop failed: ", std::strerror(errno));
    }
    for (int i = 0; i < count; ++i) {
      const int fd = events[i].data.fd;
      if (fd == impl.listen_fd) {
        impl.accept_all();
      } else if (fd == impl.wake_fd) {
        uint64_t value = 0;
        [[maybe_unused]] const ssize_t got = ::read(impl.wake_fd, &value, sizeof(value));
      } else if (auto it = impl.connections.find(fd); it != impl.connections.end()) {
        Connection& connection = *it->second;
        // An allocation that fails while reading (a request's buffer) costs that connection only.
        try {
          if (connection.phase == Connection::Phase::kWriting) {
            impl.on_writable(connection);
          } else if (connection.phase != Connection::Phase::kBusy) {
            impl.on_readable(connection);
          }
        } catch (const std::bad_alloc&) {
          log_warn("server", "out of memory reading from ", connection.peer, ": connection closed");
          impl.close_connection(connection);
        }
      }
    }
    impl.take_returned();
    impl.sweep();
  }
  impl.take_returned();
  return ok_status();
}

}  // namespace sinter::server::http
