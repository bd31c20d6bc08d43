// Writes GGUF v3 files: metadata in insertion order, tensor infos, aligned tensor data.
// The file appears under its name only when complete (AtomicFile): a failed write leaves the
// target as it was and no temporary behind.
//
// The writer refuses to write what the reader would reject (bad names, values that do not fit
// their declared type, arrays nested too deep, a bad alignment), so its files always read back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
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
  // general.alignment is the writer's: it is written (as uint32) when the alignment is not the
  // default 32 or when the metadata already holds the key, and always with the value used.
  Metadata& metadata() { return metadata_; }
  // A power of two; checked by write().
  void set_alignment(uint32_t alignment) { alignment_ = alignment; }

  // `shape` is ne order: shape[0] is the row length.
  Status add_tensor(std::string name, DType type, std::vector<int64_t> shape, TensorBytesSource source);
  Status add_tensor_bytes(std::string name, DType type, std::vector<int64_t> shape,
                          std::vector<uint8_t> bytes);

  // Writes everything; on any failure the target path is left as it was.
  // `progress(done, total)` is called after each tensor, if given.
  Status write(const std::string& path, const std::function<void(size_t, size_t)>& progress = {}) const;

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
  std::unordered_set<std::string> tensor_names_;
  uint32_t alignment_ = 32;
};

}  // namespace sinter
