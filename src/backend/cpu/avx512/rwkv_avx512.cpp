// AVX-512 WKV kernels: simd/rwkv_impl.h over the AVX-512 traits, blocks of up to 4 vectors (64
// value lanes: a head of 64 in one block).
#include "backend/cpu/simd/isa_avx512.h"
#include "backend/cpu/simd/rwkv_impl.h"

namespace sinter::cpu {

RwkvKernels rwkv_kernels_avx512() { return simd::rwkv_kernels<simd::Avx512, 4, 4>(); }

}  // namespace sinter::cpu
