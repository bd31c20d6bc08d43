// `sinter serve`: the HTTP server with Ollama-style (/api/...) and OpenAI-style (/v1/...) APIs,
// /health and /metrics, over the models of a ModelManager.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/sequence.h"
#include "server/model_manager.h"

namespace sinter::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 11434;                                  // 0: any free port (see HttpServer::port())
  size_t max_body_bytes = 16 * 1024 * 1024;          // larger request bodies get 413, however framed
  size_t max_header_bytes = 64 * 1024;               // request line and headers (more: 431)
  size_t max_headers = 100;                          // header fields (more: 431)
  std::chrono::milliseconds header_timeout{10'000};  // a request's headers (slower: 408)
  std::chrono::milliseconds body_timeout{60'000};    // a request's body (slower: 408)
  std::chrono::milliseconds idle_timeout{30'000};    // a keep-alive connection between requests
  size_t max_connections = 1024;
  size_t max_connections_per_client = 64;
  std::vector<std::string> cors_origins;  // allowed beside the local ones (see cors.h)
  // After stop(): how long running and queued requests may go on before they are cut.
  std::chrono::milliseconds shutdown_grace{10'000};
  OverflowPolicy overflow = OverflowPolicy::kError;  // prompts longer than the context
  int32_t max_tokens = 32768;                        // generated tokens per request, at most
  // A generation still running this long after its request arrived is cut (0: never).
  std::chrono::milliseconds request_timeout{30 * 60 * 1000};
  // Memory for what requests hold beyond the model and its cache (bodies, parsed JSON, rendered
  // templates, collected answers), all requests together (0: a quarter of the memory available
  // at start, between 256 MiB and 2 GiB; a sixteenth of it kept for small requests) and one
  // request alone (0: 16 x max_body_bytes, at least 256 MiB, at most the whole less what is kept).
  // Past the first a request gets 503 with Retry-After, past the second 413.
  size_t request_memory = 0;
  size_t request_memory_per_request = 0;
};

struct RequestMemoryBudgets {
  size_t total = 0;
  size_t reserve = 0;  // of total, for requests that hold at most MemoryAccount::kSmallAccount
  size_t per_request = 0;
};
// The request memory budgets, derived where `options` leave them 0 (see above).
RequestMemoryBudgets request_memory_budgets(const HttpServerOptions& options);

class HttpServer {
 public:
  // Binds the address (an error when it is taken); serving starts with run().
  static Result<std::unique_ptr<HttpServer>> create(std::unique_ptr<ModelManager> models,
                                                    const HttpServerOptions& options);
  ~HttpServer();

  int port() const;
  // Serves until stop() is called; returns once every request has been answered.
  Status run();
  // Thread-safe, idempotent: stops accepting, closes idle connections, and lets running and
  // queued requests finish; those still running after the shutdown grace are cut, each stream
  // with a final error object.
  void stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sinter::server
