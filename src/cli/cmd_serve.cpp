// `sinter serve -m MODEL | --models DIR`: an HTTP server with Ollama-style and OpenAI-style APIs.
// It prints "sinter serve: listening on http://HOST:PORT" once it accepts connections (with
// --port 0, the port the system chose) and stops cleanly on SIGINT or SIGTERM.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "cli/command.h"
#include "cli/common.h"
#include "core/log.h"
#include "server/http_server.h"

namespace sinter::cli {
namespace {

struct ServeArgs {
  std::string model;
  std::string models_dir;
  std::string host = "127.0.0.1";
  int port = 11434;
  int32_t parallel = 4;
  int32_t ctx = 0;
  int threads = 0;
  int32_t batch = 512;
  size_t max_queue = 64;
  std::string keep_alive = "5m";
  size_t max_body = 16 * 1024 * 1024;
  std::string kv_type = "f16";
  std::string overflow = "error";
  bool verbose = false;
};

int serve(const ServeArgs& args) {
  if (args.model.empty() == args.models_dir.empty()) return fail("give either -m MODEL or --models DIR");
  if (args.parallel < 1 || args.parallel > 64) return fail("--parallel must be between 1 and 64");
  if (args.ctx < 0) return fail("--ctx must not be negative");
  if (args.max_queue < 1) return fail("--max-queue must be at least 1");
  if (args.threads < 0) return fail("--threads must not be negative");
  if (args.port < 0 || args.port > 65535) return fail("--port must be between 0 and 65535");
  if (args.verbose) set_log_level(LogLevel::kInfo);

  server::ServingOptions serving;
  serving.load.threads = args.threads;
  serving.parallel = args.parallel;
  serving.context_per_sequence = args.ctx;
  serving.n_batch = args.batch;
  serving.max_queue = args.max_queue;
  auto kv_type = parse_kv_type(args.kv_type);
  if (!kv_type) return fail(kv_type.error().message());
  serving.kv_type = *kv_type;
  auto keep_alive = server::parse_duration(args.keep_alive);
  if (!keep_alive) return fail("--keep-alive: " + keep_alive.error().message());
  serving.default_keep_alive = *keep_alive;

  server::HttpServerOptions http;
  http.host = args.host;
  http.port = args.port;
  http.max_body_bytes = args.max_body;
  if (args.overflow == "error") {
    http.overflow = OverflowPolicy::kError;
  } else if (args.overflow == "shift") {
    http.overflow = OverflowPolicy::kShift;
  } else {
    return fail("--overflow must be error or shift, not '" + args.overflow + "'");
  }

  // A client that closes its connection must not kill the server with SIGPIPE; SIGINT and SIGTERM
  // are taken by one thread (blocked here before any other thread starts, so all inherit it).
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto models = server::ModelManager::create(args.model, args.models_dir, serving);
  if (!models) return fail(models.error().message());
  if (!args.model.empty()) {
    const auto offered = (*models)->list();
    if (!offered.empty()) (*models)->preload(offered.front().name);
  }
  auto server = server::HttpServer::create(std::move(models).value(), http);
  if (!server) return fail(server.error().message());

  std::atomic<bool> finished{false};
  std::thread signal_waiter([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    // A signal that comes before the server listens must still stop it: ask until run() returns.
    while (!finished.load()) {
      (*server)->stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::printf("sinter serve: listening on http://%s:%d\n", args.host.c_str(), (*server)->port());
  std::fflush(stdout);
  const Status status = (*server)->run();
  finished.store(true);
  // Wake the signal thread if the server stopped for another reason.
  pthread_kill(signal_waiter.native_handle(), SIGTERM);
  signal_waiter.join();
  if (!status) return fail(status.error().message());
  std::fprintf(stderr, "sinter serve: stopped\n");
  return 0;
}

CommandRun setup(CLI::App* app) {
  auto args = std::make_shared<ServeArgs>();
  app->add_option("-m,--model", args->model, "the GGUF model to serve (named by its file name)");
  app->add_option("--models", args->models_dir, "a folder of GGUF models, each loaded on first use");
  app->add_option("--host", args->host, "address to listen on");
  app->add_option("--port", args->port, "port to listen on (0: any free port)");
  app->add_option("--parallel", args->parallel, "sequences served at once per model (1..64)");
  app->add_option("-c,--ctx", args->ctx, "context per sequence in tokens (0: the model's, at most 4096)");
  app->add_option("-t,--threads", args->threads, "threads per model (0: all cores)");
  app->add_option("-b,--batch-size", args->batch, "most tokens per forward pass");
  app->add_option("--max-queue", args->max_queue,
                  "requests waiting per model beyond the running ones (more: 503)");
  app->add_option("--keep-alive", args->keep_alive,
                  "how long an idle model stays loaded (\"5m\", 0, -1: forever)");
  app->add_option("--max-body", args->max_body, "largest request body in bytes (more: 413)");
  app->add_option("--kv-type", args->kv_type, "KV cache type: f16, bf16 or f32");
  app->add_option("--overflow", args->overflow, "prompts longer than the context: error (400) or shift");
  app->add_flag("-v,--verbose", args->verbose, "log requests and model loads to stderr");
  return [args] { return serve(*args); };
}

const CommandRegistration kServe{"serve", "Serve models over HTTP (Ollama and OpenAI APIs)", setup};

}  // namespace
}  // namespace sinter::cli
