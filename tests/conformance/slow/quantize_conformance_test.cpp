// Layout compatibility of `sinter quantize`, shown rather than assumed: the oracle (llama.cpp)
// runs every file sinter writes, and its next-token probabilities must stay within the type's
// own quantization error of the F32 original's. The same model quantized by llama.cpp's own
// quantizer gives that error; sinter's must be no worse. A layout bug (nibble order, scale
// packing) gives a KL far above the type's error: two deliberately corrupted files show that the
// check catches one.
//
// One synthetic model (sinter synth, llama, n_embd 256, 2 layers, GQA 2), 96 positions, every
// oracle call in one batch (two at a time).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "llama_cpp_quantizer.h"
#include "model/quantize/mixture.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

using testing::LlamaCppQuantizer;
using testing::run_command;
using testing::shell_quote;

constexpr int kPositions = 96;
constexpr int kVocab = 1024;  // the "small" preset's

// Mean KL(F32 original ‖ quantized) that llama.cpp's own quantizer reaches on this model (see
// README.md, "Quantization"), and ENGINE.md's figure for a model of the same shape where it has
// one. The layout bound of a type is kBoundMargin × llama.cpp's figure: twice the type's own
// error. The corrupted files land at 4× (a Q4_K scale-packing bug in half of the groups) and 12×
// (Q4_0 nibbles swapped) that bound.
struct TypeFigures {
  const char* mixture;
  double llama_cpp_kl;  // measured on this model (seed 1), 96 positions
  double engine_md_kl;  // ../shared/design/ENGINE.md; 0 where it lists none
};
constexpr TypeFigures kFigures[] = {
    {"F16", 1.09e-6, 1.8e-7},    {"BF16", 4.81e-5, 1.1e-5},   {"Q8_0", 3.64e-4, 1.2e-4},
    {"Q6_K", 2.41e-3, 8.8e-4},   {"Q5_K_M", 7.92e-3, 2.2e-3}, {"Q5_K_S", 8.29e-3, 0},
    {"Q5_1", 9.72e-3, 2.4e-3},   {"Q5_0", 9.96e-3, 3.0e-3},   {"Q4_K_M", 3.01e-2, 7.6e-3},
    {"Q4_K_S", 2.87e-2, 0},      {"IQ4_NL", 4.13e-2, 0},      {"IQ4_XS", 4.22e-2, 0},
    {"Q4_1", 3.75e-2, 8.5e-3},   {"Q4_0", 4.31e-2, 1.0e-2},   {"Q3_K_L", 9.39e-2, 0},
    {"Q3_K_M", 1.00e-1, 3.1e-2}, {"Q3_K_S", 1.47e-1, 0},      {"Q2_K", 3.13e-1, 1.1e-1},
};
constexpr double kBoundMargin = 2.0;
// KL differences below this are float noise of the forward pass (F16's own error is ~1e-7).
constexpr double kKlNoise = 1e-6;

using Distributions = std::vector<std::vector<double>>;  // [position][token id]

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The oracle's JSON ([[id, p], ...] per position) as dense distributions.
Distributions parse_probs(const std::string& path) {
  Distributions out;
  try {
    const auto json = nlohmann::json::parse(read_text(path));
    for (const auto& position : json) {
      auto& row = out.emplace_back(kVocab, 0.0);
      for (const auto& pair : position) {
        const int id = pair[0].get<int>();
        if (id >= 0 && id < kVocab) row[static_cast<size_t>(id)] = pair[1].get<double>();
      }
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << ": " << e.what();
  }
  return out;
}

double mean_kl(const Distributions& p, const Distributions& q) {
  if (p.size() != q.size() || p.empty()) {
    ADD_FAILURE() << "distributions of " << p.size() << " and " << q.size() << " positions";
    return 1e9;
  }
  double total = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    for (size_t t = 0; t < p[i].size(); ++t) {
      if (p[i][t] > 0) total += p[i][t] * std::log(p[i][t] / std::max(q[i][t], 1e-300));
    }
  }
  return total / static_cast<double>(p.size());
}

// A copy of `input` with every tensor of `type` passed through `corrupt` (its bytes, in place).
void write_corrupted(const std::string& input, const std::string& output, DType type,
                     void (*corrupt)(uint8_t* block)) {
  auto file = GgufFile::open(input);
  ASSERT_TRUE(file.ok()) << file.error().message();
  GgufWriter writer;
  for (const auto& [key, value] : file->metadata().entries()) writer.metadata().set(key, value);
  for (const GgufTensorInfo& t : file->tensors()) {
    std::vector<uint8_t> bytes(t.data, t.data + t.bytes);
    if (t.type == type) {
      const size_t block = dtype_traits(type).block_bytes;
      for (size_t offset = 0; offset + block <= bytes.size(); offset += block) corrupt(&bytes[offset]);
    }
    ASSERT_TRUE(writer.add_tensor_bytes(t.name, t.type, t.shape, std::move(bytes)).ok());
  }
  ASSERT_TRUE(writer.write(output).ok());
}

// Q4_0 block: F16 scale, then 16 bytes whose low nibbles are values 0–15 and high nibbles
// 16–31. Swapping the nibbles is the classic layout bug.
void swap_q4_0_nibbles(uint8_t* block) {
  for (int i = 2; i < 18; ++i) block[i] = static_cast<uint8_t>((block[i] << 4) | (block[i] >> 4));
}
// Q4_K block: F16 d, F16 dmin, 12 bytes of 6-bit scales and mins. Reading the mins of groups
// 0–3 as their scales (bytes 0–3 ↔ 4–7 of the packed array) is a scale-packing bug.
void swap_q4_k_scales_and_mins(uint8_t* block) {
  for (int i = 0; i < 4; ++i) std::swap(block[4 + i], block[8 + i]);
}

struct WeightError {
  double relative_rmse = 0;  // over all matrices, against the F32 original
  int identical_tensors = 0;
  int tensors = 0;
};

// Compares a quantized file's weights with the F32 original's; types must match `reference`'s.
WeightError weight_error(const GgufFile& original, const GgufFile& quantized, const GgufFile& reference) {
  WeightError result;
  double error = 0, norm = 0;
  for (const GgufTensorInfo& q : quantized.tensors()) {
    const GgufTensorInfo* f = original.find_tensor(q.name);
    const GgufTensorInfo* r = reference.find_tensor(q.name);
    if (f == nullptr || r == nullptr) {
      ADD_FAILURE() << q.name << " missing in the original or llama.cpp's file";
      continue;
    }
    EXPECT_EQ(q.type, r->type) << q.name;
    ++result.tensors;
    result.identical_tensors += q.bytes == r->bytes && std::equal(q.data, q.data + q.bytes, r->data);
    std::vector<float> values(static_cast<size_t>(q.element_count()));
    dtype_traits(q.type).dequantize(q.data, values.data(), q.element_count());
    const auto* originals = reinterpret_cast<const float*>(f->data);
    for (size_t i = 0; i < values.size(); ++i) {
      error += (values[i] - originals[i]) * static_cast<double>(values[i] - originals[i]);
      norm += originals[i] * static_cast<double>(originals[i]);
    }
  }
  result.relative_rmse = std::sqrt(error / norm);
  return result;
}

TEST(QuantizeConformance, OracleRunsEveryTypeWithinLlamaCppError) {
  if (!LlamaCppQuantizer::instance().available()) {
    SINTER_SKIP_WITHOUT_REFERENCE(LlamaCppQuantizer::instance().problem());
  }
  const std::string dir = testing::scratch_dir();
  const std::string sinter = shell_quote(testing::sinter_binary());
  const std::string original = dir + "/f32.gguf";
  {
    const auto synth =
        run_command(sinter + " synth llama " + shell_quote(original) +
                    " --dims small --n-embd 256 --n-head 8 --n-head-kv 4 --n-layer 2 --type f32 --seed 1");
    ASSERT_EQ(synth.exit_status, 0) << synth.err;
  }

  // Both quantizers, every type; the weights compared with the original and with each other.
  auto original_file = GgufFile::open(original);
  ASSERT_TRUE(original_file.ok());
  std::vector<std::string> runs = {original};
  std::map<std::string, std::pair<WeightError, WeightError>> weights;  // sinter's, llama.cpp's
  for (const TypeFigures& figures : kFigures) {
    const auto id = mixture_from_name(figures.mixture);
    ASSERT_TRUE(id.has_value()) << figures.mixture;
    const std::string ours = dir + "/sinter-" + figures.mixture + ".gguf";
    const std::string theirs = dir + "/llama-" + figures.mixture + ".gguf";
    const auto quantized = run_command(sinter + " quantize " + shell_quote(original) + " " +
                                       shell_quote(ours) + " " + figures.mixture + " --threads 2");
    ASSERT_EQ(quantized.exit_status, 0) << quantized.err;
    ASSERT_EQ(LlamaCppQuantizer::instance().quantize(original, theirs, mixture(*id).file_type, 2), "");
    auto our_file = GgufFile::open(ours);
    auto their_file = GgufFile::open(theirs);
    ASSERT_TRUE(our_file.ok() && their_file.ok());
    const WeightError ours_vs_theirs = weight_error(*original_file, *our_file, *their_file);
    weights[figures.mixture] = {ours_vs_theirs, weight_error(*original_file, *their_file, *their_file)};
    runs.push_back(ours);
    // The same weights give the same probabilities: llama.cpp's file needs its own oracle run
    // only where its tensors differ from sinter's.
    if (ours_vs_theirs.identical_tensors != ours_vs_theirs.tensors) runs.push_back(theirs);
  }
  const std::string corrupt_q4_0 = dir + "/corrupt-q4_0-nibbles.gguf";
  const std::string corrupt_q4_k = dir + "/corrupt-q4_k-scales.gguf";
  write_corrupted(dir + "/sinter-Q4_0.gguf", corrupt_q4_0, DType::Q4_0, swap_q4_0_nibbles);
  write_corrupted(dir + "/sinter-Q4_K_M.gguf", corrupt_q4_k, DType::Q4_K, swap_q4_k_scales_and_mins);
  runs.push_back(corrupt_q4_0);
  runs.push_back(corrupt_q4_k);

  // The oracle on every file at the same positions: one batch, two processes at a time.
  std::vector<int> ids;
  for (int i = 0; i < kPositions; ++i) ids.push_back(3 + (i * 7919 + 13) % (kVocab - 3));
  {
    std::string list;
    for (const std::string& run : runs) list += run + "\n";
    std::ofstream(dir + "/models.txt") << list;
    const std::string oracle = shell_quote(testing::shared_dir() + "/oracle/run");
    // Up to three tries each: the oracle's launcher rewrites its script in a shared cache on every
    // call, and a call that starts during another's copy can read it truncated (no output).
    const auto batch = run_command("xargs -P 2 -I MODEL sh -c " +
                                   shell_quote("for attempt in 1 2 3; do ORACLE_THREADS=1 " + oracle +
                                               " probs MODEL " + testing::join_ids(ids) +
                                               " > MODEL.json && [ -s MODEL.json ] && break; done") +
                                   " < " + shell_quote(dir + "/models.txt"));
    ASSERT_EQ(batch.exit_status, 0) << batch.err;
  }
  const Distributions reference = parse_probs(original + ".json");
  ASSERT_EQ(reference.size(), static_cast<size_t>(kPositions));

  std::printf("%-8s %12s %12s %12s %12s  %s\n", "type", "ENGINE.md", "llama.cpp", "sinter", "weight rmse",
              "tensors identical to llama.cpp's");
  for (const TypeFigures& figures : kFigures) {
    const std::string ours = dir + "/sinter-" + figures.mixture + ".gguf";
    const std::string theirs = dir + "/llama-" + figures.mixture + ".gguf";
    const auto& [our_weights, their_weights] = weights[figures.mixture];
    const bool identical = our_weights.identical_tensors == our_weights.tensors;
    const double our_kl = mean_kl(reference, parse_probs(ours + ".json"));
    const double their_kl = identical ? our_kl : mean_kl(reference, parse_probs(theirs + ".json"));
    std::printf("%-8s %12.3g %12.3g %12.3g %5.4f/%.4f  %d of %d\n", figures.mixture, figures.engine_md_kl,
                their_kl, our_kl, our_weights.relative_rmse, their_weights.relative_rmse,
                our_weights.identical_tensors, our_weights.tensors);
    // Layout: within the type's own error (measured with llama.cpp's quantizer) with margin.
    const double bound = std::max(kBoundMargin * figures.llama_cpp_kl, kKlNoise);
    EXPECT_LE(our_kl, bound) << figures.mixture
                             << ": the oracle's KL on sinter's file is above the type's error";
    // Error: no worse than llama.cpp's quantizer, within noise.
    EXPECT_LE(our_kl, their_kl * 1.05 + kKlNoise) << figures.mixture;
    EXPECT_LE(our_weights.relative_rmse, their_weights.relative_rmse * 1.001) << figures.mixture;
  }
  // The corrupted files must fail the layout bound by far.
  for (const auto& [path, mixture_name] :
       {std::pair{corrupt_q4_0, "Q4_0"}, std::pair{corrupt_q4_k, "Q4_K_M"}}) {
    const double kl = mean_kl(reference, parse_probs(path + ".json"));
    double bound = 0;
    for (const TypeFigures& figures : kFigures) {
      if (std::string(figures.mixture) == mixture_name) bound = kBoundMargin * figures.llama_cpp_kl;
    }
    std::printf("%-28s KL %.3g (bound of %s %.3g)\n", path.substr(path.rfind('/') + 1).c_str(), kl,
                mixture_name, bound);
    EXPECT_GT(kl, 2 * bound) << path << ": a layout bug would go unnoticed";
  }
}

}  // namespace
}  // namespace sinter
