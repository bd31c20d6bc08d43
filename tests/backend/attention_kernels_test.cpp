// Every ISA version of the attention inner loop against the generic one: head sizes 0..2x the
// vector width + 1, misaligned rows, every cache type, group sizes, soft-capping; and every
// level, the generic one included, against the softmax computed directly in double.
#include "backend/cpu/attention_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "sinter/result.h"
#include "tensor/dtype.h"

namespace sinter::cpu {
namespace {

struct Case {
  int64_t head_dim, head_dim_v;
  int32_t heads, cells;
  DType type;
  float softcap;
};

// The inputs of one kernel call: a cache of scattered rows, queries and the visible cells.
struct Inputs {
  Case c;
  size_t misalign = 0;
  size_t k_row = 0, v_row = 0;
  std::vector<uint8_t> keys, values;
  std::vector<float> queries;
  std::vector<int32_t> cells;
  float scale = 0.3f;
};

Inputs make_inputs(const Case& c, size_t misalign, uint32_t seed, float query_magnitude = 2.0f) {
  Inputs in;
  in.c = c;
  in.misalign = misalign;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const int32_t total_cells = c.cells + 3;
  in.k_row = row_bytes(c.type, c.head_dim) + 8;
  in.v_row = row_bytes(c.type, c.head_dim_v) + 8;
  in.keys.resize(in.k_row * total_cells + 64);
  in.values.resize(in.v_row * total_cells + 64);
  const auto fill = [&](std::vector<uint8_t>& bytes, size_t row, int64_t n) {
    std::vector<float> f(static_cast<size_t>(n));
    for (int32_t cell = 0; cell < total_cells; ++cell) {
      for (auto& x : f) x = dist(rng);
      dtype_traits(c.type).quantize(f.data(), bytes.data() + misalign + cell * row, n);
    }
  };
  fill(in.keys, in.k_row, c.head_dim);
  fill(in.values, in.v_row, c.head_dim_v);
  in.queries.resize(static_cast<size_t>(c.heads * c.head_dim) + 1);
  for (auto& x : in.queries) x = dist(rng) * query_magnitude / 2.0f;
  for (int32_t i = 0; i < c.cells; ++i) in.cells.push_back((i * 7 + 2) % total_cells);  // scattered, distinct
  return in;
}

const float* queries_of(const Inputs& in) { return in.queries.data() + in.misalign % 2; }  // misaligned too

// The arguments of one call over the inputs' cache, queries and cells (one token).
AttentionGroupArgs args_for(const Inputs& in, float* out, float* scratch) {
  const Case& c = in.c;
  AttentionGroupArgs a;
  a.queries = queries_of(in);
  a.heads = c.heads;
  a.head_dim = c.head_dim;
  a.head_dim_v = c.head_dim_v;
  a.cache_type = c.type;
  a.keys = in.keys.data() + in.misalign;
  a.key_stride = in.k_row;
  a.values = in.values.data() + in.misalign;
  a.value_stride = in.v_row;
  a.cells = in.cells.data();
  a.cell_count = c.cells;
  a.scale = in.scale;
  a.softcap = c.softcap;
  a.out = out;
  a.scratch = scratch;
  return a;
}

std::vector<float> run(AttendGroupFn fn, const Inputs& in) {
  const Case& c = in.c;
  std::vector<float> out(static_cast<size_t>(c.heads * c.head_dim_v) + 1, 123.0f);
  std::vector<float> scratch(attention_scratch_floats(c.heads, c.head_dim, c.head_dim_v));
  fn(args_for(in, out.data(), scratch.data()));
  EXPECT_EQ(out.back(), 123.0f) << "wrote past the output";
  out.pop_back();
  return out;
}

std::vector<float> run(AttendGroupFn fn, const Case& c, size_t misalign, uint32_t seed) {
  return run(fn, make_inputs(c, misalign, seed));
}

// softmax(scale·q·K) · V per head, in double from the cache's values: the definition.
std::vector<double> direct(const Inputs& in) {
  const Case& c = in.c;
  const auto widen = [&](const std::vector<uint8_t>& bytes, size_t row, int32_t cell, int64_t n) {
    std::vector<float> f(static_cast<size_t>(n));
    dtype_traits(c.type).dequantize(bytes.data() + in.misalign + cell * row, f.data(), n);
    return f;
  };
  std::vector<double> out(static_cast<size_t>(c.heads * c.head_dim_v), 0.0);
  for (int32_t h = 0; h < c.heads; ++h) {
    std::vector<double> scores;
    for (int32_t cell : in.cells) {
      const auto k = widen(in.keys, in.k_row, cell, c.head_dim);
      double s = 0.0;
      for (int64_t i = 0; i < c.head_dim; ++i)
        s += static_cast<double>(queries_of(in)[h * c.head_dim + i]) * k[i];
      s *= in.scale;
      if (c.softcap != 0.0f) s = c.softcap * std::tanh(s / c.softcap);
      scores.push_back(s);
    }
    double max = -INFINITY, total = 0.0;
    for (double s : scores) max = std::max(max, s);
    for (size_t j = 0; j < scores.size(); ++j) {
      const double w = std::exp(scores[j] - max);
      total += w;
      const auto v = widen(in.values, in.v_row, in.cells[j], c.head_dim_v);
      for (int64_t i = 0; i < c.head_dim_v; ++i) out[h * c.head_dim_v + i] += w * v[i];
    }
    for (int64_t i = 0; total > 0.0 && i < c.head_dim_v; ++i) out[h * c.head_dim_v + i] /= total;
  }
  return out;
}

TEST(AttentionKernels, EveryLevelComputesTheSoftmaxOfTheScores) {
  // Cell counts around the online-softmax block (kCellBlock) and query magnitudes that make the
  // running maximum move inside and between blocks (and weights underflow to 0).
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    AttendGroupFn fn = attend_group_for(level);
    if (fn == nullptr || !isa_level_supported(level)) continue;
    for (int32_t cells : {1, kCellBlock - 1, kCellBlock, kCellBlock + 1, 3 * kCellBlock + 11}) {
      for (float magnitude : {0.5f, 4.0f, 60.0f}) {
        for (const Case& c :
             {Case{64, 64, 4, cells, DType::F16, 0.0f}, Case{19, 13, 3, cells, DType::F32, 0.0f},
              Case{40, 40, 2, cells, DType::BF16, 30.0f}, Case{128, 128, 8, cells, DType::F16, 0.0f},
              Case{64, 80, 5, cells, DType::BF16, 0.0f}, Case{128, 64, 1, cells, DType::F32, 0.0f}}) {
          SCOPED_TRACE(concat(isa_level_name(level), " ", dtype_name(c.type), " cells ", cells, " magnitude ",
                              magnitude, " dim ", c.head_dim));
          const Inputs in = make_inputs(c, 3, static_cast<uint32_t>(cells), magnitude);
          const auto expected = direct(in);
          const auto got = run(fn, in);
          ASSERT_EQ(got.size(), expected.size());
          // F32 scores carry an absolute error proportional to their size, which the weights inherit.
          const double conditioning = std::max(1.0, magnitude / 2.0);
          for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_NEAR(got[i], expected[i], 2e-5 * conditioning * (1.0 + std::fabs(expected[i])));
          }
        }
      }
    }
  }
}

TEST(AttentionKernels, EveryIsaLevelAgreesWithTheGenericLoop) {
  int levels_run = 0;
  for (IsaLevel level : {IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    AttendGroupFn fn = attend_group_for(level);
    if (fn == nullptr || !isa_level_supported(level)) continue;
    ++levels_run;
    for (DType type : {DType::F16, DType::BF16, DType::F32}) {
      for (int64_t dim = 0; dim <= 2 * 16 + 1; ++dim) {
        for (const Case& c : {Case{dim, dim, 1, 5, type, 0.0f}, Case{dim, dim + 3, 4, 17, type, 0.0f},
                              Case{dim, dim, 3, 1, type, 20.0f}, Case{dim, dim, 2, 0, type, 0.0f},
                              Case{dim, dim + 1, 2, 2 * kCellBlock + 5, type, 0.0f}}) {
          for (size_t misalign : {0u, 1u, 6u}) {
            SCOPED_TRACE(concat(isa_level_name(level), " ", dtype_name(type), " dim ", c.head_dim, "/",
                                c.head_dim_v, " heads ", c.heads, " cells ", c.cells, " misalign ",
                                misalign));
            const auto expected = run(attend_group_generic, c, misalign, static_cast<uint32_t>(dim));
            const auto got = run(fn, c, misalign, static_cast<uint32_t>(dim));
            ASSERT_EQ(got.size(), expected.size());
            for (size_t i = 0; i < got.size(); ++i) {
              EXPECT_NEAR(got[i], expected[i], 1e-5f * (1.0f + std::fabs(expected[i])));
            }
          }
        }
      }
    }
  }
  if (isa_level_supported(IsaLevel::kAvx2)) {
    EXPECT_GT(levels_run, 0);
  }
}

// Each head's result does not depend on the heads computed with it (the SIMD levels handle
// several heads at once): a group of H heads gives, bit for bit, what each head gives alone.
TEST(AttentionKernels, AHeadsResultDoesNotDependOnItsGroup) {
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    AttendGroupFn fn = attend_group_for(level);
    if (fn == nullptr || !isa_level_supported(level)) continue;
    for (int64_t dim : {int64_t{16}, int64_t{64}, int64_t{72}, int64_t{128}}) {
      for (int32_t heads : {2, 3, 4, 5, 8}) {
        SCOPED_TRACE(concat(isa_level_name(level), " dim ", dim, " heads ", heads));
        const Case group{dim, dim, heads, 2 * kCellBlock + 7, DType::F16, 0.0f};
        const Inputs in = make_inputs(group, 0, static_cast<uint32_t>(dim + heads), 6.0f);
        const auto together = run(fn, in);
        for (int32_t h = 0; h < heads; ++h) {
          Inputs alone = in;
          alone.c.heads = 1;
          alone.queries.assign(in.queries.begin() + h * dim, in.queries.begin() + (h + 1) * dim);
          alone.queries.push_back(0.0f);
          const auto single = run(fn, alone);
          for (int64_t i = 0; i < dim; ++i) ASSERT_EQ(single[i], together[h * dim + i]) << "head " << h;
        }
      }
    }
  }
}

// Tokens of a prompt share a call (each seeing a prefix of the same cells): each token's result
// is, bit for bit, what the token gives alone, whatever the others see (more, fewer, none). A
// token alone over an F16 cache takes the direct form where a level has it (rows widened in
// registers, attention_loop.h), several tokens the widened block: the two agree bit for bit.
TEST(AttentionKernels, ATokensResultDoesNotDependOnTheTokensSharingItsCall) {
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    AttendGroupFn fn = attend_group_for(level);
    if (fn == nullptr || !isa_level_supported(level)) continue;
    for (const Case& c :
         {Case{64, 64, 4, 3 * kCellBlock + 5, DType::F16, 0.0f},
          Case{128, 128, 8, 2 * kCellBlock + 3, DType::F16, 0.0f},
          Case{16, 24, 3, kCellBlock + 2, DType::F16, 20.0f}, Case{8, 8, 1, 2 * kCellBlock, DType::F16, 0.0f},
          Case{19, 13, 3, 2 * kCellBlock + 1, DType::F32, 0.0f},
          Case{40, 40, 1, kCellBlock + 9, DType::BF16, 25.0f}}) {
      SCOPED_TRACE(concat(isa_level_name(level), " ", dtype_name(c.type), " dim ", c.head_dim));
      const std::vector<int32_t> counts = {c.cells, 1, kCellBlock, 0, kCellBlock + 1, 7, c.cells - 1, 2};
      const auto tokens = static_cast<int32_t>(counts.size());
      ASSERT_LE(tokens * c.heads, kMaxQuerySlots);
      Inputs in = make_inputs(c, 1, static_cast<uint32_t>(c.head_dim), 6.0f);
      const int64_t query_floats = c.heads * c.head_dim, out_floats = c.heads * c.head_dim_v + 2;
      std::mt19937 rng(7);
      std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
      std::vector<float> queries(static_cast<size_t>(tokens * query_floats));
      for (auto& x : queries) x = dist(rng);
      std::vector<float> out(static_cast<size_t>(tokens * out_floats), 123.0f);
      std::vector<float> scratch(attention_scratch_floats(tokens * c.heads, c.head_dim, c.head_dim_v));
      AttentionGroupArgs a = args_for(in, out.data(), scratch.data());
      a.queries = queries.data();
      a.tokens = tokens;
      a.query_stride = query_floats;
      a.out_stride = out_floats;
      a.cell_counts = counts.data();
      fn(a);
      for (int32_t i = 0; i < tokens; ++i) {
        Inputs alone = in;
        alone.c.cells = counts[static_cast<size_t>(i)];
        alone.cells.resize(static_cast<size_t>(alone.c.cells));
        alone.misalign = 0;  // queries_of() reads from the start
        alone.keys.erase(alone.keys.begin(), alone.keys.begin() + static_cast<int64_t>(in.misalign));
        alone.values.erase(alone.values.begin(), alone.values.begin() + static_cast<int64_t>(in.misalign));
        alone.queries.assign(queries.begin() + i * query_floats, queries.begin() + (i + 1) * query_floats);
        const auto single = run(fn, alone);
        for (int64_t j = 0; j < c.heads * c.head_dim_v; ++j)
          ASSERT_EQ(single[static_cast<size_t>(j)], out[static_cast<size_t>(i * out_floats + j)])
              << "token " << i << " sees " << counts[static_cast<size_t>(i)] << " cells, value " << j;
        for (int64_t j = c.heads * c.head_dim_v; j < out_floats; ++j)
          EXPECT_EQ(out[static_cast<size_t>(i * out_floats + j)], 123.0f) << "wrote past token " << i;
      }
    }
  }
}

TEST(AttentionKernels, NoVisibleCellGivesZeros) {
  const Case c{8, 8, 2, 0, DType::F16, 0.0f};
  for (float x : run(attend_group_kernel(), c, 0, 1)) EXPECT_EQ(x, 0.0f);
}

}  // namespace
}  // namespace sinter::cpu
