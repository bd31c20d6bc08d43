// Non-x86 builds: only the generic attention loop and activation functions exist.
#include "backend/cpu/activation_kernels.h"
#include "backend/cpu/attention_kernels.h"

namespace sinter::cpu {
AttendGroupFn attend_group_avx2() { return nullptr; }
AttendGroupFn attend_group_avx512() { return nullptr; }
SiluRowFn silu_row_avx2() { return nullptr; }
SiluRowFn silu_row_avx512() { return nullptr; }
}  // namespace sinter::cpu
