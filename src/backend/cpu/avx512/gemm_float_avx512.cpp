// AVX-512 products of F32, F16 and BF16 weights (packed [k][16 rows]) with F32 columns (F16 and
// BF16 columns hold the rounded, widened values). One fma chain per row and column in k order:
// the reference's reduction (products of two F16 or two BF16 values are exact in float).
#include "backend/cpu/avx512/avx512_common.h"

namespace sinter::cpu::avx512 {
namespace {

struct F32Rows {
  static constexpr size_t kBytes = 64;  // per k
  static __m512 load(const uint8_t* p) { return _mm512_loadu_ps(reinterpret_cast<const float*>(p)); }
};
struct F16Rows {
  static constexpr size_t kBytes = 32;
  static __m512 load(const uint8_t* p) { return load_f16x16(p); }
};
struct BF16Rows {
  static constexpr size_t kBytes = 32;
  static __m512 load(const uint8_t* p) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
};

// G groups (16·G rows) × N columns, over k in order.
template <class Rows, int G, int N>
void tile(const uint8_t* const* groups, int64_t n_in, const float* const* x, float* const* out,
          const int* lanes, int64_t dst_stride) {
  __m512 acc[G][N];
  for (int g = 0; g < G; ++g) {
    for (int c = 0; c < N; ++c) acc[g][c] = _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < n_in; ++k) {
    __m512 w[G];
    for (int g = 0; g < G; ++g) {
      const uint8_t* p = groups[g] + static_cast<size_t>(k) * Rows::kBytes;
      if (k % (64 / Rows::kBytes) == 0) prefetch_lines(p + kPrefetchDistance, 64);
      w[g] = Rows::load(p);
    }
    for (int c = 0; c < N; ++c) {
      const __m512 xk = _mm512_set1_ps(x[c][k]);
      for (int g = 0; g < G; ++g) acc[g][c] = _mm512_fmadd_ps(w[g], xk, acc[g][c]);
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int c = 0; c < N; ++c) store_rows(out[g] + c * dst_stride, acc[g][c], lanes[g]);
  }
}

template <class Rows, int G>
void groups_tile(const PackedMatrix& w, int64_t g0, const uint8_t* columns, const ColumnLayout& layout,
                 int64_t column_count, float* dst, int64_t dst_stride) {
  const uint8_t* groups[G];
  float* out[G];
  int lanes[G];
  for (int g = 0; g < G; ++g) {
    groups[g] = w.data + static_cast<size_t>(g0 + g) * w.group_bytes;
    out[g] = dst + (g0 + g) * kGroupRows;
    lanes[g] = static_cast<int>(min64(kGroupRows, w.n_out - (g0 + g) * kGroupRows));
  }
  // Four groups only ever take one column (generation): no wider tiles of them to instantiate.
  constexpr int kColumns = G == 4 ? 1 : G == 1 ? 8 : 12;
  over_columns<kColumns>(column_count, [&]<int N>(int64_t c) {
    const float* x[N];
    for (int i = 0; i < N; ++i)
      x[i] = reinterpret_cast<const float*>(columns + static_cast<size_t>(c + i) * layout.bytes);
    float* o[G];
    for (int g = 0; g < G; ++g) o[g] = out[g] + c * dst_stride;
    tile<Rows, G, N>(groups, w.n_in, x, o, lanes, dst_stride);
  });
}

template <class Rows>
void gemm(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns,
          const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride) {
  // Generation (one column) streams weights: four groups give four independent fma chains.
  // Prompts reuse each weight load across columns: two groups by six columns.
  int64_t g = group_begin;
  if (column_count == 1) {
    for (; g + 4 <= group_end; g += 4)
      groups_tile<Rows, 4>(w, g, columns, layout, column_count, dst, dst_stride);
  } else {
    for (; g + 2 <= group_end; g += 2)
      groups_tile<Rows, 2>(w, g, columns, layout, column_count, dst, dst_stride);
  }
  for (; g < group_end; ++g) groups_tile<Rows, 1>(w, g, columns, layout, column_count, dst, dst_stride);
}

}  // namespace

void gemm_f32(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
              int64_t m, float* dst, int64_t stride) {
  gemm<F32Rows>(w, gb, ge, x, l, m, dst, stride);
}
void gemm_f16(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
              int64_t m, float* dst, int64_t stride) {
  gemm<F16Rows>(w, gb, ge, x, l, m, dst, stride);
}
void gemm_bf16(const PackedMatrix& w, int64_t gb, int64_t ge, const uint8_t* x, const ColumnLayout& l,
               int64_t m, float* dst, int64_t stride) {
  gemm<BF16Rows>(w, gb, ge, x, l, m, dst, stride);
}

}  // namespace sinter::cpu::avx512
