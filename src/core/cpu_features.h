// What the processor this process runs on can do, detected once with CPUID (and XGETBV, so that
// an instruction set counts only when the operating system saves its registers), and the ISA
// level the CPU kernels are chosen by.
#pragma once

#include <optional>
#include <string_view>

namespace sinter {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool bmi2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool avx512_vbmi = false;
  bool avx_vnni = false;  // VEX-encoded VPDPBUSD on 256-bit registers
};

// Detected once; the same answer for the life of the process.
const CpuFeatures& cpu_features();

// The kernel families of src/backend/cpu, from least to most capable. Each level needs all of
// the features listed here (and the OS support for the registers they use).
enum class IsaLevel {
  kGeneric = 0,  // the scalar references: any x86-64 (or other) CPU
  kAvx2 = 1,     // AVX2 + FMA + F16C + BMI2 (Haswell, Zen 1 and later)
  kAvx512 = 2,   // AVX-512 F/BW/VL/DQ + VNNI (Ice Lake, Sapphire Rapids, Zen 4 and later)
};

const char* isa_level_name(IsaLevel level);  // "generic", "avx2", "avx512"
std::optional<IsaLevel> isa_level_from_name(std::string_view name);

bool isa_level_supported(IsaLevel level);
// The most capable level this CPU supports.
IsaLevel best_isa_level();
// The level the CPU backend uses: best_isa_level(), capped by the environment variable
// SINTER_ISA (generic | avx2 | avx512) when it is set to a known level, for comparisons and
// benchmarks. Read once.
IsaLevel selected_isa_level();

}  // namespace sinter
