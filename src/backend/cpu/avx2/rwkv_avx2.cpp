// AVX2 WKV kernels: simd/rwkv_impl.h over the AVX2 traits, blocks of up to 4 vectors (32 value
// lanes). RWKV-7's block holds three sums per vector (sa, the next token's sa, y): 12 of the 16
// registers, without spills; blocks of 2 measured 30 % slower on prompts.
#include "backend/cpu/simd/isa_avx2.h"
#include "backend/cpu/simd/rwkv_impl.h"

namespace sinter::cpu {

RwkvKernels rwkv_kernels_avx2() { return simd::rwkv_kernels<simd::Avx2, 4, 4>(); }

}  // namespace sinter::cpu
