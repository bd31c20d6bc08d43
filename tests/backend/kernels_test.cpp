// Every kernel of every ISA level this CPU supports against the scalar references:
// - activation rounding into the planar layout: the same bits as the reference quantizers;
// - repacking: every row reads back as it was;
// - packed products (gemv = one column): the same bits as the reference dot product of each row
//   and column, for sizes 0..2×(vector width)+1 blocks, row counts around the 16-row groups, every
//   column count up to past the tile width, misaligned inputs and outputs, and any split of the
//   groups and columns (batch invariance at the kernel level).
#include "backend/cpu/kernels.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/kernels_pack.h"
#include "core/cpu_features.h"
#include "core/half.h"
#include "tensor/convert.h"
#include "tensor/vec_dot.h"

namespace sinter::cpu {
namespace {

constexpr DType kPackedTypes[] = {DType::F32,    DType::F16,  DType::BF16,   DType::Q4_0,
                                  DType::Q4_1,   DType::Q5_0, DType::Q5_1,   DType::Q8_0,
                                  DType::IQ4_NL, DType::Q4_K, DType::Q5_K,   DType::Q6_K,
                                  DType::Q2_K,   DType::Q3_K, DType::IQ4_XS, DType::MXFP4};

std::vector<IsaLevel> supported_levels() {
  std::vector<IsaLevel> levels;
  for (IsaLevel l : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (isa_level_supported(l)) levels.push_back(l);
  }
  return levels;
}

uint32_t next(uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return state >> 8;
}

std::vector<float> gaussian_like(size_t n, uint32_t seed, float scale = 1.0f) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    float sum = 0;
    for (int i = 0; i < 4; ++i) sum += static_cast<float>(next(s) % 20001) / 10000.0f - 1.0f;
    x = scale * sum;
    if (next(s) % 97 == 0) x *= 25.0f;  // outliers
  }
  return v;
}

// Bytes of activation-format rows made by the reference quantizers, one row per column.
std::vector<uint8_t> reference_columns(DType act, const std::vector<float>& x, int64_t n, int64_t m) {
  std::vector<uint8_t> out(row_bytes(act, n) * static_cast<size_t>(m));
  if (n == 0) return out;
  for (int64_t c = 0; c < m; ++c) {
    dtype_traits(act).quantize(x.data() + c * n, out.data() + static_cast<size_t>(c) * row_bytes(act, n), n);
  }
  return out;
}

// A weight matrix of `rows` rows: random block bytes with sane F16 scales for block types
// (every bit of every level field exercised), rounded random values for F16/BF16/F32.
std::vector<uint8_t> random_weights(DType type, int64_t n_in, int64_t rows, uint32_t seed) {
  const size_t rb = row_bytes(type, n_in);
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
  uint32_t s = seed;
  if (!dtype_traits(type).is_quantized) {
    if (w.empty()) return w;
    const auto values = gaussian_like(static_cast<size_t>(n_in * rows), seed);
    EXPECT_TRUE(quantize_rows(type, values.data(), n_in, rows, w.data()));
    return w;
  }
  for (auto& b : w) b = static_cast<uint8_t>(next(s));
  auto scale = [&] {
    return f32_to_f16((next(s) % 2 ? 1.0f : -1.0f) * (0.001f + static_cast<float>(next(s) % 1000) * 1e-4f));
  };
  const size_t block_bytes = dtype_traits(type).block_bytes;
  for (size_t off = 0; off < w.size(); off += block_bytes) {
    uint8_t* block = w.data() + off;
    auto put = [&](size_t at) {
      const f16_bits h = scale();
      std::memcpy(block + at, &h, 2);
    };
    switch (type) {
      case DType::Q4_1:
      case DType::Q5_1:
      case DType::Q4_K:
      case DType::Q5_K:
        put(0);
        put(2);
        break;
      case DType::Q6_K: put(208); break;
      case DType::Q2_K:
        put(80);
        put(82);
        break;
      case DType::Q3_K: put(108); break;
      default: put(0); break;
    }
  }
  return w;
}

std::vector<uint8_t> pack_all(DType type, int64_t n_in, int64_t n_out, const std::vector<uint8_t>& rows,
                              PackedMatrix& m) {
  m.type = type;
  m.n_in = n_in;
  m.n_out = n_out;
  m.groups = (n_out + kGroupRows - 1) / kGroupRows;
  m.group_bytes = packed_group_bytes(type, n_in);
  std::vector<uint8_t> buffer(m.group_bytes * static_cast<size_t>(m.groups) + 64);
  uint8_t* base = buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64;
  for (int64_t g = 0; g < m.groups; ++g) {
    pack_group(type, n_in, rows.data(), row_bytes(type, n_in), n_out, g,
               base + static_cast<size_t>(g) * m.group_bytes);
  }
  m.data = base;
  return buffer;
}

int64_t block_values(DType type) { return std::max<int64_t>(32, dtype_traits(type).block_size); }

TEST(Kernels, CpuDetection) {
  EXPECT_TRUE(isa_level_supported(IsaLevel::kGeneric));
  EXPECT_GE(static_cast<int>(best_isa_level()), static_cast<int>(selected_isa_level()));
  EXPECT_EQ(isa_level_from_name("avx512"), IsaLevel::kAvx512);
  EXPECT_FALSE(isa_level_from_name("sse9"));
  std::printf("best ISA level: %s, selected: %s\n", isa_level_name(best_isa_level()),
              isa_level_name(selected_isa_level()));
}

// Generic planar layout = the reference blocks' fields.
TEST(Kernels, GenericColumnsHoldTheReferenceBlocks) {
  for (DType weight : {DType::Q4_0, DType::Q4_1, DType::Q4_K, DType::Q6_K}) {
    const ActivationFormat f = activation_format(weight);
    const int64_t n = 512;
    const auto x = gaussian_like(n, 3);
    const ColumnLayout layout = column_layout(f, n);
    std::vector<uint8_t> column(layout.bytes);
    quantize_column_generic(x.data(), f, layout, column.data());
    const auto blocks = reference_columns(f.format, x, n, 1);
    const auto* d = reinterpret_cast<const float*>(column.data() + layout.scale_offset);
    if (f.format == DType::Q8_K) {
      for (int b = 0; b < 2; ++b) {
        const uint8_t* block = blocks.data() + 292 * b;
        float bd;
        std::memcpy(&bd, block, 4);
        EXPECT_EQ(bd, d[b]);
        EXPECT_EQ(std::memcmp(block + 4, column.data() + 256 * b, 256), 0);
      }
    } else {
      const size_t bb = dtype_traits(f.format).block_bytes;
      for (int b = 0; b < 16; ++b) {
        EXPECT_EQ(load_f16(blocks.data() + bb * b), d[b]);
        EXPECT_EQ(std::memcmp(blocks.data() + bb * b + (bb - 32), column.data() + 32 * b, 32), 0);
      }
    }
  }
}

TEST(Kernels, QuantizersMatchTheReferenceBitForBit) {
  for (IsaLevel level : supported_levels()) {
    const KernelSet& k = kernels_for(level);
    for (DType weight : kPackedTypes) {
      const ActivationFormat f = activation_format(weight);
      const int64_t unit = dtype_traits(f.format).block_size;
      SCOPED_TRACE(std::string(isa_level_name(level)) + " " + std::string(dtype_name(weight)));
      for (int64_t blocks = 0; blocks <= (unit == 1 ? 33 : (unit == 32 ? 33 : 5)); ++blocks) {
        const int64_t n = blocks * (unit == 1 ? 1 : unit);
        for (int misalign = 0; misalign < 3; ++misalign) {
          auto x = gaussian_like(static_cast<size_t>(n + misalign), 17 + static_cast<uint32_t>(blocks));
          // Ties of the rounding: values at exactly half a step, and zero blocks.
          if (n >= 64) {
            for (int j = 0; j < 32; ++j) x[misalign + j] = static_cast<float>(j - 16) * 0.5f + 0.25f;
            for (int j = 32; j < 64; ++j) x[misalign + j] = 0.0f;
          }
          const ColumnLayout layout = column_layout(f, n);
          std::vector<uint8_t> expected(layout.bytes + 64, 0xa5), got(layout.bytes + 64, 0xa5);
          uint8_t* e = expected.data() + (64 - reinterpret_cast<uintptr_t>(expected.data()) % 64) % 64;
          uint8_t* g = got.data() + (64 - reinterpret_cast<uintptr_t>(got.data()) % 64) % 64;
          quantize_column_generic(x.data() + misalign, f, layout, e);
          k.quantize(x.data() + misalign, f, layout, g);
          // Compare the defined parts only (padding between them is unspecified).
          const size_t q_bytes = unit == 1 ? static_cast<size_t>(n) * 4 : static_cast<size_t>(n);
          ASSERT_EQ(std::memcmp(e, g, q_bytes), 0) << "values, n " << n;
          if (unit > 1) {
            ASSERT_EQ(std::memcmp(e + layout.scale_offset, g + layout.scale_offset,
                                  static_cast<size_t>(n / unit) * 4),
                      0)
                << "scales, n " << n;
            const size_t sums = f.format == DType::Q8_1 ? n / 32 : (f.sum_group > 0 ? n / f.sum_group : 0);
            ASSERT_EQ(std::memcmp(e + layout.sum_offset, g + layout.sum_offset, sums * 4), 0)
                << "sums, n " << n;
          }
        }
      }
    }
  }
}

TEST(Kernels, RepackedRowsReadBackUnchanged) {
  for (DType type : kPackedTypes) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    const int64_t n_in = 2 * block_values(type), n_out = 37;
    const auto rows = random_weights(type, n_in, n_out, 5);
    PackedMatrix m;
    const auto buffer = pack_all(type, n_in, n_out, rows, m);
    std::vector<uint8_t> row(row_bytes(type, n_in));
    for (int64_t r = 0; r < n_out; ++r) {
      unpack_row(m, r, row.data());
      ASSERT_EQ(std::memcmp(row.data(), rows.data() + r * row.size(), row.size()), 0) << "row " << r;
    }
  }
}

struct ProductCase {
  int64_t n_in, n_out, m;
};

// Runs the level's gemm on packed weights and compares with the reference dot products.
void check_products(IsaLevel level, DType type, const ProductCase& pc, uint32_t seed) {
  const KernelSet& k = kernels_for(level);
  const GemmFn gemm = gemm_kernel(k, type);
  ASSERT_NE(gemm, nullptr);
  const auto rows = random_weights(type, pc.n_in, pc.n_out, seed);
  PackedMatrix packed;
  const auto buffer = pack_all(type, pc.n_in, pc.n_out, rows, packed);
  const ActivationFormat f = activation_format(type);
  const ColumnLayout layout = column_layout(f, pc.n_in);
  const auto x = gaussian_like(static_cast<size_t>(pc.n_in * pc.m + 1), seed + 1);
  std::vector<uint8_t> columns_buffer(layout.bytes * static_cast<size_t>(pc.m) + 64);
  uint8_t* columns =
      columns_buffer.data() + (64 - reinterpret_cast<uintptr_t>(columns_buffer.data()) % 64) % 64;
  for (int64_t c = 0; c < pc.m; ++c)
    k.quantize(x.data() + 1 + c * pc.n_in, f, layout, columns + c * layout.bytes);
  // Reference: the reference quantizers and dot products on the file's rows.
  const DType act = vec_dot_activation_type(type);
  const std::vector<float> x_shifted(x.begin() + 1, x.end());
  const auto x_rows = reference_columns(act, x_shifted, pc.n_in, pc.m);
  const VecDotFn dot = reference_vec_dot(type);
  const int64_t stride = pc.n_out + 3;
  std::vector<float> expected(static_cast<size_t>(stride * pc.m), -1.0f);
  for (int64_t c = 0; c < pc.m; ++c) {
    for (int64_t r = 0; r < pc.n_out; ++r) {
      expected[c * stride + r] = dot(pc.n_in, rows.data() + r * row_bytes(type, pc.n_in),
                                     x_rows.data() + c * row_bytes(act, pc.n_in));
    }
  }
  // All columns and groups at once, into a misaligned output.
  std::vector<float> out_buffer(static_cast<size_t>(stride * pc.m) + 1, -1.0f);
  float* out = out_buffer.data() + 1;
  gemm(packed, 0, packed.groups, columns, layout, pc.m, out, stride);
  for (int64_t c = 0; c < pc.m; ++c) {
    for (int64_t r = 0; r < stride; ++r) {
      ASSERT_EQ(std::bit_cast<uint32_t>(out[c * stride + r]),
                std::bit_cast<uint32_t>(expected[c * stride + r]))
          << "row " << r << " column " << c << ": " << out[c * stride + r] << " vs "
          << expected[c * stride + r];
    }
  }
  // One column and one group at a time (the gemv path, another thread's share): same bits.
  std::vector<float> single(static_cast<size_t>(stride * pc.m), -1.0f);
  for (int64_t g = packed.groups - 1; g >= 0; --g) {
    for (int64_t c = 0; c < pc.m; ++c) {
      gemm(packed, g, g + 1, columns + c * layout.bytes, layout, 1, single.data() + c * stride, stride);
    }
  }
  ASSERT_EQ(std::memcmp(single.data(), out, single.size() * sizeof(float)), 0);
}

TEST(Kernels, PackedProductsMatchTheReferenceBitForBit) {
  for (IsaLevel level : supported_levels()) {
    const KernelSet& k = kernels_for(level);
    for (DType type : kPackedTypes) {
      if (gemm_kernel(k, type) == nullptr) continue;
      SCOPED_TRACE(std::string(isa_level_name(level)) + " " + std::string(dtype_name(type)));
      const int64_t unit = dtype_traits(type).block_size;
      // Sizes 0..2×(vector width)+1 in blocks (16 lanes: 33 values for the plain types).
      const int max_blocks = unit == 1 ? 33 : (unit == 32 ? 33 : 5);
      for (int blocks = 0; blocks <= max_blocks; blocks += (blocks < 4 ? 1 : 7)) {
        check_products(level, type, {blocks * unit, 17, 3}, 100 + static_cast<uint32_t>(blocks));
      }
      for (int64_t n_out : {1, 15, 16, 33, 64})
        check_products(level, type, {2 * block_values(type), n_out, 2}, 7);
      // One column over several groups (the generation tiles of 4 groups and both halves) and
      // a last group of fewer than 8 rows.
      for (int64_t n_out : {9, 64, 70, 135})
        check_products(level, type, {3 * block_values(type), n_out, 1}, 17);
      for (int64_t m = 1; m <= 14; ++m) check_products(level, type, {block_values(type), 20, m}, 11);
      check_products(level, type, {8 * block_values(type), 48, 9}, 13);
    }
  }
}

}  // namespace
}  // namespace sinter::cpu
