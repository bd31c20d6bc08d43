// The per-ISA kernel tables (compiled without ISA flags: they only take addresses), one
// definition for every level: avx2_kernel_set() and avx512_kernel_set() (kernels.h).
#include "backend/cpu/isa_kernels.h"

#define SINTER_PUT_ISA_GEMM(dtype, function) s.gemm[static_cast<uint32_t>(DType::dtype)] = function;

// Defines isa_kernel_set(): the table of namespace sinter::cpu::isa's entry points (the
// unqualified names inside find that namespace's declarations).
#define SINTER_DEFINE_KERNEL_SET(isa, isa_level) \
  namespace sinter::cpu {                        \
  namespace isa {                                \
  namespace {                                    \
  KernelSet table() {                            \
    KernelSet s;                                 \
    s.level = isa_level;                         \
    s.quantize = quantize_column;                \
    SINTER_ISA_GEMMS(SINTER_PUT_ISA_GEMM)        \
    return s;                                    \
  }                                              \
  }                                              \
  }                                              \
  const KernelSet* isa##_kernel_set() {          \
    static const KernelSet set = isa::table();   \
    return &set;                                 \
  }                                              \
  }

SINTER_DEFINE_KERNEL_SET(avx2, IsaLevel::kAvx2)
SINTER_DEFINE_KERNEL_SET(avx512, IsaLevel::kAvx512)
