// The generic activation functions (the reference the SIMD versions are tested against), and the
// run-time choice of version.
#include <cmath>

#include "backend/cpu/activation_kernels.h"
#include "backend/cpu/isa_dispatch.h"

namespace sinter::cpu {
namespace {

void silu_row_generic(const float* x, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float silu = x[i] / (1.0f + std::exp(-x[i]));
    out[i] = up != nullptr ? silu * up[i] : silu;
  }
}

// 0.5·x·(1 + tanh(u)), u = √(2/π)·x·(1 + 0.044715·x²), computed as x / (1 + e^-2u): the same
// value without the cancellation of 1 + tanh(u) where gelu(x) is small (x < -2).
void gelu_row_generic(const float* x, const float* up, float* out, int64_t n) {
  constexpr float kTwoSqrt2OverPi = 2.0f * 0.79788456080286535588f;
  for (int64_t i = 0; i < n; ++i) {
    const float u2 = kTwoSqrt2OverPi * x[i] * (1.0f + 0.044715f * x[i] * x[i]);
    const float gelu = x[i] / (1.0f + std::exp(-u2));
    out[i] = up != nullptr ? gelu * up[i] : gelu;
  }
}

void softcap_row_generic(const float* x, float cap, float* out, int64_t n) {
  const float inverse = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) out[i] = cap * std::tanh(x[i] * inverse);
}

ActivationKernels none() { return {}; }

}  // namespace

ActivationKernels activation_kernels_generic() {
  return {silu_row_generic, gelu_row_generic, softcap_row_generic};
}

ActivationKernels activation_kernels_for(IsaLevel level) {
  switch (level) {
    case IsaLevel::kAvx512: return activation_kernels_avx512();
    case IsaLevel::kAvx2: return activation_kernels_avx2();
    case IsaLevel::kGeneric: return activation_kernels_generic();
  }
  return none();
}

const ActivationKernels& activation_kernels() {
  static const ActivationKernels chosen = [] {
    for (int level = static_cast<int>(selected_isa_level()); level > 0; --level) {
      if (ActivationKernels k = activation_kernels_for(static_cast<IsaLevel>(level))) return k;
    }
    return activation_kernels_generic();
  }();
  return chosen;
}

}  // namespace sinter::cpu
