// The blocks (layers) a file's tensors are numbered in: names "blk.N.<rest>", N in decimal
// without leading zeros. A block count in the metadata is checked against this before anything
// is sized from it.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf_file.h"

namespace sinter {

struct TensorBlocks {
  uint64_t count = 0;         // distinct block numbers among the tensor names
  uint64_t highest = 0;       // the largest block number (0 when count is 0)
  uint64_t first_absent = 0;  // the smallest number below `highest` with no tensor (when gapped)
  // Numbered 0..count-1 with every number present.
  bool contiguous() const { return count == 0 || highest + 1 == count; }
};

TensorBlocks tensor_blocks(const std::vector<GgufTensorInfo>& tensors);

}  // namespace sinter
