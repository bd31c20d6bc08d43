// AVX2 products of F32, F16 and BF16 weights (packed [k][16 rows], read as two halves of 8 rows)
// with F32 columns. One fma chain per row and column in k order: the reference's reduction.
#include "backend/cpu/avx2/avx2_common.h"

namespace sinter::cpu::avx2 {
namespace {

struct F32Rows {
  static constexpr size_t kBytes = 64;  // per k, 16 rows
  static __m256 load(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static constexpr size_t kHalf = 32;
};
struct F16Rows {
  static constexpr size_t kBytes = 32;
  static __m256 load(const uint8_t* p) { return load_f16x8(p); }
  static constexpr size_t kHalf = 16;
};
struct BF16Rows {
  static constexpr size_t kBytes = 32;
  static __m256 load(const uint8_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static constexpr size_t kHalf = 16;
};

// G groups (both halves of each: 16·G rows) × N columns, over k in order.
template <class Rows, int G, int N>
void tile(const uint8_t* const* groups, int64_t n_in, const float* const* x, float* const* out,
          const int* lanes, int64_t dst_stride) {
  __m256 acc[G][2][N];
  for (int g = 0; g < G; ++g) {
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < N; ++c) acc[g][h][c] = _mm256_setzero_ps();
    }
  }
  for (int64_t k = 0; k < n_in; ++k) {
    __m256 w[G][2];
    for (int g = 0; g < G; ++g) {
      const uint8_t* p = groups[g] + static_cast<size_t>(k) * Rows::kBytes;
      if (k % (64 / Rows::kBytes) == 0) prefetch_lines(p + kPrefetchDistance, 64);
      w[g][0] = Rows::load(p);
      w[g][1] = Rows::load(p + Rows::kHalf);
    }
    for (int c = 0; c < N; ++c) {
      const __m256 xk = _mm256_broadcast_ss(x[c] + k);
      for (int g = 0; g < G; ++g) {
        acc[g][0][c] = _mm256_fmadd_ps(w[g][0], xk, acc[g][0][c]);
        acc[g][1][c] = _mm256_fmadd_ps(w[g][1], xk, acc[g][1][c]);
      }
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int c = 0; c < N; ++c) {
      store_rows(out[g] + c * dst_stride, acc[g][0][c], lanes[g]);
      store_rows(out[g] + c * dst_stride + 8, acc[g][1][c], lanes[g] - 8);
    }
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
  over_columns<6>(column_count, [&]<int N>(int64_t c) {
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
  // Generation (one column) streams weights: with one group, the fma chains of its two halves
  // leave the FMA units waiting on their latency; four groups give eight independent chains.
  // Prompts reuse each weight load across columns: one group by six columns.
  int64_t g = group_begin;
  if (column_count == 1) {
    for (; g + 4 <= group_end; g += 4)
      groups_tile<Rows, 4>(w, g, columns, layout, column_count, dst, dst_stride);
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

}  // namespace sinter::cpu::avx2
