#include "runtime/loaded_model.h"

#include "core/log.h"
#include "core/thread_pool.h"
#include "model/registry.h"
#include "runtime/weight_use.h"

namespace sinter {
namespace {

constexpr const char* kFallbackBackend = "cpu";

}  // namespace

Result<std::shared_ptr<LoadedModel>> LoadedModel::load(const std::string& path, const LoadOptions& options) {
  if (options.threads < 0 || options.threads > max_thread_count()) {
    return make_error(ErrorCode::kInvalidArgument, "threads must be between 0 (all cores) and ",
                      max_thread_count(), ", got ", options.threads);
  }
  SINTER_ASSIGN(GgufFile file, GgufFile::open(path));
  return bind(std::make_shared<GgufFile>(std::move(file)), path, options);
}

Result<std::shared_ptr<LoadedModel>> LoadedModel::on_backend(const LoadOptions& options) const {
  return bind(file_, path_, options);
}

Result<std::shared_ptr<LoadedModel>> LoadedModel::bind(std::shared_ptr<GgufFile> file,
                                                       const std::string& path, const LoadOptions& options) {
  auto loaded = std::make_shared<LoadedModel>();
  loaded->path_ = path;
  loaded->options_ = options;
  loaded->file_ = std::move(file);
  const Metadata& metadata = loaded->file_->metadata();
  SINTER_ASSIGN(const std::string arch_name, architecture_of(metadata));
  const Architecture* arch = find_architecture(arch_name);
  if (arch == nullptr) {
    return make_error(ErrorCode::kUnsupported, path, ": architecture '", arch_name, "' is not supported");
  }
  WeightBinder binder(*loaded->file_, WeightBinder::Mode::kBind);
  auto model = arch->create(metadata, binder);
  if (!model) return model.error().with_context(path);
  binder.finish();
  if (auto status = binder.status(); !status) return status.error().with_context(path);
  for (const auto& issue : binder.issues()) log_warn("model", path, ": ", issue.message);
  loaded->model_ = std::move(model).value();
  loaded->model_->weights() = binder.take_tensors();

  BackendOptions backend_options;
  backend_options.threads = options.threads;
  SINTER_ASSIGN(loaded->backend_, create_backend(options.backend, backend_options));
  if (loaded->backend_->name() != kFallbackBackend) {
    SINTER_ASSIGN(loaded->fallback_, create_backend(kFallbackBackend, backend_options));
  }
  if (auto status = loaded->load_weights(); !status) return status.error().with_context(path);
  auto projection = PooledProjection::from_shape(loaded->model_->shape());
  if (!projection) return projection.error().with_context(path);
  loaded->pooled_projection_ = std::move(projection).value();
  return loaded;
}

// Each weight goes to the backend that runs the op consuming it: the primary's where its table
// supports that op on the weight's type, else the fallback's.
Status LoadedModel::load_weights() {
  SINTER_ASSIGN(const auto uses, weight_uses(*model_));
  for (Tensor& weight : model_->weights()) {
    WeightPlacement placement = place_weight(weight, uses, *backend_, fallback_.get());
    if (placement.consumer != Op::kLeaf && placement.backend.empty()) {
      return make_error(ErrorCode::kUnsupported, "the ", backend_->name(), " backend cannot compute with ",
                        dtype_name(weight.type), " weights (tensor '", weight.name, "', read by ",
                        op_name(placement.consumer), ")");
    }
    // A weight no op reads stays with the primary.
    Backend* backend = fallback_ && placement.backend == fallback_->name() ? fallback_.get() : backend_.get();
    SINTER_ASSIGN(std::unique_ptr<Buffer> buffer, backend->load_weight(&weight, placement.consumer));
    // Repacked or copied: the backend reads only its own copy from now on, so the file's pages
    // of this tensor need not stay resident (the process would otherwise hold both, ~2x the file).
    if (buffer->kind() != BufferKind::kHostMapped) {
      if (const GgufTensorInfo* info = file_->find_tensor(weight.name))
        file_->release_payload(info->data, info->bytes);
    }
    placement.backend = std::string(backend->name());
    placement.buffer = buffer->kind();
    placements_.push_back(std::move(placement));
    weight_buffers_.push_back(std::move(buffer));
  }
  return ok_status();
}

Result<Placement> LoadedModel::place(const Graph& graph) const {
  return Placement::place(graph, *backend_, fallback_.get());
}

}  // namespace sinter
