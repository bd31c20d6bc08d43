// The entry points of the per-ISA kernels (quantize and gemm), declared once for every ISA level
// and without intrinsics, so that the kernel tables (kernels_isa.cpp, compiled without ISA flags)
// can name them. Each level's entry points live in its namespace (avx2::, avx512::) and are
// defined by the files of that level, compiled with its flags.
#pragma once

#include "backend/cpu/kernels.h"

// X(dtype, function) for every weight type with a packed gemm kernel at the SIMD levels.
// clang-format off
#define SINTER_ISA_GEMMS(X)                                                             \
  X(F32, gemm_f32) X(F16, gemm_f16) X(BF16, gemm_bf16)                                  \
  X(Q4_0, gemm_q4_0) X(Q4_1, gemm_q4_1) X(Q5_0, gemm_q5_0) X(Q5_1, gemm_q5_1)           \
  X(Q8_0, gemm_q8_0) X(IQ4_NL, gemm_iq4_nl) X(MXFP4, gemm_mxfp4)                        \
  X(Q4_K, gemm_q4_k) X(Q5_K, gemm_q5_k) X(Q6_K, gemm_q6_k) X(Q2_K, gemm_q2_k)           \
  X(Q3_K, gemm_q3_k) X(IQ4_XS, gemm_iq4_xs)
// clang-format on

#define SINTER_DECLARE_ISA_GEMM(dtype, function)                                                       \
  void function(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns, \
                const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride);

// The entry points of namespace sinter::cpu::isa (GemmFn and QuantizeColumnFn, kernels.h).
#define SINTER_DECLARE_ISA_KERNELS(isa)                                                            \
  namespace sinter::cpu::isa {                                                                     \
  void quantize_column(const float* x, const ActivationFormat& format, const ColumnLayout& layout, \
                       uint8_t* column);                                                           \
  SINTER_ISA_GEMMS(SINTER_DECLARE_ISA_GEMM)                                                        \
  }

// Defines the gemm entry point `function` of the enclosing ISA namespace as a call of the
// function (or function template instance) given after it, with the same arguments.
#define SINTER_DEFINE_ISA_GEMM(function, ...)                                                          \
  void function(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns, \
                const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride) {    \
    __VA_ARGS__(w, group_begin, group_end, columns, layout, column_count, dst, dst_stride);            \
  }

SINTER_DECLARE_ISA_KERNELS(avx2)
SINTER_DECLARE_ISA_KERNELS(avx512)
