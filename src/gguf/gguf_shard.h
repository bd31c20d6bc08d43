// Internal to the gguf layer: the parse of one GGUF file, which GgufFile assembles into a
// model (one file, or the shards of a split model).
#pragma once

#include <cstdint>
#include <vector>

#include "core/mapped_file.h"
#include "gguf/gguf_file.h"
#include "gguf/metadata.h"
#include "sinter/result.h"

namespace sinter {

struct GgufShard {
  uint32_t version = 0;
  uint32_t alignment = kGgufDefaultAlignment;
  Metadata metadata;
  std::vector<GgufTensorInfo> tensors;  // in file order; `data` points into the parsed file
};

// Parses and checks one file; its tensors are tagged with `shard_index`.
Result<GgufShard> parse_gguf_shard(const MappedFile& file, uint32_t shard_index);

}  // namespace sinter
