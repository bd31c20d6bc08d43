// LFM2's files: attention.head_count_kv per layer says which blocks are attention (0: a short
// convolution), each kind numbered among itself in the model's shape; what sinter does not run
// (embedding files, attention layers of different head counts, a kernel that is not F32) is an
// error naming it.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <tuple>

#include "core/half.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/registry.h"
#include "model/synth.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

// LFM2 "tiny": blocks 0, 1 and 3 convolutions, block 2 attention.
const std::string& tiny_lfm2() {
  static const std::string path = [] {
    const std::string file = testing::scratch_dir() + "/../lfm2-tiny.gguf";
    SynthOptions options;
    options.architecture = "lfm2";
    options.seed = 2;
    const Status status = synthesize(options, file);
    EXPECT_TRUE(status.ok()) << status.error().message();
    return file;
  }();
  return path;
}

// A copy of the tiny file with its metadata edited and each tensor's bytes (and type) as
// `tensor` makes them.
using TensorEdit = std::function<void(const GgufTensorInfo&, DType&, std::vector<uint8_t>&)>;
std::string rewrite(const std::string& name, const std::function<void(Metadata&)>& edit,
                    const TensorEdit& tensor = {}) {
  auto file = GgufFile::open(tiny_lfm2());
  EXPECT_TRUE(file.ok());
  GgufWriter writer;
  for (const auto& [key, value] : file->metadata().entries()) writer.metadata().set(key, value);
  edit(writer.metadata());
  for (const auto& t : file->tensors()) {
    DType type = t.type;
    std::vector<uint8_t> bytes(t.data, t.data + t.bytes);
    if (tensor) tensor(t, type, bytes);
    EXPECT_TRUE(writer.add_tensor_bytes(t.name, type, t.shape, std::move(bytes)));
  }
  const std::string path = testing::scratch_dir() + "/" + name + ".gguf";
  const Status written = writer.write(path);
  EXPECT_TRUE(written.ok()) << written.error().message();
  return path;
}

// The model a file makes, or the error that refuses it.
Result<std::unique_ptr<Model>> load(const std::string& path) {
  SINTER_ASSIGN(GgufFile file, GgufFile::open(path));
  WeightBinder binder(file, WeightBinder::Mode::kBind);
  SINTER_ASSIGN(auto model, find_architecture("lfm2")->create(file.metadata(), binder));
  binder.finish();
  SINTER_TRY(binder.status());
  return model;
}

TEST(Lfm2, ThePerLayerKeyValueHeadsSayWhichBlocksAreAttention) {
  auto file = GgufFile::open(tiny_lfm2());
  ASSERT_TRUE(file.ok());
  auto heads = file->metadata().get<std::vector<uint32_t>>("lfm2.attention.head_count_kv");
  ASSERT_TRUE(heads.ok()) << heads.error().message();
  EXPECT_EQ(*heads, (std::vector<uint32_t>{0, 0, 2, 0}));
  auto model = load(tiny_lfm2());
  ASSERT_TRUE(model.ok()) << model.error().message();
  const ModelShape& shape = (*model)->shape();
  EXPECT_EQ(shape.n_layer, 4);
  ASSERT_EQ(shape.kv_layers.size(), 1u);
  EXPECT_EQ(shape.kv_layers[0].heads, 2);
  EXPECT_EQ(shape.kv_layers[0].k_row, 2 * 16);
  EXPECT_EQ(shape.kv_rope.size(), 1u);
  EXPECT_TRUE(shape.kv_rope[0].params.neox);
  ASSERT_EQ(shape.recurrent_layers.size(), 3u);
  ASSERT_EQ(shape.recurrent_layers[0].states.size(), 1u);
  EXPECT_EQ(shape.recurrent_layers[0].states[0].ne,
            (std::array<int64_t, 3>{2, 64, 1}));  // l_cache − 1, n_embd
}

TEST(Lfm2, ASingleKeyValueHeadCountMakesEveryBlockAttention) {
  // As llama.cpp reads it: one value stands for every layer, so the file needs attention tensors
  // in every block and has convolution tensors left over.
  const auto model = load(rewrite(
      "lfm2-uniform", [](Metadata& md) { md.set("lfm2.attention.head_count_kv", GgufValue::of_u32(2)); }));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message().find("blk.0.attn_q.weight"), std::string::npos)
      << model.error().message();
}

TEST(Lfm2, AttentionLayersMustShareTheirKeyValueHeadCount) {
  const auto model = load(rewrite("lfm2-mixed-heads", [](Metadata& md) {
    md.set("lfm2.attention.head_count_kv",
           GgufValue{GgufType::kArray, GgufArray::of<uint32_t>({0, 1, 2, 0})});
  }));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message().find("key/value heads"), std::string::npos) << model.error().message();
}

TEST(Lfm2, EmbeddingFilesAreRefused) {
  for (const auto& [name, key, value] :
       {std::tuple{"lfm2-bidirectional", "lfm2.attention.causal", GgufValue::of_bool(false)},
        std::tuple{"lfm2-pooled", "lfm2.pooling_type", GgufValue::of_u32(1)}}) {
    // Copies: clang 14 cannot capture structured bindings.
    const std::string metadata_key = key;
    const GgufValue metadata_value = value;
    const auto model = load(rewrite(name, [&](Metadata& md) { md.set(metadata_key, metadata_value); }));
    ASSERT_FALSE(model.ok()) << name;
    EXPECT_NE(model.error().message().find("embedding"), std::string::npos) << model.error().message();
  }
}

TEST(Lfm2, AConvolutionKernelThatIsNotF32IsRefused) {
  const auto model = load(rewrite(
      "lfm2-f16-kernel", [](Metadata&) {},
      [](const GgufTensorInfo& t, DType& type, std::vector<uint8_t>& bytes) {
        if (t.name != "blk.1.shortconv.conv.weight") return;
        std::vector<uint8_t> half(bytes.size() / 2);
        for (size_t i = 0; i < bytes.size() / 4; ++i) {
          float value;
          std::memcpy(&value, bytes.data() + 4 * i, 4);
          const f16_bits bits = f32_to_f16(value);
          std::memcpy(half.data() + 2 * i, &bits, 2);
        }
        type = DType::F16;
        bytes = std::move(half);
      }));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message().find("blk.1.shortconv.conv.weight"), std::string::npos)
      << model.error().message();
}

}  // namespace
}  // namespace sinter
