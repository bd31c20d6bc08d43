#include "graph/rope_angles.h"

#include <algorithm>
#include <cmath>

namespace sinter {
namespace {

constexpr float kPi = 3.14159265358979323846f;

// YaRN: the (fractional) pair index whose wavelength fits `rotations` turns into the original
// context, n_rot · ln(n_ctx_orig / (2π · rotations)) / (2 · ln(base)).
float yarn_dimension(int32_t n_rot, int32_t n_ctx_orig, float rotations, float base) {
  return static_cast<float>(n_rot) * std::log(static_cast<float>(n_ctx_orig) / (rotations * 2.0f * kPi)) /
         (2.0f * std::log(base));
}

}  // namespace

void rope_angles(const RopeParams& p, const float* freq_factors, float position, bool magnitude,
                 float* cos_sin) {
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  const bool yarn = p.ext_factor != 0.0f;
  // Pairs below `low` keep the extrapolated (unscaled) angle, pairs above `high` the
  // interpolated one, with a linear ramp between (YaRN's "NTK-by-parts").
  float low = 0.0f, high = 0.0f;
  if (yarn) {
    low = std::max(0.0f, std::floor(yarn_dimension(p.n_rot, p.n_ctx_orig, p.beta_fast, p.freq_base)));
    high = std::min(static_cast<float>(p.n_rot - 1),
                    std::ceil(yarn_dimension(p.n_rot, p.n_ctx_orig, p.beta_slow, p.freq_base)));
  }
  float mscale = magnitude ? p.attn_factor : 1.0f;
  if (yarn && magnitude) mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
  float theta_base = position;  // position · theta_scale^k for pair k
  for (int32_t k = 0; k < p.n_rot / 2; ++k) {
    const float factor = freq_factors != nullptr ? freq_factors[k] : 1.0f;
    const float extrapolated = theta_base / factor;
    const float interpolated = p.freq_scale * extrapolated;
    float theta = interpolated;
    if (yarn) {
      const float y = (static_cast<float>(k) - low) / std::max(0.001f, high - low);
      const float mix = (1.0f - std::min(1.0f, std::max(0.0f, y))) * p.ext_factor;
      theta = interpolated * (1.0f - mix) + extrapolated * mix;
    }
    cos_sin[2 * k] = std::cos(theta) * mscale;
    cos_sin[2 * k + 1] = std::sin(theta) * mscale;
    theta_base *= theta_scale;
  }
}

}  // namespace sinter
