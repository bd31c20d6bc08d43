// The inputs of the cross-backend op cases (op_cases.h): seeded random bytes of any type, and the
// graph inputs, weights and caches a case's builder asks a backend for.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>

#include "backend/op_cases.h"
#include "backend/op_test_support.h"
#include "tensor/blocks.h"
#include "tensor/convert.h"

namespace sinter::testing {
namespace {

// Integers in [-20, 20] and F64 values in [-scale, scale], in the plain types that have no
// quantizer (they are read by dequantizers only).
void write_plain_values(DType type, std::mt19937& rng, float scale, std::vector<uint8_t>& bytes) {
  std::uniform_int_distribution<int> integer(-20, 20);
  std::uniform_real_distribution<double> real(-scale, scale);
  const size_t size = dtype_traits(type).block_bytes;
  for (size_t at = 0; at < bytes.size(); at += size) {
    const auto store = [&](auto value) { std::memcpy(bytes.data() + at, &value, sizeof value); };
    switch (type) {
      case DType::I8: store(static_cast<int8_t>(integer(rng))); break;
      case DType::I16: store(static_cast<int16_t>(integer(rng))); break;
      case DType::I32: store(static_cast<int32_t>(integer(rng))); break;
      case DType::I64: store(static_cast<int64_t>(integer(rng))); break;
      case DType::F64: store(real(rng)); break;
      default: ADD_FAILURE() << "no way to write values of " << dtype_name(type); return;
    }
  }
}

// Where the F16 super-block scale `d` of a lattice type lies (its first field); -1 for IQ1_M,
// which spreads it over the top nibbles of its four 16-bit scale words.
constexpr size_t kLeadingScale = 0;
static_assert(offsetof(BlockIQ2_XXS, d) == kLeadingScale && offsetof(BlockIQ2_XS, d) == kLeadingScale &&
              offsetof(BlockIQ2_S, d) == kLeadingScale && offsetof(BlockIQ3_XXS, d) == kLeadingScale &&
              offsetof(BlockIQ3_S, d) == kLeadingScale && offsetof(BlockIQ1_S, d) == kLeadingScale);

// The lattice types (no quantizer): random bytes are valid grid indices, signs and sub-block
// scales; only the F16 super-block scale is set, to a small positive value, so that the values
// stay around [-scale, scale].
void write_lattice_blocks(DType type, std::mt19937& rng, float scale, std::vector<uint8_t>& bytes) {
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> factor(0.005f, 0.02f);
  const size_t block_bytes = dtype_traits(type).block_bytes;
  for (size_t at = 0; at < bytes.size(); at += block_bytes) {
    const f16_bits d = f32_to_f16(scale * factor(rng));
    switch (type) {
      case DType::IQ2_XXS:
      case DType::IQ2_XS:
      case DType::IQ2_S:
      case DType::IQ3_XXS:
      case DType::IQ3_S:
      case DType::IQ1_S: std::memcpy(bytes.data() + at + kLeadingScale, &d, sizeof d); break;
      case DType::IQ1_M: {
        uint16_t words[4];
        uint8_t* scales = bytes.data() + at + offsetof(BlockIQ1_M, scales);
        std::memcpy(words, scales, sizeof words);
        for (int i = 0; i < 4; ++i) {
          const auto nibble = static_cast<uint16_t>((d >> (4 * i)) & 0xf);
          words[i] = static_cast<uint16_t>((words[i] & 0x0fff) | nibble << 12);
        }
        std::memcpy(scales, words, sizeof words);
        break;
      }
      default: ADD_FAILURE() << "no way to write blocks of " << dtype_name(type); return;
    }
  }
}

}  // namespace

bool case_applies(DType type, const Dims& dims) { return dims[0] % dtype_traits(type).block_size == 0; }

std::vector<uint8_t> random_rows(DType type, int64_t n, int64_t rows, uint32_t seed, float scale) {
  const DTypeTraits& traits = dtype_traits(type);
  std::vector<uint8_t> bytes(row_bytes(type, n) * static_cast<size_t>(rows));
  if (traits.quantize != nullptr) {
    const auto values = random_values(static_cast<size_t>(n * rows), seed, scale);
    const Status status = quantize_rows(type, values.data(), n, rows, bytes.data());
    EXPECT_TRUE(status) << status.error().message();
  } else {
    std::mt19937 rng(seed);
    if (traits.block_size == 1) {
      write_plain_values(type, rng, scale, bytes);
    } else {
      write_lattice_blocks(type, rng, scale, bytes);
    }
  }
  std::vector<float> decoded(static_cast<size_t>(n * rows));
  EXPECT_TRUE(dequantize_rows(type, bytes.data(), n, rows, decoded.data()));
  for (float v : decoded) {
    if (!std::isfinite(v)) {
      ADD_FAILURE() << "random " << dtype_name(type) << " bytes decode to " << v;
      break;
    }
  }
  return bytes;
}

Tensor* CaseInputs::random(const std::string& name, DType type, std::array<int64_t, kMaxDims> ne,
                           float scale) {
  Tensor* t = graph_.input(name, type, ne);
  pending_.emplace_back(t, random_rows(type, ne[0], t->rows(), next_seed(), scale));
  return t;
}

Tensor* CaseInputs::floats(const std::string& name, std::array<int64_t, kMaxDims> ne,
                           const std::vector<float>& values) {
  Tensor* t = graph_.input(name, DType::F32, ne);
  EXPECT_EQ(values.size(), static_cast<size_t>(t->elements())) << name;
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  pending_.emplace_back(t, std::move(bytes));
  return t;
}

Tensor* CaseInputs::ints(const std::string& name, const std::vector<int32_t>& values) {
  Tensor* t = graph_.input(name, DType::I32, {static_cast<int64_t>(values.size()), 1, 1, 1});
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  pending_.emplace_back(t, std::move(bytes));
  return t;
}

Tensor* CaseInputs::weight(DType type, int64_t n_in, int64_t n_out, float scale) {
  return weight(type, n_in, n_out, random_rows(type, n_in, n_out, next_seed(), scale));
}

Tensor* CaseInputs::weight(DType type, int64_t n_in, int64_t n_out, std::vector<uint8_t> file_bytes) {
  std::vector<uint8_t>& bytes = file_bytes_.emplace_back(std::move(file_bytes));
  Tensor& w = persistent_.emplace_back(make_persistent("weight", type, {n_in, n_out, 1, 1}, bytes.data()));
  Result<std::unique_ptr<Buffer>> loaded =
      backend_.load_weight(&w, Op::kMatMul);  // get_rows reads the same layout
  if (loaded) {
    buffers_.push_back(std::move(loaded).value());
  } else if (setup_status_) {
    setup_status_ = loaded.error();
  }
  return &w;
}

Tensor* CaseInputs::experts(DType type, int64_t n_in, int64_t n_out, int64_t n_expert, float scale) {
  std::vector<uint8_t>& bytes =
      file_bytes_.emplace_back(random_rows(type, n_in, n_out * n_expert, next_seed(), scale));
  Tensor& w =
      persistent_.emplace_back(make_persistent("experts", type, {n_in, n_out, n_expert, 1}, bytes.data()));
  Result<std::unique_ptr<Buffer>> loaded = backend_.load_weight(&w, Op::kMulMatId);
  if (loaded) {
    buffers_.push_back(std::move(loaded).value());
  } else if (setup_status_) {
    setup_status_ = loaded.error();
  }
  return &w;
}

Tensor* CaseInputs::cache(DType type, std::array<int64_t, kMaxDims> ne, float scale) {
  Tensor& c = persistent_.emplace_back(make_persistent("cache", type, ne, nullptr));
  const std::vector<uint8_t> bytes = random_rows(type, ne[0], c.rows(), next_seed(), scale);
  Result<std::unique_ptr<Buffer>> buffer = backend_.allocate(BufferUsage::kCache, bytes.size());
  if (!buffer) {
    if (setup_status_) setup_status_ = buffer.error();
    return &c;
  }
  bind_tensor(c, *buffer.value(), 0);
  tensor_set(c, bytes.data(), 0, bytes.size());
  buffers_.push_back(std::move(buffer).value());
  return &c;
}

void CaseInputs::write_inputs() {
  for (auto& [tensor, bytes] : pending_) {
    ASSERT_EQ(bytes.size(), tensor->bytes()) << tensor->name;
    tensor_set(*tensor, bytes.data(), 0, bytes.size());
  }
}

}  // namespace sinter::testing
