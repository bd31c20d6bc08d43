// Non-x86 builds: only the generic attention loop, activation functions, row and recurrent
// kernels exist.
#include "backend/cpu/activation_kernels.h"
#include "backend/cpu/attention_kernels.h"
#include "backend/cpu/recurrent_kernels.h"
#include "backend/cpu/row_kernels.h"

namespace sinter::cpu {
AttendGroupFn attend_group_avx2() { return nullptr; }
AttendGroupFn attend_group_avx512() { return nullptr; }
ActivationKernels activation_kernels_avx2() { return {}; }
ActivationKernels activation_kernels_avx512() { return {}; }
RowKernels row_kernels_avx2() { return {}; }
RowKernels row_kernels_avx512() { return {}; }
RecurrentKernels recurrent_kernels_avx2() { return {}; }
RecurrentKernels recurrent_kernels_avx512() { return {}; }
}  // namespace sinter::cpu
