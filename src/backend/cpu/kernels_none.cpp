// Builds for processors other than x86-64: the generic level only.
#include "backend/cpu/kernels.h"

namespace sinter::cpu {

const KernelSet* avx2_kernel_set() { return nullptr; }
const KernelSet* avx512_kernel_set() { return nullptr; }

}  // namespace sinter::cpu
