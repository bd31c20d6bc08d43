// File-level facts of the diagnosis: how many bytes each tensor type takes, and what the
// payload would take expanded to F32. Computed from the tensor infos alone (no payload is read).
// Checks against an architecture (missing tensors, defaults used) live in the model layer.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "gguf/gguf_file.h"

namespace sinter {

struct GgufTypeStats {
  uint64_t count = 0;      // tensors of this type
  uint64_t bytes = 0;      // their payload bytes as stored
  uint64_t f32_bytes = 0;  // their elements × 4
};

struct GgufFileStats {
  std::map<std::string, GgufTypeStats> tensors_by_type;  // by type name ("f32", "q4_K"), sorted
  uint64_t payload_bytes = 0;                            // all tensors' data, without alignment padding
  uint64_t f32_bytes = 0;                                // the same tensors expanded to F32
  // f32_bytes / payload_bytes: 1 for an all-F32 file, ~7.1 for Q4_0 (32 values in 18 bytes);
  // 1 for a file without tensors, where nothing expands.
  double f32_expansion_ratio = 1.0;
  uint64_t n_params = 0;  // elements of all tensors
};

GgufFileStats compute_file_stats(const GgufFile& file);

}  // namespace sinter
