// Choosing one function among per-ISA versions (the attention loop, activation functions): each
// level's version, or the best one the selected level allows.
#pragma once

#include "core/cpu_features.h"

namespace sinter::cpu {

// The version of `level`: the SIMD versions come from their ISA files (null where not built).
template <class Fn>
Fn version_for(IsaLevel level, Fn generic, Fn (*avx2)(), Fn (*avx512)()) {
  switch (level) {
    case IsaLevel::kAvx512: return avx512();
    case IsaLevel::kAvx2: return avx2();
    case IsaLevel::kGeneric: return generic;
  }
  return generic;
}

// The version of the highest level up to selected_isa_level() that was built.
template <class Fn>
Fn best_version(Fn generic, Fn (*avx2)(), Fn (*avx512)()) {
  for (int level = static_cast<int>(selected_isa_level()); level >= 0; --level) {
    if (Fn fn = version_for(static_cast<IsaLevel>(level), generic, avx2, avx512)) return fn;
  }
  return generic;
}

}  // namespace sinter::cpu
