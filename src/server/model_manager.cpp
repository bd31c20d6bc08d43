#include "server/model_manager.h"

#include <algorithm>
#include <filesystem>

#include "core/log.h"
#include "gguf/gguf_file.h"
#include "memory/kv_cache.h"
#include "model/registry.h"
#include "runtime/embedding.h"
#include "server/model_check.h"
#include "server/model_info.h"
#include "server/ollama_store.h"

namespace sinter::server {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kExtension = ".gguf";
constexpr int32_t kMaxDefaultContext = 4096;
// Keep-alives longer than this are "forever" (and never overflow a time point).
constexpr KeepAlive kForever = std::chrono::hours(24 * 365 * 100);

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

SystemTime modification_time(const fs::path& path) {
  std::error_code error;
  const auto time = fs::last_write_time(path, error);
  if (error) return SystemTime();
  return std::chrono::time_point_cast<SystemTime::duration>(std::chrono::file_clock::to_sys(time));
}

uint64_t bytes_of(const fs::path& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  return error ? 0 : static_cast<uint64_t>(size);
}

// The model a path names: nullopt for files that are not models (other extensions, later shards).
std::optional<ModelFile> describe_file(const fs::path& path) {
  const std::string file_name = path.filename().string();
  if (!ends_with(file_name, kExtension)) return std::nullopt;
  ModelFile model;
  model.path = path.string();
  model.name = file_name.substr(0, file_name.size() - kExtension.size());
  model.bytes = bytes_of(path);
  if (const auto split = gguf_parse_split_path(model.path)) {
    if (split->index != 0) return std::nullopt;
    model.name = fs::path(split->prefix).filename().string();
    for (uint32_t i = 1; i < split->count; ++i)
      model.bytes += bytes_of(gguf_split_path(split->prefix, i, split->count));
  }
  model.modified = modification_time(path);
  model.digest = file_digest(model.name, model.bytes, model.modified.time_since_epoch().count());
  return model;
}

std::string_view normalize_name(std::string_view name) {
  if (ends_with(name, ":latest")) name.remove_suffix(7);
  if (ends_with(name, kExtension)) name.remove_suffix(kExtension.size());
  return name;
}

// A store model's context per sequence from its Modelfile (PARAMETER num_ctx), if it has one.
std::optional<int32_t> modelfile_context(const ModelFile& file) {
  if (!file.modelfile) return std::nullopt;
  const auto& params = file.modelfile->params;
  const auto it = params.find("num_ctx");
  if (it == params.end() || !it->is_number_integer()) return std::nullopt;
  return static_cast<int32_t>(it->get<int64_t>());
}

}  // namespace

ModelLease& ModelLease::operator=(ModelLease&& other) noexcept {
  if (this != &other) {
    release();
    manager_ = std::exchange(other.manager_, nullptr);
    name_ = std::move(other.name_);
    model_ = std::move(other.model_);
    keep_alive_ = other.keep_alive_;
    load_ns_ = other.load_ns_;
  }
  return *this;
}

void ModelLease::release() {
  if (manager_ == nullptr) return;
  ModelManager* manager = std::exchange(manager_, nullptr);
  manager->release(name_, keep_alive_);
  model_.reset();  // may be the last reference: the model unloads here
}

bool serves_embeddings(const ModelShape& shape) { return shape.encoder; }

namespace {

// An embedding model gets one context of its own instead of a scheduler: a request's inputs
// are packed into passes of n_batch = n_ctx tokens (runtime/embedding.h).
Status attach_embedder(ServedModel& served, int32_t context) {
  const ModelShape& shape = served.model->model().shape();
  const ContextOptions options = embedding_context_options(shape, context);
  SINTER_ASSIGN(served.embedder, Context::create(served.model, options));
  served.context_per_sequence = served.embedder->n_ctx();
  served.memory_bytes = served.model->file().file_bytes() + memory_bytes_for(shape, options);
  return ok_status();
}

// A model that does not serve `use`: why, naming the routes that it does serve.
Status check_use(std::string_view name, std::string_view architecture, bool embeds, ModelUse use) {
  if (use == ModelUse::kGenerate && embeds) {
    return make_error(ErrorCode::kInvalidArgument, "model '", name, "' is an embedding model (", architecture,
                      "): it cannot generate text; use /api/embed or /v1/embeddings");
  }
  if (use == ModelUse::kEmbed && !embeds) {
    return make_error(ErrorCode::kInvalidArgument, "model '", name,
                      "' cannot embed: it is a text-generation (", architecture,
                      ") model; embeddings need an embedding model (an encoder such as bert)");
  }
  return ok_status();
}

Status check_use(std::string_view name, const ServedModel& served, ModelUse use) {
  return check_use(name, served.model->model().shape().architecture, served.embedder != nullptr, use);
}

// The same check from a file's header, before loading it (a large model is not loaded only to
// be refused): its architecture's kind. A header that cannot be read passes (the load says why).
Status check_file_use(std::string_view name, const std::string& path, ModelUse use) {
  if (use == ModelUse::kAny) return ok_status();
  auto file = GgufFile::open(path);
  if (!file) return ok_status();
  auto architecture = architecture_of(file->metadata());
  if (!architecture || find_architecture(*architecture) == nullptr) return ok_status();
  // Encoders, and decoders whose file has a pooling type (Qwen3-Embedding), embed.
  return check_use(name, *architecture, is_embedding_model_file(file->metadata()), use);
}

}  // namespace

int32_t resolve_context(const ServingOptions& options, int32_t n_ctx_train,
                        std::optional<int32_t> requested) {
  if (requested) return std::min(*requested, std::max(n_ctx_train, options.context_per_sequence));
  return options.context_per_sequence > 0 ? options.context_per_sequence
                                          : std::min(n_ctx_train, kMaxDefaultContext);
}

Result<std::shared_ptr<ServedModel>> load_served_model(const ModelFile& file, const ServingOptions& options,
                                                       std::optional<int32_t> context_per_sequence) {
  const auto start = Clock::now();
  auto served = std::make_shared<ServedModel>();
  served->file = file;
  SINTER_ASSIGN(auto loaded, LoadedModel::load(file.path, options.load));
  const Metadata& metadata = loaded->file().metadata();
  auto tokenizer = Tokenizer::from_metadata(metadata);
  if (!tokenizer) return tokenizer.error().with_context(file.path);
  const auto& shape = loaded->model().shape();
  if ((*tokenizer)->vocab_size() != shape.n_vocab) {
    return make_error(ErrorCode::kFormat, file.path, ": the tokenizer has ", (*tokenizer)->vocab_size(),
                      " tokens but the model's vocabulary is ", shape.n_vocab);
  }
  const int32_t context = resolve_context(options, shape.n_ctx_train, context_per_sequence);
  served->context_resolved = context;
  if (serves_embeddings(shape)) {
    served->model = loaded;
    served->tokenizer = std::shared_ptr<const Tokenizer>(std::move(tokenizer).value());
    if (auto status = attach_embedder(*served, context); !status)
      return status.error().with_context(file.path);
    served->loaded_at = std::chrono::system_clock::now();
    log_info("server", "loaded the embedding model ", file.name, " (", served->context_per_sequence,
             " tokens per pass) in ", std::chrono::duration<double>(Clock::now() - start).count(), " s");
    return served;
  }
  auto chat_template = chat::ChatTemplate::from_metadata(metadata);
  if (!chat_template) {
    log_warn("server", file.name, ": the chat template cannot be used (", chat_template.error().message(),
             "); chat requests use ChatML");
    served->chat_template = chat::ChatTemplate::chatml();
  } else {
    served->chat_template = std::move(chat_template).value();
    served->has_chat_template = !served->chat_template.is_builtin_chatml;
    if (!served->has_chat_template)
      log_info("server", file.name, ": the model has no chat template; chat requests use ChatML");
  }
  SchedulerOptions scheduler_options;
  scheduler_options.parallel = options.parallel;
  scheduler_options.n_ctx = context * options.parallel;
  scheduler_options.n_batch = options.n_batch;
  scheduler_options.max_queue = options.max_queue;
  scheduler_options.kv_type = options.kv_type;
  scheduler_options.state_checkpoint_bytes = options.state_checkpoint_bytes;
  served->model = loaded;
  served->tokenizer = std::shared_ptr<const Tokenizer>(std::move(tokenizer).value());
  auto scheduler = Scheduler::create(loaded, served->tokenizer, scheduler_options);
  if (!scheduler) return scheduler.error().with_context(file.path);
  served->scheduler = std::move(scheduler).value();
  served->context_per_sequence = served->scheduler->context_per_sequence();
  ContextOptions context_options;
  context_options.n_ctx = scheduler_options.n_ctx;
  context_options.n_batch = scheduler_options.n_batch;
  context_options.n_seq_max = scheduler_options.parallel;
  context_options.kv_type = options.kv_type;
  context_options.state_checkpoint_bytes = options.state_checkpoint_bytes;
  served->memory_bytes = loaded->file().file_bytes() + memory_bytes_for(shape, context_options);
  served->loaded_at = std::chrono::system_clock::now();
  log_info("server", "loaded ", file.name, " (", served->context_per_sequence, " tokens of context x ",
           options.parallel, " sequences) in ", std::chrono::duration<double>(Clock::now() - start).count(),
           " s");
  return served;
}

ModelManager::ModelManager() = default;

Result<std::unique_ptr<ModelManager>> ModelManager::create(const ModelSources& sources,
                                                           const ServingOptions& options) {
  const std::string& file = sources.file;
  const std::string& directory = sources.directory;
  if (!file.empty() && !directory.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "give either a model file (-m) or a folder of models (--models), not both");
  }
  if (file.empty() && directory.empty() && sources.ollama_store.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "give a model file (-m), a folder of models (--models) or an Ollama store "
                      "(--ollama-models)");
  }
  auto manager = std::unique_ptr<ModelManager>(new ModelManager());
  manager->options_ = options;
  manager->check_ = std::make_unique<ModelCheck>(options.load.backend);
  if (!file.empty()) {
    std::error_code error;
    if (!fs::is_regular_file(file, error))
      return make_error(ErrorCode::kNotFound, "model file ", file, " does not exist");
    auto model = describe_file(file);
    if (!model) {
      // Any file given by name is served, whatever its extension.
      ModelFile plain;
      plain.path = file;
      plain.name = fs::path(file).stem().string();
      plain.bytes = bytes_of(file);
      plain.modified = modification_time(file);
      plain.digest = file_digest(plain.name, plain.bytes, plain.modified.time_since_epoch().count());
      model = plain;
    }
    manager->single_file_model_ = *model;
  }
  if (!directory.empty()) {
    std::error_code error;
    if (!fs::is_directory(directory, error)) {
      return make_error(ErrorCode::kNotFound, "model folder ", directory, " does not exist");
    }
    manager->directory_ = directory;
  }
  if (!sources.ollama_store.empty()) {
    std::error_code error;
    if (fs::is_directory(sources.ollama_store, error)) {
      manager->store_ = std::make_unique<OllamaStore>(sources.ollama_store);
    } else if (sources.ollama_store_may_be_missing) {
      log_info("server", "no Ollama models: ", sources.ollama_store, " does not exist");
    } else {
      return make_error(ErrorCode::kNotFound, "Ollama model folder ", sources.ollama_store,
                        " does not exist");
    }
  }
  // The folder and the store are read (and their files checked) when first asked for, not here:
  // the server listens at once however many models there are.
  if (!file.empty())
    manager->entries_[tagged_name(manager->single_file_model_.name)].file = manager->single_file_model_;
  manager->reaper_ = std::thread([m = manager.get()] { m->reaper(); });
  return manager;
}

ModelManager::~ModelManager() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (preloader_.joinable()) preloader_.join();
  if (reaper_.joinable()) reaper_.join();
  std::vector<std::shared_ptr<ServedModel>> models;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [name, entry] : entries_) {
      if (entry.served) models.push_back(std::move(entry.served));
    }
  }
  for (auto& model : models) retire(std::move(model));
}

ModelManager::Found ModelManager::scan() {
  std::lock_guard<std::mutex> scanning(scan_mutex_);
  Found found;
  // The -m file is served as it is: a load error is reported when it is used.
  if (!single_file_model_.name.empty()) found[tagged_name(single_file_model_.name)] = single_file_model_;
  if (!directory_.empty()) {
    std::error_code error;
    for (fs::directory_iterator it(directory_, error), end; !error && it != end; it.increment(error)) {
      if (!it->is_regular_file(error)) continue;
      if (auto model = describe_file(it->path())) {
        check_->check(*model);
        found[tagged_name(model->name)] = std::move(*model);
      }
    }
  }
  if (store_) {
    for (ModelFile& model : store_->scan()) {
      const std::string key = tagged_name(model.name);
      if (found.count(key) != 0) {
        if (shadow_warned_.insert(key).second) {
          log_warn("server", "the Ollama model ", key, " is not offered: the file ", found[key].path,
                   " has the same name");
        }
        continue;
      }
      check_->check(model);
      found[key] = std::move(model);
    }
  }
  return found;
}

void ModelManager::merge_locked(const Found& found) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    const bool in_use = it->second.served || it->second.loading;
    if (!found.count(it->first) && !in_use) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, model] : found) {
    Entry& entry = entries_[key];
    if (!entry.served && !entry.loading) entry.file = model;
  }
}

std::string tagged_name(std::string_view name) {
  return name.find(':') == std::string_view::npos ? std::string(name) + ":latest" : std::string(name);
}

ModelManager::Entry* ModelManager::find_locked(std::string_view name) {
  // Entries are keyed by tagged name: "x", "x:latest" and "x.gguf" all find the file x.gguf.
  for (const std::string& candidate : {tagged_name(name), tagged_name(normalize_name(name))}) {
    const auto it = entries_.find(candidate);
    if (it != entries_.end()) return &it->second;
  }
  // A store model by any spelling of its name ("library/llama3.2", "registry.ollama.ai/...").
  if (store_) {
    if (auto parsed = parse_ollama_name(name)) {
      const auto it = entries_.find(parsed->display());
      if (it != entries_.end()) return &it->second;
    }
  }
  return nullptr;
}

ModelManager::Entry* ModelManager::find_or_scan(std::string_view name, std::unique_lock<std::mutex>& lock) {
  Entry* entry = find_locked(name);
  if (entry != nullptr && !entry->file.broken) return entry;
  lock.unlock();
  const Found found = scan();
  lock.lock();
  merge_locked(found);
  return find_locked(name);
}

namespace {

// A broken model's error: a 400-class one (the file's fault, not the server's).
Error broken_model_error(std::string_view name, const ModelFile& file) {
  return make_error(ErrorCode::kUnsupported, "model '", name, "' cannot be served: ", *file.broken);
}

}  // namespace

std::vector<ModelFile> ModelManager::list() {
  const Found found = scan();
  std::lock_guard<std::mutex> lock(mutex_);
  merge_locked(found);
  std::vector<ModelFile> models;
  for (const auto& [name, entry] : entries_) {
    if (!entry.file.broken) models.push_back(entry.file);
  }
  return models;
}

Result<ModelFile> ModelManager::find(std::string_view name) {
  std::unique_lock<std::mutex> lock(mutex_);
  Entry* entry = find_or_scan(name, lock);
  if (entry == nullptr) return make_error(ErrorCode::kNotFound, "model '", name, "' not found");
  if (entry->file.broken) return broken_model_error(name, entry->file);
  return entry->file;
}

Result<ModelLease> ModelManager::acquire(std::string_view name, const AcquireOptions& options) {
  const auto start = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  Entry* entry = find_or_scan(name, lock);
  if (entry == nullptr) return make_error(ErrorCode::kNotFound, "model '", name, "' not found");
  if (entry->file.broken && !entry->served) return broken_model_error(name, entry->file);
  const std::string key = tagged_name(entry->file.name);
  // A store model's Modelfile may give its context (PARAMETER num_ctx) where the request does not.
  const std::optional<int32_t> context =
      options.context_per_sequence ? options.context_per_sequence : modelfile_context(entry->file);
  if (!entry->served && options.use != ModelUse::kAny) {
    const std::string path = entry->file.path;
    lock.unlock();
    const Status use = check_file_use(name, path, options.use);
    lock.lock();
    SINTER_TRY(use);
    entry = nullptr;  // the entry is looked up again by key below
  }
  // A request's context applies to it alone: a model loaded with another context (a request's
  // num_ctx, or the default when this one asks for none) is reloaded once nobody uses it, and
  // the request waits for that, as Ollama's scheduler does.
  const auto needs_other_context = [&](const Entry& candidate) {
    if (!candidate.served) return false;
    const int32_t train = candidate.served->model->model().shape().n_ctx_train;
    return resolve_context(options_, train, context) != candidate.served->context_resolved;
  };
  // A file replaced, modified or truncated under the loaded model (core/mapped_file.h) is loaded
  // again the same way: the old mapping still reads the old bytes, or zeros where they are gone.
  const auto needs_reload = [&](const Entry& candidate) {
    if (!candidate.served) return false;
    const GgufFile& mapped = candidate.served->model->file();
    if (mapped.damaged() || mapped.changed_on_disk()) {
      log_info("server", candidate.file.name, ": the file changed on disk; loading it again");
      return true;
    }
    return needs_other_context(candidate);
  };
  for (;;) {
    changed_.wait(lock, [&] {
      const auto it = entries_.find(key);
      return stopping_ || it == entries_.end() ||
             (!it->second.loading && (it->second.leases == 0 || !needs_reload(it->second)));
    });
    if (stopping_) return make_error(ErrorCode::kCancelled, "the server is shutting down");
    const auto it = entries_.find(key);
    if (it == entries_.end()) return make_error(ErrorCode::kNotFound, "model '", name, "' not found");
    entry = &it->second;
    // A rescan while this request waited may have found the file broken.
    if (entry->file.broken && !entry->served) return broken_model_error(name, entry->file);
    std::shared_ptr<ServedModel> stale;
    if (needs_reload(*entry)) stale = std::move(entry->served);
    if (entry->served) break;
    entry->loading = true;
    const ModelFile file = entry->file;
    lock.unlock();
    if (stale) retire(std::move(stale));
    auto loaded = load_served_model(file, options_, context);
    lock.lock();
    entry = &entries_.at(key);
    entry->loading = false;
    changed_.notify_all();
    if (!loaded) {
      log_warn("server", "cannot load ", file.name, ": ", loaded.error().message());
      return loaded.error();
    }
    entry->served = std::move(loaded).value();
    entry->keep_alive = options_.default_keep_alive;
    break;
  }
  // Refused: no lease is taken, and a model this request loaded expires as an idle one does.
  if (Status use = check_use(name, *entry->served, options.use); !use) {
    if (entry->leases == 0) set_idle_expiry_locked(*entry);
    return use.error();
  }
  ++entry->leases;
  entry->keep_alive = options.keep_alive;
  entry->expires_at.reset();
  ModelLease lease;
  lease.manager_ = this;
  lease.name_ = key;
  lease.model_ = entry->served;
  lease.keep_alive_ = options.keep_alive;
  lease.load_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  return lease;
}

void ModelManager::set_idle_expiry_locked(Entry& entry) {
  if (entry.keep_alive < KeepAlive(0) || entry.keep_alive >= kForever) {
    entry.expires_at.reset();
  } else {
    entry.expires_at =
        std::chrono::system_clock::now() + std::chrono::duration_cast<SystemTime::duration>(entry.keep_alive);
  }
}

void ModelManager::release(const std::string& name, KeepAlive keep_alive) {
  std::shared_ptr<ServedModel> retired;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(name);
    if (it == entries_.end()) return;
    Entry& entry = it->second;
    --entry.leases;
    entry.keep_alive = keep_alive;
    if (entry.leases == 0) {
      if (keep_alive == KeepAlive(0) || entry.unload_when_idle) {
        retired = std::move(entry.served);
        entry.unload_when_idle = false;
        entry.expires_at.reset();
      } else {
        set_idle_expiry_locked(entry);
      }
    }
  }
  changed_.notify_all();
  if (retired) retire(std::move(retired));
}

bool ModelManager::unload(std::string_view name) {
  std::shared_ptr<ServedModel> retired;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry* entry = find_locked(name);
    if (entry == nullptr || !entry->served) return false;
    if (entry->leases > 0) {
      entry->unload_when_idle = true;
      return true;
    }
    retired = std::move(entry->served);
    entry->expires_at.reset();
  }
  retire(std::move(retired));
  return true;
}

void ModelManager::retire(std::shared_ptr<ServedModel> model) {
  std::function<void(ServedModel&)> observer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    observer = observer_;
  }
  if (observer) observer(*model);
  log_info("server", "unloading ", model->file.name);
  model.reset();
}

std::vector<LoadedModelInfo> ModelManager::loaded() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<LoadedModelInfo> models;
  const auto now = std::chrono::system_clock::now();
  for (const auto& [name, entry] : entries_) {
    if (!entry.served) continue;
    LoadedModelInfo info;
    info.file = entry.file;
    info.context_per_sequence = entry.served->context_per_sequence;
    info.parallel = entry.served->scheduler ? entry.served->scheduler->parallel() : 1;
    info.memory_bytes = entry.served->memory_bytes;
    info.requests = entry.leases;
    if (entry.leases == 0) {
      info.expires_at = entry.expires_at;
    } else if (entry.keep_alive >= KeepAlive(0) && entry.keep_alive < kForever) {
      info.expires_at = now + std::chrono::duration_cast<SystemTime::duration>(entry.keep_alive);
    }
    models.push_back(std::move(info));
  }
  return models;
}

void ModelManager::for_each_loaded(const std::function<void(ServedModel&)>& fn) {
  std::vector<std::shared_ptr<ServedModel>> models;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, entry] : entries_) {
      if (entry.served) models.push_back(entry.served);
    }
  }
  for (const auto& model : models) fn(*model);
}

void ModelManager::set_observer(std::function<void(ServedModel&)> observer) {
  std::lock_guard<std::mutex> lock(mutex_);
  observer_ = std::move(observer);
}

void ModelManager::reaper() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
    if (stopping_) break;
    const auto now = std::chrono::system_clock::now();
    std::vector<std::shared_ptr<ServedModel>> expired, live;
    for (auto& [name, entry] : entries_) {
      if (!entry.served) continue;
      if (entry.leases == 0 && entry.expires_at && *entry.expires_at <= now) {
        expired.push_back(std::move(entry.served));
        entry.expires_at.reset();
      } else {
        live.push_back(entry.served);
      }
    }
    const auto observer = observer_;
    lock.unlock();
    if (observer) {
      for (auto& model : live) observer(*model);
    }
    live.clear();
    for (auto& model : expired) retire(std::move(model));
    expired.clear();
    lock.lock();
  }
}

void ModelManager::preload(const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    preloading_ = true;
  }
  preloader_ = std::thread([this, name] {
    auto lease = acquire(name, {options_.default_keep_alive, std::nullopt, ModelUse::kAny});
    std::lock_guard<std::mutex> lock(mutex_);
    if (!lease) preload_error_ = lease.error().message();
    preloading_ = false;
    // The lease is released after the lock (at the end of this scope, after `lock`).
  });
}

bool ModelManager::ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !preloading_;
}

std::optional<std::string> ModelManager::preload_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return preload_error_;
}

}  // namespace sinter::server
