// Activation functions on F32 rows, one version per ISA level (like the attention loop): the
// generic ones compute with std::exp / std::tanh, the SIMD ones with a polynomial e^x of ~1 ulp
// (exp_polynomial.h), so results agree to a few ulp across levels (silu, gelu) or within a few
// 1e-7 absolute (softcap, where 1 - 2/(e^2y + 1) cancels near 0).
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace sinter::cpu {

// out[i] = f(x[i]) · up[i] (up == nullptr: f(x[i]) alone), for i < n.
using GatedRowFn = void (*)(const float* x, const float* up, float* out, int64_t n);
using SiluRowFn = GatedRowFn;
// out[i] = cap · tanh(x[i] / cap), for i < n.
using SoftcapRowFn = void (*)(const float* x, float cap, float* out, int64_t n);

struct ActivationKernels {
  GatedRowFn silu = nullptr;  // x / (1 + e^-x)
  GatedRowFn gelu = nullptr;  // the tanh approximation, as llama.cpp
  SoftcapRowFn softcap = nullptr;
  explicit operator bool() const { return silu != nullptr; }
};

// The version for selected_isa_level(), and each level's (empty where not built).
const ActivationKernels& activation_kernels();
ActivationKernels activation_kernels_for(IsaLevel level);
ActivationKernels activation_kernels_generic();
ActivationKernels activation_kernels_avx2();
ActivationKernels activation_kernels_avx512();

// Kept for the callers of the SiLU alone.
inline SiluRowFn silu_row_kernel() { return activation_kernels().silu; }

}  // namespace sinter::cpu
