// The one table of tensor data types: GGUF id, name, values per block, bytes per block, and the
// scalar reference dequantize/quantize functions — the specification that fast kernels are
// tested against. Block layouts are bit-compatible with llama.cpp's GGUF files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace sinter {

// Values are the GGUF (ggml) type ids; gaps are ids that GGUF retired.
enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

// Reference dequantization: `count` values (a multiple of the block size) from blocks to F32.
using DequantizeRowFn = void (*)(const void* blocks, float* out, int64_t count);
// Reference quantization: `count` values (a multiple of the block size) from F32 to blocks.
using QuantizeRowFn = void (*)(const float* values, void* blocks, int64_t count);

struct DTypeTraits {
  DType type;
  std::string_view name;       // as llama.cpp prints it: "q4_0", "f16", "q4_K"
  int64_t block_size;          // values per block (1 for plain types)
  size_t block_bytes;          // bytes per block
  bool is_quantized;           // block-quantized (as opposed to a plain number type)
  DequantizeRowFn dequantize;  // nullptr where sinter cannot dequantize (see docs/TYPES.md)
  QuantizeRowFn quantize;      // nullptr where sinter has no reference quantizer
};

// Traits of a GGUF type id, or nullptr for ids that GGUF does not define.
const DTypeTraits* dtype_traits(uint32_t id);
const DTypeTraits& dtype_traits(DType type);
std::string_view dtype_name(DType type);
std::optional<DType> dtype_from_name(std::string_view name);  // case-insensitive
std::span<const DTypeTraits> all_dtypes();

// Bytes of a row of `count` values (count must be a multiple of the block size).
size_t row_bytes(DType type, int64_t count);

}  // namespace sinter
