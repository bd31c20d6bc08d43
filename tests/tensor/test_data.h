// Deterministic test inputs for the tensor tests: fixed-seed value distributions that do not
// depend on the standard library's distribution classes (which differ between implementations).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sinter::testing {

class TestRandom {
 public:
  explicit TestRandom(uint32_t seed) : engine_(seed) {}
  float uniform() { return static_cast<float>(engine_() >> 8) * (1.0f / 16777216.0f); }  // [0, 1)
  float symmetric() { return 2.0f * uniform() - 1.0f; }                                  // [-1, 1)
  float gaussian() {
    const float u1 = std::max(uniform(), 1e-7f);
    const float u2 = uniform();
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853f * u2);
  }
  uint32_t bits() { return engine_(); }

 private:
  std::mt19937 engine_;
};

enum class Distribution {
  kGaussian,    // N(0, 1)
  kUniform,     // U(-1, 1)
  kOutliers,    // N(0, 1) with one value in 64 multiplied by 30
  kPositive,    // |N(0, 1)| + 0.5: no negative values (exercises the minimum of _1 / K types)
  kTiny,        // N(0, 1e-3): small weights whose block scales are small f16 numbers
  kZeroBlocks,  // N(0, 1) with every other 32-value block zero
  kConstant,    // every 32-value block one constant (different per block, some negative)
};

inline const char* distribution_name(Distribution d) {
  switch (d) {
    case Distribution::kGaussian: return "gaussian";
    case Distribution::kUniform: return "uniform";
    case Distribution::kOutliers: return "outliers";
    case Distribution::kPositive: return "positive";
    case Distribution::kTiny: return "tiny";
    case Distribution::kZeroBlocks: return "zero_blocks";
    case Distribution::kConstant: return "constant";
  }
  return "?";
}

inline constexpr Distribution kAllDistributions[] = {
    Distribution::kGaussian, Distribution::kUniform,    Distribution::kOutliers, Distribution::kPositive,
    Distribution::kTiny,     Distribution::kZeroBlocks, Distribution::kConstant,
};

inline std::vector<float> make_values(Distribution distribution, int64_t count, uint32_t seed) {
  TestRandom random(seed);
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    float& v = values[static_cast<size_t>(i)];
    switch (distribution) {
      case Distribution::kGaussian: v = random.gaussian(); break;
      case Distribution::kUniform: v = random.symmetric(); break;
      case Distribution::kOutliers:
        v = random.gaussian() * (random.uniform() < 1.0f / 64 ? 30.0f : 1.0f);
        break;
      case Distribution::kPositive: v = std::fabs(random.gaussian()) + 0.5f; break;
      case Distribution::kTiny: v = 1e-3f * random.gaussian(); break;
      case Distribution::kZeroBlocks: v = (i / 32) % 2 == 0 ? 0.0f : random.gaussian(); break;
      case Distribution::kConstant: {
        if (i % 32 == 0)
          v = random.gaussian();
        else
          v = values[static_cast<size_t>(i - 1)];
        break;
      }
    }
  }
  return values;
}

// RMS of (a - b) divided by RMS of a (0 when a is all zero and b equals it).
inline double relative_rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double error = 0.0;
  double norm = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    error += diff * diff;
    norm += static_cast<double>(a[i]) * static_cast<double>(a[i]);
  }
  if (norm == 0.0) return error == 0.0 ? 0.0 : INFINITY;
  return std::sqrt(error / norm);
}

}  // namespace sinter::testing
