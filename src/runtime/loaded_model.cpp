#include "runtime/loaded_model.h"

#include "core/log.h"
#include "core/thread_pool.h"
#include "model/registry.h"

namespace sinter {

Result<std::shared_ptr<LoadedModel>> LoadedModel::load(const std::string& path, const LoadOptions& options) {
  if (options.threads < 0 || options.threads > max_thread_count()) {
    return make_error(ErrorCode::kInvalidArgument, "threads must be between 0 (all cores) and ",
                      max_thread_count(), ", got ", options.threads);
  }
  auto loaded = std::make_shared<LoadedModel>();
  loaded->path_ = path;
  SINTER_ASSIGN(GgufFile file, GgufFile::open(path));
  loaded->file_ = std::make_unique<GgufFile>(std::move(file));
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
  for (Tensor& weight : loaded->model_->weights()) {
    if (weight.ne[1] > 1 && loaded->backend_->path(Op::kMatMul, weight.type) == ExecutionPath::kUnsupported) {
      return make_error(ErrorCode::kUnsupported, path, ": the ", loaded->backend_->name(),
                        " backend cannot compute with ", dtype_name(weight.type), " weights (tensor '",
                        weight.name, "')");
    }
    const void* file_bytes = weight.data;
    const size_t size = weight.bytes();
    SINTER_TRY(loaded->backend_->prepare_weight(&weight));
    // Repacked: the backend reads only its own copy from now on, so the file's pages of this
    // tensor need not stay resident (the process would otherwise hold both, ~2x the file).
    if (weight.data != file_bytes) loaded->file_->release_payload(file_bytes, size);
  }
  return loaded;
}

}  // namespace sinter
