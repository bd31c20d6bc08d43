#include "core/cpu_features.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define SINTER_X86 1
#endif

namespace sinter {
namespace {

#if SINTER_X86
// XCR0: which register states the OS saves on a context switch.
uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  const bool osxsave = (ecx >> 27) & 1u;
  const bool fma = (ecx >> 12) & 1u;
  const bool f16c = (ecx >> 29) & 1u;
  const bool avx = (ecx >> 28) & 1u;
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = read_xcr0();
  const bool os_ymm = (xcr0 & 0x6u) == 0x6u;    // SSE and AVX state
  const bool os_zmm = (xcr0 & 0xe6u) == 0xe6u;  // plus opmask, ZMM0-15 upper halves, ZMM16-31
  if (!os_ymm) return f;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  f.fma = fma;
  f.f16c = f16c;
  f.avx2 = (ebx >> 5) & 1u;
  f.bmi2 = (ebx >> 8) & 1u;
  if (os_zmm) {
    f.avx512f = (ebx >> 16) & 1u;
    f.avx512dq = (ebx >> 17) & 1u;
    f.avx512bw = (ebx >> 30) & 1u;
    f.avx512vl = (ebx >> 31) & 1u;
    f.avx512_vbmi = (ecx >> 1) & 1u;
    f.avx512_vnni = (ecx >> 11) & 1u;
  }
  unsigned eax1 = 0, ebx1 = 0, ecx1 = 0, edx1 = 0;
  __cpuid_count(7, 1, eax1, ebx1, ecx1, edx1);
  f.avx_vnni = (eax1 >> 4) & 1u;
  f.avx512_bf16 = os_zmm && ((eax1 >> 5) & 1u);
  return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

const char* isa_level_name(IsaLevel level) {
  switch (level) {
    case IsaLevel::kGeneric: return "generic";
    case IsaLevel::kAvx2: return "avx2";
    case IsaLevel::kAvx512: return "avx512";
  }
  return "?";
}

std::optional<IsaLevel> isa_level_from_name(std::string_view name) {
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (name == isa_level_name(level)) return level;
  }
  return std::nullopt;
}

bool isa_level_supported(IsaLevel level) {
  const CpuFeatures& f = cpu_features();
  switch (level) {
    case IsaLevel::kGeneric: return true;
    case IsaLevel::kAvx2: return f.avx2 && f.fma && f.f16c && f.bmi2;
    case IsaLevel::kAvx512:
      return isa_level_supported(IsaLevel::kAvx2) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq &&
             f.avx512_vnni;
  }
  return false;
}

IsaLevel best_isa_level() {
  static const IsaLevel best = [] {
    for (IsaLevel level : {IsaLevel::kAvx512, IsaLevel::kAvx2}) {
      if (isa_level_supported(level)) return level;
    }
    return IsaLevel::kGeneric;
  }();
  return best;
}

IsaLevel selected_isa_level() {
  static const IsaLevel selected = [] {
    IsaLevel level = best_isa_level();
    if (const char* env = std::getenv("SINTER_ISA"); env != nullptr) {
      if (auto cap = isa_level_from_name(env)) level = std::min(level, *cap);
    }
    return level;
  }();
  return selected;
}

}  // namespace sinter
