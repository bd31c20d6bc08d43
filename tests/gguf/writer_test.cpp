// The writer: byte-exact output for small files, alignment, atomic replacement, and refusal of
// anything the reader would reject.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_bytes.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::error_mentions;
using testing::GgufBytes;

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<uint8_t> f32_bytes(std::initializer_list<float> values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

TEST(GgufWriter, SmallFileIsByteExactlyWhatTheSpecificationSays) {
  const std::string path = testing::scratch_dir() + "/small.gguf";
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  writer.metadata().set("n", GgufValue::of_u32(7));
  ASSERT_TRUE(writer.add_tensor_bytes("a", DType::F32, {3}, f32_bytes({1.f, 2.f, 3.f})));
  ASSERT_TRUE(writer.add_tensor_bytes("b", DType::F32, {2}, f32_bytes({-1.f, 0.5f})));
  ASSERT_TRUE(writer.write(path));
  const std::vector<uint8_t> written = read_bytes(path);

  // The v3 header, spelled out: magic "GGUF", version 3, 2 tensors, 2 metadata entries.
  const std::vector<uint8_t> header = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 2, 0, 0, 0,
                                       0,   0,   0,   0,   2, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_GE(written.size(), header.size());
  EXPECT_EQ(std::vector<uint8_t>(written.begin(), written.begin() + 24), header);

  GgufBytes expected;
  expected.header(2, 2);
  expected.str("general.architecture").type(GgufType::kString).str("llama");  // 8+20, 4, 8+5
  expected.str("n").type(GgufType::kUint32).u32(7);                           // 8+1, 4, 4
  expected.tensor_info("a", {3}, 0, 0);   // data offsets are relative to the data section
  expected.tensor_info("b", {2}, 0, 32);  // a's 12 bytes padded to the 32-byte alignment
  ASSERT_EQ(expected.size(), 24 + 45 + 17 + 33 + 33u);
  expected.zeros(160 - expected.size());  // the data section starts at 160, the next multiple of 32
  for (uint8_t byte : f32_bytes({1.f, 2.f, 3.f})) expected.u8(byte);
  expected.zeros(20);
  for (uint8_t byte : f32_bytes({-1.f, 0.5f})) expected.u8(byte);
  expected.zeros(24);  // the last tensor is padded too
  EXPECT_EQ(written, expected.bytes());
  EXPECT_EQ(written.size(), 224u);

  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_FALSE(file->metadata().contains("general.alignment"));  // default alignment: not written
  EXPECT_EQ(file->find_tensor("b")->file_offset, 192u);
}

TEST(GgufWriter, CustomAlignment) {
  const std::string dir = testing::scratch_dir();
  for (uint32_t alignment : {1u, 8u, 64u, 4096u}) {
    SCOPED_TRACE(alignment);
    const std::string path = dir + "/aligned-" + std::to_string(alignment) + ".gguf";
    GgufWriter writer;
    writer.set_alignment(alignment);
    writer.metadata().set("general.name", GgufValue::of_string("x"));
    ASSERT_TRUE(writer.add_tensor_bytes("a", DType::F32, {3}, f32_bytes({1.f, 2.f, 3.f})));
    ASSERT_TRUE(writer.add_tensor_bytes("b", DType::F16, {2}, {1, 2, 3, 4}));
    ASSERT_TRUE(writer.write(path));
    const std::vector<uint8_t> written = read_bytes(path);

    GgufBytes expected;
    expected.header(2, 2);
    expected.str("general.name").type(GgufType::kString).str("x");
    expected.str("general.alignment").type(GgufType::kUint32).u32(alignment);  // appended last
    const uint64_t b_offset = (12 + alignment - 1) / alignment * alignment;
    expected.tensor_info("a", {3}, 0, 0).tensor_info("b", {2}, 1, b_offset).pad_to(alignment).mark("data");
    for (uint8_t byte : f32_bytes({1.f, 2.f, 3.f})) expected.u8(byte);
    expected.pad_to(alignment).raw("\x01\x02\x03\x04").pad_to(alignment);
    EXPECT_EQ(written, expected.bytes());

    auto file = GgufFile::open(path);
    ASSERT_TRUE(file) << file.error().message();
    EXPECT_EQ(file->alignment(), alignment);
    EXPECT_EQ(*file->metadata().get<uint32_t>("general.alignment"), alignment);
    EXPECT_EQ(file->tensors()[0].file_offset, expected.at("data"));
    EXPECT_EQ(file->tensors()[1].file_offset % alignment, 0u);
    EXPECT_EQ(file->tensors()[1].data[3], 4);
  }
}

TEST(GgufWriter, AlignmentKeyAlreadyInTheMetadataIsWrittenInPlaceWithTheValueUsed) {
  const std::string path = testing::scratch_dir() + "/copied.gguf";
  GgufWriter writer;
  writer.metadata().set("general.alignment", GgufValue::of_u32(64));  // e.g. copied from another file
  writer.metadata().set("general.name", GgufValue::of_string("x"));
  writer.set_alignment(16);
  ASSERT_TRUE(writer.add_tensor_bytes("a", DType::F32, {1}, f32_bytes({1.f})));
  ASSERT_TRUE(writer.write(path));
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->alignment(), 16u);
  EXPECT_EQ(file->metadata().entries().front().first, "general.alignment");
  EXPECT_EQ(*file->metadata().get<uint32_t>("general.alignment"), 16u);
  // The writer's own metadata is left as the caller set it.
  EXPECT_EQ(*writer.metadata().get<uint32_t>("general.alignment"), 64u);
}

TEST(GgufWriter, BadAlignmentIsRefusedBeforeAnythingIsWritten) {
  const std::string dir = testing::scratch_dir();
  for (uint32_t alignment : {0u, 3u, 48u}) {
    GgufWriter writer;
    writer.set_alignment(alignment);
    EXPECT_TRUE(error_mentions(writer.write(dir + "/bad.gguf"),
                               {concat("GGUF alignment ", alignment, " is not a power of two")},
                               ErrorCode::kInvalidArgument));
  }
  EXPECT_TRUE(files_in(dir).empty());
}

Result<std::vector<uint8_t>> failing_source() { return make_error(ErrorCode::kIo, "source failed"); }

TEST(GgufWriter, FailedWriteLeavesNoFileAndNoTemporary) {
  const std::string dir = testing::scratch_dir();
  GgufWriter writer;
  ASSERT_TRUE(writer.add_tensor_bytes("ok", DType::F32, {4}, std::vector<uint8_t>(16)));
  ASSERT_TRUE(writer.add_tensor("x", DType::F32, {4}, failing_source));
  EXPECT_TRUE(
      error_mentions(writer.write(dir + "/never.gguf"), {"tensor 'x': source failed"}, ErrorCode::kIo));
  EXPECT_TRUE(files_in(dir).empty());

  GgufWriter short_source;
  ASSERT_TRUE(short_source.add_tensor_bytes("w", DType::F32, {4}, std::vector<uint8_t>(15)));
  EXPECT_TRUE(error_mentions(short_source.write(dir + "/never.gguf"),
                             {"tensor 'w' source produced 15 bytes, expected 16"},
                             ErrorCode::kInvalidArgument));
  EXPECT_TRUE(files_in(dir).empty());

  GgufWriter fine;
  EXPECT_TRUE(error_mentions(fine.write(dir + "/no/such/folder/x.gguf"), {"no/such/folder"}, ErrorCode::kIo));
}

TEST(GgufWriter, FailedWriteNeverHalfWritesAnExistingTarget) {
  const std::string dir = testing::scratch_dir();
  const std::string path = dir + "/model.gguf";
  GgufWriter original;
  original.metadata().set("general.name", GgufValue::of_string("original"));
  ASSERT_TRUE(original.add_tensor_bytes("w", DType::F32, {8}, std::vector<uint8_t>(32, 0xab)));
  ASSERT_TRUE(original.write(path));
  const std::vector<uint8_t> before = read_bytes(path);

  // The replacement fails after its header and first tensor have been written.
  GgufWriter replacement;
  replacement.metadata().set("general.name", GgufValue::of_string("replacement"));
  ASSERT_TRUE(replacement.add_tensor_bytes("first", DType::F32, {1024}, std::vector<uint8_t>(4096, 1)));
  ASSERT_TRUE(replacement.add_tensor("second", DType::F32, {4}, failing_source));
  size_t progress_calls = 0;
  EXPECT_FALSE(replacement.write(path, [&](size_t, size_t) { ++progress_calls; }));
  EXPECT_EQ(progress_calls, 1u);
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"model.gguf"});

  // A successful write replaces it whole.
  GgufWriter good;
  good.metadata().set("general.name", GgufValue::of_string("new"));
  ASSERT_TRUE(good.write(path));
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(*file->metadata().get<std::string>("general.name"), "new");
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"model.gguf"});
}

TEST(GgufWriter, EveryValueTypeRoundTrips) {
  const std::string path = testing::scratch_dir() + "/values.gguf";
  GgufWriter writer;
  Metadata& m = writer.metadata();
  m.set("u8", GgufValue::of(uint8_t{255}));
  m.set("i8", GgufValue::of(int8_t{-128}));
  m.set("u16", GgufValue::of(uint16_t{65535}));
  m.set("i16", GgufValue::of(int16_t{-32768}));
  m.set("u32", GgufValue::of(uint32_t{4294967295u}));
  m.set("i32", GgufValue::of(int32_t{-2147483647 - 1}));
  m.set("u64", GgufValue::of(~uint64_t{0}));
  m.set("i64", GgufValue::of(int64_t{-1}));
  m.set("f32", GgufValue::of(-0.125f));
  m.set("f64", GgufValue::of(1e-300));
  m.set("bool", GgufValue::of(false));
  m.set("string", GgufValue::of_string(std::string("with\0nul", 8)));
  m.set("strings", GgufValue::of_strings({"", "ü", std::string(1000, 'x')}));
  m.set("bools", GgufValue::of_array(GgufArray::of(std::vector<bool>{true, false})));
  m.set("u16s", GgufValue::of_array(GgufArray::of(std::vector<uint16_t>{1, 2, 3})));
  m.set("f64s", GgufValue::of_array(GgufArray::of(std::vector<double>{0.5, -0.25})));
  m.set("nested", GgufValue::of_array(GgufArray::of_arrays(
                      {GgufArray::of(std::vector<std::string>{"a"}), GgufArray::of(std::vector<int64_t>{}),
                       GgufArray::of_arrays({GgufArray::of(std::vector<uint8_t>{9})})})));
  ASSERT_TRUE(writer.write(path));
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->metadata().entries(), m.entries());
}

TEST(GgufWriter, RefusesTensorsTheReaderWouldReject) {
  GgufWriter writer;
  const auto add = [&](std::string name, DType type, std::vector<int64_t> shape) {
    return writer.add_tensor(std::move(name), type, std::move(shape), failing_source);
  };
  ASSERT_TRUE(add("w", DType::F32, {4}));
  EXPECT_TRUE(
      error_mentions(add("w", DType::F32, {4}), {"tensor 'w' added twice"}, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(
      error_mentions(add("", DType::F32, {4}), {"tensor name is empty"}, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(
      error_mentions(add("\xff", DType::F32, {4}), {"is not valid UTF-8"}, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(
      error_mentions(add("x", DType::F32, {}), {"tensor 'x' has 0 dimensions"}, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(error_mentions(add("x", DType::F32, {1, 1, 1, 1, 1}), {"has 5 dimensions"},
                             ErrorCode::kInvalidArgument));
  EXPECT_TRUE(error_mentions(add("x", DType::F32, {4, 0}), {"dimension 1 = 0 is not positive"},
                             ErrorCode::kInvalidArgument));
  EXPECT_TRUE(error_mentions(add("x", DType::F32, {-4}), {"dimension 0 = -4"}, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(error_mentions(add("x", DType::F32, {1ll << 32, 1ll << 32}), {"overflow"},
                             ErrorCode::kInvalidArgument));
  EXPECT_TRUE(error_mentions(add("x", DType::F32, {1ll << 62}), {"byte size overflows"},
                             ErrorCode::kInvalidArgument));
  EXPECT_TRUE(error_mentions(add("x", DType::Q4_0, {48}),
                             {"row length 48 is not a multiple of the q4_0 block size 32"},
                             ErrorCode::kInvalidArgument));
  EXPECT_TRUE(add("x", DType::Q4_0, {64, 3}));
}

TEST(GgufWriter, RefusesMetadataTheReaderWouldReject) {
  const std::string dir = testing::scratch_dir();
  const auto write_with = [&](const std::string& key, GgufValue value) {
    GgufWriter writer;
    writer.metadata().set(key, std::move(value));
    return writer.write(dir + "/m.gguf");
  };
  const auto refused = [&](const std::string& key, GgufValue value, std::string_view why) {
    return error_mentions(write_with(key, std::move(value)), {why}, ErrorCode::kInvalidArgument);
  };
  EXPECT_TRUE(refused("", GgufValue::of_u32(1), "metadata key is empty"));
  EXPECT_TRUE(refused("bad\xc3", GgufValue::of_u32(1), "metadata key 'bad\\xc3' is not valid UTF-8"));
  EXPECT_TRUE(refused("k", GgufValue{GgufType::kUint8, uint64_t{300}},
                      "metadata key 'k' holds 300, which does not fit in uint8"));
  EXPECT_TRUE(refused("k", GgufValue{GgufType::kInt16, int64_t{-40000}},
                      "holds -40000, which does not fit in int16"));
  EXPECT_TRUE(refused("k", GgufValue{GgufType::kInt32, uint64_t{1}},
                      "'k' is declared int32 but holds a value of another kind"));
  EXPECT_TRUE(refused("k", GgufValue{GgufType::kString, 1.5}, "is declared string but holds"));
  EXPECT_TRUE(refused("k", GgufValue{static_cast<GgufType>(13), uint64_t{1}}, "'k' has unknown type 13"));
  GgufArray bools;
  bools.element_type = GgufType::kBool;
  bools.scalar_bytes = {0, 2};
  EXPECT_TRUE(refused("k", GgufValue::of_array(bools), "is an array of bool holding the byte 2"));
  GgufArray ragged;
  ragged.element_type = GgufType::kUint32;
  ragged.scalar_bytes = {1, 2, 3};
  EXPECT_TRUE(refused("k", GgufValue::of_array(ragged), "array of uint32 with 3 bytes, not a multiple of 4"));
  GgufArray mixed = GgufArray::of(std::vector<std::string>{"a"});
  mixed.scalar_bytes = {1};
  EXPECT_TRUE(refused("k", GgufValue::of_array(mixed), "holding elements of another kind"));
  GgufArray unknown;
  unknown.element_type = static_cast<GgufType>(99);
  EXPECT_TRUE(refused("k", GgufValue::of_array(unknown), "is an array of unknown element type 99"));

  GgufArray deep = GgufArray::of(std::vector<uint8_t>{1});
  for (int depth = 1; depth < kGgufMaxArrayDepth; ++depth) deep = GgufArray::of_arrays({deep});
  EXPECT_TRUE(write_with("deep", GgufValue::of_array(deep)));  // 8 levels: the most the reader takes
  EXPECT_TRUE(
      refused("deep", GgufValue::of_array(GgufArray::of_arrays({deep})), "nested deeper than 8 levels"));
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"m.gguf"});
}

}  // namespace
}  // namespace sinter
