// quantize_rows / dequantize_rows: whole tensors, errors for what cannot be done.
#include "tensor/convert.h"

#include <gtest/gtest.h>

#include <vector>

#include "test_data.h"

namespace sinter {
namespace {

TEST(Convert, RowsMatchRowByRowReference) {
  const int64_t row_length = 512;
  const int64_t rows = 7;
  const auto values = testing::make_values(testing::Distribution::kGaussian, row_length * rows, 1);
  ThreadPool pool(2);
  for (DType type : {DType::Q4_K, DType::Q8_0, DType::F16}) {
    const size_t bytes_per_row = row_bytes(type, row_length);
    std::vector<uint8_t> whole(bytes_per_row * rows), by_row(bytes_per_row * rows);
    ASSERT_TRUE(quantize_rows(type, values.data(), row_length, rows, whole.data(), &pool).ok());
    for (int64_t r = 0; r < rows; ++r) {
      dtype_traits(type).quantize(values.data() + r * row_length, by_row.data() + r * bytes_per_row,
                                  row_length);
    }
    EXPECT_EQ(whole, by_row) << dtype_name(type);
    std::vector<float> restored(values.size()), expected(values.size());
    ASSERT_TRUE(dequantize_rows(type, whole.data(), row_length, rows, restored.data(), &pool).ok());
    dtype_traits(type).dequantize(whole.data(), expected.data(), row_length * rows);
    EXPECT_EQ(restored, expected) << dtype_name(type);
  }
}

TEST(Convert, ZeroRowsIsFine) {
  EXPECT_TRUE(quantize_rows(DType::Q4_0, nullptr, 32, 0, nullptr).ok());
  EXPECT_TRUE(dequantize_rows(DType::Q4_0, nullptr, 32, 0, nullptr).ok());
}

TEST(Convert, RowLengthMustBeAMultipleOfTheBlock) {
  std::vector<float> values(300);
  std::vector<uint8_t> out(1024);
  const Status status = quantize_rows(DType::Q4_K, values.data(), 300, 1, out.data());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.error().message().find("q4_K"), std::string::npos) << status.error().message();
  EXPECT_NE(status.error().message().find("256"), std::string::npos) << status.error().message();
  EXPECT_NE(status.error().message().find("300"), std::string::npos) << status.error().message();
  EXPECT_FALSE(dequantize_rows(DType::Q8_0, out.data(), 33, 1, values.data()).ok());
  EXPECT_FALSE(quantize_rows(DType::Q8_0, values.data(), 0, 1, out.data()).ok());
  EXPECT_FALSE(quantize_rows(DType::Q8_0, values.data(), 32, -1, out.data()).ok());
}

TEST(Convert, TypesWithoutAQuantizerSaySo) {
  std::vector<float> values(256);
  std::vector<uint8_t> out(1024);
  for (DType type : {DType::IQ2_XXS, DType::IQ1_S, DType::I32}) {
    const Status status = quantize_rows(type, values.data(), 256, 1, out.data());
    ASSERT_FALSE(status.ok()) << dtype_name(type);
    EXPECT_EQ(status.error().code(), ErrorCode::kUnsupported);
    EXPECT_NE(status.error().message().find(std::string(dtype_name(type))), std::string::npos);
  }
}

TEST(Convert, EveryTableTypeDequantizes) {
  for (const auto& traits : all_dtypes()) EXPECT_NE(traits.dequantize, nullptr) << traits.name;
}

}  // namespace
}  // namespace sinter
