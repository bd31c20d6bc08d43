// The AVX-512 kernel table (compiled without ISA flags: it only takes addresses).
#include "backend/cpu/avx512/avx512_kernels.h"

namespace sinter::cpu {

const KernelSet* avx512_kernel_set() {
  static const KernelSet set = [] {
    KernelSet s;
    s.level = IsaLevel::kAvx512;
    s.quantize = avx512::quantize_column;
    auto put = [&s](DType t, GemmFn fn) { s.gemm[static_cast<uint32_t>(t)] = fn; };
    put(DType::F32, avx512::gemm_f32);
    put(DType::F16, avx512::gemm_f16);
    put(DType::BF16, avx512::gemm_bf16);
    put(DType::Q4_0, avx512::gemm_q4_0);
    put(DType::Q4_1, avx512::gemm_q4_1);
    put(DType::Q5_0, avx512::gemm_q5_0);
    put(DType::Q5_1, avx512::gemm_q5_1);
    put(DType::Q8_0, avx512::gemm_q8_0);
    put(DType::IQ4_NL, avx512::gemm_iq4_nl);
    put(DType::Q4_K, avx512::gemm_q4_k);
    put(DType::Q5_K, avx512::gemm_q5_k);
    put(DType::Q6_K, avx512::gemm_q6_k);
    put(DType::Q2_K, avx512::gemm_q2_k);
    put(DType::Q3_K, avx512::gemm_q3_k);
    put(DType::IQ4_XS, avx512::gemm_iq4_xs);
    return s;
  }();
  return &set;
}

}  // namespace sinter::cpu
