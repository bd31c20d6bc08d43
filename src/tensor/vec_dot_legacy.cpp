// Reference dot products of the 32-value block types with Q8_0/Q8_1 activations: integer sums
// within each block, one float accumulator across blocks (see vec_dot.h).
#include <cmath>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/iq_grids.h"
#include "tensor/vec_dot.h"

namespace sinter::reference {
namespace {

constexpr int kHalf = kQK / 2;

uint32_t load_u32(const uint8_t* bytes) {
  uint32_t v;
  std::memcpy(&v, bytes, sizeof v);
  return v;
}

// Levels of a 32-value block with 4-bit values in nibbles (value j < 16 in the low nibble of
// qs[j], value j + 16 in the high nibble) and optionally a fifth bit per value in qh.
void nibble_levels(const uint8_t* qs, const uint8_t* qh, int* out) {
  const uint32_t high = qh != nullptr ? load_u32(qh) : 0;
  for (int j = 0; j < kHalf; ++j) {
    out[j] = (qs[j] & 0x0f) | static_cast<int>((high >> j) & 1u) << 4;
    out[j + kHalf] = (qs[j] >> 4) | static_cast<int>((high >> (j + kHalf)) & 1u) << 4;
  }
}

int dot_levels(const int* levels, int offset, const int8_t* x) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += (levels[j] - offset) * x[j];
  return sum;
}

// Blocks of a type whose layout has `d` at offset 0: d_w·d_x·isum per block.
template <class Block, class Isum>
float symmetric_dot(int64_t n, const void* w, const void* x, Isum isum) {
  // Blocks are packed (alignment 1), so members are read through the packed struct.
  const auto* wb = static_cast<const Block*>(w);
  const auto* xb = static_cast<const BlockQ8_0*>(x);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float d = f16_to_f32(wb[b].d) * f16_to_f32(xb[b].d);
    acc = std::fma(static_cast<float>(isum(wb[b], xb[b].qs)), d, acc);
  }
  return acc;
}

template <class Block, class Isum>
float offset_dot(int64_t n, const void* w, const void* x, Isum isum) {
  const auto* wb = static_cast<const Block*>(w);
  const auto* xb = static_cast<const BlockQ8_1*>(x);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float d = f16_to_f32(wb[b].d) * f16_to_f32(xb[b].d);
    acc = std::fma(static_cast<float>(isum(wb[b], xb[b].qs)), d, acc);
    acc = std::fma(f16_to_f32(wb[b].m), f16_to_f32(xb[b].s), acc);
  }
  return acc;
}

}  // namespace

float vec_dot_q4_0_q8_0(int64_t n, const void* w, const void* x) {
  return symmetric_dot<BlockQ4_0>(n, w, x, [](const BlockQ4_0& block, const int8_t* xq) {
    int levels[kQK];
    nibble_levels(block.qs, nullptr, levels);
    return dot_levels(levels, 8, xq);
  });
}

float vec_dot_q5_0_q8_0(int64_t n, const void* w, const void* x) {
  return symmetric_dot<BlockQ5_0>(n, w, x, [](const BlockQ5_0& block, const int8_t* xq) {
    int levels[kQK];
    nibble_levels(block.qs, block.qh, levels);
    return dot_levels(levels, 16, xq);
  });
}

float vec_dot_q8_0_q8_0(int64_t n, const void* w, const void* x) {
  return symmetric_dot<BlockQ8_0>(n, w, x, [](const BlockQ8_0& block, const int8_t* xq) {
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += block.qs[j] * xq[j];
    return sum;
  });
}

float vec_dot_iq4_nl_q8_0(int64_t n, const void* w, const void* x) {
  return symmetric_dot<BlockIQ4_NL>(n, w, x, [](const BlockIQ4_NL& block, const int8_t* xq) {
    int levels[kQK];
    nibble_levels(block.qs, nullptr, levels);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += iq::kIq4nlValues[levels[j]] * xq[j];
    return sum;
  });
}

// The scale is 2^(e - 128) (kMxfp4Values are the E2M1 values doubled), not an F16.
float vec_dot_mxfp4_q8_0(int64_t n, const void* w, const void* x) {
  const auto* wb = static_cast<const BlockMXFP4*>(w);
  const auto* xb = static_cast<const BlockQ8_0*>(x);
  float acc = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int levels[kQK];
    nibble_levels(wb[b].qs, nullptr, levels);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += iq::kMxfp4Values[levels[j]] * xb[b].qs[j];
    const float d = iq::mxfp4_half_scale(wb[b].e) * f16_to_f32(xb[b].d);
    acc = std::fma(static_cast<float>(sum), d, acc);
  }
  return acc;
}

float vec_dot_q4_1_q8_1(int64_t n, const void* w, const void* x) {
  return offset_dot<BlockQ4_1>(n, w, x, [](const BlockQ4_1& block, const int8_t* xq) {
    int levels[kQK];
    nibble_levels(block.qs, nullptr, levels);
    return dot_levels(levels, 0, xq);
  });
}

float vec_dot_q5_1_q8_1(int64_t n, const void* w, const void* x) {
  return offset_dot<BlockQ5_1>(n, w, x, [](const BlockQ5_1& block, const int8_t* xq) {
    int levels[kQK];
    nibble_levels(block.qs, block.qh, levels);
    return dot_levels(levels, 0, xq);
  });
}

}  // namespace sinter::reference
