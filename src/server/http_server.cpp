#include "server/http_server.h"

#include <malloc.h>

#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "core/log.h"
#include "core/memory_budget.h"
#include "core/memory_info.h"
#include "server/api_routes.h"
#include "server/cors.h"
#include "server/http/router.h"
#include "server/http/transport.h"
#include "server/metrics.h"
#include "server/streaming.h"

namespace sinter::server {
namespace {

constexpr size_t kTrimAfterBytes = size_t{32} << 20;

bool is_openai_path(const std::string& path) { return path.rfind("/v1/", 0) == 0; }

// The client's X-Request-Id when it is a sane token, else a new random one.
std::string request_id(const http::Request& request) {
  if (const std::string* given = request.header("X-Request-Id");
      given != nullptr && !given->empty() && given->size() <= 200 &&
      std::all_of(given->begin(), given->end(), [](char c) { return c > ' ' && c < 127; })) {
    return *given;
  }
  thread_local std::mt19937_64 generator{std::random_device{}()};
  char text[32];
  std::snprintf(text, sizeof(text), "req-%016llx", static_cast<unsigned long long>(generator()));
  return text;
}

}  // namespace

RequestMemoryBudgets request_memory_budgets(const HttpServerOptions& options) {
  constexpr size_t kMiB = size_t{1} << 20;
  RequestMemoryBudgets budgets;
  budgets.total = options.request_memory;
  if (budgets.total == 0) {
    const auto available = available_memory();
    budgets.total = std::clamp<size_t>(available ? available->bytes / 4 : 0, 256 * kMiB, 2048 * kMiB);
  }
  // Kept for small requests (core/memory_budget.h): a sixteenth, 8 to 128 MiB.
  budgets.reserve = std::min(std::clamp<size_t>(budgets.total / 16, 8 * kMiB, 128 * kMiB), budgets.total / 2);
  budgets.per_request = options.request_memory_per_request;
  if (budgets.per_request == 0) budgets.per_request = std::max(256 * kMiB, 16 * options.max_body_bytes);
  budgets.per_request = std::min(budgets.per_request, budgets.total - budgets.reserve);
  return budgets;
}

struct HttpServer::Impl {
  HttpServerOptions options;
  std::unique_ptr<MemoryPool> request_memory;
  size_t request_memory_limit = 0;
  std::unique_ptr<ModelManager> models;
  ServerMetrics metrics;
  ServerState state;
  CorsPolicy cors;
  http::Router router;
  std::unique_ptr<http::Transport> transport;

  std::mutex stop_mutex;
  std::condition_variable stop_changed;
  bool stop_requested = false;
  bool finished = false;
  std::thread grace_timer;

  // The models go first: unloading reports their last counters to `metrics`.
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(stop_mutex);
      finished = true;
    }
    stop_changed.notify_all();
    if (grace_timer.joinable()) grace_timer.join();
    transport.reset();
    models.reset();
  }
  void add_routes();
  void handle(http::Request& request, http::Response& response);
  void route(http::Request& request, http::Response& response);
  void error_answer(const http::Request& request, int status, const std::string& message,
                    http::Response& response) const;
};

void HttpServer::Impl::add_routes() {
  router.add("GET", "/", [](http::Request&, http::Response& res) {
    res.set_content("sinter is running", "text/plain; charset=utf-8");
  });
  router.add("GET", "/health", [this](http::Request&, http::Response& res) {
    if (const auto error = models->preload_error()) {
      reply_json(res, {{"status", "error"}, {"error", *error}}, 500);
    } else if (!models->ready()) {
      reply_json(res, {{"status", "loading"}}, 503);
    } else {
      reply_json(res, {{"status", "ok"}});
    }
  });
  router.add("GET", "/metrics", [this](http::Request&, http::Response& res) {
    res.set_content(metrics.render(*models, request_memory.get()),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  add_ollama_routes(router, state);
  add_openai_routes(router, state);
  add_embedding_routes(router, state);
}

void HttpServer::Impl::error_answer(const http::Request& request, int status, const std::string& message,
                                    http::Response& response) const {
  if (is_openai_path(request.path)) {
    reply_openai_error(response, status, message);
  } else {
    reply_error(response, status, message);
  }
  response.set_header("X-Request-Id", request_id(request));
  cors.decorate(request, response);
}

void HttpServer::Impl::handle(http::Request& request, http::Response& response) {
  const std::string id = request_id(request);
  // Everything the request holds from here on (its body first) is charged to its account; a
  // streamed answer keeps the account until the stream ends.
  // A request that held much gives it back to the system, not only to the allocator's free lists
  // (where a burst of large requests would leave the server's resident size high for good).
  auto account = std::shared_ptr<MemoryAccount>(new MemoryAccount(request_memory.get(), request_memory_limit),
                                                [](MemoryAccount* done) {
                                                  const bool large = done->peak() >= kTrimAfterBytes;
                                                  delete done;
                                                  if (large) malloc_trim(0);
                                                });
  const MemoryAccount::Scope scope(account.get());
  if (Status admitted = account->charge(request.body.size() + request.target.size()); !admitted) {
    error_answer(request, http_status_for(admitted.error().code()), admitted.error().message(), response);
    if (admitted.error().code() == ErrorCode::kBusy) response.set_header("Retry-After", "1");
    response.set_header("X-Request-Id", id);
    return;
  }
  route(request, response);
  if (response.stream) {
    auto pump = std::move(response.stream->pump);
    response.stream->pump = [account, pump = std::move(pump)](http::ChunkSink& sink) {
      const MemoryAccount::Scope pump_scope(account.get());
      return pump(sink);
    };
    auto on_end = std::move(response.stream->on_end);
    response.stream->on_end = [account, on_end = std::move(on_end)](bool completed) {
      if (on_end) on_end(completed);
    };
  }
  response.set_header("X-Request-Id", id);
}

void HttpServer::Impl::route(http::Request& request, http::Response& response) {
  const http::Router::Match match = router.find(request.method, request.path);
  const std::string* origin = request.header("Origin");
  if (origin != nullptr && !cors.allows(*origin)) {
    error_answer(request, 403,
                 concat("origin ", *origin, " is not allowed (sinter serve --cors-origins adds origins)"),
                 response);
  } else if (request.method == "OPTIONS" && !match.allowed.empty()) {
    cors.preflight(request, match.allowed, response);
  } else if (match.handler != nullptr) {
    request.path_params = match.params;
    (*match.handler)(request, response);
    cors.decorate(request, response);
  } else if (!match.allowed.empty()) {
    error_answer(
        request, 405,
        concat(request.method, " is not allowed on ", request.path, " (use ", join_list(match.allowed), ")"),
        response);
    response.set_header("Allow", join_list(match.allowed));
  } else {
    error_answer(request, 404, concat("no route for ", request.method, " ", request.path), response);
  }
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::create(std::unique_ptr<ModelManager> models,
                                                       const HttpServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->models = std::move(models);
  impl->cors = CorsPolicy(options.cors_origins);
  impl->state.models = impl->models.get();
  impl->state.metrics = &impl->metrics;
  impl->state.limits.overflow = options.overflow;
  impl->state.limits.max_tokens = options.max_tokens;
  impl->state.request_timeout = options.request_timeout;
  const RequestMemoryBudgets memory = request_memory_budgets(options);
  impl->request_memory = std::make_unique<MemoryPool>(memory.total, memory.reserve);
  impl->request_memory_limit = memory.per_request;
  impl->state.request_memory = impl->request_memory.get();
  ServerMetrics* metrics = &impl->metrics;
  impl->models->set_observer([metrics](ServedModel& model) { metrics->absorb(model); });
  impl->add_routes();

  http::TransportOptions transport;
  transport.host = options.host;
  transport.port = options.port;
  transport.limits.max_body_bytes = options.max_body_bytes;
  transport.limits.max_header_bytes = options.max_header_bytes;
  transport.limits.max_headers = options.max_headers;
  transport.header_timeout = options.header_timeout;
  transport.body_timeout = options.body_timeout;
  transport.idle_timeout = options.idle_timeout;
  transport.max_connections = options.max_connections;
  transport.max_connections_per_client = options.max_connections_per_client;
  Impl* server = impl.get();
  SINTER_ASSIGN(
      impl->transport,
      http::Transport::listen(
          transport, [server](http::Request& req, http::Response& res) { server->handle(req, res); },
          [server](const http::Request& req, int status, const std::string& message, http::Response& res) {
            server->error_answer(req, status, message, res);
          },
          [server](const http::Request& req, int status) {
            const http::Router::Match match = server->router.find(req.method, req.path);
            server->metrics.record_request(match.pattern.empty() ? "other" : match.pattern, status);
            log_info("server", req.method, " ", req.path, " ", status);
          }));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->transport->port(); }

Status HttpServer::run() {
  const Status status = impl_->transport->run();
  {
    std::lock_guard<std::mutex> lock(impl_->stop_mutex);
    impl_->finished = true;
  }
  impl_->stop_changed.notify_all();
  return status;
}

void HttpServer::stop() {
  Impl& impl = *impl_;
  {
    std::lock_guard<std::mutex> lock(impl.stop_mutex);
    if (impl.stop_requested) return;
    impl.stop_requested = true;
  }
  log_info("server", "shutting down: ", impl.transport->answering(), " requests being answered");
  impl.transport->shutdown();
  // Requests still running when the grace ends are cut (streams end with an error object).
  impl.grace_timer = std::thread([&impl] {
    std::unique_lock<std::mutex> lock(impl.stop_mutex);
    impl.stop_changed.wait_for(lock, impl.options.shutdown_grace, [&impl] { return impl.finished; });
    impl.state.stopping.store(true);
    impl.transport->cut();  // no more waiting on clients that do not read
  });
}

}  // namespace sinter::server
