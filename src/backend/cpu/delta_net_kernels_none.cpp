// Non-x86 builds: only the generic gated delta-rule kernel exists.
#include "backend/cpu/delta_net_kernels.h"

namespace sinter::cpu {
DeltaNetKernels delta_net_kernels_avx2() { return {}; }
DeltaNetKernels delta_net_kernels_avx512() { return {}; }
}  // namespace sinter::cpu
