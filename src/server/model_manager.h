// The models a server offers and the ones it has loaded. Models are GGUF files (one given with
// -m, or every *.gguf in a folder, named by file name without the extension) and the models of
// an Ollama store (server/ollama_store.h, named as Ollama names them: "llama3.2:3b"). Files of a
// folder and models of a store that cannot be served (server/model_check.h) are not listed, and
// asking for one gives the reason. When a file and a store model have the same name
// ("name:latest"), the file is served and the store model is not (a warning says so). A model loads on
// first use, with one Scheduler that serves all of its requests, and unloads after the
// keep_alive of its last request (Ollama's semantics: a duration; 0 unloads as soon as no request
// uses it; negative keeps it loaded).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "chat/chat_template.h"
#include "runtime/context.h"
#include "runtime/loaded_model.h"
#include "runtime/scheduler.h"
#include "server/durations.h"
#include "server/modelfile.h"
#include "tokenizer/tokenizer.h"

namespace sinter::server {

class OllamaStore;
class ModelCheck;

using SystemTime = std::chrono::system_clock::time_point;

struct ModelFile {
  std::string name;  // file name without ".gguf" (and without "-00001-of-0000N" for split models)
  std::string path;
  uint64_t bytes = 0;  // all shards
  SystemTime modified;
  std::string digest;  // see file_digest(); a store model's: its manifest's SHA-256
  // Why it cannot be served (unreadable, an architecture sinter lacks, a missing blob): such a
  // model is not listed, and finding it by name gives this reason.
  std::optional<std::string> broken;
  // A model of an Ollama store: the Modelfile of its manifest. Null for a GGUF file.
  std::shared_ptr<const Modelfile> modelfile;
};

// Where the models come from: -m, --models, --ollama-models.
struct ModelSources {
  std::string file;          // one GGUF file, served whatever its state (its load error is reported)
  std::string directory;     // every *.gguf in a folder
  std::string ollama_store;  // an Ollama store's folder (see server/ollama_store.h)
  bool ollama_store_may_be_missing = false;  // the default store: a missing folder offers nothing
};

// The name clients see: "name:tag" ("name:latest" for a file's model).
std::string tagged_name(std::string_view name);

struct ServingOptions {
  LoadOptions load;                  // backend and threads
  int32_t parallel = 4;              // sequences per forward pass, per model
  int32_t context_per_sequence = 0;  // 0: the model's training context, at most 4096
  int32_t n_batch = 512;
  size_t max_queue = 64;  // requests waiting per model beyond the running ones
  DType kv_type = DType::F16;
  size_t state_checkpoint_bytes = 0;  // per model (ContextOptions; 0: the default)
  KeepAlive default_keep_alive = std::chrono::minutes(5);
};

// What a request uses a model for. An embedding model (serves_embeddings) has no scheduler and
// refuses generation; a text-generation model refuses embeddings (a 400 naming the other kind).
enum class ModelUse { kAny, kGenerate, kEmbed };

// Whether a model of this shape is served for embeddings and reranking rather than generation:
// an encoder (BERT and its kin: hidden states, no LM head). See docs/EMBEDDINGS.md, "Server".
bool serves_embeddings(const ModelShape& shape);

// A loaded model and its scheduler, shared by the requests that use it.
struct ServedModel {
  ModelFile file;
  std::shared_ptr<const LoadedModel> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  chat::ChatTemplate chat_template;
  bool has_chat_template = false;  // false: the model has none and ChatML is used for chat
  // A model of an Ollama store: its template, system prompt and parameters apply to requests
  // (server/prompt.h, server/generation_request.h). Null for a GGUF file.
  const Modelfile* modelfile() const { return file.modelfile.get(); }
  std::unique_ptr<Scheduler> scheduler;  // null for an embedding model
  // An embedding model: one context (embedding_context_options), used by one request at a time
  // under `embed_mutex`; null for a text-generation model.
  std::unique_ptr<Context> embedder;
  std::mutex embed_mutex;
  int32_t context_per_sequence = 0;  // as the scheduler has it (an embedding model: its context)
  int32_t context_resolved = 0;      // as asked for (see resolve_context)
  uint64_t memory_bytes = 0;         // weights + KV cache
  SystemTime loaded_at;
  // Guarded by the server metrics' mutex: what the metrics have already counted.
  SchedulerMetrics absorbed;  // the scheduler's counters at the last look
  bool load_counted = false;
};

class ModelManager;

// A request's hold on a loaded model: the model stays loaded while a lease exists; when the last
// one goes, the keep_alive of the request decides when it unloads.
class ModelLease {
 public:
  ModelLease() = default;
  ModelLease(ModelLease&& other) noexcept { *this = std::move(other); }
  ModelLease& operator=(ModelLease&& other) noexcept;
  ModelLease(const ModelLease&) = delete;
  ModelLease& operator=(const ModelLease&) = delete;
  ~ModelLease() { release(); }

  ServedModel& operator*() const { return *model_; }
  ServedModel* operator->() const { return model_.get(); }
  explicit operator bool() const { return model_ != nullptr; }
  int64_t load_ns() const { return load_ns_; }
  void release();

 private:
  friend class ModelManager;
  ModelManager* manager_ = nullptr;
  std::string name_;
  std::shared_ptr<ServedModel> model_;
  KeepAlive keep_alive_{0};
  int64_t load_ns_ = 0;
};

struct LoadedModelInfo {
  ModelFile file;
  int32_t context_per_sequence = 0;
  int32_t parallel = 0;
  uint64_t memory_bytes = 0;
  std::optional<SystemTime> expires_at;  // nullopt: kept loaded
  int32_t requests = 0;                  // in flight
};

class ModelManager {
 public:
  // At most one of `file` and `directory`, and at least one source.
  static Result<std::unique_ptr<ModelManager>> create(const ModelSources& sources,
                                                      const ServingOptions& options);
  static Result<std::unique_ptr<ModelManager>> create(const std::string& file, const std::string& directory,
                                                      const ServingOptions& options) {
    return create(ModelSources{file, directory, "", false}, options);
  }
  ~ModelManager();

  // The models offered (the folder and the store are read again on each call), sorted by
  // name; broken ones are left out.
  std::vector<ModelFile> list();
  // "name", "name:latest" or "name.gguf"; a store model also by its full name
  // ("registry.ollama.ai/library/llama3.2:3b"). kNotFound naming it otherwise; kUnsupported with
  // the reason for a broken model.
  Result<ModelFile> find(std::string_view name);
  // The name of the model given with -m (empty without one).
  std::string single_file_name() const { return single_file_model_.name; }

  struct AcquireOptions {
    KeepAlive keep_alive;
    // A context per sequence (Ollama's num_ctx): used when this request loads the model, and the
    // model is reloaded with it when it differs and no request uses the model.
    std::optional<int32_t> context_per_sequence;
    // A model that does not serve this use is refused (kInvalidArgument) once loaded.
    ModelUse use = ModelUse::kGenerate;
  };
  // Loads the model if needed (other requests for it wait for the same load).
  Result<ModelLease> acquire(std::string_view name, const AcquireOptions& options);
  // Unloads the model now, or when its last request finishes. False when it was not loaded.
  bool unload(std::string_view name);

  std::vector<LoadedModelInfo> loaded();
  // Calls `fn` for each loaded model (outside the manager's lock).
  void for_each_loaded(const std::function<void(ServedModel&)>& fn);
  // Called once a second for each loaded model, and for a model about to unload.
  void set_observer(std::function<void(ServedModel&)> observer);

  // Loads the model in the background (sinter serve -m); ready() says when that is done.
  void preload(const std::string& name);
  bool ready() const;
  std::optional<std::string> preload_error() const;

  const ServingOptions& options() const { return options_; }

 private:
  struct Entry {
    ModelFile file;
    std::shared_ptr<ServedModel> served;
    bool loading = false;
    int32_t leases = 0;
    KeepAlive keep_alive{0};               // of the most recent request
    std::optional<SystemTime> expires_at;  // set when idle; nullopt: never
    bool unload_when_idle = false;
  };
  using Found = std::map<std::string, ModelFile, std::less<>>;  // by tagged name
  friend class ModelLease;
  ModelManager();
  // Reads the sources (without the manager's lock: files are opened) and checks the models.
  Found scan();
  void merge_locked(const Found& found);
  // The entry for `name`, read the sources again when it is unknown or broken.
  Entry* find_or_scan(std::string_view name, std::unique_lock<std::mutex>& lock);
  Entry* find_locked(std::string_view name);
  void release(const std::string& name, KeepAlive keep_alive);
  void set_idle_expiry_locked(Entry& entry);
  void retire(std::shared_ptr<ServedModel> model);  // observer, then drop (outside the lock)
  void reaper();

  ModelFile single_file_model_;  // -m (name empty without one)
  std::string directory_;
  std::unique_ptr<OllamaStore> store_;
  std::unique_ptr<ModelCheck> check_;
  std::mutex scan_mutex_;                // one scan at a time; guards `shadow_warned_`
  std::set<std::string> shadow_warned_;  // store models hidden by a file of the same name
  ServingOptions options_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // loads finished, leases released, stopping
  std::map<std::string, Entry, std::less<>> entries_;
  std::function<void(ServedModel&)> observer_;
  bool stopping_ = false;
  bool preloading_ = false;
  std::optional<std::string> preload_error_;
  std::thread reaper_;
  std::thread preloader_;
};

// The context per sequence a request gets: its own num_ctx (at most the training context, or the
// server's --ctx where that is larger), else the server's --ctx, else the training context up to
// 4096.
int32_t resolve_context(const ServingOptions& options, int32_t n_ctx_train, std::optional<int32_t> requested);

// Loads a model for serving: weights, tokenizer, chat template (ChatML when it has none, said in
// the log) and a scheduler with the given context per sequence.
Result<std::shared_ptr<ServedModel>> load_served_model(const ModelFile& file, const ServingOptions& options,
                                                       std::optional<int32_t> context_per_sequence);

}  // namespace sinter::server
