// Non-x86 builds: only the generic WKV kernels exist.
#include "backend/cpu/rwkv_kernels.h"

namespace sinter::cpu {
RwkvKernels rwkv_kernels_avx2() { return {}; }
RwkvKernels rwkv_kernels_avx512() { return {}; }
}  // namespace sinter::cpu
