#include "tensor/convert.h"

namespace sinter {
namespace {

Status check_shape(const DTypeTraits& traits, int64_t row_length, int64_t rows, const char* what) {
  if (row_length <= 0 || row_length % traits.block_size != 0) {
    return make_error(ErrorCode::kInvalidArgument, what, " ", traits.name, ": row length ", row_length,
                      " is not a positive multiple of the block size ", traits.block_size);
  }
  if (rows < 0)
    return make_error(ErrorCode::kInvalidArgument, what, " ", traits.name, ": negative row count ", rows);
  return ok_status();
}

// Calls convert(first_row, row_count) over all rows, split across the pool's threads.
template <class Convert>
void for_row_ranges(int64_t rows, ThreadPool* pool, const Convert& convert) {
  if (pool == nullptr || pool->size() <= 1 || rows < 2) {
    convert(0, rows);
    return;
  }
  pool->run([&](const ThreadContext& ctx) {
    const int64_t begin = ctx.share_begin(rows);
    const int64_t end = ctx.share_end(rows);
    if (end > begin) convert(begin, end - begin);
  });
}

}  // namespace

Status quantize_rows(DType type, const float* values, int64_t row_length, int64_t rows, void* out,
                     ThreadPool* pool) {
  const DTypeTraits& traits = dtype_traits(type);
  if (traits.quantize == nullptr) {
    return make_error(ErrorCode::kUnsupported, "sinter cannot quantize to ", traits.name,
                      " (no reference quantizer; see docs/TYPES.md)");
  }
  SINTER_TRY(check_shape(traits, row_length, rows, "quantize to"));
  const size_t bytes_per_row = row_bytes(type, row_length);
  for_row_ranges(rows, pool, [&](int64_t first, int64_t count) {
    for (int64_t r = first; r < first + count; ++r) {
      traits.quantize(values + r * row_length,
                      static_cast<uint8_t*>(out) + static_cast<size_t>(r) * bytes_per_row, row_length);
    }
  });
  return ok_status();
}

Status dequantize_rows(DType type, const void* blocks, int64_t row_length, int64_t rows, float* out,
                       ThreadPool* pool) {
  const DTypeTraits& traits = dtype_traits(type);
  if (traits.dequantize == nullptr) {
    return make_error(ErrorCode::kUnsupported, "sinter cannot dequantize ", traits.name,
                      " (no reference dequantizer; see docs/TYPES.md)");
  }
  SINTER_TRY(check_shape(traits, row_length, rows, "dequantize"));
  const size_t bytes_per_row = row_bytes(type, row_length);
  for_row_ranges(rows, pool, [&](int64_t first, int64_t count) {
    for (int64_t r = first; r < first + count; ++r) {
      traits.dequantize(static_cast<const uint8_t*>(blocks) + static_cast<size_t>(r) * bytes_per_row,
                        out + r * row_length, row_length);
    }
  });
  return ok_status();
}

}  // namespace sinter
