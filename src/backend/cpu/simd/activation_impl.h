// Activation functions (activation_kernels.h) written once over an ISA's vector traits V
// (simd/isa_*.h): kLanes values per vector, then a masked tail; e^x is the ISA's V::exp.
#pragma once

#include "backend/cpu/activation_kernels.h"

namespace sinter::cpu::simd {
namespace {

// silu(x) = x / (1 + e^−x).
template <class V>
typename V::F silu(typename V::F x) {
  return V::div(x, V::add(V::set1(1.0f), V::exp(V::sub(V::zero(), x))));
}

// gelu(x) = 0.5·x·(1 + tanh(u)) = x / (1 + e^−2u), u = √(2/π)·x·(1 + 0.044715·x²).
template <class V>
typename V::F gelu(typename V::F x) {
  constexpr float kTwoSqrt2OverPi = 2.0f * 0.79788456080286535588f;
  const typename V::F x2 = V::mul(x, x);
  const typename V::F u2 =
      V::mul(V::mul(V::set1(kTwoSqrt2OverPi), x), V::fma(V::set1(0.044715f), x2, V::set1(1.0f)));
  return V::div(x, V::add(V::set1(1.0f), V::exp(V::sub(V::zero(), u2))));
}

// cap · tanh(x / cap), tanh(y) = 1 − 2 / (e^2y + 1): saturates to ±cap without overflow
// (e^2y = inf gives 1, e^2y = 0 gives −1).
template <class V>
typename V::F softcap(typename V::F x, typename V::F cap, typename V::F two_over_cap) {
  const typename V::F e = V::exp(V::mul(x, two_over_cap));
  const typename V::F t = V::sub(V::set1(1.0f), V::div(V::set1(2.0f), V::add(e, V::set1(1.0f))));
  return V::mul(cap, t);
}

template <class V, typename V::F (*F)(typename V::F)>
void gated_row(const float* x, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    typename V::F y = F(V::load(x + i));
    if (up != nullptr) y = V::mul(y, V::load(up + i));
    V::store(out + i, y);
  }
  if (i < n) {
    const typename V::Mask m = V::tail_mask(n - i);
    typename V::F y = F(V::load(x + i, m));
    if (up != nullptr) y = V::mul(y, V::load(up + i, m));
    V::store(out + i, m, y);
  }
}

template <class V>
void softcap_row(const float* x, float cap, float* out, int64_t n) {
  const typename V::F c = V::set1(cap);
  const typename V::F k = V::set1(2.0f / cap);
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) V::store(out + i, softcap<V>(V::load(x + i), c, k));
  if (i < n) {
    const typename V::Mask m = V::tail_mask(n - i);
    V::store(out + i, m, softcap<V>(V::load(x + i, m), c, k));
  }
}

template <class V>
ActivationKernels activation_kernels() {
  return {gated_row<V, silu<V>>, gated_row<V, gelu<V>>, softcap_row<V>};
}

}  // namespace
}  // namespace sinter::cpu::simd
