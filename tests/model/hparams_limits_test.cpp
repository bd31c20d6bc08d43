// Hyper-parameters read from a file are checked before anything is sized from them: a block
// count must match the blk.N tensors present, unsigned keys must fit the int32 counts the
// runtime uses, float keys must be finite, and the errors stay short whatever the file claims.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/registry.h"
#include "model/synth.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

// Two blocks, every dimension small (the file is a few tens of KB).
std::string tiny_llama(const std::string& dir) {
  SynthOptions options;
  options.dims = {
      .n_embd = 32, .n_layer = 2, .n_head = 2, .n_head_kv = 1, .n_ff = 32, .n_vocab = 260, .n_ctx = 64};
  const std::string path = dir + "/tiny.gguf";
  const Status status = synthesize(options, path);
  EXPECT_TRUE(status.ok()) << status.error().message();
  return path;
}

// A copy of `source` with its metadata edited and only the tensors `keep` accepts.
std::string rewrite(
    const std::string& source, const std::string& target, const std::function<void(Metadata&)>& edit,
    const std::function<bool(const std::string&)>& keep = [](const std::string&) { return true; }) {
  auto file = GgufFile::open(source);
  EXPECT_TRUE(file.ok());
  if (!file) return target;
  GgufWriter writer;
  for (const auto& [key, value] : file->metadata().entries()) writer.metadata().set(key, value);
  edit(writer.metadata());
  for (const auto& t : file->tensors()) {
    if (!keep(t.name)) continue;
    EXPECT_TRUE(
        writer.add_tensor_bytes(t.name, t.type, t.shape, std::vector<uint8_t>(t.data, t.data + t.bytes)));
  }
  const Status written = writer.write(target);
  EXPECT_TRUE(written.ok()) << written.error().message();
  return target;
}

// The model error (empty when it loads) in the mode `sinter inspect` uses.
std::string load_error(const std::string& path, WeightBinder::Mode mode = WeightBinder::Mode::kCheck) {
  auto file = GgufFile::open(path);
  if (!file) return "open: " + file.error().message();
  WeightBinder binder(*file, mode);
  auto model = find_architecture("llama")->create(file->metadata(), binder);
  if (!model) return model.error().message();
  return binder.status() ? "" : binder.status().error().message();
}

TEST(HParamsLimits, TheTinyModelLoads) {
  const std::string dir = testing::scratch_dir();
  EXPECT_EQ(load_error(tiny_llama(dir), WeightBinder::Mode::kBind), "");
}

TEST(HParamsLimits, BlockCountMustMatchTheBlocksInTheFile) {
  const std::string dir = testing::scratch_dir();
  const std::string base = tiny_llama(dir);
  for (uint32_t blocks : {0u, 1u, 3u, 100000u, 2000000000u}) {
    SCOPED_TRACE(blocks);
    const std::string path = rewrite(base, dir + "/blocks.gguf", [&](Metadata& m) {
      m.set("llama.block_count", GgufValue::of_u32(blocks));
    });
    const std::string error = load_error(path);
    EXPECT_NE(error.find("llama.block_count"), std::string::npos) << error;
    EXPECT_LT(error.size(), 300u) << error.substr(0, 300);
  }
}

TEST(HParamsLimits, BlocksMustBeNumberedWithoutGaps) {
  const std::string dir = testing::scratch_dir();
  // blk.1 left out entirely: the file has one block, numbered 0.
  const std::string one = rewrite(
      tiny_llama(dir), dir + "/one.gguf", [](Metadata&) {},
      [](const std::string& name) { return name.rfind("blk.1.", 0) != 0; });
  EXPECT_NE(load_error(one).find("llama.block_count"), std::string::npos);
  // blk.0 left out: one block, numbered 1.
  const std::string gap = rewrite(
      tiny_llama(dir), dir + "/gap.gguf",
      [](Metadata& m) { m.set("llama.block_count", GgufValue::of_u32(1)); },
      [](const std::string& name) { return name.rfind("blk.0.", 0) != 0; });
  const std::string error = load_error(gap);
  EXPECT_NE(error.find("blk.0"), std::string::npos) << error;
}

TEST(HParamsLimits, MissingTensorsAreListedShortly) {
  const std::string dir = testing::scratch_dir();
  // Each block keeps only its attention norm: 2 × 8 required tensors are missing.
  const std::string path = rewrite(
      tiny_llama(dir), dir + "/sparse.gguf", [](Metadata&) {},
      [](const std::string& name) {
        return name.rfind("blk.", 0) != 0 || name.find("attn_norm") != std::string::npos;
      });
  const std::string error = load_error(path, WeightBinder::Mode::kBind);
  EXPECT_NE(error.find("missing tensor 'blk.0.attn_q.weight'"), std::string::npos) << error;
  EXPECT_EQ(error.find("blk.1.ffn_down.weight"), std::string::npos) << error;
  EXPECT_NE(error.find("and 12 more"), std::string::npos) << error;
}

TEST(HParamsLimits, UnsignedKeysMustFitTheInt32CountsTheRuntimeUses) {
  const std::string dir = testing::scratch_dir();
  const std::string base = tiny_llama(dir);
  for (const char* key :
       {"llama.context_length", "llama.vocab_size", "llama.rope.scaling.original_context_length"}) {
    for (uint32_t value : {uint32_t{1} << 31, std::numeric_limits<uint32_t>::max()}) {
      SCOPED_TRACE(std::string(key) + " = " + std::to_string(value));
      const std::string path =
          rewrite(base, dir + "/wide.gguf", [&](Metadata& m) { m.set(key, GgufValue::of_u32(value)); });
      const std::string error = load_error(path);
      EXPECT_NE(error.find(key), std::string::npos) << error;
      EXPECT_NE(error.find("2147483647"), std::string::npos) << error;
    }
  }
  // The largest int32 itself is accepted.
  const std::string path = rewrite(base, dir + "/max.gguf", [](Metadata& m) {
    m.set("llama.context_length", GgufValue::of_u32(std::numeric_limits<int32_t>::max()));
  });
  EXPECT_EQ(load_error(path), "");
}

TEST(HParamsLimits, FloatKeysMustBeFinite) {
  const std::string dir = testing::scratch_dir();
  const std::string base = tiny_llama(dir);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const char* key : {"llama.rope.freq_base", "llama.attention.layer_norm_rms_epsilon",
                          "llama.rope.scaling.factor", "llama.rope.scaling.attn_factor"}) {
    for (float value : {nan, inf, -inf}) {
      SCOPED_TRACE(std::string(key) + " = " + std::to_string(value));
      const std::string path =
          rewrite(base, dir + "/float.gguf", [&](Metadata& m) { m.set(key, GgufValue::of_f32(value)); });
      const std::string error = load_error(path);
      EXPECT_NE(error.find(key), std::string::npos) << error;
      EXPECT_NE(error.find("finite"), std::string::npos) << error;
    }
  }
  // Stored as float64, too.
  const std::string path = rewrite(base, dir + "/double.gguf", [&](Metadata& m) {
    m.set("llama.rope.freq_base", GgufValue::of(std::numeric_limits<double>::quiet_NaN()));
  });
  EXPECT_NE(load_error(path).find("finite"), std::string::npos);
}

// A negative epsilon turns the norm of small activations into NaN: refused at load, for the
// RMS norm's and LayerNorm's keys alike; zero is allowed.
TEST(HParamsLimits, NormEpsilonMustNotBeNegative) {
  const std::string dir = testing::scratch_dir();
  const std::string base = tiny_llama(dir);
  const std::string negative = rewrite(base, dir + "/eps.gguf", [](Metadata& m) {
    m.set("llama.attention.layer_norm_rms_epsilon", GgufValue::of_f32(-1e-5f));
  });
  const std::string error = load_error(negative);
  EXPECT_NE(error.find("llama.attention.layer_norm_rms_epsilon"), std::string::npos) << error;
  EXPECT_NE(error.find("must not be negative"), std::string::npos) << error;
  const std::string zero = rewrite(base, dir + "/eps0.gguf", [](Metadata& m) {
    m.set("llama.attention.layer_norm_rms_epsilon", GgufValue::of_f32(0.0f));
  });
  EXPECT_EQ(load_error(zero), "");
}

// The seeds of fuzz/gguf_fuzz.cpp made for these checks (tests/gguf/fuzz_corpus_test.cpp): the
// complete one loads, each copy whose counts or values are wrong is a short error.
TEST(HParamsLimits, FuzzSeedsOfBadHyperParametersAreRejected) {
  const std::string corpus = testing::source_dir() + "/fuzz/corpus/gguf/";
  EXPECT_EQ(load_error(corpus + "valid-llama-mini.gguf", WeightBinder::Mode::kBind), "");
  const std::pair<const char*, const char*> seeds[] = {
      {"valid-llama-block-count-2.gguf", "llama.block_count"},
      {"valid-llama-block-count-1000000.gguf", "llama.block_count"},
      {"valid-llama-block-count-2147483648.gguf", "llama.block_count"},
      {"valid-llama-block-numbered-1.gguf", "blk.0 has no tensors"},
      {"valid-llama-context-length-4294967295.gguf", "llama.context_length"},
      {"valid-llama-rope-base-nan.gguf", "llama.rope.freq_base"},
      {"valid-llama-rms-epsilon-inf.gguf", "llama.attention.layer_norm_rms_epsilon"},
  };
  for (const auto& [seed, words] : seeds) {
    SCOPED_TRACE(seed);
    const std::string error = load_error(corpus + seed);
    EXPECT_NE(error.find(words), std::string::npos) << error;
    EXPECT_LT(error.size(), 300u);
  }
}

// The config rows `sinter inspect --json` prints are JSON literals, whatever the value.
TEST(HParamsLimits, ConfigEntriesAreAlwaysValidJson) {
  Metadata out;
  HParams p(&out, "llama");
  float values[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), 0.5f};
  for (float& v : values) p.required("{arch}.x", v);
  ASSERT_EQ(p.entries().size(), 4u);
  for (const auto& entry : p.entries()) {
    SCOPED_TRACE(entry.json);
    const auto parsed = nlohmann::json::parse(entry.json, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded());
  }
  EXPECT_EQ(nlohmann::json::parse(p.entries()[0].json), "nan");
  EXPECT_EQ(nlohmann::json::parse(p.entries()[2].json), "-inf");
  EXPECT_EQ(nlohmann::json::parse(p.entries()[3].json), 0.5);
}

}  // namespace
}  // namespace sinter
