// The seed corpus of fuzz/gguf_fuzz.cpp is generated here: small valid files (written by
// GgufWriter or built field by field) and malformed ones. The test checks that the checked-in
// fuzz/corpus/gguf/ is exactly what this generator makes, and that each seed parses (or fails)
// as its name says. To regenerate after a deliberate change:
//   SINTER_UPDATE_FUZZ_CORPUS=1 build-gguf/bin/sinter_gguf_tests --gtest_filter='GgufFuzzCorpus.*'
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_bytes.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::GgufBytes;

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> written_by(const GgufWriter& writer, const std::string& scratch) {
  const std::string path = scratch + "/seed.gguf";
  EXPECT_TRUE(writer.write(path));
  return read_bytes(path);
}

// A llama-shaped file as small as it gets: hyper-parameters, an 8-token vocabulary, one
// tensor of each common type.
std::vector<uint8_t> tiny_llama(const std::string& scratch) {
  GgufWriter writer;
  Metadata& m = writer.metadata();
  m.set("general.architecture", GgufValue::of_string("llama"));
  m.set("general.name", GgufValue::of_string("tiny"));
  m.set("llama.block_count", GgufValue::of_u32(1));
  m.set("llama.embedding_length", GgufValue::of_u32(32));
  m.set("llama.attention.head_count", GgufValue::of_u32(2));
  m.set("llama.attention.layer_norm_rms_epsilon", GgufValue::of_f32(1e-5f));
  m.set("tokenizer.ggml.model", GgufValue::of_string("llama"));
  m.set("tokenizer.ggml.tokens",
        GgufValue::of_strings({"<unk>", "<s>", "</s>", "▁a", "▁b", "a", "b", "<0x0A>"}));
  m.set("tokenizer.ggml.scores", GgufValue::of_f32s({0, 0, 0, -1, -2, -3, -4, -5}));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s({2, 3, 3, 1, 1, 1, 1, 6}));
  m.set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(1));
  std::vector<uint8_t> f32(32 * 2 * 4);
  for (size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<uint8_t>(i * 7);
  EXPECT_TRUE(writer.add_tensor_bytes("token_embd.weight", DType::F32, {32, 2}, f32));
  EXPECT_TRUE(
      writer.add_tensor_bytes("blk.0.attn_q.weight", DType::Q8_0, {32, 1}, std::vector<uint8_t>(34, 3)));
  EXPECT_TRUE(
      writer.add_tensor_bytes("blk.0.ffn_up.weight", DType::Q4_0, {32, 2}, std::vector<uint8_t>(36, 5)));
  EXPECT_TRUE(
      writer.add_tensor_bytes("output_norm.weight", DType::F16, {32}, std::vector<uint8_t>(64, 0x3c)));
  return written_by(writer, scratch);
}

// A complete llama model small enough for a seed (n_embd 8, one block, the 8-token vocabulary
// above), which `sinter inspect` finds loadable: from it the fuzzer reaches hyper-parameter
// loading, weight binding and the memory estimate. `edit` changes its metadata; `block` is the
// number its block's tensors carry (blk.N.*), so that copies can disagree with their tensors.
std::vector<uint8_t> mini_llama(const std::string& scratch, const std::function<void(Metadata&)>& edit = {},
                                int block = 0) {
  GgufWriter writer;
  Metadata& m = writer.metadata();
  m.set("general.architecture", GgufValue::of_string("llama"));
  m.set("llama.context_length", GgufValue::of_u32(16));
  m.set("llama.embedding_length", GgufValue::of_u32(8));
  m.set("llama.block_count", GgufValue::of_u32(1));
  m.set("llama.feed_forward_length", GgufValue::of_u32(8));
  m.set("llama.attention.head_count", GgufValue::of_u32(2));
  m.set("llama.attention.head_count_kv", GgufValue::of_u32(1));
  m.set("llama.attention.layer_norm_rms_epsilon", GgufValue::of_f32(1e-5f));
  m.set("tokenizer.ggml.model", GgufValue::of_string("llama"));
  m.set("tokenizer.ggml.tokens",
        GgufValue::of_strings({"<unk>", "<s>", "</s>", "▁a", "▁b", "a", "b", "<0x0A>"}));
  m.set("tokenizer.ggml.scores", GgufValue::of_f32s({0, 0, 0, -1, -2, -3, -4, -5}));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s({2, 3, 3, 1, 1, 1, 1, 6}));
  m.set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(1));
  m.set("tokenizer.ggml.eos_token_id", GgufValue::of_u32(2));
  if (edit) edit(m);
  const auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    const int64_t n = shape[0] * (shape.size() > 1 ? shape[1] : 1);
    std::vector<uint8_t> bytes(static_cast<size_t>(n) * sizeof(float));
    for (int64_t i = 0; i < n; ++i) {
      const float v = name.find("norm") != std::string::npos ? 1.0f : static_cast<float>(i % 7 - 3) * 0.125f;
      std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof v);
    }
    EXPECT_TRUE(writer.add_tensor_bytes(name, DType::F32, std::move(shape), std::move(bytes)));
  };
  const std::string blk = "blk." + std::to_string(block) + ".";
  add("token_embd.weight", {8, 8});
  add("output_norm.weight", {8});
  add(blk + "attn_norm.weight", {8});
  add(blk + "attn_q.weight", {8, 8});
  add(blk + "attn_k.weight", {8, 4});
  add(blk + "attn_v.weight", {8, 4});
  add(blk + "attn_output.weight", {8, 8});
  add(blk + "ffn_norm.weight", {8});
  add(blk + "ffn_gate.weight", {8, 8});
  add(blk + "ffn_up.weight", {8, 8});
  add(blk + "ffn_down.weight", {8, 8});
  return written_by(writer, scratch);
}

std::vector<uint8_t> aligned_64(const std::string& scratch) {
  GgufWriter writer;
  writer.set_alignment(64);
  writer.metadata().set("general.architecture", GgufValue::of_string("gpt2"));
  EXPECT_TRUE(writer.add_tensor_bytes("a", DType::BF16, {8}, std::vector<uint8_t>(16, 1)));
  EXPECT_TRUE(writer.add_tensor_bytes("b", DType::I32, {3}, std::vector<uint8_t>(12, 2)));
  return written_by(writer, scratch);
}

std::vector<uint8_t> split_shard(const std::string& scratch) {
  GgufWriter writer;
  writer.metadata().set("split.no", GgufValue::of(uint16_t{1}));
  writer.metadata().set("split.count", GgufValue::of(uint16_t{2}));
  writer.metadata().set("split.tensors.count", GgufValue::of(int32_t{2}));
  EXPECT_TRUE(writer.add_tensor_bytes("output.weight", DType::F32, {4, 4}, std::vector<uint8_t>(64, 9)));
  return written_by(writer, scratch);
}

std::vector<uint8_t> nested_arrays() {
  GgufBytes b;
  b.header(0, 2).key("merges", GgufType::kArray).array_header(GgufType::kArray, 2);
  b.array_header(GgufType::kString, 2).str("a").str("b").array_header(GgufType::kArray, 1);
  b.array_header(GgufType::kInt64, 2).put<int64_t>(-1).put<int64_t>(1ll << 40);
  b.key("flags", GgufType::kArray).array_header(GgufType::kBool, 3).u8(1).u8(0).u8(1);
  return b.bytes();
}

struct Seed {
  std::vector<uint8_t> bytes;
  bool valid;
};

std::map<std::string, Seed> generate_seeds(const std::string& scratch) {
  std::map<std::string, Seed> seeds;
  seeds["valid-tiny-llama.gguf"] = {tiny_llama(scratch), true};
  seeds["valid-every-value-type.gguf"] = {testing::sample_gguf().bytes(), true};
  seeds["valid-aligned-64.gguf"] = {aligned_64(scratch), true};
  seeds["valid-split-shard.gguf"] = {split_shard(scratch), true};
  seeds["valid-nested-arrays.gguf"] = {nested_arrays(), true};
  // Hyper-parameters that disagree with the tensors, or make no sense: they parse, and the
  // diagnosis must reject them without sizing anything from them.
  seeds["valid-llama-mini.gguf"] = {mini_llama(scratch), true};
  for (uint32_t blocks : {2u, 1000000u, 1u << 31}) {
    seeds["valid-llama-block-count-" + std::to_string(blocks) + ".gguf"] = {
        mini_llama(scratch, [&](Metadata& m) { m.set("llama.block_count", GgufValue::of_u32(blocks)); }),
        true};
  }
  seeds["valid-llama-block-numbered-1.gguf"] = {mini_llama(scratch, {}, /*block=*/1), true};
  seeds["valid-llama-context-length-4294967295.gguf"] = {
      mini_llama(scratch,
                 [](Metadata& m) {
                   m.set("llama.context_length", GgufValue::of_u32(std::numeric_limits<uint32_t>::max()));
                 }),
      true};
  seeds["valid-llama-rope-base-nan.gguf"] = {
      mini_llama(scratch,
                 [](Metadata& m) {
                   m.set("llama.rope.freq_base", GgufValue::of_f32(std::numeric_limits<float>::quiet_NaN()));
                 }),
      true};
  seeds["valid-llama-rms-epsilon-inf.gguf"] = {
      mini_llama(scratch,
                 [](Metadata& m) {
                   m.set("llama.attention.layer_norm_rms_epsilon",
                         GgufValue::of(std::numeric_limits<double>::infinity()));
                 }),
      true};
  GgufBytes header_only;
  header_only.header(0, 0);
  seeds["valid-header-only.gguf"] = {header_only.bytes(), true};

  const GgufBytes sample = testing::sample_gguf();
  const auto prefix = [&](size_t length) {
    return std::vector<uint8_t>(sample.bytes().begin(),
                                sample.bytes().begin() + static_cast<std::ptrdiff_t>(length));
  };
  seeds["bad-truncated-in-array.gguf"] = {prefix(sample.at("value:t.nested") + 20), false};
  seeds["bad-truncated-in-data.gguf"] = {prefix(sample.at("data") + 70), false};
  GgufBytes magic = sample;
  magic.bytes()[3] = 'G';
  seeds["bad-magic.gguf"] = {magic.bytes(), false};
  GgufBytes version = sample;
  version.patch<uint32_t>(4, 1);
  seeds["bad-version-1.gguf"] = {version.bytes(), false};
  GgufBytes count = sample;
  count.patch<uint64_t>(8, 1ull << 63);
  seeds["bad-tensor-count.gguf"] = {count.bytes(), false};
  GgufBytes length = sample;
  length.patch<uint64_t>(sample.at("value:general.architecture"), ~0ull);
  seeds["bad-string-length.gguf"] = {length.bytes(), false};
  GgufBytes overlap = sample;
  overlap.patch<uint64_t>(sample.at("infos_end") - 8, 64);  // c's data offset moves onto b
  seeds["bad-overlap.gguf"] = {overlap.bytes(), false};
  GgufBytes misaligned = sample;
  misaligned.patch<uint64_t>(sample.at("infos_end") - 8, 130);  // c's data offset
  seeds["bad-misaligned.gguf"] = {misaligned.bytes(), false};
  GgufBytes type = sample;
  type.patch<uint32_t>(sample.at("infos_end") - 12, 31);  // c's type: a retired id
  seeds["bad-tensor-type.gguf"] = {type.bytes(), false};
  GgufBytes deep;
  deep.header(0, 1).key("deep", GgufType::kArray);
  for (int i = 0; i < 12; ++i) deep.array_header(GgufType::kArray, 1);
  seeds["bad-nested-too-deep.gguf"] = {deep.bytes(), false};
  GgufBytes dims = sample;
  dims.patch<uint64_t>(sample.at("tensor:a") + 8 + 1 + 4, 1ull << 62);  // a: [2^62, 2]
  seeds["bad-dims-overflow.gguf"] = {dims.bytes(), false};
  GgufBytes alignment = sample;
  alignment.patch<uint32_t>(sample.at("value:general.alignment"), 48);
  seeds["bad-alignment.gguf"] = {alignment.bytes(), false};
  return seeds;
}

TEST(GgufFuzzCorpus, CheckedInSeedsAreWhatTheGeneratorMakes) {
  const std::string scratch = testing::scratch_dir();
  const std::string corpus = testing::source_dir() + "/fuzz/corpus/gguf";
  const std::map<std::string, Seed> seeds = generate_seeds(scratch);
  const char* update = std::getenv("SINTER_UPDATE_FUZZ_CORPUS");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(corpus);
    for (const auto& entry : std::filesystem::directory_iterator(corpus))
      std::filesystem::remove(entry.path());
    for (const auto& [name, seed] : seeds) {
      std::ofstream out(corpus + "/" + name, std::ios::binary);
      out.write(reinterpret_cast<const char*>(seed.bytes.data()),
                static_cast<std::streamsize>(seed.bytes.size()));
    }
  }
  size_t checked_in = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    ++checked_in;
    EXPECT_EQ(seeds.count(entry.path().filename()), 1u) << entry.path() << " is not made by the generator";
  }
  EXPECT_EQ(checked_in, seeds.size()) << "regenerate with SINTER_UPDATE_FUZZ_CORPUS=1";
  for (const auto& [name, seed] : seeds) {
    SCOPED_TRACE(name);
    EXPECT_LE(seed.bytes.size(), 4096u);  // within libFuzzer's default input length
    EXPECT_EQ(read_bytes(corpus + "/" + name), seed.bytes) << "regenerate with SINTER_UPDATE_FUZZ_CORPUS=1";
    auto file = GgufFile::parse(MappedFile::from_bytes(seed.bytes, name));
    EXPECT_EQ(file.ok(), seed.valid) << (file ? std::string("parsed") : file.error().message());
  }
}

// Equal, except that a NaN equals a NaN stored the same way (the NaN seeds read back as NaN).
bool same_entries(const std::vector<std::pair<std::string, GgufValue>>& a,
                  const std::vector<std::pair<std::string, GgufValue>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    const double* x = std::get_if<double>(&a[i].second.data);
    const double* y = std::get_if<double>(&b[i].second.data);
    const bool both_nan = x != nullptr && y != nullptr && std::isnan(*x) && std::isnan(*y);
    if (!both_nan || a[i].first != b[i].first || a[i].second.type != b[i].second.type) return false;
  }
  return true;
}

// Whatever parses can be written back and reads the same (the writer keeps file order).
TEST(GgufFuzzCorpus, ValidSeedsSurviveARewrite) {
  const std::string scratch = testing::scratch_dir();
  for (const auto& [name, seed] : generate_seeds(scratch)) {
    if (!seed.valid) continue;
    SCOPED_TRACE(name);
    auto original = GgufFile::parse(MappedFile::from_bytes(seed.bytes, name));
    ASSERT_TRUE(original) << original.error().message();
    GgufWriter writer;
    for (const auto& [key, value] : original->metadata().entries()) writer.metadata().set(key, value);
    writer.set_alignment(original->alignment());
    for (const auto& t : original->tensors()) {
      ASSERT_TRUE(
          writer.add_tensor_bytes(t.name, t.type, t.shape, std::vector<uint8_t>(t.data, t.data + t.bytes)));
    }
    ASSERT_TRUE(writer.write(scratch + "/rewrite.gguf"));
    auto mapped = MappedFile::open(scratch + "/rewrite.gguf");  // parse: split keys are not followed
    ASSERT_TRUE(mapped) << mapped.error().message();
    auto rewritten = GgufFile::parse(*mapped);
    ASSERT_TRUE(rewritten) << rewritten.error().message();
    EXPECT_TRUE(same_entries(rewritten->metadata().entries(), original->metadata().entries()));
    ASSERT_EQ(rewritten->tensors().size(), original->tensors().size());
    for (size_t i = 0; i < original->tensors().size(); ++i) {
      const auto& a = original->tensors()[i];
      const auto& b = rewritten->tensors()[i];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.type, b.type);
      EXPECT_EQ(a.shape, b.shape);
      EXPECT_EQ(std::vector<uint8_t>(a.data, a.data + a.bytes),
                std::vector<uint8_t>(b.data, b.data + b.bytes));
    }
  }
}

}  // namespace
}  // namespace sinter
