// Scale searches of the K-quant reference quantizers: see quant_k_search.h.
#include "tensor/quant_k_search.h"

#include <algorithm>
#include <cmath>

namespace sinter::reference::ksearch {

int nearest_int(float value) {
  // Out-of-range and NaN input (from infinite or NaN weights) must not reach the conversion.
  constexpr float kLimit = 4194303.0f;
  if (!(std::fabs(value) <= kLimit)) return value > 0.0f ? 4194303 : (value < 0.0f ? -4194303 : 0);
  // lrint rounds in the current rounding mode: nearest, ties to even.
  return static_cast<int>(std::lrint(value));
}

namespace {

// The value of largest magnitude (sign kept) and that magnitude.
struct SignedMax {
  float value = 0.0f;
  float magnitude = 0.0f;
};

SignedMax signed_max(int count, const float* values) {
  SignedMax result;
  for (int i = 0; i < count; ++i) {
    const float magnitude = std::fabs(values[i]);
    if (magnitude > result.magnitude) {
      result.magnitude = magnitude;
      result.value = values[i];
    }
  }
  return result;
}

// Σ w·x·l and Σ w·l² of a symmetric assignment at `inverse_scale`, weights w = x².
struct FitSums {
  float xl = 0.0f;
  float ll = 0.0f;
};

FitSums symmetric_fit(int count, int levels, const float* values, float inverse_scale, int* out) {
  FitSums sums;
  for (int i = 0; i < count; ++i) {
    const int level = std::clamp(nearest_int(inverse_scale * values[i]), -levels, levels - 1);
    if (out != nullptr) out[i] = level;
    const float weight = values[i] * values[i];
    const auto l = static_cast<float>(level);
    sums.xl += weight * values[i] * l;
    sums.ll += weight * l * l;
  }
  return sums;
}

}  // namespace

float symmetric_scale_search(int count, int levels, const float* values, uint8_t* out_levels) {
  const SignedMax max = signed_max(count, values);
  if (max.magnitude < kGroupEpsilon) {
    std::fill(out_levels, out_levels + count, uint8_t{0});  // any level: the scale is 0
    return 0.0f;
  }
  int best_levels[32];
  int trial_levels[32];
  float inverse_scale = -static_cast<float>(levels) / max.value;
  FitSums sums = symmetric_fit(count, levels, values, inverse_scale, best_levels);
  float scale = sums.ll > 0.0f ? sums.xl / sums.ll : 0.0f;
  float best = scale * sums.xl;  // (Σwxl)² / Σwl²: the error reduction of this fit
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    inverse_scale = -(static_cast<float>(levels) + 0.1f * static_cast<float>(step)) / max.value;
    sums = symmetric_fit(count, levels, values, inverse_scale, trial_levels);
    if (sums.ll > 0.0f && sums.xl * sums.xl > best * sums.ll) {
      std::copy(trial_levels, trial_levels + count, best_levels);
      scale = sums.xl / sums.ll;
      best = scale * sums.xl;
    }
  }
  for (int i = 0; i < count; ++i) out_levels[i] = static_cast<uint8_t>(best_levels[i] + levels);
  return scale;
}

float symmetric_scale_refine(int count, int levels, const float* values, uint8_t* out_levels) {
  const SignedMax max = signed_max(count, values);
  if (max.magnitude < kGroupEpsilon) {
    std::fill(out_levels, out_levels + count, uint8_t{0});  // any level: the scale is 0
    return 0.0f;
  }
  int level[32];
  const float inverse_scale = -static_cast<float>(levels) / max.value;
  FitSums sums = symmetric_fit(count, levels, values, inverse_scale, level);
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < count; ++i) {
      const float weight = values[i] * values[i];
      // The sums without value i; its best level given the others' fit.
      const auto old_level = static_cast<float>(level[i]);
      float xl = sums.xl - weight * values[i] * old_level;
      if (xl <= 0.0f) continue;
      float ll = sums.ll - weight * old_level * old_level;
      const int candidate = std::clamp(nearest_int(values[i] * ll / xl), -levels, levels - 1);
      if (candidate == level[i]) continue;
      const auto new_level = static_cast<float>(candidate);
      xl += weight * values[i] * new_level;
      ll += weight * new_level * new_level;
      // Keep the move when it raises (Σwxl)² / Σwl², i.e. lowers the fitted error.
      if (ll > 0.0f && xl * xl * sums.ll > sums.xl * sums.xl * ll) {
        level[i] = candidate;
        sums.xl = xl;
        sums.ll = ll;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < count; ++i) out_levels[i] = static_cast<uint8_t>(level[i] + levels);
  return sums.ll > 0.0f ? sums.xl / sums.ll : 0.0f;
}

float min_scale_search(int count, int max_level, const float* values, const float* weights,
                       uint8_t* out_levels, float* out_minimum, const ScaleSearch& search) {
  float min = values[0];
  float max = values[0];
  float sum_w = weights[0];
  float sum_x = sum_w * values[0];
  for (int i = 1; i < count; ++i) {
    min = std::min(min, values[i]);
    max = std::max(max, values[i]);
    sum_w += weights[i];
    sum_x += weights[i] * values[i];
  }
  min = std::min(min, 0.0f);  // the minimum is subtracted as a non-negative number
  if (max == min) {
    std::fill(out_levels, out_levels + count, uint8_t{0});
    *out_minimum = -min;
    return 0.0f;
  }
  const auto error_of = [&](float scale, float offset, const uint8_t* levels) {
    float error = 0.0f;
    for (int i = 0; i < count; ++i) {
      const float diff = scale * static_cast<float>(levels[i]) + offset - values[i];
      error += weights[i] * (search.absolute ? std::fabs(diff) : diff * diff);
    }
    return error;
  };
  float inverse_scale = static_cast<float>(max_level) / (max - min);
  float scale = 1.0f / inverse_scale;
  for (int i = 0; i < count; ++i) {
    out_levels[i] =
        static_cast<uint8_t>(std::clamp(nearest_int(inverse_scale * (values[i] - min)), 0, max_level));
  }
  float best_error = error_of(scale, min, out_levels);
  uint8_t trial[32];
  for (int step = 0; step <= search.step_count; ++step) {
    // Candidates map [min, max] onto the levels, min being the best fit found so far.
    inverse_scale =
        (search.min_step + search.step * static_cast<float>(step) + static_cast<float>(max_level)) /
        (max - min);
    float sum_l = 0.0f;
    float sum_l2 = 0.0f;
    float sum_xl = 0.0f;
    for (int i = 0; i < count; ++i) {
      const int level = std::clamp(nearest_int(inverse_scale * (values[i] - min)), 0, max_level);
      trial[i] = static_cast<uint8_t>(level);
      const float weighted = weights[i] * static_cast<float>(level);
      sum_l += weighted;
      sum_l2 += weighted * static_cast<float>(level);
      sum_xl += weighted * values[i];
    }
    // Weighted least squares of x ≈ s·l + m over the group.
    const float determinant = sum_w * sum_l2 - sum_l * sum_l;
    if (determinant <= 0.0f) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / determinant;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / determinant;
    if (this_min > 0.0f) {  // a positive offset cannot be stored: fit the scale alone
      this_min = 0.0f;
      this_scale = sum_xl / sum_l2;
    }
    const float error = error_of(this_scale, this_min, trial);
    if (error < best_error) {
      std::copy(trial, trial + count, out_levels);
      best_error = error;
      scale = this_scale;
      min = this_min;
    }
  }
  *out_minimum = -min;
  return scale;
}

}  // namespace sinter::reference::ksearch
