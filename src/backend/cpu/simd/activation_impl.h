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

template <class V>
void silu_row(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    typename V::F y = silu<V>(V::load(gate + i));
    if (up != nullptr) y = V::mul(y, V::load(up + i));
    V::store(out + i, y);
  }
  if (i < n) {
    const typename V::Mask m = V::tail_mask(n - i);
    typename V::F y = silu<V>(V::load(gate + i, m));
    if (up != nullptr) y = V::mul(y, V::load(up + i, m));
    V::store(out + i, m, y);
  }
}

}  // namespace
}  // namespace sinter::cpu::simd
