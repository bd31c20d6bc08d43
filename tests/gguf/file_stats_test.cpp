// File-level diagnosis facts: bytes per type, F32 expansion, parameter count.
#include "gguf/file_stats.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/gguf_writer.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

TEST(GgufFileStats, Stories260KMatchesItsHyperParameters) {
  auto file = GgufFile::open(testing::stories_model());
  ASSERT_TRUE(file) << file.error().message();
  const Metadata& m = file->metadata();
  const uint64_t n_embd = *m.get<uint32_t>("llama.embedding_length");             // 64
  const uint64_t n_ff = *m.get<uint32_t>("llama.feed_forward_length");            // 172
  const uint64_t n_layer = *m.get<uint32_t>("llama.block_count");                 // 5
  const uint64_t n_head = *m.get<uint32_t>("llama.attention.head_count");         // 8
  const uint64_t n_head_kv = *m.get<uint32_t>("llama.attention.head_count_kv");   // 4
  const uint64_t n_vocab = m.get_array("tokenizer.ggml.tokens").value()->size();  // 512
  const uint64_t n_embd_kv = n_embd / n_head * n_head_kv;
  // token_embd and output [n_embd, n_vocab], output_norm; per layer: q and o [n_embd, n_embd],
  // k and v [n_embd, n_embd_kv], two norms, gate/up [n_embd, n_ff] and down [n_ff, n_embd].
  const uint64_t per_layer = 2 * n_embd * n_embd + 2 * n_embd * n_embd_kv + 2 * n_embd + 3 * n_embd * n_ff;
  const uint64_t n_params = 2 * n_vocab * n_embd + n_embd + n_layer * per_layer;
  EXPECT_EQ(n_params, 292800u);

  const GgufFileStats stats = compute_file_stats(*file);
  EXPECT_EQ(stats.n_params, n_params);
  ASSERT_EQ(stats.tensors_by_type.size(), 1u);  // all F32
  const GgufTypeStats& f32 = stats.tensors_by_type.at("f32");
  EXPECT_EQ(f32.count, 3 + 9 * n_layer);
  EXPECT_EQ(f32.bytes, 4 * n_params);
  EXPECT_EQ(f32.f32_bytes, 4 * n_params);
  EXPECT_EQ(stats.payload_bytes, 4 * n_params);
  EXPECT_EQ(stats.f32_bytes, 4 * n_params);
  EXPECT_DOUBLE_EQ(stats.f32_expansion_ratio, 1.0);
  // Every tensor's size is a multiple of the alignment, so the payload is the file after the
  // start of the data section.
  EXPECT_EQ(stats.payload_bytes,
            std::filesystem::file_size(testing::stories_model()) - file->tensors()[0].file_offset);
}

TEST(GgufFileStats, MixedTypes) {
  const std::string path = testing::scratch_dir() + "/mixed.gguf";
  GgufWriter writer;
  ASSERT_TRUE(writer.add_tensor_bytes("f32.a", DType::F32, {8, 2}, std::vector<uint8_t>(64)));  // 16 values
  ASSERT_TRUE(writer.add_tensor_bytes("f32.b", DType::F32, {4}, std::vector<uint8_t>(16)));     // 4
  ASSERT_TRUE(writer.add_tensor_bytes("f16", DType::F16, {32}, std::vector<uint8_t>(64)));      // 32
  ASSERT_TRUE(
      writer.add_tensor_bytes("q8", DType::Q8_0, {64, 2}, std::vector<uint8_t>(4 * 34)));  // 128 in 4 blocks
  ASSERT_TRUE(
      writer.add_tensor_bytes("q4", DType::Q4_0, {32, 3}, std::vector<uint8_t>(3 * 18)));  // 96 in 3 blocks
  ASSERT_TRUE(
      writer.add_tensor_bytes("q4k", DType::Q4_K, {256}, std::vector<uint8_t>(144)));  // 256 in 1 block
  ASSERT_TRUE(writer.write(path));
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().message();

  const GgufFileStats stats = compute_file_stats(*file);
  ASSERT_EQ(stats.tensors_by_type.size(), 5u);
  const auto expect_type = [&](const std::string& name, uint64_t count, uint64_t bytes, uint64_t f32_bytes) {
    SCOPED_TRACE(name);
    ASSERT_EQ(stats.tensors_by_type.count(name), 1u);
    const GgufTypeStats& type = stats.tensors_by_type.at(name);
    EXPECT_EQ(type.count, count);
    EXPECT_EQ(type.bytes, bytes);
    EXPECT_EQ(type.f32_bytes, f32_bytes);
  };
  expect_type("f32", 2, 80, 80);
  expect_type("f16", 1, 64, 128);
  expect_type("q8_0", 1, 136, 512);
  expect_type("q4_0", 1, 54, 384);
  expect_type("q4_K", 1, 144, 1024);
  EXPECT_EQ(stats.payload_bytes, 80u + 64 + 136 + 54 + 144);
  EXPECT_EQ(stats.f32_bytes, 80u + 128 + 512 + 384 + 1024);
  EXPECT_EQ(stats.n_params, 16u + 4 + 32 + 128 + 96 + 256);
  EXPECT_DOUBLE_EQ(stats.f32_expansion_ratio, 2128.0 / 478.0);
  // Sorted by type name.
  EXPECT_EQ(stats.tensors_by_type.begin()->first, "f16");
}

TEST(GgufFileStats, NoTensors) {
  const std::string path = testing::scratch_dir() + "/empty.gguf";
  GgufWriter writer;
  writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
  ASSERT_TRUE(writer.write(path));
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  const GgufFileStats stats = compute_file_stats(*file);
  EXPECT_TRUE(stats.tensors_by_type.empty());
  EXPECT_EQ(stats.payload_bytes, 0u);
  EXPECT_EQ(stats.f32_bytes, 0u);
  EXPECT_EQ(stats.n_params, 0u);
  EXPECT_DOUBLE_EQ(stats.f32_expansion_ratio, 1.0);
}

}  // namespace
}  // namespace sinter
