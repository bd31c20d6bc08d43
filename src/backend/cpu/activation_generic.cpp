// The generic activation functions (the reference the SIMD versions are tested against), and the
// run-time choice of version.
#include <cmath>

#include "backend/cpu/activation_kernels.h"

namespace sinter::cpu {

void silu_row_generic(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float silu = gate[i] / (1.0f + std::exp(-gate[i]));
    out[i] = up != nullptr ? silu * up[i] : silu;
  }
}

SiluRowFn silu_row_for(IsaLevel level) {
  switch (level) {
    case IsaLevel::kAvx512: return silu_row_avx512();
    case IsaLevel::kAvx2: return silu_row_avx2();
    case IsaLevel::kGeneric: return silu_row_generic;
  }
  return silu_row_generic;
}

SiluRowFn silu_row_kernel() {
  static const SiluRowFn chosen = [] {
    for (int level = static_cast<int>(selected_isa_level()); level >= 0; --level) {
      if (SiluRowFn fn = silu_row_for(static_cast<IsaLevel>(level))) return fn;
    }
    return &silu_row_generic;
  }();
  return chosen;
}

}  // namespace sinter::cpu
