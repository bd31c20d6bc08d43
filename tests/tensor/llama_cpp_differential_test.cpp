// Differential tests against llama.cpp's own scalar reference (ggml's libggml-base, as shipped
// with the oracle's node-llama-cpp package): the same bytes must dequantize to the same floats,
// and sinter's quantizers must write the same blocks, or, where sinter chooses differently, no
// larger an error. Skipped when the library is not installed (run ../shared/oracle/run once).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "support/test_paths.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tensor/convert.h"
#include "tensor/dtype.h"
#include "test_data.h"

namespace sinter {
namespace {

using testing::Distribution;

std::string find_ggml_base() {
  if (const char* env = std::getenv("SINTER_GGML_BASE"); env != nullptr && *env != '\0') return env;
  std::vector<std::string> homes;
  if (const char* env = std::getenv("ORACLE_HOME"); env != nullptr && *env != '\0') homes.emplace_back(env);
  if (const char* env = std::getenv("XDG_CACHE_HOME"); env != nullptr && *env != '\0') {
    homes.push_back(std::string(env) + "/reference-oracle");
  }
  if (const char* env = std::getenv("HOME"); env != nullptr && *env != '\0') {
    homes.push_back(std::string(env) + "/.cache/reference-oracle");
  }
  for (const auto& home : homes) {
    const std::string path = home + "/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so";
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

class GgmlBase {
 public:
  static GgmlBase& instance() {
    static GgmlBase library;
    return library;
  }
  bool loaded() const { return handle_ != nullptr; }
  void* symbol(const std::string& name) const { return handle_ ? dlsym(handle_, name.c_str()) : nullptr; }

 private:
  GgmlBase() {
    const std::string path = find_ggml_base();
    if (!path.empty()) handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  void* handle_ = nullptr;
};

using RowToFloat = void (*)(const void*, float*, int64_t);
using FloatToRow = void (*)(const float*, void*, int64_t);
using QuantizeChunk = size_t (*)(const float*, void*, int64_t, int64_t, const float*);

// ggml's symbol suffix of a type ("q4_K"), which is sinter's type name.
std::string ggml_name(DType type) { return std::string(dtype_name(type)); }

#define SKIP_WITHOUT_GGML()                                                                  \
  if (!GgmlBase::instance().loaded()) {                                                      \
    SINTER_SKIP_WITHOUT_REFERENCE("llama.cpp's libggml-base.so not found (run ../shared/oracle/run once)"); \
  }

bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Random bytes, including random (possibly huge, subnormal, NaN) scales, in every field.
TEST(LlamaCppDifferential, DequantizeRandomBlocksBitExact) {
  SKIP_WITHOUT_GGML();
  for (const auto& traits : all_dtypes()) {
    if (!traits.is_quantized || traits.dequantize == nullptr) continue;
    auto theirs =
        reinterpret_cast<RowToFloat>(GgmlBase::instance().symbol("dequantize_row_" + ggml_name(traits.type)));
    if (traits.type == DType::Q8_1) continue;  // ggml never dequantizes Q8_1 (an activation type)
    ASSERT_NE(theirs, nullptr) << traits.name;
    const int64_t count = 64 * traits.block_size;
    testing::TestRandom random(1234 + static_cast<uint32_t>(traits.type));
    std::vector<uint8_t> bytes(row_bytes(traits.type, count));
    for (auto& byte : bytes) byte = static_cast<uint8_t>(random.bits());
    std::vector<float> ours(static_cast<size_t>(count)), reference(static_cast<size_t>(count));
    traits.dequantize(bytes.data(), ours.data(), count);
    theirs(bytes.data(), reference.data(), count);
    int mismatches = 0;
    for (int64_t i = 0; i < count; ++i) {
      if (!same_float(ours[static_cast<size_t>(i)], reference[static_cast<size_t>(i)]) && mismatches++ < 5) {
        ADD_FAILURE() << traits.name << " value " << i << ": sinter " << ours[static_cast<size_t>(i)]
                      << ", llama.cpp " << reference[static_cast<size_t>(i)];
      }
    }
    EXPECT_EQ(mismatches, 0) << traits.name;
  }
}

struct QuantizeCase {
  DType type;
  bool same_bytes;  // sinter's choice is llama.cpp's, block for block
};

// Each quantizer against llama.cpp's reference quantizer (the one `llama-quantize` runs without
// an importance matrix), on every test distribution.
TEST(LlamaCppDifferential, QuantizeMatchesOrBeatsReference) {
  SKIP_WITHOUT_GGML();
  const QuantizeCase cases[] = {
      {DType::Q4_0, true},    {DType::Q4_1, true},    {DType::Q5_0, true},  {DType::Q5_1, true},
      {DType::Q8_0, true},    {DType::Q8_1, true},    {DType::Q2_K, true},  {DType::Q3_K, true},
      {DType::Q4_K, true},    {DType::Q5_K, true},    {DType::Q6_K, true},  {DType::Q8_K, true},
      {DType::IQ4_NL, false}, {DType::IQ4_XS, false}, {DType::TQ1_0, true}, {DType::TQ2_0, true},
      {DType::MXFP4, false},
  };
  for (const auto& c : cases) {
    const DTypeTraits& traits = dtype_traits(c.type);
    // What llama-quantize runs: quantize_<type>(src, dst, rows, row_length, imatrix = null);
    // types it never quantizes weights to (Q8_1, Q8_K) only have the row reference.
    auto chunk =
        reinterpret_cast<QuantizeChunk>(GgmlBase::instance().symbol("quantize_" + ggml_name(c.type)));
    auto row = reinterpret_cast<FloatToRow>(
        GgmlBase::instance().symbol("quantize_row_" + ggml_name(c.type) + "_ref"));
    ASSERT_TRUE(chunk != nullptr || row != nullptr) << traits.name;
    const auto theirs = [&](const float* values, void* out, int64_t count) {
      if (chunk != nullptr) {
        chunk(values, out, 1, count, nullptr);
      } else {
        row(values, out, count);
      }
    };
    for (Distribution distribution : testing::kAllDistributions) {
      const int64_t count = 64 * 256;
      const auto values = testing::make_values(distribution, count, 99);
      const size_t bytes = row_bytes(c.type, count);
      std::vector<uint8_t> ours(bytes), reference(bytes);
      ASSERT_TRUE(quantize_rows(c.type, values.data(), count, 1, ours.data()).ok());
      theirs(values.data(), reference.data(), count);
      int64_t differing_blocks = 0;
      for (size_t offset = 0; offset < bytes; offset += traits.block_bytes) {
        differing_blocks += std::memcmp(&ours[offset], &reference[offset], traits.block_bytes) != 0;
      }
      std::vector<float> ours_values(static_cast<size_t>(count)),
          reference_values(static_cast<size_t>(count));
      traits.dequantize(ours.data(), ours_values.data(), count);
      traits.dequantize(reference.data(), reference_values.data(), count);
      const double our_error = testing::relative_rmse(values, ours_values);
      const double their_error = testing::relative_rmse(values, reference_values);
      const int64_t blocks = count / traits.block_size;
      if (c.same_bytes) {
        EXPECT_EQ(differing_blocks, 0) << traits.name << " " << testing::distribution_name(distribution)
                                       << ": " << differing_blocks << " of " << blocks << " blocks differ";
      }
      EXPECT_LE(our_error, their_error * 1.001 + 1e-12)
          << traits.name << " " << testing::distribution_name(distribution) << ": sinter " << our_error
          << ", llama.cpp " << their_error;
      if (differing_blocks == 0) continue;
      std::printf("  %-7s %-12s rmse sinter %.6f llama.cpp %.6f, %lld/%lld blocks differ\n",
                  std::string(traits.name).c_str(), testing::distribution_name(distribution), our_error,
                  their_error, static_cast<long long>(differing_blocks), static_cast<long long>(blocks));
    }
  }
}

// F16 and BF16 from random float bit patterns (NaN, infinities, subnormals included).
TEST(LlamaCppDifferential, HalfConversionsMatch) {
  SKIP_WITHOUT_GGML();
  struct Conversion {
    DType type;
    const char* to_half;
    const char* to_float;
  };
  for (const Conversion& c :
       {Conversion{DType::F16, "ggml_fp32_to_fp16_row", "ggml_fp16_to_fp32_row"},
        Conversion{DType::BF16, "ggml_fp32_to_bf16_row_ref", "ggml_bf16_to_fp32_row"}}) {
    auto to_half = reinterpret_cast<FloatToRow>(GgmlBase::instance().symbol(c.to_half));
    auto to_float = reinterpret_cast<RowToFloat>(GgmlBase::instance().symbol(c.to_float));
    ASSERT_NE(to_half, nullptr) << c.to_half;
    ASSERT_NE(to_float, nullptr) << c.to_float;
    testing::TestRandom random(77);
    std::vector<float> values(1 << 16);
    for (size_t i = 0; i < values.size(); ++i) {
      // Half the values near the half-precision range, where the rounding decisions are.
      const uint32_t bits = random.bits();
      values[i] = std::bit_cast<float>(i % 2 ? bits : (bits & 0x87ffffffu) | 0x30000000u);
    }
    std::vector<uint16_t> ours(values.size()), theirs(values.size());
    dtype_traits(c.type).quantize(values.data(), ours.data(), static_cast<int64_t>(values.size()));
    to_half(values.data(), theirs.data(), static_cast<int64_t>(values.size()));
    int64_t mismatches = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (ours[i] != theirs[i] && mismatches++ < 5) {
        ADD_FAILURE() << dtype_name(c.type) << " of " << values[i] << " (bits " << std::hex
                      << std::bit_cast<uint32_t>(values[i]) << "): sinter " << ours[i] << ", llama.cpp "
                      << theirs[i];
      }
    }
    EXPECT_EQ(mismatches, 0) << dtype_name(c.type);
    std::vector<uint16_t> every(1 << 16);
    for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<uint16_t>(i);
    std::vector<float> our_floats(every.size()), their_floats(every.size());
    dtype_traits(c.type).dequantize(every.data(), our_floats.data(), static_cast<int64_t>(every.size()));
    to_float(every.data(), their_floats.data(), static_cast<int64_t>(every.size()));
    for (size_t i = 0; i < every.size(); ++i) {
      ASSERT_TRUE(same_float(our_floats[i], their_floats[i])) << dtype_name(c.type) << " bits " << i;
    }
  }
}

}  // namespace
}  // namespace sinter
