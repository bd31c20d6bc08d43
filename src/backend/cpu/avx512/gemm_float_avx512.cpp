// AVX-512 products of F32, F16 and BF16 weights with F32 columns: simd/gemm_float_impl.h over
// the AVX-512 traits, each 16-row group one vector.
#include "backend/cpu/isa_kernels.h"
#include "backend/cpu/simd/gemm_float_impl.h"
#include "backend/cpu/simd/isa_avx512.h"

namespace sinter::cpu::avx512 {
namespace {

// Generation: four groups (four independent fma chains). Prompts: two groups by twelve columns
// (the last odd group by eight), all tiles prefetching and inlined.
struct Tiles {
  static constexpr int kGenerationGroups = 4;
  static constexpr int kPromptGroups = 2;
  static constexpr int prompt_columns(int groups) { return groups == 2 ? 12 : 8; }
  static constexpr bool kPrefetchPrompts = true;
  static constexpr bool kOutOfLine = false;
};
using V = simd::Avx512;

}  // namespace

SINTER_DEFINE_ISA_GEMM(gemm_f32, simd::gemm_float<V, Tiles, simd::F32Rows<V>>)
SINTER_DEFINE_ISA_GEMM(gemm_f16, simd::gemm_float<V, Tiles, simd::F16Rows<V>>)
SINTER_DEFINE_ISA_GEMM(gemm_bf16, simd::gemm_float<V, Tiles, simd::BF16Rows<V>>)

}  // namespace sinter::cpu::avx512
