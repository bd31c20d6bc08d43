// The whole request path, not only its parsers: each input is a request ("POST /api/chat" on its
// first line, the body after it) answered by the server's own routes over a tiny random-weight
// model — body parsing, tools and grammars, the chat template, generation, streaming and the
// answer's JSON — with a request memory account as the server sets one. Every request must end
// in an answer (any status); an exception, a crash, a hang or a leak is a bug. Seeds:
// fuzz/corpus/server/.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/memory_budget.h"
#include "model/synth.h"
#include "server/api_routes.h"
#include "server/http/router.h"
#include "server/metrics.h"
#include "server/model_manager.h"

namespace {

using namespace sinter;
using namespace sinter::server;

// Discards a stream's pieces, as a client that reads everything would.
class NullSink : public http::ChunkSink {
 public:
  bool write(std::string_view) override { return true; }
};

struct World {
  std::unique_ptr<ModelManager> models;
  ServerMetrics metrics;
  ServerState state;
  http::Router router;
  MemoryPool memory{size_t{512} << 20};
};

World* make_world() {
  const std::string dir =
      std::filesystem::temp_directory_path().string() + "/sinter-server-fuzz-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tiny.gguf";
  SynthOptions synth;
  synth.preset = "tiny";
  if (!synthesize(synth, path)) __builtin_trap();
  ServingOptions serving;
  serving.parallel = 2;
  serving.load.threads = 1;
  serving.context_per_sequence = 128;
  serving.max_queue = 4;
  auto models = ModelManager::create(ModelSources{path, "", "", false}, serving);
  if (!models) __builtin_trap();
  auto* world = new World;
  world->models = std::move(models).value();
  world->state.models = world->models.get();
  world->state.metrics = &world->metrics;
  world->state.limits.max_tokens = 6;
  world->state.request_memory = &world->memory;
  add_ollama_routes(world->router, world->state);
  add_openai_routes(world->router, world->state);
  add_embedding_routes(world->router, world->state);
  return world;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = make_world();  // kept for the process: the model loads once
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t line_end = input.find('\n');
  if (line_end == std::string::npos) return 0;
  const std::string line = input.substr(0, line_end);
  const size_t space = line.find(' ');
  if (space == std::string::npos) return 0;
  http::Request request;
  request.method = line.substr(0, space);
  request.path = line.substr(space + 1);
  request.target = request.path;
  request.body = input.substr(line_end + 1);
  request.headers.add("Content-Type", "application/json");
  const http::Router::Match match = world->router.find(request.method, request.path);
  if (match.handler == nullptr) return 0;
  request.path_params = match.params;

  MemoryAccount account(&world->memory, size_t{64} << 20);
  const MemoryAccount::Scope scope(&account);
  http::Response response;
  (*match.handler)(request, response);
  if (response.stream) {
    NullSink sink;
    http::PumpResult result = http::PumpResult::kMore;
    for (int calls = 0; result == http::PumpResult::kMore; ++calls) {
      if (calls > 10'000) __builtin_trap();  // a stream that never ends
      result = response.stream->pump(sink);
    }
    if (response.stream->on_end) response.stream->on_end(result == http::PumpResult::kFinished);
  }
  if (response.status < 200 || response.status > 599) __builtin_trap();
  return 0;
}
