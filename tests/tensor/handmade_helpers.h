// Helpers for the hand-built block tests: blocks are written field by field from the layout,
// then dequantized through the type table.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tensor/dtype.h"

namespace sinter::testing {

template <class Block>
std::vector<float> dequantize_block(DType type, const Block& block) {
  EXPECT_EQ(sizeof(Block), dtype_traits(type).block_bytes);
  std::vector<float> out(static_cast<size_t>(dtype_traits(type).block_size));
  dtype_traits(type).dequantize(&block, out.data(), dtype_traits(type).block_size);
  return out;
}

// A byte pattern that differs from byte to byte, so that a value read from the wrong byte shows.
inline uint8_t pattern_byte(int index, int multiplier = 29, int offset = 7) {
  return static_cast<uint8_t>(index * multiplier + offset);
}

template <class T>
void store_le(void* destination, T value) {
  std::memcpy(destination, &value, sizeof value);
}

}  // namespace sinter::testing
