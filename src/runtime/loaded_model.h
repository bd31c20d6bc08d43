// A model file loaded for inference: the parsed GGUF (tensors stay in the mapping), the
// architecture's model with its weights bound, and the backend that runs it.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "gguf/gguf_file.h"
#include "model/model.h"

namespace sinter {

struct LoadOptions {
  std::string backend = "cpu";
  int threads = 0;  // 0: all cores; at most max_thread_count() (core/thread_pool.h)
};

class LoadedModel {
 public:
  // Refuses a file that cannot run, with the reason (unknown architecture, missing or
  // misshapen tensors, tensor types the backend cannot execute) or options that cannot be
  // honoured (a thread count outside 0..max_thread_count()).
  static Result<std::shared_ptr<LoadedModel>> load(const std::string& path, const LoadOptions& options = {});

  const GgufFile& file() const { return *file_; }
  const Model& model() const { return *model_; }
  Backend& backend() const { return *backend_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<GgufFile> file_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Backend> backend_;
};

}  // namespace sinter
