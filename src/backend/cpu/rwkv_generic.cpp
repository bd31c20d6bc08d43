// The generic WKV kernels (rwkv_kernels.h) and the run-time choice of version. Written as the
// SIMD versions are, over blocks of value lanes (kBlock at a time, in arrays a compiler can keep
// in vectors), with std::fma wherever the reference has an fma.
#include <algorithm>
#include <cmath>

#include "backend/cpu/isa_dispatch.h"
#include "backend/cpu/rwkv_kernels.h"

namespace sinter::cpu {
namespace {

constexpr int64_t kBlock = 64;  // value lanes per block

// Values j0 .. j0 + m of every token of the run. Columns of values are independent: y[j] and
// the state's column j depend on column j alone.
void wkv6_block(const Wkv6Run& run, int64_t j0, int64_t m) {
  const int64_t n = run.n;
  float y[kBlock];
  for (int64_t t = 0; t < run.count; ++t) {
    const int64_t o = t * run.stride;
    const float* v = run.v + o + j0;
    std::fill(y, y + m, 0.0f);
    float* row = run.state + j0;
    for (int64_t i = 0; i < n; ++i, row += n) {  // key i: the sums' order
      const float k_i = run.k[o + i], r_i = run.r[o + i], u_i = run.u[i], w_i = run.w[o + i];
      for (int64_t j = 0; j < m; ++j) {
        const float kv = v[j] * k_i;
        y[j] = std::fma(std::fma(kv, u_i, row[j]), r_i, y[j]);
        row[j] = std::fma(row[j], w_i, kv);
      }
    }
    std::copy(y, y + m, run.y + o + j0);
  }
}

void wkv6_generic(const Wkv6Run& run) {
  for (int64_t j0 = 0; j0 < run.n; j0 += kBlock) wkv6_block(run, j0, std::min(kBlock, run.n - j0));
}

// Value rows i0 .. i0 + m of every token of the run (rows are independent: row i's sa and
// update read row i alone). sa for the next token of the run is summed as this token writes
// each state column (the same products in the same order as a pass of its own).
void wkv7_block(const Wkv7Run& run, int64_t i0, int64_t m) {
  const int64_t n = run.n;
  float sa[kBlock], sa_next[kBlock], y[kBlock];
  std::fill(sa, sa + m, 0.0f);
  const float* column = run.state + i0;
  for (int64_t j = 0; j < n; ++j, column += n) {
    for (int64_t i = 0; i < m; ++i) sa[i] = std::fma(run.a[j], column[i], sa[i]);
  }
  for (int64_t t = 0; t < run.count; ++t) {
    const int64_t o = t * run.stride;
    const float* v = run.v + o + i0;
    const float* a_next = t + 1 < run.count ? run.a + o + run.stride : nullptr;
    std::fill(y, y + m, 0.0f);
    std::fill(sa_next, sa_next + m, 0.0f);
    float* col = run.state + i0;
    for (int64_t j = 0; j < n; ++j, col += n) {  // key j: the sums' order
      const float w_j = run.w[o + j], k_j = run.k[o + j], b_j = run.b[o + j], r_j = run.r[o + j];
      for (int64_t i = 0; i < m; ++i) {
        col[i] = std::fma(sa[i], b_j, std::fma(col[i], w_j, v[i] * k_j));
        y[i] = std::fma(col[i], r_j, y[i]);
      }
      if (a_next != nullptr) {
        for (int64_t i = 0; i < m; ++i) sa_next[i] = std::fma(a_next[j], col[i], sa_next[i]);
      }
    }
    std::copy(y, y + m, run.y + o + i0);
    std::copy(sa_next, sa_next + m, sa);
  }
}

void wkv7_generic(const Wkv7Run& run) {
  for (int64_t i0 = 0; i0 < run.n; i0 += kBlock) wkv7_block(run, i0, std::min(kBlock, run.n - i0));
}

}  // namespace

RwkvKernels rwkv_kernels_generic() { return {wkv6_generic, wkv7_generic}; }

RwkvKernels rwkv_kernels_for(IsaLevel level) {
  return version_for<RwkvKernels>(level, rwkv_kernels_generic(), rwkv_kernels_avx2, rwkv_kernels_avx512);
}

const RwkvKernels& rwkv_kernels() {
  static const RwkvKernels chosen =
      best_version<RwkvKernels>(rwkv_kernels_generic(), rwkv_kernels_avx2, rwkv_kernels_avx512);
  return chosen;
}

}  // namespace sinter::cpu
