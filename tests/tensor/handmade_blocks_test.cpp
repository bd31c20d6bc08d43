// Hand-built blocks with known values, as in the Llamex document (seeds/001, sections 3-4).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tensor/blocks.h"
#include "tensor/dtype.h"

namespace sinter {
namespace {

std::vector<float> dequantize(DType type, const std::vector<uint8_t>& bytes, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
  dtype_traits(type).dequantize(bytes.data(), out.data(), count);
  return out;
}

TEST(HandmadeBlocks, Q8_0ScaleTimesValue) {
  // Row 1: scale 1.0 (0x3c00), values 1..32 -> 1.0..32.0. Row 2: scale 0.5, values 2 -> 1.0.
  std::vector<uint8_t> bytes = {0x00, 0x3c};
  for (int i = 1; i <= 32; ++i) bytes.push_back(static_cast<uint8_t>(i));
  bytes.push_back(0x00);
  bytes.push_back(0x38);
  for (int i = 0; i < 32; ++i) bytes.push_back(2);
  ASSERT_EQ(bytes.size(), 68u);
  const auto values = dequantize(DType::Q8_0, bytes, 64);
  float row1 = 0, row2 = 0;
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(values[i], static_cast<float>(i + 1));
    EXPECT_EQ(values[32 + i], 1.0f);
    row1 += values[i];
    row2 += values[32 + i];
  }
  EXPECT_EQ(row1, 528.0f);  // dot product with a vector of ones
  EXPECT_EQ(row2, 32.0f);
}

TEST(HandmadeBlocks, Q4_0LowNibblesFirst) {
  // Scale 1.0 and sixteen bytes 0x98: low nibble 8 -> 0.0 (first 16 values), high nibble
  // 9 -> 1.0 (last 16 values); the dot product with ones is 16.
  std::vector<uint8_t> bytes = {0x00, 0x3c};
  for (int i = 0; i < 16; ++i) bytes.push_back(0x98);
  const auto values = dequantize(DType::Q4_0, bytes, 32);
  float sum = 0;
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(values[i], 0.0f);
    EXPECT_EQ(values[16 + i], 1.0f);
  }
  for (float v : values) sum += v;
  EXPECT_EQ(sum, 16.0f);
}

TEST(DTypeTable, SizesAndNames) {
  EXPECT_EQ(row_bytes(DType::Q4_0, 64), 36u);
  EXPECT_EQ(row_bytes(DType::Q6_K, 512), 420u);
  EXPECT_EQ(row_bytes(DType::F16, 10), 20u);
  EXPECT_EQ(dtype_from_name("Q4_K"), DType::Q4_K);
  EXPECT_EQ(dtype_from_name("bf16"), DType::BF16);
  EXPECT_FALSE(dtype_from_name("q4_2").has_value());
  EXPECT_EQ(dtype_traits(4u), nullptr);  // retired id
  EXPECT_EQ(dtype_traits(1000u), nullptr);
  for (const auto& traits : all_dtypes()) {
    EXPECT_EQ(dtype_traits(static_cast<uint32_t>(traits.type)), &traits);
  }
}

}  // namespace
}  // namespace sinter
