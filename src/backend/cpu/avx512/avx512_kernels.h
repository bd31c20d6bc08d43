// The AVX-512 kernels, declared without intrinsics so that the kernel table (compiled without
// ISA flags) can name them.
#pragma once

#include "backend/cpu/kernels.h"

namespace sinter::cpu::avx512 {

void quantize_column(const float* x, const ActivationFormat& format, const ColumnLayout& layout,
                     uint8_t* column);

void gemm_q4_0(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_q4_1(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_q5_0(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_q5_1(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_q8_0(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_iq4_nl(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
                 int64_t);
void gemm_q4_k(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_q5_k(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_q6_k(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_q2_k(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_q3_k(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);
void gemm_iq4_xs(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
                 int64_t);
void gemm_f32(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
              int64_t);
void gemm_f16(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
              int64_t);
void gemm_bf16(const PackedMatrix&, int64_t, int64_t, const uint8_t*, const ColumnLayout&, int64_t, float*,
               int64_t);

}  // namespace sinter::cpu::avx512
