// `sinter serve`: the HTTP server with Ollama-style (/api/...) and OpenAI-style (/v1/...) APIs,
// /health and /metrics, over the models of a ModelManager.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/sequence.h"
#include "server/model_manager.h"

namespace sinter::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 11434;                          // 0: any free port (see HttpServer::port())
  size_t max_body_bytes = 16 * 1024 * 1024;  // larger request bodies get 413
  size_t http_threads = 0;                   // 0: enough for every running and queued request, and spare
  OverflowPolicy overflow = OverflowPolicy::kError;  // prompts longer than the context
};

class HttpServer {
 public:
  // Binds the address (an error when it is taken); serving starts with run().
  static Result<std::unique_ptr<HttpServer>> create(std::unique_ptr<ModelManager> models,
                                                    const HttpServerOptions& options);
  ~HttpServer();

  int port() const;
  // Serves until stop() is called; returns once every connection has ended.
  Status run();
  // Thread-safe; running requests end with "the server is shutting down".
  void stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sinter::server
