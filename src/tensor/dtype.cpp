#include "tensor/dtype.h"

#include <array>
#include <cctype>

#include "tensor/blocks.h"
#include "tensor/reference.h"

namespace sinter {
namespace {

using namespace reference;

// The table. Types without a reference (de)quantizer carry nullptr; docs/TYPES.md says why.
constexpr DTypeTraits kTypes[] = {
    {DType::F32, "f32", 1, 4, false, dequantize_row_f32, quantize_row_f32},
    {DType::F16, "f16", 1, 2, false, dequantize_row_f16, quantize_row_f16},
    {DType::Q4_0, "q4_0", kQK, sizeof(BlockQ4_0), true, dequantize_row_q4_0, quantize_row_q4_0},
    {DType::Q4_1, "q4_1", kQK, sizeof(BlockQ4_1), true, dequantize_row_q4_1, quantize_row_q4_1},
    {DType::Q5_0, "q5_0", kQK, sizeof(BlockQ5_0), true, dequantize_row_q5_0, quantize_row_q5_0},
    {DType::Q5_1, "q5_1", kQK, sizeof(BlockQ5_1), true, dequantize_row_q5_1, quantize_row_q5_1},
    {DType::Q8_0, "q8_0", kQK, sizeof(BlockQ8_0), true, dequantize_row_q8_0, quantize_row_q8_0},
    {DType::Q8_1, "q8_1", kQK, sizeof(BlockQ8_1), true, dequantize_row_q8_1, quantize_row_q8_1},
    {DType::Q2_K, "q2_K", kQKK, sizeof(BlockQ2_K), true, dequantize_row_q2_k, quantize_row_q2_k},
    {DType::Q3_K, "q3_K", kQKK, sizeof(BlockQ3_K), true, dequantize_row_q3_k, quantize_row_q3_k},
    {DType::Q4_K, "q4_K", kQKK, sizeof(BlockQ4_K), true, dequantize_row_q4_k, quantize_row_q4_k},
    {DType::Q5_K, "q5_K", kQKK, sizeof(BlockQ5_K), true, dequantize_row_q5_k, quantize_row_q5_k},
    {DType::Q6_K, "q6_K", kQKK, sizeof(BlockQ6_K), true, dequantize_row_q6_k, quantize_row_q6_k},
    {DType::Q8_K, "q8_K", kQKK, sizeof(BlockQ8_K), true, dequantize_row_q8_k, quantize_row_q8_k},
    {DType::IQ2_XXS, "iq2_xxs", kQKK, sizeof(BlockIQ2_XXS), true, dequantize_row_iq2_xxs, nullptr},
    {DType::IQ2_XS, "iq2_xs", kQKK, sizeof(BlockIQ2_XS), true, dequantize_row_iq2_xs, nullptr},
    {DType::IQ3_XXS, "iq3_xxs", kQKK, sizeof(BlockIQ3_XXS), true, dequantize_row_iq3_xxs, nullptr},
    {DType::IQ1_S, "iq1_s", kQKK, sizeof(BlockIQ1_S), true, dequantize_row_iq1_s, nullptr},
    {DType::IQ4_NL, "iq4_nl", kQK, sizeof(BlockIQ4_NL), true, dequantize_row_iq4_nl, quantize_row_iq4_nl},
    {DType::IQ3_S, "iq3_s", kQKK, sizeof(BlockIQ3_S), true, dequantize_row_iq3_s, nullptr},
    {DType::IQ2_S, "iq2_s", kQKK, sizeof(BlockIQ2_S), true, dequantize_row_iq2_s, nullptr},
    {DType::IQ4_XS, "iq4_xs", kQKK, sizeof(BlockIQ4_XS), true, dequantize_row_iq4_xs, quantize_row_iq4_xs},
    {DType::I8, "i8", 1, 1, false, dequantize_row_i8, nullptr},
    {DType::I16, "i16", 1, 2, false, dequantize_row_i16, nullptr},
    {DType::I32, "i32", 1, 4, false, dequantize_row_i32, nullptr},
    {DType::I64, "i64", 1, 8, false, dequantize_row_i64, nullptr},
    {DType::F64, "f64", 1, 8, false, dequantize_row_f64, nullptr},
    {DType::IQ1_M, "iq1_m", kQKK, sizeof(BlockIQ1_M), true, dequantize_row_iq1_m, nullptr},
    {DType::BF16, "bf16", 1, 2, false, dequantize_row_bf16, quantize_row_bf16},
    {DType::TQ1_0, "tq1_0", kQKK, sizeof(BlockTQ1_0), true, dequantize_row_tq1_0, quantize_row_tq1_0},
    {DType::TQ2_0, "tq2_0", kQKK, sizeof(BlockTQ2_0), true, dequantize_row_tq2_0, quantize_row_tq2_0},
    {DType::MXFP4, "mxfp4", kQK, sizeof(BlockMXFP4), true, dequantize_row_mxfp4, quantize_row_mxfp4},
};

constexpr uint32_t kMaxId = 40;

// id -> index into kTypes, or -1.
constexpr std::array<int, kMaxId> make_index() {
  std::array<int, kMaxId> index{};
  for (auto& slot : index) slot = -1;
  for (size_t i = 0; i < std::size(kTypes); ++i)
    index[static_cast<uint32_t>(kTypes[i].type)] = static_cast<int>(i);
  return index;
}
constexpr auto kIndex = make_index();

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

const DTypeTraits* dtype_traits(uint32_t id) {
  if (id >= kMaxId || kIndex[id] < 0) return nullptr;
  return &kTypes[kIndex[id]];
}

const DTypeTraits& dtype_traits(DType type) { return *dtype_traits(static_cast<uint32_t>(type)); }

std::string_view dtype_name(DType type) { return dtype_traits(type).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& traits : kTypes) {
    if (equal_ignoring_case(traits.name, name)) return traits.type;
  }
  return std::nullopt;
}

std::span<const DTypeTraits> all_dtypes() { return kTypes; }

size_t row_bytes(DType type, int64_t count) {
  const auto& traits = dtype_traits(type);
  return static_cast<size_t>(count / traits.block_size) * traits.block_bytes;
}

}  // namespace sinter
