// The generic activation functions (the reference the SIMD versions are tested against), and the
// run-time choice of version.
#include <cmath>

#include "backend/cpu/activation_kernels.h"
#include "backend/cpu/isa_dispatch.h"

namespace sinter::cpu {

void silu_row_generic(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float silu = gate[i] / (1.0f + std::exp(-gate[i]));
    out[i] = up != nullptr ? silu * up[i] : silu;
  }
}

SiluRowFn silu_row_for(IsaLevel level) {
  return version_for<SiluRowFn>(level, silu_row_generic, silu_row_avx2, silu_row_avx512);
}

SiluRowFn silu_row_kernel() {
  static const SiluRowFn chosen = best_version<SiluRowFn>(silu_row_generic, silu_row_avx2, silu_row_avx512);
  return chosen;
}

}  // namespace sinter::cpu
