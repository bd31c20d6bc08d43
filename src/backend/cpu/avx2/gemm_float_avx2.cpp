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

// The two halves (16 rows) of one group × N columns, over k in order.
template <class Rows, int N>
void tile(const uint8_t* group, int64_t n_in, const float* const* x, float* out, int lanes,
          int64_t dst_stride) {
  __m256 acc[2][N];
  for (int h = 0; h < 2; ++h) {
    for (int c = 0; c < N; ++c) acc[h][c] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < n_in; ++k) {
    const uint8_t* p = group + static_cast<size_t>(k) * Rows::kBytes;
    if (k % (64 / Rows::kBytes) == 0) prefetch_lines(p + kPrefetchDistance, 64);
    const __m256 w0 = Rows::load(p), w1 = Rows::load(p + Rows::kHalf);
    for (int c = 0; c < N; ++c) {
      const __m256 xk = _mm256_broadcast_ss(x[c] + k);
      acc[0][c] = _mm256_fmadd_ps(w0, xk, acc[0][c]);
      acc[1][c] = _mm256_fmadd_ps(w1, xk, acc[1][c]);
    }
  }
  for (int c = 0; c < N; ++c) {
    store_rows(out + c * dst_stride, acc[0][c], lanes);
    store_rows(out + c * dst_stride + 8, acc[1][c], lanes - 8);
  }
}

template <class Rows>
void gemm(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns,
          const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride) {
  for (int64_t g = group_begin; g < group_end; ++g) {
    const uint8_t* group = w.data + static_cast<size_t>(g) * w.group_bytes;
    const int lanes = static_cast<int>(min64(kGroupRows, w.n_out - g * kGroupRows));
    over_columns<6>(column_count, [&]<int N>(int64_t c) {
      const float* x[N];
      for (int i = 0; i < N; ++i)
        x[i] = reinterpret_cast<const float*>(columns + static_cast<size_t>(c + i) * layout.bytes);
      tile<Rows, N>(group, w.n_in, x, dst + c * dst_stride + g * kGroupRows, lanes, dst_stride);
    });
  }
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
