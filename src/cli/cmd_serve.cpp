// `sinter serve -m MODEL | --models DIR | --ollama-models [DIR]`: an HTTP server with Ollama-style
// and OpenAI-style APIs. It prints "sinter serve: listening on http://HOST:PORT" once it accepts
// connections (with --port 0, the port the system chose) and stops cleanly on SIGINT or SIGTERM.
#include <pthread.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/flag_bounds.h"
#include "core/log.h"
#include "server/cors.h"
#include "server/http_server.h"
#include "server/ollama_store.h"

namespace sinter::cli {
namespace {

struct ServeArgs {
  std::string model;
  std::string models_dir;
  std::string ollama_models;  // --ollama-models DIR ("" with the flag alone: Ollama's own folder)
  const CLI::Option* ollama_models_flag = nullptr;
  std::string host = "127.0.0.1";
  int port = 11434;
  int32_t parallel = 4;
  int32_t ctx = 0;
  std::string backend = "cpu";
  int threads = 0;
  int32_t batch = 512;
  size_t max_queue = 64;
  std::string keep_alive = "5m";
  size_t max_body = 16 * 1024 * 1024;
  std::string kv_type = "f16";
  int64_t state_checkpoints_mib = 0;
  std::string overflow = "error";
  bool verbose = false;
  std::string cors_origins;
  std::string shutdown_grace = "10s";
  std::string header_timeout = "10s";
  std::string body_timeout = "60s";
  std::string request_timeout = "30m";
  size_t max_connections = 1024;
  size_t max_connections_per_client = 64;
  int32_t max_tokens = 32768;
  size_t request_memory = 0;
  std::string idle_timeout = "30s";
};

// Connections need a descriptor each: the soft limit goes up to the hard one (as Go's runtime
// does), and the transport keeps its caps below what is left.
void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

// A duration flag ("10s", "5m", "250ms", or seconds) of at least `least` (0: may be 0).
Result<std::chrono::milliseconds> duration_flag(const std::string& flag, const std::string& text,
                                                std::chrono::milliseconds least) {
  auto parsed = server::parse_duration(text);
  if (!parsed) return make_error(ErrorCode::kInvalidArgument, flag, ": ", parsed.error().message());
  const auto value = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  if (value < least || value > std::chrono::hours(24 * 365)) {
    return make_error(ErrorCode::kInvalidArgument, flag, " must be between ",
                      std::chrono::duration<double>(least).count(), " s and a year, got '", text, "'");
  }
  return value;
}

int serve(const ServeArgs& args) {
  // -m or --models (not both); --ollama-models beside either, or alone.
  const bool ollama_store = args.ollama_models_flag != nullptr && args.ollama_models_flag->count() > 0;
  if ((!args.model.empty() && !args.models_dir.empty()) ||
      (args.model.empty() && args.models_dir.empty() && !ollama_store)) {
    return fail("give either -m MODEL or --models DIR, and/or --ollama-models [DIR]");
  }
  if (args.verbose) set_log_level(LogLevel::kInfo);

  server::ServingOptions serving;
  serving.load.backend = args.backend;
  serving.load.threads = args.threads;
  serving.parallel = args.parallel;
  serving.context_per_sequence = args.ctx;
  serving.n_batch = args.batch;
  serving.max_queue = args.max_queue;
  auto kv_type = parse_kv_type(args.kv_type);
  if (!kv_type) return fail(kv_type.error().message());
  serving.kv_type = *kv_type;
  serving.state_checkpoint_bytes = static_cast<size_t>(args.state_checkpoints_mib) << 20;
  auto keep_alive = server::parse_duration(args.keep_alive);
  if (!keep_alive) return fail("--keep-alive: " + keep_alive.error().message());
  serving.default_keep_alive = *keep_alive;

  server::HttpServerOptions http;
  http.host = args.host;
  http.port = args.port;
  http.max_body_bytes = args.max_body;
  http.max_tokens = args.max_tokens;
  http.max_connections = args.max_connections;
  http.max_connections_per_client = args.max_connections_per_client;
  http.request_memory = args.request_memory;
  // Ollama's OLLAMA_ORIGINS is read when --cors-origins is not given, so a migrating user's
  // setting carries over.
  const char* ollama_origins = std::getenv("OLLAMA_ORIGINS");
  http.cors_origins = server::split_origins(
      !args.cors_origins.empty() || ollama_origins == nullptr ? args.cors_origins : ollama_origins);
  const std::pair<const char*, std::pair<const std::string*, std::chrono::milliseconds*>> durations[] = {
      {"--shutdown-grace", {&args.shutdown_grace, &http.shutdown_grace}},
      {"--header-timeout", {&args.header_timeout, &http.header_timeout}},
      {"--body-timeout", {&args.body_timeout, &http.body_timeout}},
      {"--request-timeout", {&args.request_timeout, &http.request_timeout}},
      {"--idle-timeout", {&args.idle_timeout, &http.idle_timeout}},
  };
  for (const auto& [flag, fields] : durations) {
    const bool may_be_zero =
        std::string_view(flag) == "--shutdown-grace" || std::string_view(flag) == "--request-timeout";
    auto value = duration_flag(flag, *fields.first,
                               may_be_zero ? std::chrono::milliseconds(0) : std::chrono::milliseconds(100));
    if (!value) return fail(value.error().message());
    *fields.second = *value;
  }
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
  raise_descriptor_limit();
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);  // a closed terminal: the same graceful stop
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  server::ModelSources sources{args.model, args.models_dir, "", false};
  if (ollama_store) {
    const bool default_store = args.ollama_models.empty();
    sources.ollama_store = default_store ? server::default_ollama_models_dir() : args.ollama_models;
    sources.ollama_store_may_be_missing = default_store;
  }
  auto models = server::ModelManager::create(sources, serving);
  if (!models) return fail(models.error().message());
  if (!args.model.empty()) (*models)->preload((*models)->single_file_name());
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
  args->ollama_models_flag =
      app->add_option("--ollama-models", args->ollama_models,
                      "also (or only) serve an Ollama store's models by their Ollama names, with their "
                      "Modelfiles' templates, system prompts and parameters (no DIR: $OLLAMA_MODELS or "
                      "~/.ollama/models, none there is fine); a file of -m/--models wins over a store "
                      "model of the same name")
          ->expected(0, 1)
          ->type_name("[DIR]");
  app->add_option("--host", args->host, "address to listen on");
  bounded(app->add_option("--port", args->port, "port to listen on (0: any free port)"), 0, 65535,
          "0: any free port");
  bounded(app->add_option("--parallel", args->parallel, "sequences served at once per model"), 1,
          kMaxParallelFlag);
  add_context_flag(app, args->ctx, "context per sequence in tokens (0: the model's, at most 4096)");
  add_backend_flag(app, args->backend);
  add_threads_flag(app, args->threads, "threads per model");
  add_batch_flag(app, args->batch);
  bounded(app->add_option("--max-queue", args->max_queue,
                          "requests waiting per model beyond the running ones (more: 503)"),
          1, kMaxQueueFlag);
  app->add_option("--keep-alive", args->keep_alive,
                  "how long an idle model stays loaded (\"5m\", 0, -1: forever)");
  bounded(app->add_option("--max-body", args->max_body, "largest request body in bytes (more: 413)"), 1,
          kMaxBodyFlag);
  app->add_option("--kv-type", args->kv_type, "KV cache type: f16, bf16 or f32");
  add_state_checkpoints_flag(app, args->state_checkpoints_mib);
  app->add_option("--overflow", args->overflow, "prompts longer than the context: error (400) or shift");
  app->add_flag("-v,--verbose", args->verbose, "log requests and model loads to stderr");
  app->add_option("--cors-origins", args->cors_origins,
                  "browser origins allowed beside the local ones, comma-separated, '*' wildcards "
                  "(default: $OLLAMA_ORIGINS)");
  app->add_option("--shutdown-grace", args->shutdown_grace,
                  "on SIGTERM/SIGINT/SIGHUP, how long running and queued requests may finish (\"10s\")");
  app->add_option("--header-timeout", args->header_timeout,
                  "longest time to receive a request's headers (408)");
  app->add_option("--body-timeout", args->body_timeout, "longest time to receive a request's body (408)");
  app->add_option("--request-timeout", args->request_timeout,
                  "longest time a generation may run (\"30m\"; 0: no limit)");
  app->add_option("--max-connections", args->max_connections, "open connections at most (more: 503)")
      ->check(CLI::Range(size_t{1}, size_t{65536}));
  app->add_option("--max-connections-per-client", args->max_connections_per_client,
                  "open connections per client address at most (more: 503)")
      ->check(CLI::Range(size_t{1}, size_t{65536}));
  app->add_option("--max-tokens", args->max_tokens,
                  "tokens one request may generate at most, whatever it asks (num_predict, max_tokens)")
      ->check(CLI::Range(1, 1 << 24));
  app->add_option("--request-memory", args->request_memory,
                  "bytes all requests together may hold beyond the models (bodies, parsed JSON, templates, "
                  "answers; more: 503); one request may hold 16 x --max-body (at least 256 MiB; more: 413) "
                  "(0: a quarter of the available memory, 256 MiB to 2 GiB)")
      ->check(CLI::Range(size_t{0}, size_t{1} << 40));
  app->add_option("--idle-timeout", args->idle_timeout,
                  "how long a keep-alive connection may wait between requests (\"30s\")");
  return [args] { return serve(*args); };
}

const CommandRegistration kServe{"serve", "Serve models over HTTP (Ollama and OpenAI APIs)", setup};

}  // namespace
}  // namespace sinter::cli
