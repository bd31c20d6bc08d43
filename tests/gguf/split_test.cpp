// Split models: shards written with GgufWriter (as llama.cpp's gguf-split lays them out) and
// read as one through GgufFile::open; every inconsistency between shards is an error.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_bytes.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::error_mentions;

// Shard i holds the tensors named in tensors_per_shard[i]; tensor "t<k>" is F32 [4 + k] filled
// with the byte k. `edit(shard_index, writer)` may change a shard before it is written.
struct SplitModel {
  std::string prefix;
  std::vector<std::vector<std::string>> tensors_per_shard;
  std::function<void(uint32_t, GgufWriter&)> edit = [](uint32_t, GgufWriter&) {};

  std::string shard(uint32_t index) const {
    return gguf_split_path(prefix, index, static_cast<uint32_t>(tensors_per_shard.size()));
  }

  void write() const {
    const auto count = static_cast<uint16_t>(tensors_per_shard.size());
    size_t total = 0;
    for (const auto& names : tensors_per_shard) total += names.size();
    for (uint16_t i = 0; i < count; ++i) {
      GgufWriter writer;
      if (i == 0) {
        writer.metadata().set("general.architecture", GgufValue::of_string("llama"));
        writer.metadata().set("llama.block_count", GgufValue::of_u32(2));
      }
      // The types llama.cpp's gguf-split uses.
      writer.metadata().set("split.no", GgufValue::of(i));
      writer.metadata().set("split.count", GgufValue::of(count));
      writer.metadata().set("split.tensors.count", GgufValue::of(static_cast<int32_t>(total)));
      for (const auto& name : tensors_per_shard[i]) {
        const int k = std::stoi(name.substr(1));
        ASSERT_TRUE(writer.add_tensor_bytes(name, DType::F32, {4 + k},
                                            std::vector<uint8_t>((4 + k) * 4, static_cast<uint8_t>(k))));
      }
      edit(i, writer);
      ASSERT_TRUE(writer.write(shard(i)));
    }
  }
};

SplitModel three_shards(const std::string& dir) {
  return {dir + "/model", {{"t0", "t1"}, {"t2"}, {"t3", "t4", "t5"}}};
}

TEST(GgufSplit, ThreeShardsReadAsOne) {
  const SplitModel model = three_shards(testing::scratch_dir());
  model.write();
  auto file = GgufFile::open(model.shard(0));
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->shard_count(), 3u);
  EXPECT_EQ(file->path(), model.shard(0));
  EXPECT_EQ(*file->metadata().get<std::string>("general.architecture"), "llama");
  EXPECT_EQ(*file->metadata().get<uint32_t>("split.count"), 3u);
  ASSERT_EQ(file->tensors().size(), 6u);
  const std::vector<uint32_t> expected_shard = {0, 0, 1, 2, 2, 2};
  uint64_t file_bytes = 0;
  for (uint32_t i = 0; i < 3; ++i) file_bytes += std::filesystem::file_size(model.shard(i));
  EXPECT_EQ(file->file_bytes(), file_bytes);
  for (int k = 0; k < 6; ++k) {
    const auto& tensor = file->tensors()[k];
    EXPECT_EQ(tensor.name, concat("t", k));
    EXPECT_EQ(tensor.shard, expected_shard[k]);
    EXPECT_EQ(file->find_tensor(tensor.name), &tensor);
    ASSERT_EQ(tensor.bytes, (4u + k) * 4);
    // The data pointer is into the tensor's own shard.
    EXPECT_EQ(tensor.data[0], k);
    EXPECT_EQ(tensor.data[tensor.bytes - 1], k);
  }
  // Offsets restart in each shard.
  EXPECT_EQ(file->find_tensor("t2")->offset, 0u);
  EXPECT_EQ(file->find_tensor("t3")->offset, 0u);
  EXPECT_EQ(file->find_tensor("t4")->offset, 32u);
}

TEST(GgufSplit, TwoShardsOneOfThemWithoutTensors) {
  const std::string dir = testing::scratch_dir();
  const SplitModel model{dir + "/m", {{}, {"t0", "t1"}}};
  model.write();
  auto file = GgufFile::open(model.shard(0));
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->shard_count(), 2u);
  EXPECT_EQ(file->tensors().size(), 2u);
  EXPECT_EQ(file->find_tensor("t1")->shard, 1u);
}

TEST(GgufSplit, MissingShard) {
  const SplitModel model = three_shards(testing::scratch_dir());
  model.write();
  std::filesystem::remove(model.shard(2));
  EXPECT_TRUE(error_mentions(GgufFile::open(model.shard(0)),
                             {model.shard(0), ": shard 3 of 3 is missing", "cannot open " + model.shard(2)},
                             ErrorCode::kNotFound));
}

TEST(GgufSplit, WrongOrMissingSplitNo) {
  const std::string dir = testing::scratch_dir();
  SplitModel model = three_shards(dir);
  model.edit = [](uint32_t i, GgufWriter& w) {
    if (i == 1) w.metadata().set("split.no", GgufValue::of(uint16_t{2}));
  };
  model.write();
  EXPECT_TRUE(error_mentions(GgufFile::open(model.shard(0)),
                             {model.shard(1), ": split.no is 2, expected 1 from the file name"}));
  model.edit = [](uint32_t i, GgufWriter& w) {
    if (i == 2) w.metadata().erase("split.no");
  };
  model.write();
  EXPECT_TRUE(
      error_mentions(GgufFile::open(model.shard(0)), {model.shard(2), ": split.no is missing, expected 2"}));
}

TEST(GgufSplit, ShardsDisagreeOnSplitCount) {
  SplitModel model = three_shards(testing::scratch_dir());
  model.edit = [](uint32_t i, GgufWriter& w) {
    if (i == 2) w.metadata().set("split.count", GgufValue::of(uint16_t{4}));
  };
  model.write();
  EXPECT_TRUE(error_mentions(GgufFile::open(model.shard(0)),
                             {model.shard(2), ": split.count is 4 but the first shard says 3"}));
}

TEST(GgufSplit, DuplicateTensorAcrossShards) {
  const std::string dir = testing::scratch_dir();
  const SplitModel model{dir + "/model", {{"t0", "t1"}, {"t2", "t1"}}};
  model.write();
  EXPECT_TRUE(
      error_mentions(GgufFile::open(model.shard(0)),
                     {model.shard(1), ": tensor 't1' also appears in shard 1 (" + model.shard(0) + ")"}));
}

TEST(GgufSplit, WrongTensorCount) {
  SplitModel model = three_shards(testing::scratch_dir());
  model.edit = [](uint32_t i, GgufWriter& w) {
    if (i == 0) w.metadata().set("split.tensors.count", GgufValue::of(int32_t{7}));
  };
  model.write();
  EXPECT_TRUE(error_mentions(GgufFile::open(model.shard(0)),
                             {model.shard(0), ": split.tensors.count is 7 but the 3 shards hold 6 tensors"}));
}

TEST(GgufSplit, OpeningANonFirstShardSaysWhichToOpen) {
  const SplitModel model = three_shards(testing::scratch_dir());
  model.write();
  EXPECT_TRUE(error_mentions(
      GgufFile::open(model.shard(1)),
      {model.shard(1), " is shard 2 of 3 of a split model; open the first shard, ", model.shard(0)},
      ErrorCode::kInvalidArgument));
  // Parsing a shard on its own (no split keys followed) works.
  auto mapped = MappedFile::open(model.shard(2));
  ASSERT_TRUE(mapped);
  auto alone = GgufFile::parse(*mapped);
  ASSERT_TRUE(alone) << alone.error().message();
  EXPECT_EQ(alone->tensors().size(), 3u);
}

TEST(GgufSplit, FirstShardNotNamedLikeOne) {
  const std::string dir = testing::scratch_dir();
  const SplitModel model = three_shards(dir);
  model.write();
  std::filesystem::rename(model.shard(0), dir + "/model.gguf");
  EXPECT_TRUE(
      error_mentions(GgufFile::open(dir + "/model.gguf"),
                     {"model.gguf declares split.count 3 but is not named like NAME-00001-of-00003.gguf"}));
}

TEST(GgufSplit, BadSplitKeys) {
  const std::string dir = testing::scratch_dir();
  const auto open_with = [&](const std::string& name, const std::function<void(Metadata&)>& edit) {
    GgufWriter writer;
    edit(writer.metadata());
    EXPECT_TRUE(writer.write(dir + "/" + name));
    return GgufFile::open(dir + "/" + name);
  };
  // split.count 1 is a whole model.
  auto single = open_with("a-00001-of-00001.gguf", [](Metadata& m) {
    m.set("split.count", GgufValue::of(uint16_t{1}));
    m.set("split.no", GgufValue::of(uint16_t{0}));
  });
  ASSERT_TRUE(single) << single.error().message();
  EXPECT_EQ(single->shard_count(), 1u);
  EXPECT_TRUE(
      error_mentions(open_with("b.gguf", [](Metadata& m) { m.set("split.count", GgufValue::of_u32(0)); }),
                     {"b.gguf: split.count is 0"}));
  EXPECT_TRUE(error_mentions(open_with("c.gguf",
                                       [](Metadata& m) {
                                         m.set("split.count", GgufValue::of_u32(2));
                                         m.set("split.no", GgufValue::of_u32(2));
                                       }),
                             {"c.gguf: split.no 2 is not below split.count 2"}));
  EXPECT_TRUE(error_mentions(
      open_with("d.gguf", [](Metadata& m) { m.set("split.count", GgufValue::of_string("3")); }),
      {"d.gguf: metadata key 'split.count' is string, expected uint32"}));
  EXPECT_TRUE(
      error_mentions(open_with("e.gguf", [](Metadata& m) { m.set("split.no", GgufValue::of(int16_t{-1})); }),
                     {"e.gguf: metadata key 'split.no' is int16 -1, which does not fit in uint32"}));
}

TEST(GgufSplit, MalformedShardIsNamed) {
  const SplitModel model = three_shards(testing::scratch_dir());
  model.write();
  std::filesystem::resize_file(model.shard(1), 40);
  auto file = GgufFile::open(model.shard(0));
  EXPECT_TRUE(error_mentions(file, {model.shard(1) + ": ", "(at byte offset"}));
}

TEST(GgufSplitNames, BuildAndParse) {
  EXPECT_EQ(gguf_split_path("dir/model", 0, 3), "dir/model-00001-of-00003.gguf");
  EXPECT_EQ(gguf_split_path("m", 99999, 100000), "m-100000-of-100000.gguf");
  const auto name = gguf_parse_split_path("/a-b/c.d/model-q4-00002-of-00003.gguf");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->prefix, "/a-b/c.d/model-q4");
  EXPECT_EQ(name->index, 1u);
  EXPECT_EQ(name->count, 3u);
  const auto big = gguf_parse_split_path("m-100000-of-100000.gguf");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->index, 99999u);
  // A name that itself looks split: only the last part counts.
  EXPECT_EQ(gguf_parse_split_path("x-00001-of-00002-00003-of-00004.gguf")->prefix, "x-00001-of-00002");

  for (const char* not_split :
       {"model.gguf", "model-1-of-3.gguf", "model-00000-of-00003.gguf", "model-00004-of-00003.gguf",
        "model-00001-of-00003.bin", "model-00001-of-00003", "model-000001-of-00003.gguf",
        "model-0000a-of-00003.gguf", "model00001-of-00003.gguf", "model-00001-of-99999999999.gguf",
        "-of-.gguf", ".gguf", ""}) {
    EXPECT_FALSE(gguf_parse_split_path(not_split)) << not_split;
  }
}

TEST(GgufSplitNames, ShardPathFromTheFirst) {
  EXPECT_EQ(gguf_shard_path("d/m-00001-of-00003.gguf", 0, 3), "d/m-00001-of-00003.gguf");
  EXPECT_EQ(gguf_shard_path("d/m-00001-of-00003.gguf", 2, 3), "d/m-00003-of-00003.gguf");
  EXPECT_EQ(gguf_shard_path("d/m-00001-of-00003.gguf", 3, 3), "");  // past the end
  EXPECT_EQ(gguf_shard_path("d/m-00002-of-00003.gguf", 2, 3), "");  // not the first
  EXPECT_EQ(gguf_shard_path("d/m-00001-of-00003.gguf", 1, 4), "");  // another count
  EXPECT_EQ(gguf_shard_path("d/m.gguf", 1, 3), "");
}

}  // namespace
}  // namespace sinter
