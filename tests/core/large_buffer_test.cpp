#include "core/large_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace sinter {
namespace {

bool aligned_to(const void* p, size_t alignment) { return reinterpret_cast<uintptr_t>(p) % alignment == 0; }

// Writes a pattern over every byte and checks it reads back (ASan reports any byte outside).
void expect_usable(const LargeBuffer& buffer) {
  for (size_t i = 0; i < buffer.size(); ++i) buffer.data()[i] = static_cast<uint8_t>(i * 131 + 7);
  size_t wrong = 0;
  for (size_t i = 0; i < buffer.size(); ++i) wrong += buffer.data()[i] != static_cast<uint8_t>(i * 131 + 7);
  EXPECT_EQ(wrong, 0u);
}

TEST(LargeBuffer, SmallBuffersComeFromTheHeapAligned) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{1000}, LargeBuffer::kHugePage - 1}) {
    Result<LargeBuffer> buffer = LargeBuffer::allocate(bytes);
    ASSERT_TRUE(buffer.ok()) << buffer.error().message();
    EXPECT_NE(buffer->data(), nullptr);
    EXPECT_EQ(buffer->size(), bytes);
    EXPECT_TRUE(aligned_to(buffer->data(), 64));
    EXPECT_FALSE(buffer->mapped());
    expect_usable(*buffer);
  }
}

TEST(LargeBuffer, LargeBuffersAreMappedOnHugePageBoundaries) {
  // Sizes that are and are not whole small pages and whole huge pages.
  for (size_t bytes :
       {LargeBuffer::kHugePage, 2 * LargeBuffer::kHugePage + 12345, 3 * LargeBuffer::kHugePage + 4096}) {
    Result<LargeBuffer> buffer = LargeBuffer::allocate(bytes);
    ASSERT_TRUE(buffer.ok()) << buffer.error().message();
    EXPECT_EQ(buffer->size(), bytes);
    EXPECT_EQ(buffer->mapped(), LargeBuffer::kMapsLargeBuffers);
    EXPECT_TRUE(aligned_to(buffer->data(), buffer->mapped() ? LargeBuffer::kHugePage : 64));
    expect_usable(*buffer);
  }
}

TEST(LargeBuffer, MovingHandsOverTheMemory) {
  Result<LargeBuffer> allocated = LargeBuffer::allocate(3 * LargeBuffer::kHugePage);
  ASSERT_TRUE(allocated.ok());
  LargeBuffer first = std::move(allocated).value();
  uint8_t* data = first.data();
  data[0] = 42;
  LargeBuffer second = std::move(first);
  EXPECT_EQ(first.data(), nullptr);
  EXPECT_EQ(first.size(), 0u);
  EXPECT_FALSE(first.mapped());
  EXPECT_EQ(second.data(), data);
  EXPECT_EQ(second.data()[0], 42);
  Result<LargeBuffer> small = LargeBuffer::allocate(100);
  ASSERT_TRUE(small.ok());
  second = std::move(small).value();  // frees the mapping, takes the heap block
  EXPECT_EQ(second.size(), 100u);
  EXPECT_FALSE(second.mapped());
  expect_usable(second);
}

TEST(LargeBuffer, AnImpossibleSizeIsAnError) {
  Result<LargeBuffer> buffer = LargeBuffer::allocate(SIZE_MAX / 2);
  ASSERT_FALSE(buffer.ok());
  EXPECT_NE(buffer.error().message().find("bytes"), std::string::npos);
}

}  // namespace
}  // namespace sinter
