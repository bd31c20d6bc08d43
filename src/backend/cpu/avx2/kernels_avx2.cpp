// The AVX2 kernel table (compiled without ISA flags: it only takes addresses).
#include "backend/cpu/kernels.h"

namespace sinter::cpu {

// No AVX2 kernels yet: that level runs the generic path.
const KernelSet* avx2_kernel_set() { return nullptr; }

}  // namespace sinter::cpu
