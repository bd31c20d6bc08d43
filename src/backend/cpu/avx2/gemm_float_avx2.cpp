// AVX2 products of F32, F16 and BF16 weights with F32 columns: simd/gemm_float_impl.h over the
// AVX2 traits, each 16-row group as two halves of 8 rows.
#include "backend/cpu/isa_kernels.h"
#include "backend/cpu/simd/gemm_float_impl.h"
#include "backend/cpu/simd/isa_avx2.h"

namespace sinter::cpu::avx2 {
namespace {

// Generation: four groups (eight fma chains; with one group, the two chains left the FMA units
// waiting on their latency). Prompts: one group by six columns, 2·6 accumulators, two weight
// registers and one broadcast: 15 of the 16 ymm registers. Tiles out of line.
struct Tiles {
  static constexpr int kGenerationGroups = 4;
  static constexpr int kPromptGroups = 1;
  static constexpr int prompt_columns(int) { return 6; }
  static constexpr bool kPrefetchPrompts = false;
  static constexpr bool kOutOfLine = true;
};
using V = simd::Avx2;

}  // namespace

SINTER_DEFINE_ISA_GEMM(gemm_f32, simd::gemm_float<V, Tiles, simd::F32Rows<V>>)
SINTER_DEFINE_ISA_GEMM(gemm_f16, simd::gemm_float<V, Tiles, simd::F16Rows<V>>)
SINTER_DEFINE_ISA_GEMM(gemm_bf16, simd::gemm_float<V, Tiles, simd::BF16Rows<V>>)

}  // namespace sinter::cpu::avx2
