// Activation functions on F32 rows, one version per ISA level (like the attention loop): the
// generic one computes silu(x) = x / (1 + e^-x) with std::exp, the SIMD ones with a polynomial
// e^x of ~1 ulp (exp_polynomial.h), so results agree to a few ulp across levels.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace sinter::cpu {

// out[i] = silu(gate[i]) · up[i] (up == nullptr: silu(gate[i]) alone), for i < n.
using SiluRowFn = void (*)(const float* gate, const float* up, float* out, int64_t n);

// The version for selected_isa_level(), and each level's (null where not built).
SiluRowFn silu_row_kernel();
SiluRowFn silu_row_for(IsaLevel level);
void silu_row_generic(const float* gate, const float* up, float* out, int64_t n);
SiluRowFn silu_row_avx2();
SiluRowFn silu_row_avx512();

}  // namespace sinter::cpu
