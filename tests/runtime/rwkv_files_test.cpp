// RWKV files as converters wrote them over time: RWKV-6 files converted before llama.cpp fused
// the time mix's five shares into time_mix_lerp_fused hold time_mix_lerp_{w,k,v,r,g} instead,
// and run the same model.
#include <cstring>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "runtime/context.h"
#include "runtime/runtime_test_support.h"

namespace sinter {
namespace {

// `fused`'s tensors and metadata, each layer's time_mix_lerp_fused [n, 1, 1, 5] written as the
// five vectors [n] it holds.
void write_unfused(const std::string& fused, const std::string& path) {
  auto file = GgufFile::open(fused);
  ASSERT_TRUE(file) << file.error().message();
  GgufWriter writer;
  for (const auto& [key, value] : file->metadata().entries()) writer.metadata().set(key, value);
  const std::string suffix = "time_mix_lerp_fused.weight";
  for (const GgufTensorInfo& t : file->tensors()) {
    if (!t.name.ends_with(suffix)) {
      ASSERT_TRUE(writer.add_tensor_bytes(t.name, t.type, t.shape, {t.data, t.data + t.bytes}));
      continue;
    }
    ASSERT_EQ(t.type, DType::F32);
    const std::string prefix = t.name.substr(0, t.name.size() - suffix.size());
    const size_t row = static_cast<size_t>(t.shape[0]) * sizeof(float);
    int share = 0;
    for (const char* name : {"w", "k", "v", "r", "g"}) {
      const uint8_t* begin = t.data + row * static_cast<size_t>(share++);
      ASSERT_TRUE(writer.add_tensor_bytes(prefix + "time_mix_lerp_" + name + ".weight", DType::F32,
                                          {t.shape[0]}, {begin, begin + row}));
    }
  }
  ASSERT_TRUE(writer.write(path));
}

std::vector<float> last_logits(const std::string& path, const std::vector<TokenId>& ids) {
  auto model = LoadedModel::load(path, LoadOptions{"cpu", 1});
  EXPECT_TRUE(model) << model.error().message();
  if (!model) return {};
  auto context = Context::create(*model, ContextOptions{});
  EXPECT_TRUE(context);
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < ids.size(); ++i)
    batch.push_back({ids[i], static_cast<Position>(i), 0, i + 1 == ids.size()});
  EXPECT_TRUE((*context)->decode(batch));
  const auto logits = (*context)->logits(0);
  return {logits.begin(), logits.end()};
}

TEST(RwkvFiles, Rwkv6WithUnfusedSharesRunsTheSameModel) {
  const std::string fused = testing::scratch_dir() + "/../rwkv6-fused.gguf";
  const std::string unfused = testing::scratch_dir() + "/../rwkv6-unfused.gguf";
  SynthOptions options;
  options.architecture = "rwkv6";
  options.seed = 9;
  ASSERT_TRUE(synthesize(options, fused));
  write_unfused(fused, unfused);
  const std::vector<TokenId> ids = {1, 40, 300, 7, 99, 120, 5, 411};
  const auto expected = last_logits(fused, ids);
  const auto got = last_logits(unfused, ids);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace sinter
