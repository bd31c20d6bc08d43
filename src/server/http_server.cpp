#include "server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

#include "core/log.h"
#include "server/api_routes.h"
#include "server/metrics.h"
#include "server/streaming.h"

namespace sinter::server {
namespace {

struct Route {
  const char* method;
  const char* path;
};

// Every route, for request metrics (other paths count as "other") and 405 answers.
constexpr Route kRoutes[] = {
    {"GET", "/"},
    {"GET", "/health"},
    {"GET", "/metrics"},
    {"POST", "/api/generate"},
    {"POST", "/api/chat"},
    {"GET", "/api/tags"},
    {"POST", "/api/show"},
    {"GET", "/api/ps"},
    {"GET", "/api/version"},
    {"POST", "/api/tokenize"},
    {"POST", "/api/detokenize"},
    {"POST", "/api/pull"},
    {"POST", "/api/push"},
    {"POST", "/api/create"},
    {"POST", "/api/copy"},
    {"DELETE", "/api/delete"},
    {"POST", "/api/embed"},
    {"POST", "/api/embeddings"},
    {"POST", "/v1/chat/completions"},
    {"POST", "/v1/completions"},
    {"GET", "/v1/models"},
    {"POST", "/v1/embeddings"},
};

const Route* find_route(const std::string& path) {
  for (const Route& route : kRoutes) {
    if (path == route.path) return &route;
  }
  return nullptr;
}

std::string endpoint_label(const std::string& path) {
  if (find_route(path) != nullptr) return path;
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  return "other";
}

bool is_openai_path(const std::string& path) { return path.rfind("/v1/", 0) == 0; }

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  std::unique_ptr<ModelManager> models;
  ServerMetrics metrics;
  ServerState state;
  httplib::Server http;
  int port = 0;

  // The models go first: unloading reports their last counters to `metrics`.
  ~Impl() { models.reset(); }
  void add_routes();
};

void HttpServer::Impl::add_routes() {
  http.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("sinter is running", "text/plain; charset=utf-8");
  });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (const auto error = models->preload_error()) {
      reply_json(res, {{"status", "error"}, {"error", *error}}, 500);
    } else if (!models->ready()) {
      reply_json(res, {{"status", "loading"}}, 503);
    } else {
      reply_json(res, {{"status", "ok"}});
    }
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.render(*models), "text/plain; version=0.0.4; charset=utf-8");
  });
  add_ollama_routes(http, state);
  add_openai_routes(http, state);

  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler's own error answer
    std::string message;
    if (res.status == 404) {
      const Route* route = find_route(req.path);
      if (route != nullptr && req.method != route->method) {
        res.status = 405;
        message = concat(req.method, " is not allowed on ", req.path, " (use ", route->method, ")");
      } else {
        message = concat("no route for ", req.method, " ", req.path);
      }
    } else if (res.status == 413) {
      message = concat("the request body is larger than the limit of ", options.max_body_bytes, " bytes");
    } else {
      message = concat("HTTP ", res.status, " for ", req.method, " ", req.path);
    }
    if (is_openai_path(req.path)) {
      reply_openai_error(res, res.status, message);
    } else {
      reply_error(res, res.status, message);
    }
  });
  http.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr exception) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(exception);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        log_warn("server", req.method, " ", req.path, ": internal error: ", what);
        reply_error(res, 500, "internal error: " + what);
      });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics.record_request(endpoint_label(req.path), res.status);
    log_info("server", req.method, " ", req.path, " ", res.status);
  });
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::create(std::unique_ptr<ModelManager> models,
                                                       const HttpServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->models = std::move(models);
  impl->state.models = impl->models.get();
  impl->state.metrics = &impl->metrics;
  impl->state.overflow = options.overflow;
  ServerMetrics* metrics = &impl->metrics;
  impl->models->set_observer([metrics](ServedModel& model) { metrics->absorb(model); });

  // Each running or queued streaming request holds a thread for its whole answer; keep spare
  // threads for /health, /metrics and requests that are refused.
  const ServingOptions& serving = impl->models->options();
  const size_t threads =
      options.http_threads > 0
          ? options.http_threads
          : std::max<size_t>(64, static_cast<size_t>(serving.parallel) + serving.max_queue + 32);
  impl->http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  impl->http.set_payload_max_length(options.max_body_bytes);
  impl->http.set_tcp_nodelay(true);
  impl->add_routes();
  // cpp-httplib listens with a backlog of 5 (compiled into Debian's library): a burst of clients
  // overflows it, and the kernel drops their handshakes (retried after a second, or failed).
  // Remember the listening socket so that its backlog can be raised once it listens.
  int listening_socket = -1;
  impl->http.set_socket_options([&listening_socket](socket_t socket) {
    httplib::default_socket_options(socket);
    listening_socket = socket;
  });

  if (options.port == 0) {
    impl->port = impl->http.bind_to_any_port(options.host);
    if (impl->port <= 0) return make_error(ErrorCode::kIo, "cannot listen on ", options.host);
  } else {
    if (!impl->http.bind_to_port(options.host, options.port)) {
      return make_error(ErrorCode::kIo, "cannot listen on ", options.host, ":", options.port,
                        " (is another server using the port?)");
    }
    impl->port = options.port;
  }
  // listen() again on a listening socket only changes its backlog (capped by net.core.somaxconn).
  if (listening_socket >= 0) ::listen(listening_socket, SOMAXCONN);
  impl->http.set_socket_options(httplib::default_socket_options);
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->port; }

Status HttpServer::run() {
  if (impl_->state.stopping.load()) return ok_status();
  if (!impl_->http.listen_after_bind()) {
    if (impl_->state.stopping.load()) return ok_status();
    return make_error(ErrorCode::kIo, "the server stopped listening on ", impl_->options.host, ":",
                      impl_->port);
  }
  return ok_status();
}

void HttpServer::stop() {
  impl_->state.stopping.store(true);
  impl_->http.stop();
}

}  // namespace sinter::server
