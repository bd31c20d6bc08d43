// The reference dot products (src/tensor/vec_dot*.cpp) against the definition in double
// precision (dequantized weight row · dequantized activation row), and against llama.cpp's own
// CPU dot products (libggml-cpu, loaded from the oracle's package when it is installed).
#include "tensor/vec_dot.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_paths.h"
#include "tensor/convert.h"
#include "tensor/dtype.h"
#include "test_data.h"

namespace sinter {
namespace {

using testing::Distribution;

constexpr DType kTypes[] = {DType::F32,  DType::F16,    DType::BF16,   DType::Q4_0, DType::Q4_1, DType::Q5_0,
                            DType::Q5_1, DType::Q8_0,   DType::Q2_K,   DType::Q3_K, DType::Q4_K, DType::Q5_K,
                            DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS, DType::MXFP4};

struct Rows {
  std::vector<uint8_t> w, x;  // one row each, in the weight / activation format
  std::vector<float> wf, xf;  // what they dequantize to
};

Rows make_rows(DType type, int64_t n, Distribution w_dist, Distribution x_dist, uint32_t seed) {
  Rows r;
  const DType act = vec_dot_activation_type(type);
  const auto wv = testing::make_values(w_dist, n, seed);
  const auto xv = testing::make_values(x_dist, n, seed + 1000);
  r.w.resize(row_bytes(type, n));
  r.x.resize(row_bytes(act, n));
  if (n == 0) return r;  // an empty row: nothing to quantize
  EXPECT_TRUE(quantize_rows(type, wv.data(), n, 1, r.w.data()));
  EXPECT_TRUE(quantize_rows(act, xv.data(), n, 1, r.x.data()));
  r.wf.resize(static_cast<size_t>(n));
  r.xf.resize(static_cast<size_t>(n));
  EXPECT_TRUE(dequantize_rows(type, r.w.data(), n, 1, r.wf.data()));
  EXPECT_TRUE(dequantize_rows(act, r.x.data(), n, 1, r.xf.data()));
  return r;
}

int64_t block_of(DType type) { return std::max<int64_t>(dtype_traits(type).block_size, 32); }

TEST(VecDot, EveryListedTypeHasAReference) {
  for (DType t : kTypes) EXPECT_NE(reference_vec_dot(t), nullptr) << dtype_name(t);
  EXPECT_EQ(reference_vec_dot(DType::IQ2_XXS), nullptr);
  EXPECT_EQ(vec_dot_activation_type(DType::Q4_0), DType::Q8_0);
  EXPECT_EQ(vec_dot_activation_type(DType::Q5_1), DType::Q8_1);
  EXPECT_EQ(vec_dot_activation_type(DType::Q6_K), DType::Q8_K);
  EXPECT_EQ(vec_dot_activation_type(DType::F16), DType::F16);
  EXPECT_EQ(vec_dot_activation_type(DType::F32), DType::F32);
}

// Against Σ w_k·x_k in double over the dequantized rows. The float chain and the scales' own
// products round; a layout error gives errors of the order of the sum itself.
TEST(VecDot, MatchesTheDequantizedDotInDouble) {
  for (DType type : kTypes) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    for (int blocks : {0, 1, 2, 3, 8, 17}) {
      const int64_t n = blocks * block_of(type);
      for (Distribution wd : testing::kAllDistributions) {
        const Rows r = make_rows(type, n, wd, Distribution::kGaussian, 31 + static_cast<uint32_t>(blocks));
        double expected = 0, magnitude = 0;
        for (int64_t k = 0; k < n; ++k) {
          expected += double{r.wf[k]} * r.xf[k];
          magnitude += std::fabs(double{r.wf[k]} * r.xf[k]);
        }
        const float got = reference_vec_dot(type)(n, r.w.data(), r.x.data());
        double tolerance = 2e-6 * magnitude + 1e-30;
        if (vec_dot_activation_type(type) == DType::Q8_1) {
          // s = d·Σq with the unrounded d, stored as F16: the minimum's term differs from
          // m·Σ(d_rounded·q) by up to about 2^-10 of itself.
          double min_term = 0;
          for (int64_t k = 0; k < n; ++k) min_term += std::fabs(double{r.xf[k]});
          tolerance += 2e-3 * min_term * 4.0 /* |m| is at most ~ the row's range */;
        }
        if (type == DType::Q2_K || type == DType::Q4_K || type == DType::Q5_K) {
          // Dequantization rounds d·sc·q − dmin·m per value, after cancellation.
          tolerance += 1e-6 * magnitude * 16;
        }
        EXPECT_NEAR(got, expected, tolerance) << "blocks " << blocks << " " << testing::distribution_name(wd);
      }
    }
  }
}

TEST(VecDot, UnalignedRowsGiveTheSameBits) {
  for (DType type : kTypes) {
    const int64_t n = 3 * block_of(type);
    const Rows r = make_rows(type, n, Distribution::kGaussian, Distribution::kUniform, 5);
    std::vector<uint8_t> w(r.w.size() + 1), x(r.x.size() + 3);
    std::memcpy(w.data() + 1, r.w.data(), r.w.size());
    std::memcpy(x.data() + 3, r.x.data(), r.x.size());
    const float aligned = reference_vec_dot(type)(n, r.w.data(), r.x.data());
    const float unaligned = reference_vec_dot(type)(n, w.data() + 1, x.data() + 3);
    EXPECT_EQ(std::bit_cast<uint32_t>(aligned), std::bit_cast<uint32_t>(unaligned)) << dtype_name(type);
  }
}

// The accumulation order is part of the definition: one fma chain over blocks, in order.
TEST(VecDot, Q8_0IsOneFmaChainOverBlocks) {
  const int64_t n = 5 * 32;
  const Rows r = make_rows(DType::Q8_0, n, Distribution::kOutliers, Distribution::kGaussian, 9);
  float acc = 0.0f;
  for (int b = 0; b < 5; ++b) {
    const uint8_t* wb = r.w.data() + 34 * b;
    const uint8_t* xb = r.x.data() + 34 * b;
    int isum = 0;
    for (int j = 0; j < 32; ++j) isum += static_cast<int8_t>(wb[2 + j]) * static_cast<int8_t>(xb[2 + j]);
    const float d = load_f16(wb) * load_f16(xb);
    acc = std::fma(static_cast<float>(isum), d, acc);
  }
  EXPECT_EQ(std::bit_cast<uint32_t>(acc),
            std::bit_cast<uint32_t>(reference::vec_dot_q8_0_q8_0(n, r.w.data(), r.x.data())));
}

// llama.cpp's CPU library, for its vec_dot functions.
class GgmlCpu {
 public:
  using VecDot = void (*)(int n, float* s, size_t bs, const void* x, size_t bx, const void* y, size_t by,
                          int nrc);
  struct TypeTraitsCpu {
    void* from_float;
    VecDot vec_dot;
    int vec_dot_type;
    int64_t nrows;
  };

  static GgmlCpu& instance() {
    static GgmlCpu library;
    return library;
  }
  bool loaded() const { return traits_ != nullptr; }
  const TypeTraitsCpu* traits(DType type) const { return traits_(static_cast<int>(type)); }

 private:
  GgmlCpu() {
    const std::string dir = find_dir();
    if (dir.empty()) return;
    base_ = dlopen((dir + "/libggml-base.so").c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (base_ == nullptr) return;
    for (const char* variant : {"haswell", "icelake"}) {
      cpu_ = dlopen((dir + "/libggml-cpu-" + variant + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
      if (cpu_ != nullptr) break;
    }
    if (cpu_ == nullptr) return;
    auto init = reinterpret_cast<void (*)()>(dlsym(cpu_, "ggml_cpu_init"));
    if (init != nullptr) init();
    traits_ = reinterpret_cast<const TypeTraitsCpu* (*)(int)>(dlsym(cpu_, "ggml_get_type_traits_cpu"));
  }
  static std::string find_dir() {
    std::vector<std::string> homes;
    if (const char* env = std::getenv("ORACLE_HOME"); env != nullptr && *env != '\0') homes.emplace_back(env);
    if (const char* env = std::getenv("HOME"); env != nullptr && *env != '\0') {
      homes.push_back(std::string(env) + "/.cache/reference-oracle");
    }
    for (const auto& home : homes) {
      const std::string dir = home + "/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64";
      if (std::filesystem::exists(dir + "/libggml-base.so")) return dir;
    }
    return "";
  }
  void* base_ = nullptr;
  void* cpu_ = nullptr;
  const TypeTraitsCpu* (*traits_)(int) = nullptr;
};

// Same integer math per block; only the float summation order differs (ggml keeps lanes).
TEST(VecDot, AgreesWithLlamaCppCpuDotProducts) {
  if (!GgmlCpu::instance().loaded())
    SINTER_SKIP_WITHOUT_REFERENCE("llama.cpp's libggml-cpu not found (run ../shared/oracle/run once)");
  for (DType type : kTypes) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    const auto* traits = GgmlCpu::instance().traits(type);
    ASSERT_NE(traits, nullptr);
    ASSERT_NE(traits->vec_dot, nullptr);
    const DType act = vec_dot_activation_type(type);
    ASSERT_EQ(traits->vec_dot_type, static_cast<int>(act == DType::F32 ? DType::F32 : act));
    for (int blocks : {1, 4, 64}) {
      const int64_t n = blocks * block_of(type);
      for (Distribution wd : testing::kAllDistributions) {
        const Rows r = make_rows(type, n, wd, Distribution::kOutliers, 77 + static_cast<uint32_t>(blocks));
        float theirs = 0;
        traits->vec_dot(static_cast<int>(n), &theirs, 0, r.w.data(), 0, r.x.data(), 0, 1);
        const float ours = reference_vec_dot(type)(n, r.w.data(), r.x.data());
        double magnitude = 0;
        for (int64_t k = 0; k < n; ++k) magnitude += std::fabs(double{r.wf[k]} * r.xf[k]);
        EXPECT_NEAR(ours, theirs, 4e-6 * magnitude + 1e-30)
            << blocks << " " << testing::distribution_name(wd);
      }
    }
  }
}

}  // namespace
}  // namespace sinter
