// Typed access to metadata: integers convert between widths when they fit, integers read as
// floats; everything else is an error naming the key, the stored type and the asked type.
#include "gguf/metadata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gguf_bytes.h"

namespace sinter {
namespace {

using testing::error_mentions;

Metadata sample_metadata() {
  Metadata m;
  m.set("u8", GgufValue::of(uint8_t{200}));
  m.set("i8", GgufValue::of(int8_t{-100}));
  m.set("u16", GgufValue::of(uint16_t{60000}));
  m.set("i16", GgufValue::of(int16_t{-300}));
  m.set("u32", GgufValue::of(uint32_t{4000000000u}));
  m.set("i32", GgufValue::of(int32_t{-5}));
  m.set("u64", GgufValue::of(uint64_t{1} << 40));
  m.set("u64max", GgufValue::of(std::numeric_limits<uint64_t>::max()));
  m.set("i64min", GgufValue::of(std::numeric_limits<int64_t>::min()));
  m.set("f32", GgufValue::of(0.25f));
  m.set("f64", GgufValue::of(1e300));
  m.set("bool", GgufValue::of(true));
  m.set("string", GgufValue::of_string("4096"));
  m.set("strings", GgufValue::of_strings({"<unk>", "<s>", "</s>", "▁the"}));
  m.set("floats", GgufValue::of_f32s({0.f, -1.5f, 3.25f}));
  m.set("ints", GgufValue::of_i32s({1, 300, -2}));
  m.set("u64s", GgufValue::of_array(GgufArray::of(std::vector<uint64_t>{1, 1ull << 33})));
  m.set("nested", GgufValue::of_array(GgufArray::of_arrays({GgufArray::of(std::vector<int32_t>{1, 2}),
                                                            GgufArray::of(std::vector<int32_t>{3, -4})})));
  m.set("mixed_nested", GgufValue::of_array(GgufArray::of_arrays({GgufArray::of(std::vector<int32_t>{1}),
                                                                  GgufArray::of(std::vector<float>{2.5f})})));
  return m;
}

TEST(GgufTypedAccess, IntegersConvertBetweenWidthsWhenTheyFit) {
  const Metadata m = sample_metadata();
  EXPECT_EQ(*m.get<uint8_t>("u8"), 200);
  EXPECT_EQ(*m.get<int16_t>("u8"), 200);
  EXPECT_EQ(*m.get<uint32_t>("u8"), 200u);
  EXPECT_EQ(*m.get<int64_t>("u8"), 200);
  EXPECT_EQ(*m.get<int8_t>("i8"), -100);
  EXPECT_EQ(*m.get<int32_t>("i8"), -100);
  EXPECT_EQ(*m.get<uint16_t>("u16"), 60000);
  EXPECT_EQ(*m.get<int32_t>("u16"), 60000);
  EXPECT_EQ(*m.get<int16_t>("i16"), -300);
  EXPECT_EQ(*m.get<uint32_t>("u32"), 4000000000u);
  EXPECT_EQ(*m.get<int64_t>("u32"), 4000000000);
  EXPECT_EQ(*m.get<uint64_t>("u32"), 4000000000u);
  EXPECT_EQ(*m.get<int8_t>("i32"), -5);
  EXPECT_EQ(*m.get<int64_t>("i32"), -5);
  EXPECT_EQ(*m.get<uint64_t>("u64"), 1ull << 40);
  EXPECT_EQ(*m.get<int64_t>("u64"), 1ll << 40);
  EXPECT_EQ(*m.get<uint64_t>("u64max"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(*m.get<int64_t>("i64min"), std::numeric_limits<int64_t>::min());
}

TEST(GgufTypedAccess, IntegersOutOfRangeNameKeyStoredTypeValueAndAskedType) {
  const Metadata m = sample_metadata();
  EXPECT_TRUE(
      error_mentions(m.get<int8_t>("u8"), {"metadata key 'u8' is uint8 200, which does not fit in int8"}));
  EXPECT_TRUE(
      error_mentions(m.get<uint8_t>("i8"), {"metadata key 'i8' is int8 -100, which does not fit in uint8"}));
  EXPECT_TRUE(error_mentions(m.get<int16_t>("u16"), {"'u16' is uint16 60000, which does not fit in int16"}));
  EXPECT_TRUE(error_mentions(m.get<int8_t>("i16"), {"'i16' is int16 -300, which does not fit in int8"}));
  EXPECT_TRUE(
      error_mentions(m.get<int32_t>("u32"), {"'u32' is uint32 4000000000, which does not fit in int32"}));
  EXPECT_TRUE(error_mentions(m.get<uint32_t>("i32"), {"'i32' is int32 -5, which does not fit in uint32"}));
  EXPECT_TRUE(error_mentions(m.get<uint64_t>("i32"), {"'i32' is int32 -5, which does not fit in uint64"}));
  EXPECT_TRUE(error_mentions(m.get<uint32_t>("u64"),
                             {"'u64' is uint64 1099511627776, which does not fit in uint32"}));
  EXPECT_TRUE(error_mentions(m.get<int64_t>("u64max"),
                             {"is uint64 18446744073709551615, which does not fit in int64"}));
  EXPECT_TRUE(error_mentions(m.get<int32_t>("i64min"),
                             {"is int64 -9223372036854775808, which does not fit in int32"}));
}

TEST(GgufTypedAccess, IntegersReadAsFloats) {
  const Metadata m = sample_metadata();
  EXPECT_EQ(*m.get<float>("i32"), -5.f);
  EXPECT_EQ(*m.get<double>("u32"), 4000000000.0);
  EXPECT_EQ(*m.get<double>("u64max"), 18446744073709551615.0);  // rounded to the nearest double
  EXPECT_EQ(*m.get<float>("i64min"), -9223372036854775808.f);
  EXPECT_EQ(*m.get<float>("f32"), 0.25f);
  EXPECT_EQ(*m.get<double>("f32"), 0.25);
  EXPECT_EQ(*m.get<double>("f64"), 1e300);
  // A float64 beyond float32's range is an error, not a silent infinity; infinities and NaN
  // stay what they are.
  EXPECT_TRUE(error_mentions(m.get<float>("f64"),
                             {"metadata key 'f64' is float64 1e+300, which does not fit in float32"}));
  Metadata special;
  special.set("inf", GgufValue::of(std::numeric_limits<double>::infinity()));
  special.set("nan", GgufValue::of(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_TRUE(std::isinf(*special.get<float>("inf")));
  EXPECT_TRUE(std::isnan(*special.get<float>("nan")));
}

TEST(GgufTypedAccess, EverythingElseIsAnErrorNamingKeyStoredAndAskedType) {
  const Metadata m = sample_metadata();
  EXPECT_TRUE(
      error_mentions(m.get<uint32_t>("string"), {"metadata key 'string' is string, expected uint32"}));
  EXPECT_TRUE(error_mentions(m.get<float>("string"), {"metadata key 'string' is string, expected float32"}));
  EXPECT_TRUE(error_mentions(m.get<int32_t>("f32"), {"metadata key 'f32' is float32, expected int32"}));
  EXPECT_TRUE(error_mentions(m.get<uint64_t>("f64"), {"metadata key 'f64' is float64, expected uint64"}));
  EXPECT_TRUE(error_mentions(m.get<std::string>("u32"), {"metadata key 'u32' is uint32, expected string"}));
  EXPECT_TRUE(error_mentions(m.get<int32_t>("bool"), {"metadata key 'bool' is bool, expected int32"}));
  EXPECT_TRUE(error_mentions(m.get<bool>("u8"), {"metadata key 'u8' is uint8, expected bool"}));
  EXPECT_TRUE(
      error_mentions(m.get<int32_t>("ints"), {"metadata key 'ints' is array of int32, expected int32"}));
  EXPECT_TRUE(
      error_mentions(m.get<std::string>("strings"), {"'strings' is array of string, expected string"}));
  EXPECT_TRUE(
      error_mentions(m.get<std::vector<int32_t>>("i32"), {"'i32' is int32, expected array of int32"}));
  EXPECT_TRUE(error_mentions(m.get<std::vector<std::string>>("string"),
                             {"'string' is string, expected array of string"}));
}

TEST(GgufTypedAccess, MissingKeys) {
  const Metadata m = sample_metadata();
  EXPECT_TRUE(error_mentions(m.get<uint32_t>("llama.block_count"),
                             {"metadata key 'llama.block_count' is missing"}, ErrorCode::kNotFound));
  auto missing = m.find<uint32_t>("llama.block_count");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(**m.find<uint32_t>("u8"), 200u);
  // find() still checks the type of a key that is there.
  EXPECT_TRUE(error_mentions(m.find<uint32_t>("string"), {"'string' is string, expected uint32"}));
  EXPECT_TRUE(error_mentions(m.get_array("nope"), {"'nope' is missing"}, ErrorCode::kNotFound));
}

TEST(GgufTypedAccess, ArraysOfStringsFloatsAndInts) {
  const Metadata m = sample_metadata();
  EXPECT_EQ(*m.get<std::vector<std::string>>("strings"),
            (std::vector<std::string>{"<unk>", "<s>", "</s>", "▁the"}));
  EXPECT_EQ(*m.get<std::vector<float>>("floats"), (std::vector<float>{0.f, -1.5f, 3.25f}));
  EXPECT_EQ(*m.get<std::vector<double>>("floats"), (std::vector<double>{0.0, -1.5, 3.25}));
  EXPECT_EQ(*m.get<std::vector<int32_t>>("ints"), (std::vector<int32_t>{1, 300, -2}));
  EXPECT_EQ(*m.get<std::vector<int64_t>>("ints"), (std::vector<int64_t>{1, 300, -2}));
  EXPECT_EQ(*m.get<std::vector<float>>("ints"), (std::vector<float>{1.f, 300.f, -2.f}));  // ints as floats
  EXPECT_EQ(*m.get<std::vector<uint64_t>>("u64s"), (std::vector<uint64_t>{1, 1ull << 33}));

  EXPECT_TRUE(error_mentions(m.get<std::vector<int32_t>>("floats"),
                             {"metadata key 'floats' is array of float32, expected array of int32"}));
  EXPECT_TRUE(error_mentions(m.get<std::vector<float>>("strings"),
                             {"metadata key 'strings' is array of string, expected array of float32"}));
  EXPECT_TRUE(error_mentions(m.get<std::vector<std::string>>("ints"),
                             {"metadata key 'ints' is array of int32, expected array of string"}));
  // An element out of range is named by its index.
  EXPECT_TRUE(error_mentions(m.get<std::vector<uint8_t>>("ints"),
                             {"metadata key 'ints' element [1] is int32 300, which does not fit in uint8"}));
  EXPECT_TRUE(error_mentions(m.get<std::vector<uint32_t>>("ints"), {"element [2] is int32 -2"}));
  EXPECT_TRUE(error_mentions(m.get<std::vector<int32_t>>("u64s"), {"element [1] is uint64 8589934592"}));
}

TEST(GgufTypedAccess, NestedArrays) {
  const Metadata m = sample_metadata();
  EXPECT_EQ(*m.get<std::vector<std::vector<int32_t>>>("nested"),
            (std::vector<std::vector<int32_t>>{{1, 2}, {3, -4}}));
  EXPECT_TRUE(error_mentions(m.get<std::vector<int32_t>>("nested"),
                             {"metadata key 'nested' is array of array, expected array of int32"}));
  EXPECT_TRUE(error_mentions(m.get<int32_t>("nested"), {"'nested' is array of array, expected int32"}));
  EXPECT_TRUE(
      error_mentions(m.get<std::vector<std::vector<std::string>>>("nested"),
                     {"metadata key 'nested' element [0] is array of int32, expected array of string"}));
  EXPECT_TRUE(error_mentions(
      m.get<std::vector<std::vector<int32_t>>>("mixed_nested"),
      {"metadata key 'mixed_nested' element [1] is array of float32, expected array of int32"}));
  EXPECT_TRUE(error_mentions(m.get<std::vector<std::vector<int32_t>>>("ints"),
                             {"'ints' is array of int32, expected array of array of int32"}));
  Metadata strings;
  strings.set("merges",
              GgufValue::of_array(GgufArray::of_arrays({GgufArray::of(std::vector<std::string>{"a", "b"})})));
  EXPECT_EQ(*strings.get<std::vector<std::vector<std::string>>>("merges"),
            (std::vector<std::vector<std::string>>{{"a", "b"}}));
}

TEST(GgufTypedAccess, NestedElementOutOfRangeNamesItsPath) {
  Metadata m;
  m.set("x", GgufValue::of_array(GgufArray::of_arrays(
                 {GgufArray::of(std::vector<int32_t>{1}), GgufArray::of(std::vector<int32_t>{2, -3})})));
  EXPECT_EQ(*m.get<std::vector<std::vector<float>>>("x"),
            (std::vector<std::vector<float>>{{1.f}, {2.f, -3.f}}));
  EXPECT_TRUE(error_mentions(m.get<std::vector<std::vector<uint32_t>>>("x"),
                             {"metadata key 'x' element [1][1] is int32 -3, which does not fit in uint32"}));
  const GgufArray* array = *m.get_array("x");
  ASSERT_EQ(array->size(), 2u);
  EXPECT_EQ(array->arrays[1].at(1), GgufValue::of(int32_t{-3}));
}

TEST(GgufTypedAccess, GetArrayGivesTheStoredArrayWithoutCopying) {
  const Metadata m = sample_metadata();
  auto strings = m.get_array("strings");
  ASSERT_TRUE(strings);
  EXPECT_EQ((*strings)->element_type, GgufType::kString);
  EXPECT_EQ((*strings)->size(), 4u);
  EXPECT_EQ(&(*strings)->strings, &std::get<GgufArray>(m.find_value("strings")->data).strings);
  auto floats = m.get_array("floats");
  ASSERT_TRUE(floats);
  EXPECT_EQ((*floats)->scalar_bytes.size(), 12u);  // three float32s, as in the file
  EXPECT_EQ((*floats)->at(2), GgufValue::of(3.25f));
  EXPECT_TRUE(error_mentions(m.get_array("u8"), {"metadata key 'u8' is uint8, expected array"}));
}

TEST(GgufMetadata, SetReplacesEraseKeepsOrder) {
  Metadata m;
  for (const char* key : {"a", "b", "c", "d"}) m.set(key, GgufValue::of_string(key));
  m.set("b", GgufValue::of_u32(2));
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(*m.get<uint32_t>("b"), 2u);
  EXPECT_TRUE(m.erase("b"));
  EXPECT_FALSE(m.erase("b"));
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.entries()[1].first, "c");
  // The index still finds the entries after the erased one.
  EXPECT_EQ(*m.get<std::string>("c"), "c");
  EXPECT_EQ(*m.get<std::string>("d"), "d");
  m.set("e", GgufValue::of_bool(false));
  EXPECT_EQ(m.entries().back().first, "e");
  EXPECT_EQ(*m.get<bool>("e"), false);
}

TEST(GgufMetadata, Display) {
  EXPECT_EQ(GgufValue::of_string("say \"hi\"\n").to_display(), "\"say \\\"hi\\\"\\n\"");
  EXPECT_EQ(GgufValue::of(int8_t{-7}).to_display(), "-7");
  EXPECT_EQ(GgufValue::of(true).to_display(), "true");
  EXPECT_EQ(GgufValue::of(0.1f).to_display(), "0.100000001");
  std::vector<int32_t> ten(10);
  for (int i = 0; i < 10; ++i) ten[i] = i;
  EXPECT_EQ(GgufValue::of_i32s(ten).to_display(), "[0, 1, 2, 3, 4, 5, 6, 7, ... (10 items)]");
  EXPECT_EQ(GgufValue::of_i32s(ten).to_display(2), "[0, 1, ... (10 items)]");
  EXPECT_EQ(GgufValue::of_strings({"a", "b"}).to_display(), "[\"a\", \"b\"]");
  EXPECT_EQ(GgufValue::of_array(GgufArray::of(std::vector<bool>{true, false})).to_display(), "[true, false]");
  EXPECT_EQ(GgufValue::of_array(GgufArray::of_arrays({})).to_display(), "[]");
  EXPECT_EQ(GgufValue::of_f32s({}).type_description(), "array of float32");
}

TEST(GgufMetadata, ArrayStorageIsCompact) {
  const GgufArray floats = GgufArray::of(std::vector<float>(150000, 1.5f));
  EXPECT_EQ(floats.size(), 150000u);
  EXPECT_EQ(floats.scalar_bytes.size(), 600000u);
  EXPECT_EQ(floats.at(149999), GgufValue::of(1.5f));
  const GgufArray bools = GgufArray::of(std::vector<bool>{true, false, true});
  EXPECT_EQ(bools.scalar_bytes, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(GgufArray::of(std::vector<int16_t>{-2}).at(0), GgufValue::of(int16_t{-2}));
  EXPECT_EQ(GgufArray::of(std::vector<uint16_t>{65535}).at(0).type, GgufType::kUint16);
  EXPECT_EQ(GgufArray::of(std::vector<double>{2.5}).at(0), GgufValue::of(2.5));
  EXPECT_EQ(GgufArray::of(std::vector<int64_t>{-1}).at(0), GgufValue::of(int64_t{-1}));
}

TEST(GgufMetadata, CppTypesMapToGgufTypesByWidthAndSign) {
  EXPECT_EQ(GgufValue::of(1ll << 40).type, GgufType::kInt64);  // long long is not int64_t's type
  EXPECT_EQ(GgufValue::of(1ull).type, GgufType::kUint64);
  EXPECT_EQ(GgufValue::of(static_cast<signed char>(-1)).type, GgufType::kInt8);
  EXPECT_EQ(GgufValue::of(static_cast<unsigned short>(1)).type, GgufType::kUint16);
  EXPECT_EQ(GgufValue::of(1).type, GgufType::kInt32);
  EXPECT_EQ(GgufValue::of(1u).type, GgufType::kUint32);
  EXPECT_EQ(GgufValue::of(1.0).type, GgufType::kFloat64);
  EXPECT_EQ(GgufValue::of(std::string("s")).type, GgufType::kString);
  EXPECT_EQ(*convert_value<int64_t>(GgufValue::of(-(1ll << 40)), "k"), -(1ll << 40));
}

}  // namespace
}  // namespace sinter
