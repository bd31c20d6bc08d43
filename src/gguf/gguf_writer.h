// Writes GGUF v3 files: metadata in insertion order, tensor infos, aligned tensor data.
// The file appears under its name only when complete (AtomicFile).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguf/metadata.h"
#include "sinter/result.h"
#include "tensor/dtype.h"

namespace sinter {

// Produces one tensor's bytes when the writer reaches it, so that a large model is never held
// in memory all at once. The result must be exactly row_bytes(type, n) * rows bytes long.
using TensorBytesSource = std::function<Result<std::vector<uint8_t>>()>;

class GgufWriter {
 public:
  Metadata& metadata() { return metadata_; }
  void set_alignment(uint32_t alignment) { alignment_ = alignment; }

  // `shape` is ne order: shape[0] is the row length.
  Status add_tensor(std::string name, DType type, std::vector<int64_t> shape, TensorBytesSource source);
  Status add_tensor_bytes(std::string name, DType type, std::vector<int64_t> shape, std::vector<uint8_t> bytes);

  // Writes everything; on any failure the target path is left as it was.
  // `progress(done, total)` is called after each tensor, if given.
  Status write(const std::string& path, const std::function<void(size_t, size_t)>& progress = {});

 private:
  struct PendingTensor {
    std::string name;
    DType type;
    std::vector<int64_t> shape;
    uint64_t bytes;
    TensorBytesSource source;
  };
  Metadata metadata_;
  std::vector<PendingTensor> tensors_;
  uint32_t alignment_ = 32;
};

}  // namespace sinter
