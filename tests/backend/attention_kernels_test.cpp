// Every ISA version of the attention inner loop against the generic one: head sizes 0..2x the
// vector width + 1, misaligned rows, every cache type, group sizes, soft-capping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/cpu/attention_kernels.h"
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

std::vector<float> run(AttendGroupFn fn, const Case& c, size_t misalign, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const int32_t total_cells = c.cells + 3;
  const size_t k_row = row_bytes(c.type, c.head_dim) + 8, v_row = row_bytes(c.type, c.head_dim_v) + 8;
  std::vector<uint8_t> keys(k_row * total_cells + 64), values(v_row * total_cells + 64);
  const auto fill = [&](std::vector<uint8_t>& bytes, size_t row, int64_t n) {
    std::vector<float> f(static_cast<size_t>(n));
    for (int32_t cell = 0; cell < total_cells; ++cell) {
      for (auto& x : f) x = dist(rng);
      dtype_traits(c.type).quantize(f.data(), bytes.data() + misalign + cell * row, n);
    }
  };
  fill(keys, k_row, c.head_dim);
  fill(values, v_row, c.head_dim_v);
  std::vector<float> queries(static_cast<size_t>(c.heads * c.head_dim) + 1);
  for (auto& x : queries) x = dist(rng);
  std::vector<int32_t> cells;
  for (int32_t i = 0; i < c.cells; ++i) cells.push_back((i * 7 + 2) % total_cells);  // scattered, distinct
  std::vector<float> out(static_cast<size_t>(c.heads * c.head_dim_v) + 1, 123.0f);
  std::vector<float> scratch(attention_scratch_floats(c.heads, c.head_dim, c.head_dim_v));
  AttentionGroupArgs a;
  a.queries = queries.data() + misalign % 2;  // misaligned queries too
  a.heads = c.heads;
  a.head_dim = c.head_dim;
  a.head_dim_v = c.head_dim_v;
  a.cache_type = c.type;
  a.keys = keys.data() + misalign;
  a.key_stride = k_row;
  a.values = values.data() + misalign;
  a.value_stride = v_row;
  a.cells = cells.data();
  a.cell_count = c.cells;
  a.scale = 0.3f;
  a.softcap = c.softcap;
  a.out = out.data();
  a.scratch = scratch.data();
  fn(a);
  out.pop_back();
  return out;
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
                              Case{dim, dim, 3, 1, type, 20.0f}, Case{dim, dim, 2, 0, type, 0.0f}}) {
          for (size_t misalign : {0u, 1u, 6u}) {
            SCOPED_TRACE(concat(isa_level_name(level), " ", dtype_name(type), " dim ", c.head_dim, "/", c.head_dim_v,
                                " heads ", c.heads, " cells ", c.cells, " misalign ", misalign));
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
  if (isa_level_supported(IsaLevel::kAvx2)) EXPECT_GT(levels_run, 0);
}

TEST(AttentionKernels, NoVisibleCellGivesZeros) {
  const Case c{8, 8, 2, 0, DType::F16, 0.0f};
  for (float x : run(attend_group_kernel(), c, 0, 1)) EXPECT_EQ(x, 0.0f);
}

}  // namespace
}  // namespace sinter::cpu
