// Whole-tensor conversion between F32 and any data type, through the reference functions of the
// type table: what `sinter quantize` and `sinter synth` use. Rows are independent, so a thread
// pool splits them.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "sinter/result.h"
#include "tensor/dtype.h"

namespace sinter {

// values [rows, row_length] F32 → out: rows · row_bytes(type, row_length) bytes.
// Fails (kUnsupported) when sinter has no quantizer for `type`, and (kInvalidArgument) when
// row_length is not a positive multiple of the type's block size or rows is negative.
Status quantize_rows(DType type, const float* values, int64_t row_length, int64_t rows, void* out,
                     ThreadPool* pool = nullptr);

// blocks: rows · row_bytes(type, row_length) bytes → out [rows, row_length] F32. Same errors.
Status dequantize_rows(DType type, const void* blocks, int64_t row_length, int64_t rows, float* out,
                       ThreadPool* pool = nullptr);

}  // namespace sinter
