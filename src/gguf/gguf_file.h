// A GGUF model file (or a split model read as one), parsed and checked, with tensor payloads
// left in the memory-mapped file.
//
// Every length, count, offset and tensor extent is checked against the file before use; a
// malformed file is an Error naming what is wrong and the byte offset (or key, or tensor) where
// it was found.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "gguf/metadata.h"
#include "sinter/result.h"
#include "tensor/dtype.h"

namespace sinter {

constexpr uint32_t kGgufDefaultAlignment = 32;
constexpr int kGgufMaxDims = 4;

struct GgufShard;  // one parsed file (gguf_shard.h)

struct GgufTensorInfo {
  std::string name;
  DType type = DType::F32;
  std::vector<int64_t> shape;  // ne: shape[0] is the row length (innermost), as ggml counts
  uint64_t offset = 0;         // from the start of its shard's data section
  uint64_t file_offset = 0;    // absolute, in its shard
  uint64_t bytes = 0;
  uint32_t shard = 0;             // index of the file of a split model
  const uint8_t* data = nullptr;  // zero-copy view into the mapping

  int64_t element_count() const;
  int64_t row_length() const { return shape.empty() ? 1 : shape[0]; }
  int64_t row_count() const { return shape.empty() ? 0 : element_count() / shape[0]; }
  std::string shape_string() const;  // "[256, 512]"
};

class GgufFile {
 public:
  // Opens a file; if it is the first shard of a split model (split.count > 1), opens the other
  // shards by their conventional names (name-00002-of-00003.gguf) and reads them as one: the
  // metadata is the first shard's, the tensors are those of all shards in shard order.
  static Result<GgufFile> open(const std::string& path);
  // Parses one file already in memory (tests and fuzzing). Split keys are not followed.
  static Result<GgufFile> parse(std::shared_ptr<MappedFile> file);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  const Metadata& metadata() const { return metadata_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  // Tensor bytes that will not be read from the file again (a backend keeps its own repacked
  // copy): their pages leave resident memory, to be read from the file again if ever needed.
  void release_payload(const void* data, size_t bytes) const;
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  size_t shard_count() const { return shards_.size(); }
  const std::string& path() const;  // the first shard's; empty for a default-constructed file
  uint64_t file_bytes() const;      // all shards
  // A read met a truncated part of a shard (its bytes read as zeros): see core/mapped_file.h.
  bool damaged() const;
  // A shard at its path is no longer the file mapped, or was modified.
  bool changed_on_disk() const;

 private:
  // Adds a parsed file's tensors (and, for the first, its metadata); tensor names must be new.
  void add_shard(GgufShard shard, std::shared_ptr<MappedFile> file);

  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  Metadata metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> tensor_index_;
  std::vector<std::shared_ptr<MappedFile>> shards_;
};

// Why a metadata key or tensor name is malformed ("is empty", "is 70000 bytes long (at most
// 65536)", "'\xff' is not valid UTF-8"), or "" if it is fine. Shared by reader and writer.
std::string gguf_name_problem(std::string_view name);

// Split models are named PREFIX-00001-of-00003.gguf ... PREFIX-00003-of-00003.gguf (shard
// numbers count from 1 in names, from 0 in split.no).
struct GgufSplitName {
  std::string prefix;  // everything before "-00001-of-00003.gguf", folders included
  uint32_t index = 0;  // 0-based, as split.no
  uint32_t count = 0;
};
// The path of shard `index` (0-based) of `count`: ("dir/model", 1, 3) → dir/model-00002-of-00003.gguf.
std::string gguf_split_path(std::string_view prefix, uint32_t index, uint32_t count);
// The parts of a shard path, or nullopt if `path` is not named like one.
std::optional<GgufSplitName> gguf_parse_split_path(std::string_view path);
// Name of shard `index` (0-based) of `count` for a split model whose first shard is `path`,
// e.g. model-00001-of-00003.gguf -> model-00002-of-00003.gguf. Empty if `path` is not the
// first of `count` shards by name.
std::string gguf_shard_path(const std::string& first_shard_path, uint32_t index, uint32_t count);

}  // namespace sinter
