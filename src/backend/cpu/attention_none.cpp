// Non-x86 builds: only the generic attention loop exists.
#include "backend/cpu/attention_kernels.h"

namespace sinter::cpu {
AttendGroupFn attend_group_avx2() { return nullptr; }
AttendGroupFn attend_group_avx512() { return nullptr; }
}  // namespace sinter::cpu
