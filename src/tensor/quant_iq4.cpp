// Non-linear 4-bit types: IQ4_NL (32-value blocks, f16 scale) and IQ4_XS (256-value super-blocks,
// f16 scale and a 6-bit scale per 32 values). A 4-bit index selects one of 16 fixed levels
// (iq::kIq4nlValues), denser near zero where most weights are; within 32 values, value j is the
// low nibble of qs[j] and value j + 16 its high nibble.
//
// Quantization picks, per 32 values, the scale that minimizes the x²-weighted squared error
// against the level table among 16 candidates: the scale mapping the largest magnitude to either
// end of the table, then 15 scales around the negative end, each with the least-squares refit of
// its levels (llama.cpp's search without an importance matrix). Sinter then judges what is
// stored: IQ4_NL keeps the candidate whose f16-rounded scale leaves the least squared error, and
// IQ4_XS picks each 6-bit sub-scale (nearest or a neighbour) the same way; llama.cpp rounds
// without looking, so sinter's error is lower.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/iq_grids.h"
#include "tensor/quant_k_search.h"
#include "tensor/reference.h"

namespace sinter::reference {
namespace {

using iq::kIq4nlValues;
using ksearch::nearest_int;

constexpr int kGroup = 32;

// The index of the level nearest to `value` (the upper one on a tie).
uint8_t nearest_level(float value) {
  if (value <= kIq4nlValues[0]) return 0;
  if (value >= kIq4nlValues[15]) return 15;
  int low = 0;
  int high = 15;
  while (high - low > 1) {  // kIq4nlValues[low] <= value < kIq4nlValues[high]
    const int middle = (low + high) / 2;
    if (value < kIq4nlValues[middle]) {
      high = middle;
    } else {
      low = middle;
    }
  }
  return static_cast<uint8_t>(value - kIq4nlValues[low] < kIq4nlValues[high] - value ? low : high);
}

// Σ w·x·v and Σ w·v² of the nearest levels v at `inverse_scale`, weights w = x².
struct LevelFit {
  float xv = 0.0f;
  float vv = 0.0f;
};

LevelFit fit_levels(const float* values, float inverse_scale) {
  LevelFit fit;
  for (int j = 0; j < kGroup; ++j) {
    const auto level = static_cast<float>(kIq4nlValues[nearest_level(inverse_scale * values[j])]);
    const float weight = values[j] * values[j];
    fit.xv += weight * level * values[j];
    fit.vv += weight * level * level;
  }
  return fit;
}

// Σ (x - scale·v)² with v the nearest levels at `scale`: the error of a stored scale.
float stored_error(const float* values, float scale) {
  const float inverse = scale != 0.0f ? 1.0f / scale : 0.0f;
  float error = 0.0f;
  for (int j = 0; j < kGroup; ++j) {
    const float diff =
        values[j] - scale * static_cast<float>(kIq4nlValues[nearest_level(inverse * values[j])]);
    error += diff * diff;
  }
  return error;
}

// The candidate scales of 32 values: for each candidate inverse scale, the least-squares refit
// of the levels it selects. The first maps the largest magnitude to the table's positive end
// (x_max ↦ 127·sign), the others around its negative end (x_max ↦ -127 + k, k = -7..7).
// Calls consider(scale, Σwxv, Σwv²) for each candidate with Σwv² > 0.
template <class Consider>
void for_each_candidate_scale(const float* values, float max_value, const Consider& consider) {
  const auto first_level = static_cast<float>(kIq4nlValues[0]);  // -127
  const auto try_inverse = [&](float inverse_scale) {
    const LevelFit fit = fit_levels(values, inverse_scale);
    if (fit.vv > 0.0f) consider(fit.xv / fit.vv, fit.xv, fit.vv);
  };
  try_inverse(1.0f / (-max_value / first_level));
  for (int step = -7; step <= 7; ++step) try_inverse((static_cast<float>(step) + first_level) / max_value);
}

float signed_max_of_group(const float* values) {
  float max_magnitude = 0.0f;
  float max_value = 0.0f;
  for (int j = 0; j < kGroup; ++j) {
    if (std::fabs(values[j]) > max_magnitude) {
      max_magnitude = std::fabs(values[j]);
      max_value = values[j];
    }
  }
  return max_magnitude < ksearch::kGroupEpsilon ? 0.0f : max_value;
}

// The scale of 32 values that maximizes (Σwxv)² / Σwv² over the candidates, i.e. minimizes the
// weighted error for an exact (float) scale (0 for an all-zero group). IQ4_XS re-quantizes
// this scale to 6 bits afterwards.
float search_group_scale(const float* values) {
  const float max_value = signed_max_of_group(values);
  if (max_value == 0.0f) return 0.0f;
  float scale = 0.0f;
  float best = -1.0f;
  for_each_candidate_scale(values, max_value, [&](float candidate, float xv, float vv) {
    if (best < 0.0f || xv * xv > best * vv) {
      scale = candidate;
      best = candidate * xv;
    }
  });
  return scale;
}

// The same candidates, judged by the squared error at the scale as stored (rounded to f16,
// levels re-chosen against it): what IQ4_NL dequantizes. Returns the f16 bits.
f16_bits search_group_scale_f16(const float* values) {
  const float max_value = signed_max_of_group(values);
  if (max_value == 0.0f) return f32_to_f16(0.0f);
  f16_bits best_scale = f32_to_f16(0.0f);
  float best_error = INFINITY;
  for_each_candidate_scale(values, max_value, [&](float candidate, float, float) {
    const f16_bits stored = f32_to_f16(candidate);
    const float error = stored_error(values, f16_to_f32(stored));
    if (error < best_error) {
      best_error = error;
      best_scale = stored;
    }
  });
  return best_scale;
}

// Levels of 32 values at a stored scale, packed into 16 bytes.
void pack_group(const float* values, float scale, uint8_t* qs) {
  const float inverse = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (int j = 0; j < kGroup / 2; ++j) {
    qs[j] = static_cast<uint8_t>(nearest_level(inverse * values[j]) |
                                 nearest_level(inverse * values[j + kGroup / 2]) << 4);
  }
}

void dequantize_group(const uint8_t* qs, float scale, float* out) {
  for (int j = 0; j < kGroup / 2; ++j) {
    out[j] = scale * static_cast<float>(kIq4nlValues[qs[j] & 0x0f]);
    out[j + kGroup / 2] = scale * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
  }
}

}  // namespace

void dequantize_row_iq4_nl(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ4_NL*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, out += kQK)
    dequantize_group(block[b].qs, f16_to_f32(block[b].d), out);
}

void quantize_row_iq4_nl(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockIQ4_NL*>(blocks);
  for (int64_t b = 0; b < count / kQK; ++b, values += kQK) {
    block[b].d = search_group_scale_f16(values);
    pack_group(values, f16_to_f32(block[b].d), block[b].qs);
  }
}

// IQ4_XS: the 6-bit scale of sub-block s (biased by 32) has its low 4 bits in nibble s % 2 of
// scales_l[s / 2] and its top 2 bits at bits 2s..2s+1 of scales_h: x = d·(scale - 32)·level.
void dequantize_row_iq4_xs(const void* blocks, float* out, int64_t count) {
  const auto* block = static_cast<const BlockIQ4_XS*>(blocks);
  for (int64_t b = 0; b < count / kQKK; ++b) {
    const float d = f16_to_f32(block[b].d);
    uint16_t scales_high;
    std::memcpy(&scales_high, &block[b].scales_h, sizeof scales_high);
    for (int sub = 0; sub < kQKK / kGroup; ++sub, out += kGroup) {
      const int low = (block[b].scales_l[sub / 2] >> (4 * (sub % 2))) & 0x0f;
      const int high = (scales_high >> (2 * sub)) & 3;
      dequantize_group(block[b].qs + 16 * sub, d * static_cast<float>((low | high << 4) - 32), out);
    }
  }
}

// Per 32 values the IQ4_NL scale search; the scales are quantized to 6 bits (-32..31) against
// the one of largest magnitude (which maps to -32), and the levels re-chosen at the stored scale.
void quantize_row_iq4_xs(const float* values, void* blocks, int64_t count) {
  auto* block = static_cast<BlockIQ4_XS*>(blocks);
  constexpr int kSubBlocks = kQKK / kGroup;
  for (int64_t b = 0; b < count / kQKK; ++b, values += kQKK) {
    float scales[kSubBlocks];
    float max_scale = 0.0f;
    float max_magnitude = 0.0f;
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      scales[sub] = search_group_scale(values + kGroup * sub);
      if (std::fabs(scales[sub]) > max_magnitude) {
        max_magnitude = std::fabs(scales[sub]);
        max_scale = scales[sub];
      }
    }
    BlockIQ4_XS& out = block[b];
    std::memset(&out, 0, sizeof out);
    out.d = f32_to_f16(-max_scale / 32.0f);
    const float d = f16_to_f32(out.d);
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    uint16_t scales_high = 0;
    for (int sub = 0; sub < kSubBlocks; ++sub) {
      // The nearest 6-bit scale or a neighbour, whichever leaves the least squared error.
      const int nearest = std::clamp(nearest_int(inverse * scales[sub]), -32, 31);
      int level = nearest;
      float best_error = stored_error(values + kGroup * sub, d * static_cast<float>(nearest));
      for (int candidate = std::max(-32, nearest - 1); candidate <= std::min(31, nearest + 1);
           candidate += 2) {
        const float error = stored_error(values + kGroup * sub, d * static_cast<float>(candidate));
        if (error < best_error) {
          best_error = error;
          level = candidate;
        }
      }
      pack_group(values + kGroup * sub, d * static_cast<float>(level), out.qs + 16 * sub);
      const int biased = level + 32;
      out.scales_l[sub / 2] =
          static_cast<uint8_t>(out.scales_l[sub / 2] | (biased & 0x0f) << (4 * (sub % 2)));
      scales_high = static_cast<uint16_t>(scales_high | (biased >> 4) << (2 * sub));
    }
    std::memcpy(&out.scales_h, &scales_high, sizeof scales_high);
  }
}

}  // namespace sinter::reference
