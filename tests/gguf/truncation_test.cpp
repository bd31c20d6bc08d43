// Every prefix and every single-byte corruption of a valid file: an Error naming where (or a
// valid file, for corruptions that happen to make sense), never a crash or a read past the end.
#include <gtest/gtest.h>

#include <regex>

#include "gguf/gguf_file.h"
#include "gguf_bytes.h"

namespace sinter {
namespace {

using testing::error_mentions;
using testing::GgufBytes;
using testing::sample_gguf;

TEST(GgufSample, ParsesWithEveryValueType) {
  const GgufBytes b = sample_gguf();
  auto file = b.parse();
  ASSERT_TRUE(file) << file.error().message();
  const Metadata& m = file->metadata();
  EXPECT_EQ(m.size(), 17u);
  EXPECT_EQ(*m.get<std::string>("general.architecture"), "llama");
  EXPECT_EQ(*m.get<uint8_t>("t.u8"), 200);
  EXPECT_EQ(*m.get<int8_t>("t.i8"), -100);
  EXPECT_EQ(*m.get<uint16_t>("t.u16"), 60000);
  EXPECT_EQ(*m.get<int16_t>("t.i16"), -30000);
  EXPECT_EQ(*m.get<uint32_t>("t.u32"), 4000000000u);
  EXPECT_EQ(*m.get<int32_t>("t.i32"), -2000000000);
  EXPECT_EQ(*m.get<float>("t.f32"), 0.5f);
  EXPECT_EQ(*m.get<bool>("t.bool"), true);
  EXPECT_EQ(*m.get<uint64_t>("t.u64"), 1ull << 40);
  EXPECT_EQ(*m.get<int64_t>("t.i64"), -(1ll << 40));
  EXPECT_EQ(*m.get<double>("t.f64"), -2.25);
  EXPECT_EQ(*m.get<std::vector<std::string>>("t.strings"), (std::vector<std::string>{"a", "", "héllo"}));
  EXPECT_EQ(*m.get<std::vector<int32_t>>("t.ints"), (std::vector<int32_t>{1, -2, 3, -4}));
  EXPECT_EQ(m.find_value("t.nested")->to_display(), "[[1, 2], [\"x\"]]");
  EXPECT_TRUE(m.get<std::vector<float>>("t.empty")->empty());
  // File order is kept.
  EXPECT_EQ(m.entries().front().first, "general.architecture");
  EXPECT_EQ(m.entries().back().first, "general.alignment");

  ASSERT_EQ(file->tensors().size(), 3u);
  const auto& a = file->tensors()[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{8, 2}));
  EXPECT_EQ(a.bytes, 64u);
  EXPECT_EQ(a.file_offset, b.at("data"));
  EXPECT_EQ(a.data, file->tensors()[0].data);
  EXPECT_EQ(a.data[63], 63);
  const auto* q = file->find_tensor("b");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, DType::Q8_0);
  EXPECT_EQ(q->bytes, 34u);
  EXPECT_EQ(q->file_offset, b.at("data") + 64);
  EXPECT_EQ(q->data[0], 0x11);
  const auto* c = file->find_tensor("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->file_offset + c->bytes, b.size());
  EXPECT_EQ(c->data[7], 0x22);
  EXPECT_EQ(file->find_tensor("d"), nullptr);
}

// The byte offset in "(at byte offset N)", or -1 if the message has none of that form.
int64_t reported_offset(const std::string& message) {
  static const std::regex pattern(R"(\(at byte offset (\d+)\))");
  std::smatch match;
  if (!std::regex_search(message, match, pattern)) return -1;
  return std::stoll(match[1].str());
}

TEST(GgufTruncation, EveryPrefixUpToTheLastTensorByteIsAnError) {
  const GgufBytes b = sample_gguf();
  for (size_t length = 0; length < b.at("data_end"); ++length) {
    SCOPED_TRACE(concat("truncated to ", length, " bytes"));
    auto file = b.parse(length);
    ASSERT_TRUE(error_mentions(file, {"test.gguf: ", "byte offset"}));
    const std::string& message = file.error().message();
    if (length < b.at("infos_end")) {
      // Inside header, metadata or tensor infos: the reader says where it stopped, never past the cut.
      const int64_t offset = reported_offset(message);
      ASSERT_GE(offset, 0) << message;
      EXPECT_LE(static_cast<size_t>(offset), length) << message;
    } else if (length < b.at("data")) {
      EXPECT_NE(message.find("file ends before its data section"), std::string::npos) << message;
    } else {
      // Inside the data section: the message names the tensor that does not fit.
      EXPECT_NE(message.find("tensor '"), std::string::npos) << message;
      EXPECT_NE(message.find("holds only " + std::to_string(length - b.at("data")) + " bytes"),
                std::string::npos)
          << message;
    }
  }
  EXPECT_TRUE(b.parse(b.at("data_end")));
}

TEST(GgufTruncation, CutInsideEachSectionNamesWhatWasBeingRead) {
  const GgufBytes b = sample_gguf();
  const auto cut_at = [&](size_t length) { return b.parse(length); };
  EXPECT_TRUE(error_mentions(cut_at(2), {"file ends inside the magic number", "(at byte offset 0)"}));
  EXPECT_TRUE(error_mentions(cut_at(6), {"file ends inside the version", "(at byte offset 4)"}));
  EXPECT_TRUE(error_mentions(cut_at(12), {"file ends inside the tensor count", "(at byte offset 8)"}));
  EXPECT_TRUE(
      error_mentions(cut_at(20), {"file ends inside the metadata entry count", "(at byte offset 16)"}));
  // The counts are checked against what remains before anything else is read.
  EXPECT_TRUE(error_mentions(cut_at(100), {"cannot fit in the 76 bytes that remain"}));

  // Cut each metadata entry right after its type, moved to be the file's only entry.
  for (const char* key :
       {"general.architecture", "t.u8", "t.i8", "t.u16", "t.i16", "t.u32", "t.i32", "t.f32", "t.bool",
        "t.u64", "t.i64", "t.f64", "t.strings", "t.ints", "t.nested", "t.empty", "general.alignment"}) {
    SCOPED_TRACE(key);
    GgufBytes truncated = b;
    truncated.bytes().resize(b.at(std::string("value:") + key));
    truncated.patch<uint64_t>(8, 0).patch<uint64_t>(16, 1);
    truncated.bytes().erase(
        truncated.bytes().begin() + 24,
        truncated.bytes().begin() + static_cast<std::ptrdiff_t>(b.at(std::string("kv:") + key)));
    EXPECT_TRUE(
        error_mentions(truncated.parse(), {"file ends inside", std::string("metadata key '") + key + "'",
                                           concat("(at byte offset ", truncated.size(), ")")}));
  }
  // Inside an array's elements.
  EXPECT_TRUE(
      error_mentions(cut_at(b.at("value:t.strings") + 12 + 9 + 8 + 8 + 2),
                     {"an array element of metadata key 't.strings' has length 6 but only 2 bytes remain"}));
  EXPECT_TRUE(error_mentions(cut_at(b.at("value:t.ints") + 12 + 5),
                             {"metadata key 't.ints' declares an array of 4 int32 elements but only"}));

  // Inside a tensor info, after its name: the message names the tensor.
  EXPECT_TRUE(error_mentions(cut_at(b.at("tensor:b") + 8 + 1 + 2), {"the dimension count of tensor 'b'"}));
  EXPECT_TRUE(error_mentions(cut_at(b.at("tensor:b") + 8 + 1 + 4 + 3), {"a dimension of tensor 'b'"}));
  EXPECT_TRUE(error_mentions(cut_at(b.at("tensor:b") + 8 + 1 + 4 + 8 + 1), {"the type of tensor 'b'"}));
  EXPECT_TRUE(
      error_mentions(cut_at(b.at("tensor:b") + 8 + 1 + 4 + 8 + 4), {"the data offset of tensor 'b'"}));
  EXPECT_TRUE(error_mentions(cut_at(b.at("tensor:b") + 5), {"a tensor name"}));
  // Inside the data: the tensor, its extent and the data section's size.
  EXPECT_TRUE(error_mentions(cut_at(b.at("data") + 100),
                             {"tensor 'c' [4] f16 needs 8 bytes at data offset 128", "holds only 100 bytes",
                              concat("from byte offset ", b.at("data"))}));
  EXPECT_TRUE(
      error_mentions(cut_at(b.at("data") + 10), {"tensor 'a' [8, 2] f32 needs 64 bytes at data offset 0"}));
}

TEST(GgufCorruption, EverySingleByteChangeIsHandled) {
  const GgufBytes b = sample_gguf();
  size_t errors = 0;
  size_t parsed = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      GgufBytes corrupted = b;
      corrupted.bytes()[i] ^= mask;
      auto file = corrupted.parse();
      if (!file) {
        ++errors;
        EXPECT_EQ(file.error().code(), ErrorCode::kFormat) << file.error().message();
        EXPECT_NE(file.error().message().find("test.gguf: "), std::string::npos) << file.error().message();
        continue;
      }
      ++parsed;
      // What parsed must be safe to use: every tensor lies inside the buffer.
      for (const auto& t : file->tensors()) {
        ASSERT_LE(t.file_offset + t.bytes, corrupted.size());
      }
      for (const auto& [key, value] : file->metadata().entries()) (void)value.to_display();
    }
  }
  EXPECT_GT(errors, 0u);
  EXPECT_GT(parsed, 0u);  // changes inside values and tensor data still parse
}

}  // namespace
}  // namespace sinter
