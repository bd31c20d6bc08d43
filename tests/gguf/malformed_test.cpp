// Malformed GGUF files built field by field: each must be an Error whose message names the
// problem and where it is (byte offset, key or tensor).
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "gguf_bytes.h"

namespace sinter {
namespace {

using testing::error_mentions;
using testing::GgufBytes;

constexpr uint64_t k2p63 = 1ull << 63;
constexpr uint64_t kMaxU64 = ~0ull;
constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ8_0 = 8;

// A file with one metadata entry whose value the caller appends (the entry starts at byte 24).
GgufBytes one_entry(std::string_view key, GgufType type) {
  GgufBytes b;
  b.header(0, 1).key(key, type);
  return b;
}

// A file with one tensor info and `data_bytes` bytes of data after the padding.
GgufBytes one_tensor(const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset, size_t data_bytes) {
  GgufBytes b;
  b.header(1, 0).tensor_info("w", dims, type, offset).pad_to(32).mark("data").zeros(data_bytes);
  return b;
}

TEST(GgufMalformed, BadMagic) {
  GgufBytes b;
  b.raw("GGML").u32(3).u64(0).u64(0);
  EXPECT_TRUE(error_mentions(b.parse(), {"not a GGUF file", "'GGML'", "(at byte offset 0)"}));
  GgufBytes binary;
  binary.u32(0x00ff0102).u32(3).u64(0).u64(0);
  EXPECT_TRUE(error_mentions(binary.parse(), {"not a GGUF file", "'\\x02\\x01\\xff\\x00'"}));
  EXPECT_TRUE(error_mentions(GgufBytes().parse(),
                             {"file ends inside the magic number", "0 left", "(at byte offset 0)"}));
}

TEST(GgufMalformed, UnsupportedVersions) {
  for (uint32_t version : {0u, 1u, 4u, 0xffffffffu}) {
    GgufBytes b;
    b.header(0, 0, version);
    EXPECT_TRUE(error_mentions(
        b.parse(),
        {concat("GGUF version ", version, " is not supported (only 2 and 3)"), "(at byte offset 4)"}));
  }
  GgufBytes big_endian;
  big_endian.header(0, 0, 0x03000000u);
  EXPECT_TRUE(error_mentions(big_endian.parse(), {"the file looks big-endian", "(at byte offset 4)"}));
  GgufBytes v2;
  v2.header(0, 0, 2);
  auto file = v2.parse();
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->version(), 2u);
}

TEST(GgufMalformed, AbsurdCounts) {
  for (uint64_t count : {k2p63, kMaxU64, uint64_t{1} << 32}) {
    GgufBytes tensors;
    tensors.header(count, 0).zeros(64);
    EXPECT_TRUE(error_mentions(
        tensors.parse(),
        {concat("tensor count ", count, " cannot fit in the 64 bytes"), "(at byte offset 8)"}));
    GgufBytes entries;
    entries.header(0, count).zeros(64);
    EXPECT_TRUE(error_mentions(
        entries.parse(), {concat("metadata entry count ", count, " cannot fit"), "(at byte offset 16)"}));
  }
}

TEST(GgufMalformed, AbsurdStringLengths) {
  for (uint64_t length : {k2p63, kMaxU64, uint64_t{100}}) {
    GgufBytes key;
    key.header(0, 1).u64(length).raw("general.name").type(GgufType::kString).str("x");
    EXPECT_TRUE(error_mentions(
        key.parse(),
        {concat("a metadata key has length ", length, " but only 25 bytes remain"), "(at byte offset 24)"}));

    GgufBytes value = one_entry("general.name", GgufType::kString);
    value.u64(length).raw("abc");
    EXPECT_TRUE(
        error_mentions(value.parse(), {"the value of metadata key 'general.name' has length",
                                       concat(length, " but only 3 bytes remain"), "(at byte offset 48)"}));

    GgufBytes element = one_entry("tokens", GgufType::kArray);
    element.array_header(GgufType::kString, 2).str("ok").u64(length).raw("abc");
    EXPECT_TRUE(error_mentions(
        element.parse(), {"an array element of metadata key 'tokens' has length", "(at byte offset 64)"}));

    GgufBytes tensor;
    tensor.header(1, 0).u64(length).raw("w").u32(1).u64(32).u32(kF32).u64(0);
    EXPECT_TRUE(error_mentions(tensor.parse(), {"a tensor name has length", "(at byte offset 24)"}));
  }
}

TEST(GgufMalformed, AbsurdArrayLengths) {
  for (GgufType element : {GgufType::kUint8, GgufType::kFloat64, GgufType::kString, GgufType::kArray}) {
    for (uint64_t count : {k2p63, kMaxU64, uint64_t{9}}) {
      SCOPED_TRACE(concat(gguf_type_name(element), " × ", count));
      GgufBytes b = one_entry("scores", GgufType::kArray);
      b.array_header(element, count).zeros(8);
      EXPECT_TRUE(
          error_mentions(b.parse(), {concat("metadata key 'scores' declares an array of ", count, " ",
                                            gguf_type_name(element), " elements but only 8 bytes remain"),
                                     "(at byte offset 42)"}));
    }
  }
  // Nested: the inner array's count is checked against what remains at that point.
  GgufBytes nested = one_entry("nested", GgufType::kArray);
  nested.array_header(GgufType::kArray, 1).array_header(GgufType::kInt32, kMaxU64).zeros(8);
  EXPECT_TRUE(error_mentions(
      nested.parse(), {"'nested' declares an array of 18446744073709551615 int32", "(at byte offset 54)"}));
}

GgufBytes nested_arrays(int depth) {
  GgufBytes b = one_entry("deep", GgufType::kArray);
  for (int i = 1; i < depth; ++i) b.array_header(GgufType::kArray, 1);
  b.array_header(GgufType::kUint8, 1).u8(7);
  return b;
}

TEST(GgufMalformed, ArraysNestedTooDeep) {
  auto ok = nested_arrays(kGgufMaxArrayDepth).parse();
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->metadata().find_value("deep")->to_display(), "[[[[[[[[7]]]]]]]]");
  const size_t innermost = 40 + 12 * kGgufMaxArrayDepth;
  EXPECT_TRUE(error_mentions(nested_arrays(kGgufMaxArrayDepth + 1).parse(),
                             {"metadata key 'deep' has arrays nested deeper than 8 levels",
                              concat("(at byte offset ", innermost, ")")}));
  // Far deeper than the limit, with a count that would claim the rest: still the depth error.
  GgufBytes b = one_entry("deep", GgufType::kArray);
  for (int i = 0; i < 10000; ++i) b.array_header(GgufType::kArray, 1);
  EXPECT_TRUE(error_mentions(b.parse(), {"nested deeper than 8 levels"}));
}

TEST(GgufMalformed, UnknownValueTypes) {
  for (uint32_t type : {13u, 100u, 0xffffffffu}) {
    GgufBytes b;
    b.header(0, 1).str("general.name").u32(type).u64(0);
    EXPECT_TRUE(error_mentions(
        b.parse(),
        {concat("metadata key 'general.name' has unknown value type ", type), "(at byte offset 44)"}));
    GgufBytes array = one_entry("list", GgufType::kArray);
    array.u32(type).u64(0);
    EXPECT_TRUE(error_mentions(
        array.parse(),
        {concat("metadata key 'list' has an array of unknown element type ", type), "(at byte offset 40)"}));
  }
}

TEST(GgufMalformed, BoolsOtherThanZeroOrOne) {
  GgufBytes scalar = one_entry("flag", GgufType::kBool);
  scalar.u8(2);
  EXPECT_TRUE(
      error_mentions(scalar.parse(), {"metadata key 'flag' is a bool with value 2", "(at byte offset 40)"}));
  GgufBytes array = one_entry("flags", GgufType::kArray);
  array.array_header(GgufType::kBool, 3).u8(1).u8(0).u8(255);
  EXPECT_TRUE(error_mentions(
      array.parse(), {"metadata key 'flags' element 2 is a bool with value 255", "(at byte offset 55)"}));
}

TEST(GgufMalformed, UnknownTensorTypes) {
  // 4 and 5 were Q4_2 and Q4_3, removed from GGUF; 31..33 were the Q4_0_x_y repacks.
  for (uint32_t type : {4u, 5u, 31u, 40u, 0xffffffffu}) {
    GgufBytes b = one_tensor({32}, type, 0, 128);
    EXPECT_TRUE(
        error_mentions(b.parse(), {concat("tensor 'w' has unknown type id ", type), "(at byte offset 45)"}));
  }
}

TEST(GgufMalformed, MisalignedTensorData) {
  GgufBytes b = one_tensor({4}, kF32, 16, 64);
  EXPECT_TRUE(error_mentions(
      b.parse(), {"tensor 'w' data offset 16 is not a multiple of the alignment 32", "(at byte offset 49)"}));
  // With general.alignment 16 the same offset is fine.
  GgufBytes aligned16;
  aligned16.header(1, 1).key("general.alignment", GgufType::kUint32).u32(16);
  aligned16.tensor_info("w", {4}, kF32, 16).pad_to(16).zeros(32, 0x5a);
  auto file = aligned16.parse();
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->alignment(), 16u);
  EXPECT_EQ(file->tensors()[0].file_offset % 16, 0u);
  EXPECT_EQ(file->tensors()[0].data[0], 0x5a);
}

TEST(GgufMalformed, OverlappingTensors) {
  GgufBytes b;
  b.header(2, 0)
      .tensor_info("first", {32}, kF32, 0)
      .tensor_info("second", {8}, kF32, 96)
      .pad_to(32)
      .zeros(256);
  EXPECT_TRUE(
      error_mentions(b.parse(), {"tensors 'first' and 'second' overlap", "'first' holds data bytes [0, 128)",
                                 "'second' starts at 96", "(data section at byte offset 128)"}));
  // Listed in the other order: found all the same.
  GgufBytes reversed;
  reversed.header(2, 0)
      .tensor_info("second", {8}, kF32, 96)
      .tensor_info("first", {32}, kF32, 0)
      .pad_to(32)
      .zeros(256);
  EXPECT_TRUE(error_mentions(reversed.parse(), {"tensors 'first' and 'second' overlap"}));
  // Two tensors at the same offset.
  GgufBytes same;
  same.header(2, 0).tensor_info("x", {8}, kF32, 0).tensor_info("y", {8}, kF32, 0).pad_to(32).zeros(64);
  EXPECT_TRUE(error_mentions(same.parse(), {"overlap"}));
  // Touching is not overlapping.
  GgufBytes touching;
  touching.header(2, 0).tensor_info("x", {8}, kF32, 0).tensor_info("y", {8}, kF32, 32).pad_to(32).zeros(64);
  EXPECT_TRUE(touching.parse());
}

TEST(GgufMalformed, TensorDataOutsideTheFile) {
  EXPECT_TRUE(error_mentions(
      one_tensor({32}, kF32, 0, 127).parse(),
      {"tensor 'w' [32] f32 needs 128 bytes at data offset 0",
       "the data section (from byte offset 64) holds only 127 bytes", "(tensor info at byte offset 24)"}));
  EXPECT_TRUE(error_mentions(one_tensor({8}, kF32, 64, 64).parse(), {"needs 32 bytes at data offset 64"}));
  // Offsets near 2^64 must not wrap around when added to the size.
  const uint64_t huge = kMaxU64 - 31;
  EXPECT_TRUE(error_mentions(one_tensor({8}, kF32, huge, 64).parse(), {concat("at data offset ", huge)}));
  // No data section at all.
  GgufBytes no_data;
  no_data.header(1, 0).tensor_info("w", {8}, kF32, 0);
  EXPECT_TRUE(error_mentions(no_data.parse(), {"file ends before its data section", "(at byte offset 57)"}));
  // Q8_0: 2 blocks of 34 bytes.
  EXPECT_TRUE(error_mentions(one_tensor({64}, kQ8_0, 0, 67).parse(), {"q8_0 needs 68 bytes"}));
  EXPECT_TRUE(one_tensor({64}, kQ8_0, 0, 68).parse());
}

TEST(GgufMalformed, DimensionsWhoseProductOverflows) {
  EXPECT_TRUE(error_mentions(
      one_tensor({1ull << 32, 1ull << 32}, kF32, 0, 64).parse(),
      {"tensor 'w' dimension 1 = 4294967296 makes its element count overflow int64", "(at byte offset 45)"}));
  EXPECT_TRUE(error_mentions(one_tensor({2, 2, 1ull << 62}, kF32, 0, 64).parse(),
                             {"dimension 2 = 4611686018427387904"}));
  EXPECT_TRUE(
      error_mentions(one_tensor({k2p63}, kF32, 0, 64).parse(), {"dimension 0 = 9223372036854775808"}));
  EXPECT_TRUE(
      error_mentions(one_tensor({kMaxU64}, kF32, 0, 64).parse(), {"dimension 0 = 18446744073709551615"}));
  // Fits in int64 elements, but not in bytes: still an error, never a wrapped size.
  EXPECT_TRUE(error_mentions(one_tensor({1ull << 62}, kF32, 0, 64).parse(), {"tensor 'w'"}));
  EXPECT_TRUE(error_mentions(one_tensor({8, 0}, kF32, 0, 64).parse(), {"tensor 'w' dimension 1 is zero"}));
  EXPECT_TRUE(error_mentions(one_tensor({33}, kQ8_0, 0, 64).parse(),
                             {"row length 33 is not a multiple of the q8_0 block size 32"}));
}

TEST(GgufMalformed, ZeroOrMoreThanFourDimensions) {
  EXPECT_TRUE(error_mentions(one_tensor({}, kF32, 0, 64).parse(),
                             {"tensor 'w' has 0 dimensions (1 to 4 allowed)", "(at byte offset 33)"}));
  EXPECT_TRUE(
      error_mentions(one_tensor({1, 1, 1, 1, 1}, kF32, 0, 64).parse(), {"tensor 'w' has 5 dimensions"}));
  GgufBytes huge_dims;
  huge_dims.header(1, 0).str("w").u32(0xffffffffu).zeros(64);
  EXPECT_TRUE(error_mentions(huge_dims.parse(), {"has 4294967295 dimensions"}));
  auto four = one_tensor({1, 2, 3, 4}, kF32, 0, 96).parse();
  ASSERT_TRUE(four) << four.error().message();
  EXPECT_EQ(four->tensors()[0].shape_string(), "[1, 2, 3, 4]");
}

TEST(GgufMalformed, InvalidNames) {
  for (std::string_view bad :
       {std::string_view("\xff\xfe"), std::string_view("a\xc0\x80"),          // overlong NUL
        std::string_view("\xed\xa0\x80"), std::string_view("ab\xe2\x82")}) {  // surrogate, cut
    SCOPED_TRACE(::testing::PrintToString(std::string(bad)));
    GgufBytes key;
    key.header(0, 1).str(bad).type(GgufType::kUint8).u8(1);
    EXPECT_TRUE(error_mentions(key.parse(), {"metadata key 0", "is not valid UTF-8", "(at byte offset 24)"}));
    GgufBytes tensor = one_tensor({8}, kF32, 0, 32);
    tensor.bytes()[32] = '\xff';  // the name "w"
    EXPECT_TRUE(
        error_mentions(tensor.parse(), {"tensor 0 name '\\xff' is not valid UTF-8", "(at byte offset 24)"}));
  }
  GgufBytes empty_key;
  empty_key.header(0, 1).str("").type(GgufType::kUint8).u8(1).zeros(8);
  EXPECT_TRUE(error_mentions(empty_key.parse(), {"metadata key 0 is empty", "(at byte offset 24)"}));
  GgufBytes empty_name;
  empty_name.header(1, 0).str("").u32(1).u64(8).u32(kF32).u64(0).pad_to(32).zeros(32);
  EXPECT_TRUE(error_mentions(empty_name.parse(), {"tensor 0 name is empty"}));
  GgufBytes long_key;
  long_key.header(0, 1).str(std::string(70000, 'k')).type(GgufType::kUint8).u8(1);
  EXPECT_TRUE(error_mentions(long_key.parse(), {"metadata key 0 is 70000 bytes long (at most 65536)"}));
  // Valid multi-byte UTF-8 is fine.
  GgufBytes unicode;
  unicode.header(0, 1).str("名前.ü").type(GgufType::kUint8).u8(1);
  EXPECT_TRUE(unicode.parse());
}

TEST(GgufMalformed, DuplicateKeysAndTensorNames) {
  GgufBytes keys;
  keys.header(0, 2).key("general.name", GgufType::kString).str("a");
  keys.key("general.name", GgufType::kUint32).u32(1);
  EXPECT_TRUE(
      error_mentions(keys.parse(), {"metadata key 'general.name' appears twice", "(at byte offset 57)"}));
  GgufBytes tensors;
  tensors.header(2, 0).tensor_info("w", {8}, kF32, 0).tensor_info("w", {8}, kF32, 32).pad_to(32).zeros(64);
  EXPECT_TRUE(error_mentions(tensors.parse(), {"tensor name 'w' appears twice", "(at byte offset 57)"}));
}

TEST(GgufMalformed, BadAlignment) {
  for (uint32_t alignment : {0u, 3u, 48u, 0x80000001u}) {
    GgufBytes b;
    b.header(0, 1).key("general.alignment", GgufType::kUint32).u32(alignment);
    EXPECT_TRUE(error_mentions(b.parse(), {concat("general.alignment ", alignment, " is not a power of two"),
                                           "(at byte offset 53)"}));
  }
  GgufBytes as_int;
  as_int.header(0, 1).key("general.alignment", GgufType::kInt32).u32(32);
  EXPECT_TRUE(
      error_mentions(as_int.parse(), {"general.alignment is int32, expected uint32", "(at byte offset 53)"}));
  GgufBytes as_u64;
  as_u64.header(0, 1).key("general.alignment", GgufType::kUint64).u64(32);
  EXPECT_TRUE(error_mentions(as_u64.parse(), {"general.alignment is uint64, expected uint32"}));
  GgufBytes as_string;
  as_string.header(0, 1).key("general.alignment", GgufType::kString).str("32");
  EXPECT_TRUE(error_mentions(as_string.parse(), {"general.alignment is string, expected uint32"}));
  GgufBytes as_array;
  as_array.header(0, 1).key("general.alignment", GgufType::kArray).array_header(GgufType::kUint32, 1).u32(32);
  EXPECT_TRUE(error_mentions(as_array.parse(), {"general.alignment is array of uint32, expected uint32"}));
  // A large power of two is valid; with no tensors no data section is needed.
  GgufBytes large;
  large.header(0, 1).key("general.alignment", GgufType::kUint32).u32(1u << 31);
  auto file = large.parse();
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->alignment(), 1u << 31);
  // ... but with a tensor the data section would start past the end of the file.
  GgufBytes large_with_tensor;
  large_with_tensor.header(1, 1).key("general.alignment", GgufType::kUint32).u32(1u << 31);
  large_with_tensor.tensor_info("w", {8}, kF32, 0).zeros(64);
  EXPECT_TRUE(error_mentions(large_with_tensor.parse(),
                             {"file ends before its data section", "starts at byte offset 2147483648"}));
}

TEST(GgufMalformed, EmptyFileWithHeaderOnlyIsValid) {
  GgufBytes b;
  b.header(0, 0);
  auto file = b.parse();
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_TRUE(file->tensors().empty());
  EXPECT_EQ(file->metadata().size(), 0u);
}

}  // namespace
}  // namespace sinter
