// Scale searches of the K-quant reference quantizers (no importance matrix).
//
// Each picks the scale (and minimum) of one small group of values — 16 or 32 — and the integer
// levels that go with it, minimizing a weighted squared (or absolute) error instead of simply
// mapping the largest value to the largest level. The super-block code in quant_k.cpp then
// quantizes these per-group scales once more (to 4, 6 or 8 bits) and re-rounds the values.
#pragma once

#include <cstdint>

namespace sinter::reference::ksearch {

// Values below this magnitude count as zero when a group picks its scale.
constexpr float kGroupEpsilon = 1e-15f;

// Round to nearest, ties to even (as adding 1.5 * 2^23 in float arithmetic does).
int nearest_int(float value);

// Symmetric levels -levels..levels-1 with weights x²: starts from the scale that maps the value
// of largest magnitude to -levels, then tries 18 nearby scales (levels ± 0.1·k) and keeps the one
// with the least weighted error (for a fixed assignment, error is minimal at
// scale = Σwxl / Σwl², so "least error" is "largest (Σwxl)² / Σwl²").
// Writes level + levels (0..2·levels-1) to `out_levels`; returns the scale (negative when the
// largest magnitude is positive).
float symmetric_scale_search(int count, int levels, const float* values, uint8_t* out_levels);

// Symmetric levels -levels..levels-1 with weights x², refined by coordinate descent: up to five
// passes in which each value may move to the level that lowers the weighted error given the
// others. Used by Q3_K, whose 3-bit levels gain most from it. Output as above.
float symmetric_scale_refine(int count, int levels, const float* values, uint8_t* out_levels);

struct ScaleSearch {
  float min_step;  // first candidate: (max_level + min_step) / (max - min)
  float step;      // candidate spacing
  int step_count;  // candidates after the first: min_step + step·k for k in 0..step_count
  bool absolute;   // minimize weighted |error| instead of weighted error²
};

// Levels 0..max_level with x ≈ scale·level - minimum, minimum ≥ 0 (a group that is all positive
// gets minimum 0): for each candidate inverse scale it rounds the levels, then solves the
// weighted least-squares fit of scale and minimum for those levels, keeping the best fit.
// Writes levels to `out_levels` and the minimum (as a positive number to subtract) to
// `out_minimum`; returns the scale (≥ 0).
float min_scale_search(int count, int max_level, const float* values, const float* weights,
                       uint8_t* out_levels, float* out_minimum, const ScaleSearch& search);

}  // namespace sinter::reference::ksearch
