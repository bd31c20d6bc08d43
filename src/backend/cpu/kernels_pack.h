// Repacking weights at load into the 16-row groups the SIMD kernels read (layouts in
// docs/KERNELS.md), and reading single rows back (for get_rows on a repacked table).
#pragma once

#include <unordered_map>

#include "backend/cpu/kernels.h"
#include "core/large_buffer.h"
#include "core/thread_pool.h"
#include "graph/tensor.h"
#include "sinter/result.h"

namespace sinter::cpu {

// Whether `type` has a packed layout (for n_in a multiple of its block size).
bool has_packed_layout(DType type);
// Bytes of one 16-row group of n_in values.
size_t packed_group_bytes(DType type, int64_t n_in);

// Packs rows [16g, 16g + 16) ∩ [0, n_out) of `rows` (file layout, row_stride bytes apart) into
// group g at `out` (packed_group_bytes); missing rows are zero.
void pack_group(DType type, int64_t n_in, const uint8_t* rows, size_t row_stride, int64_t n_out, int64_t g,
                uint8_t* out);
// Writes row r of a packed matrix back in the file layout (row_bytes(type, n_in) bytes).
void unpack_row(const PackedMatrix& w, int64_t r, uint8_t* out);

// Owns the repacked copies of a backend's weights, found by their data pointer.
class PackedWeightStore {
 public:
  // Repacks a 2-D contiguous weight whose type has a kernel in `kernels` (and leaves any other
  // alone), the pool's threads sharing the groups; on success `weight->data` points at the
  // packed copy.
  Status pack(Tensor* weight, const KernelSet& kernels, ThreadPool* pool = nullptr);
  const PackedMatrix* find(const void* data) const;
  size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    PackedMatrix matrix;
    LargeBuffer buffer;  // on huge pages where the system offers them
  };
  std::unordered_map<const void*, Entry> entries_;
  size_t bytes_ = 0;
};

}  // namespace sinter::cpu
