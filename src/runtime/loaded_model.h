// A model file loaded for inference: the parsed GGUF (tensors stay in the mapping), the
// architecture's model with its weights bound, and the backends that run it: the primary one
// named in the options, and the CPU as the fallback for what the primary cannot run
// (backend/placement.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/placement.h"
#include "gguf/gguf_file.h"
#include "model/model.h"
#include "runtime/pooled_projection.h"
#include "runtime/weight_use.h"

namespace sinter {

struct LoadOptions {
  std::string backend = "cpu";
  int threads = 0;  // 0: all cores; at most max_thread_count() (core/thread_pool.h)
};

class LoadedModel {
 public:
  // Refuses a file that cannot run, with the reason (unknown architecture, missing or
  // misshapen tensors, tensor types no backend can execute) or options that cannot be
  // honoured (a thread count outside 0..max_thread_count(), an unknown backend).
  static Result<std::shared_ptr<LoadedModel>> load(const std::string& path, const LoadOptions& options = {});

  // The same file bound again for another backend (the mapping is shared; weights are adopted,
  // copied or repacked by the new backend). This model is unchanged.
  Result<std::shared_ptr<LoadedModel>> on_backend(const LoadOptions& options) const;

  const GgufFile& file() const { return *file_; }
  const Model& model() const { return *model_; }
  // The primary backend.
  Backend& backend() const { return *backend_; }
  // The fallback for what the primary cannot run (the CPU); null when the primary is the CPU.
  Backend* fallback() const { return fallback_.get(); }
  const std::string& path() const { return path_; }
  const LoadOptions& options() const { return options_; }
  const std::vector<WeightPlacement>& weight_placements() const { return placements_; }
  // The dense layers after pooling, in F32 (empty for most models): ModelShape::pooled_projection.
  const PooledProjection& pooled_projection() const { return pooled_projection_; }

  // Which backend runs each node of a memory-bound graph of this model.
  Result<Placement> place(const Graph& graph) const;

 private:
  static Result<std::shared_ptr<LoadedModel>> bind(std::shared_ptr<GgufFile> file, const std::string& path,
                                                   const LoadOptions& options);
  Status load_weights();

  std::string path_;
  LoadOptions options_;
  std::shared_ptr<GgufFile> file_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Backend> fallback_;
  std::vector<std::unique_ptr<Buffer>> weight_buffers_;
  std::vector<WeightPlacement> placements_;
  PooledProjection pooled_projection_;
};

}  // namespace sinter
