#include <gtest/gtest.h>

#include <cstring>

#include "core/mapped_file.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

TEST(GgufRoundTrip, MetadataAndTensorsSurviveWriteAndRead) {
  const std::string path = testing::scratch_dir() + "/model.gguf";
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  writer.metadata().set("llama.block_count", GgufValue::of_u32(5));
  writer.metadata().set("scores", GgufValue::of_f32s({0.5f, -1.25f}));
  writer.metadata().set(
      "nested", GgufValue::of_array(GgufArray::of_arrays(
                    {GgufArray::of(std::vector<int32_t>{1, 2}), GgufArray::of(std::vector<int32_t>{3})})));
  std::vector<uint8_t> data(64 * 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
  ASSERT_TRUE(writer.add_tensor_bytes("a", DType::F32, {16, 4}, data));
  ASSERT_TRUE(writer.add_tensor_bytes("b", DType::Q8_0, {32}, std::vector<uint8_t>(34, 7)));
  ASSERT_TRUE(writer.write(path));

  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(*file->metadata().get<std::string>("general.architecture"), "llama");
  EXPECT_EQ(*file->metadata().get<uint32_t>("llama.block_count"), 5u);
  EXPECT_EQ(*file->metadata().get<uint64_t>("llama.block_count"), 5u);
  EXPECT_EQ(*file->metadata().get<std::vector<float>>("scores"), (std::vector<float>{0.5f, -1.25f}));
  const auto* nested_value = file->metadata().find_value("nested");
  ASSERT_NE(nested_value, nullptr);
  EXPECT_EQ(nested_value->to_display(), "[[1, 2], [3]]");

  ASSERT_EQ(file->tensors().size(), 2u);
  const auto* a = file->find_tensor("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{16, 4}));
  EXPECT_EQ(a->bytes, 256u);
  EXPECT_EQ(std::memcmp(a->data, data.data(), data.size()), 0);
  EXPECT_EQ(a->file_offset % 32, 0u);
  const auto* b = file->find_tensor("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, DType::Q8_0);
  EXPECT_EQ(b->data[33], 7);
}

TEST(GgufMetadata, TypeMismatchNamesKeyAndBothTypes) {
  Metadata metadata;
  metadata.set("llama.context_length", GgufValue::of_string("4096"));
  auto value = metadata.get<uint32_t>("llama.context_length");
  ASSERT_FALSE(value);
  EXPECT_NE(value.error().message().find("llama.context_length"), std::string::npos);
  EXPECT_NE(value.error().message().find("string"), std::string::npos);
  EXPECT_NE(value.error().message().find("uint32"), std::string::npos);

  metadata.set("negative", GgufValue::of_i32(-1));
  EXPECT_FALSE(metadata.get<uint32_t>("negative"));
  EXPECT_EQ(*metadata.get<int64_t>("negative"), -1);
  EXPECT_FALSE(metadata.get<uint32_t>("missing"));
  EXPECT_FALSE(metadata.find<uint32_t>("missing")->has_value());
}

TEST(GgufFile, ReadsStories260K) {
  auto file = GgufFile::open(testing::stories_model());
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(*file->metadata().get<std::string>("general.architecture"), "llama");
  EXPECT_EQ(*file->metadata().get<uint32_t>("llama.block_count"), 5u);
  EXPECT_EQ(file->metadata().get<std::vector<std::string>>("tokenizer.ggml.tokens")->size(), 512u);
  EXPECT_NE(file->find_tensor("token_embd.weight"), nullptr);
}

TEST(GgufFile, FailedWriteLeavesNoFile) {
  const std::string path = testing::scratch_dir() + "/never.gguf";
  GgufWriter writer;
  ASSERT_TRUE(writer.add_tensor("x", DType::F32, {4}, []() -> Result<std::vector<uint8_t>> {
    return make_error(ErrorCode::kIo, "source failed");
  }));
  EXPECT_FALSE(writer.write(path));
  EXPECT_FALSE(MappedFile::open(path));
}

}  // namespace
}  // namespace sinter

namespace sinter {
namespace {

// A vocabulary the size of a modern tokenizer's (opening it takes milliseconds in a Release
// build; speed is measured, not asserted).
TEST(GgufRoundTrip, LargeVocabulary) {
  const std::string path = testing::scratch_dir() + "/vocab.gguf";
  constexpr int kTokens = 150000;
  std::vector<std::string> tokens(kTokens);
  std::vector<float> scores(kTokens);
  std::vector<int32_t> types(kTokens, 1);
  for (int i = 0; i < kTokens; ++i) {
    tokens[i] = concat("tok", i);
    scores[i] = -0.5f * static_cast<float>(i);
  }
  GgufWriter writer;
  writer.metadata().set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  writer.metadata().set("tokenizer.ggml.scores", GgufValue::of_f32s(scores));
  writer.metadata().set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  ASSERT_TRUE(writer.write(path));

  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  const auto* read_tokens = file->metadata().get_array("tokenizer.ggml.tokens").value();
  EXPECT_EQ(read_tokens->strings, tokens);
  EXPECT_EQ(*file->metadata().get<std::vector<float>>("tokenizer.ggml.scores"), scores);
  EXPECT_EQ(*file->metadata().get<std::vector<int32_t>>("tokenizer.ggml.token_type"), types);
}

}  // namespace
}  // namespace sinter
