// The AVX2 kernel table (compiled without ISA flags: it only takes addresses).
#include "backend/cpu/avx2/avx2_kernels.h"

namespace sinter::cpu {

const KernelSet* avx2_kernel_set() {
  static const KernelSet set = [] {
    KernelSet s;
    s.level = IsaLevel::kAvx2;
    s.quantize = avx2::quantize_column;
    auto put = [&s](DType t, GemmFn fn) { s.gemm[static_cast<uint32_t>(t)] = fn; };
    put(DType::F32, avx2::gemm_f32);
    put(DType::F16, avx2::gemm_f16);
    put(DType::BF16, avx2::gemm_bf16);
    put(DType::Q4_0, avx2::gemm_q4_0);
    put(DType::Q4_1, avx2::gemm_q4_1);
    put(DType::Q5_0, avx2::gemm_q5_0);
    put(DType::Q5_1, avx2::gemm_q5_1);
    put(DType::Q8_0, avx2::gemm_q8_0);
    put(DType::IQ4_NL, avx2::gemm_iq4_nl);
    put(DType::Q4_K, avx2::gemm_q4_k);
    put(DType::Q5_K, avx2::gemm_q5_k);
    put(DType::Q6_K, avx2::gemm_q6_k);
    put(DType::Q2_K, avx2::gemm_q2_k);
    put(DType::Q3_K, avx2::gemm_q3_k);
    put(DType::IQ4_XS, avx2::gemm_iq4_xs);
    return s;
  }();
  return &set;
}

}  // namespace sinter::cpu
