// The loop every AVX2 block-type kernel shares (32-value blocks and 256-value super-blocks):
// over a 16-row packed group's records in block order, each record's contribution added to one
// float accumulator per row half and column. A kernel is a struct with
//   kRecord        bytes of one record (one block index, all 16 rows),
//   kValues        values of n_in per record,
//   kPrefetchAhead how far ahead of the record being read to prefetch,
//   add<N>(rec, half, index, x, acc)   adds the record's products for the 8 rows of `half` and N
//                                       columns x[0..N) to acc[0..N) (the reference's fma chain).
// A kernel with large records (the K-quants) also declares kPrefetchSteps and takes a
// PrefetchShare as a last argument to add: it issues the record-ahead prefetches itself, a share
// at each of that many steps of its work. Issued all at once, the ~40 lines of a super-block
// filled the core's miss buffers and stalled the loads of the record being computed. Such a
// kernel may also declare
//   add_both(rec, index, x, acc, ahead)  both halves and one column (generation) in one pass
//                                         over the record's groups, acc[h][0] for half h.
// Include only from files under src/backend/cpu/avx2/.
#pragma once

#include "backend/cpu/avx2/avx2_common.h"

namespace sinter::cpu::avx2 {
namespace {

// Up to this many columns (generation), both halves of a group are computed from each record
// before the next: the weights stream from memory in one pass, instead of a second pass over the
// group from cache that issues no prefetches. With more, each half runs on its own, so its levels
// and accumulators stay in registers across the columns. A kernel may raise the limit with
// kBothHalvesColumns (measured at 4 columns: Q8_0 +10 %, whose levels need no unpacking; Q4_0
// −6 % and Q4_K −20 %, from spills).
template <class Kernel>
constexpr int both_halves_columns() {
  if constexpr (requires { Kernel::kBothHalvesColumns; }) {
    return Kernel::kBothHalvesColumns;
  } else {
    return 2;
  }
}

// The bytes of a record ahead that one add call prefetches, in steps spread over its work
// (nullptr: none).
struct PrefetchShare {
  const uint8_t* p;
  size_t bytes;
  // Step i of `Steps`: its share of whole cache lines. (Written as prefetch_lines over the share,
  // gemv_cold Q4_K/Q6_K measured ~30 % slower, 4 pairs: gcc no longer folded the steps' bounds.)
  template <int Steps>
  void step(int i) const {
    if (p == nullptr) return;
    const size_t lines = (bytes + 63) / 64;
    for (size_t l = lines * i / Steps; l < lines * (i + 1) / Steps; ++l)
      _mm_prefetch(reinterpret_cast<const char*>(p + 64 * l), _MM_HINT_T0);
  }
};

// H halves of 8 rows, starting at `first_half`, × N columns over all records (H = 2: the
// one-pass form above; H = 1: one half).
template <class Kernel, int H, int N>
void block_tile(const uint8_t* group, int first_half, int64_t records, const uint8_t* columns,
                const ColumnLayout& layout, float* dst, int64_t dst_stride, int lanes) {
  Column x[N];
  for (int c = 0; c < N; ++c) x[c] = Column(columns + static_cast<size_t>(c) * layout.bytes, layout);
  __m256 acc[H][N];
  for (int h = 0; h < H; ++h) {
    for (int c = 0; c < N; ++c) acc[h][c] = _mm256_setzero_ps();
  }
  for (int64_t r = 0; r < records; ++r) {
    const uint8_t* rec = group + static_cast<size_t>(r) * Kernel::kRecord;
    constexpr size_t kPart = (Kernel::kRecord / H + 63) / 64 * 64;
    const auto add_half = [&](int h) {
      const uint8_t* ahead = first_half == 0 ? rec + Kernel::kPrefetchAhead + h * kPart : nullptr;
      const size_t bytes = h + 1 < H ? kPart : Kernel::kRecord - h * kPart;
      if constexpr (requires { Kernel::kPrefetchSteps; }) {
        Kernel::template add<N>(rec, first_half + h, r, x, acc[h], PrefetchShare{ahead, bytes});
      } else {
        if (ahead != nullptr) prefetch_lines(ahead, bytes);
        Kernel::template add<N>(rec, first_half + h, r, x, acc[h]);
      }
    };
    if constexpr (H == 2 && N == 1 && requires { Kernel::add_both(rec, r, x[0], acc, PrefetchShare{}); }) {
      Kernel::add_both(
          rec, r, x[0], acc,
          PrefetchShare{first_half == 0 ? rec + Kernel::kPrefetchAhead : nullptr, Kernel::kRecord});
    } else if constexpr (requires { Kernel::kPrefetchSteps; }) {
      // A loop over the halves: written out, gcc moved the K-quants' prefetch steps together to
      // the start of the record (the stall PrefetchShare exists to avoid; one core, Q4_K from
      // memory: 12.5 -> 7.5 GB/s).
      for (int h = 0; h < H; ++h) add_half(h);
    } else {
      // The halves written out: their add calls share the activation broadcasts, and no branch
      // or prefetch loop is left between them (one core, 2048-value rows from L2, Q4_0 gemv:
      // 27 -> 32 GB/s).
      [&]<int... I>(std::integer_sequence<int, I...>) { (add_half(I), ...); }
      (std::make_integer_sequence<int, H>{});
    }
  }
  for (int h = 0; h < H; ++h) {
    for (int c = 0; c < N; ++c) store_rows(dst + c * dst_stride + 8 * h, acc[h][c], lanes - 8 * h);
  }
}

// Groups [group_begin, group_end) × all columns.
template <class Kernel>
void block_gemm(const PackedMatrix& w, int64_t group_begin, int64_t group_end, const uint8_t* columns,
                const ColumnLayout& layout, int64_t column_count, float* dst, int64_t dst_stride) {
  const int64_t records = w.n_in / Kernel::kValues;
  for (int64_t g = group_begin; g < group_end; ++g) {
    const uint8_t* group = w.data + static_cast<size_t>(g) * w.group_bytes;
    const int lanes = static_cast<int>(min64(kGroupRows, w.n_out - g * kGroupRows));
    float* out = dst + g * kGroupRows;
    constexpr int kBoth = both_halves_columns<Kernel>();
    if (column_count <= kBoth && lanes > 8) {
      over_columns<kBoth>(column_count, [&]<int N>(int64_t c) {
        block_tile<Kernel, 2, N>(group, 0, records, columns + static_cast<size_t>(c) * layout.bytes, layout,
                                 out + c * dst_stride, dst_stride, lanes);
      });
      continue;
    }
    for (int half = 0; half < 2 && 8 * half < lanes; ++half) {
      over_columns<4>(column_count, [&]<int N>(int64_t c) {
        block_tile<Kernel, 1, N>(group, half, records, columns + static_cast<size_t>(c) * layout.bytes,
                                 layout, out + c * dst_stride + 8 * half, dst_stride, lanes - 8 * half);
      });
    }
  }
}

}  // namespace
}  // namespace sinter::cpu::avx2
