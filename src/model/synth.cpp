#include "model/synth.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/quantize/tensor_rules.h"

namespace sinter {
namespace {

// splitmix64: a counter-based generator; value i of a tensor depends only on (seed, name, i).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash_name(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

// Uniform in [-1, 1) from the top 24 bits: exact in float, no library math involved.
float uniform(uint64_t stream, uint64_t index) {
  const uint64_t bits = mix(stream ^ mix(index)) >> 40;
  return static_cast<float>(static_cast<int64_t>(bits) - (int64_t{1} << 23)) / static_cast<float>(1 << 23);
}

// Mamba's parameters, as trained models have them (values of one weight: value i at row
// i / shape[0], column i % shape[0]); false for other weights.
bool synth_ssm_values(const WeightSpec& spec, uint64_t stream, std::vector<float>& values) {
  const auto u = [stream](size_t i) { return uniform(stream, static_cast<uint64_t>(i)); };
  if (spec.name.ends_with(".ssm_a")) {
    // A = −exp(A_log) < 0. Mamba-1 [d_state, d_inner]: state n decays at about −(n + 1), as
    // S4D-real initializes it; Mamba-2 [1, n_head]: one value per head, spread over [−16, −1]; the
    // gated delta net's [n_head] (one vector of n_head values, read as Mamba-1's rule): head h at
    // about −(h + 1), so that its decay exp(softplus(·)·A) ranges from near 1 to near 0 over heads.
    const auto n_state = static_cast<size_t>(spec.shape[0]);
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = n_state == 1 ? -(8.5f + 7.5f * u(i)) : -(static_cast<float>(i % n_state + 1) + 0.5f * u(i));
    }
    return true;
  }
  if (spec.name.ends_with(".ssm_d")) {  // the skip: near 1 (vector or Mamba-2's [1, n_head])
    for (size_t i = 0; i < values.size(); ++i) values[i] = 1.0f + 0.25f * u(i);
    return true;
  }
  if (spec.name.ends_with(".ssm_dt.bias")) {
    // softplus(dt) ≈ e^bias for these: time steps from about 0.001 to 0.3 (Mamba initializes the
    // bias so that they span [0.001, 0.1] log-uniformly; trained ones reach further).
    for (size_t i = 0; i < values.size(); ++i) values[i] = -4.0f + 3.0f * u(i);
    return true;
  }
  if (spec.name.ends_with(".ssm_norm.weight")) {  // Mamba-2's grouped norm [d_inner / G, G]: near 1
    for (size_t i = 0; i < values.size(); ++i) values[i] = 1.0f + 0.25f * u(i);
    return true;
  }
  return false;
}

// Uniform values in [center − half_width, center + half_width) for weights that trained files
// keep in a range of their own.
struct ValueRange {
  std::string_view name_part;
  float center;
  float half_width;
};
constexpr ValueRange kValueRanges[] = {
    // RWKV's token-shift shares (time_mix_lerp_*, channel_mix_lerp_*): each a fraction of the
    // previous token, in [0, 1).
    {"_lerp_", 0.5f, 0.5f},
    // RWKV-6's decay bias, so that the decay exp(−exp(d)) lies in (0.69, 0.998): a state that
    // remembers tens to hundreds of tokens, bounded.
    {"time_mix_decay.weight", -3.5f, 2.5f},
    // RWKV-7's, in [−4, 0): decays exp(−0.61 · sigmoid(w0)) of 0.74-0.99.
    {"time_mix_w0.weight", -2.0f, 2.0f},
};

const ValueRange* value_range(const std::string& name) {
  for (const ValueRange& range : kValueRanges) {
    if (name.find(range.name_part) != std::string::npos) return &range;
  }
  return nullptr;
}

// RWKV's low-rank corrections (the up projection of each LoRA pair) start at zero in training
// and stay smaller than the biases they correct: half the usual amplitude, which still moves the
// probabilities by ~1e-3 when a share or a decay reads the wrong input.
bool is_lora_up(const std::string& name) {
  for (const char* suffix :
       {"time_mix_w2.weight", "time_mix_decay_w2.weight", "time_mix_a2.weight", "time_mix_v2.weight"}) {
    if (name.ends_with(suffix)) return true;
  }
  return false;
}

// Values of one weight: matrices uniform with standard deviation 1/sqrt(row length) (so
// activations keep their scale through a layer); biases small around 0; norm weights (and other
// vectors: RoPE factors) near 1; the weights of kValueRanges in their range; Mamba's A, D
// and time-step biases as trained models have them.
std::vector<float> synth_values(const WeightSpec& spec, uint64_t seed) {
  int64_t count = 1;
  for (int64_t d : spec.shape) count *= d;
  std::vector<float> values(static_cast<size_t>(count));
  const uint64_t stream = mix(seed) ^ hash_name(spec.name);
  if (synth_ssm_values(spec, stream, values)) return values;
  if (spec.name.ends_with("ffn_gate_inp_shexp.weight")) {
    // The shared expert's gate [n_embd]: a row of a matrix (std 1/sqrt(n_embd)), so that its
    // sigmoid varies from token to token instead of saturating as a norm-like vector would.
    const float amplitude = std::sqrt(3.0f / static_cast<float>(spec.shape[0]));
    for (int64_t i = 0; i < count; ++i)
      values[static_cast<size_t>(i)] = amplitude * uniform(stream, static_cast<uint64_t>(i));
    return values;
  }
  if (const ValueRange* range = value_range(spec.name)) {
    for (int64_t i = 0; i < count; ++i) {
      const float u = uniform(stream, static_cast<uint64_t>(i));
      values[static_cast<size_t>(i)] = range->center + range->half_width * u;
    }
  } else if (spec.is_matrix()) {
    float amplitude = std::sqrt(3.0f / static_cast<float>(spec.shape[0]));
    if (is_lora_up(spec.name)) amplitude *= 0.5f;
    // Routers four times as wide: a confident choice of experts, as trained routers make. The
    // scale does not make a reordering rarer (a last-bit difference between two engines grows
    // with the logits), but under softmax gating the experts near a tie then carry little of
    // the weight, so that reordering them changes the output little. Sigmoid gating saturates
    // and gains less (docs/NUMERICS.md, routing flips).
    if (spec.name.ends_with("ffn_gate_inp.weight")) amplitude *= 4.0f;
    for (int64_t i = 0; i < count; ++i)
      values[static_cast<size_t>(i)] = amplitude * uniform(stream, static_cast<uint64_t>(i));
  } else if (spec.name.ends_with(".bias")) {
    for (int64_t i = 0; i < count; ++i)
      values[static_cast<size_t>(i)] = 0.1f * uniform(stream, static_cast<uint64_t>(i));
  } else {
    for (int64_t i = 0; i < count; ++i)
      values[static_cast<size_t>(i)] = 1.0f + 0.25f * uniform(stream, static_cast<uint64_t>(i));
  }
  return values;
}

// A byte-fallback SentencePiece vocabulary: <unk> <s> </s>, the 256 byte tokens, then pieces
// "▁a".."▁z", "a".."z" and numbered filler so that any size ≥ 259 can be made.
void write_synthetic_vocab(Metadata& md, int32_t n_vocab) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<float> scores = {0.0f, 0.0f, 0.0f};
  std::vector<int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", b);
    tokens.emplace_back(piece);
    scores.push_back(0.0f);
    types.push_back(6);
  }
  for (int i = 0; static_cast<int32_t>(tokens.size()) < n_vocab; ++i) {
    std::string piece;
    if (i < 26)
      piece = "\xe2\x96\x81" + std::string(1, static_cast<char>('a' + i));
    else if (i < 52)
      piece = std::string(1, static_cast<char>('a' + i - 26));
    else
      piece = "\xe2\x96\x81w" + std::to_string(i);
    tokens.push_back(piece);
    scores.push_back(-static_cast<float>(i));
    types.push_back(1);
  }
  md.set("tokenizer.ggml.model", GgufValue::of_string("llama"));
  md.set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  md.set("tokenizer.ggml.scores", GgufValue::of_f32s(scores));
  md.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  md.set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(1));
  md.set("tokenizer.ggml.eos_token_id", GgufValue::of_u32(2));
  md.set("tokenizer.ggml.unknown_token_id", GgufValue::of_u32(0));
}

// Copies every tokenizer.* key of `source`; pads the vocabulary with unused tokens when the
// model's n_vocab is larger.
Status copy_vocab(const Metadata& source, const std::string& origin, Metadata& md, int32_t n_vocab) {
  for (const auto& [key, value] : source.entries()) {
    if (key.rfind("tokenizer.", 0) == 0) md.set(key, value);
  }
  SINTER_ASSIGN(auto tokens, md.get<std::vector<std::string>>("tokenizer.ggml.tokens"));
  if (static_cast<int32_t>(tokens.size()) > n_vocab) {
    return make_error(ErrorCode::kInvalidArgument, "the vocabulary of ", origin, " has ", tokens.size(),
                      " tokens, more than n_vocab ", n_vocab, " (give --n-vocab ", tokens.size(),
                      " or more)");
  }
  if (static_cast<int32_t>(tokens.size()) == n_vocab) return ok_status();
  SINTER_ASSIGN(auto types, md.get<std::vector<int32_t>>("tokenizer.ggml.token_type"));
  auto scores = md.find<std::vector<float>>("tokenizer.ggml.scores");
  for (int32_t i = static_cast<int32_t>(tokens.size()); i < n_vocab; ++i) {
    tokens.push_back("[PAD" + std::to_string(i) + "]");
    types.push_back(5);  // unused
    if (scores && scores->has_value()) (*scores)->push_back(-1e9f);
  }
  md.set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  md.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  if (scores && scores->has_value()) md.set("tokenizer.ggml.scores", GgufValue::of_f32s(**scores));
  return ok_status();
}

// The type a matrix is stored as: `wanted` if its rows fit the blocks, else the best that fits.
DType storage_type(DType wanted, int64_t row_length) {
  for (DType candidate : {wanted, DType::Q8_0, DType::F16}) {
    if (row_length % dtype_traits(candidate).block_size == 0) return candidate;
  }
  return DType::F32;
}

}  // namespace

Result<SynthDims> resolve_synth_dims(const SynthOptions& options) {
  const Architecture* arch = find_architecture(options.architecture);
  if (arch == nullptr)
    return make_error(ErrorCode::kNotFound, "unknown architecture '", options.architecture, "'");
  const SynthDims* preset = nullptr;
  std::string names;
  for (const auto& [name, dims] : arch->presets) {
    names += (names.empty() ? "" : ", ") + name;
    if (name == options.preset) preset = &dims;
  }
  if (preset == nullptr) {
    return make_error(ErrorCode::kInvalidArgument, "unknown preset '", options.preset, "' for ",
                      options.architecture, " (", names, ")");
  }
  SynthDims d = *preset;
  const SynthDims& o = options.dims;
  if (o.n_embd) d.n_embd = o.n_embd;
  if (o.n_layer) d.n_layer = o.n_layer;
  if (o.n_head) d.n_head = o.n_head;
  if (o.n_head_kv) d.n_head_kv = o.n_head_kv;
  if (o.n_ff) d.n_ff = o.n_ff;
  if (o.n_vocab) d.n_vocab = o.n_vocab;
  if (o.n_ctx) d.n_ctx = o.n_ctx;
  if (o.n_expert) d.n_expert = o.n_expert;
  if (o.n_expert_used) d.n_expert_used = o.n_expert_used;
  if (o.n_ff_exp) d.n_ff_exp = o.n_ff_exp;
  if (o.pooling_type >= 0) d.pooling_type = o.pooling_type;
  if (!o.variant.empty()) {
    std::vector<std::string> variants;  // those the presets name, once each
    for (const auto& [name, dims] : arch->presets) {
      if (!dims.variant.empty() &&
          std::find(variants.begin(), variants.end(), dims.variant) == variants.end())
        variants.push_back(dims.variant);
    }
    if (std::find(variants.begin(), variants.end(), o.variant) == variants.end()) {
      std::string known;
      for (const auto& v : variants) known += (known.empty() ? "" : ", ") + v;
      return make_error(ErrorCode::kInvalidArgument, "unknown variant '", o.variant, "' for ",
                        options.architecture, known.empty() ? " (it has none)" : " (" + known + ")");
    }
    d.variant = o.variant;
  }
  if (d.n_expert_used > (d.n_expert > 0 ? d.n_expert : 8)) {
    return make_error(ErrorCode::kInvalidArgument, "n_expert_used ", d.n_expert_used, " exceeds the ",
                      d.n_expert > 0 ? d.n_expert : 8, " experts");
  }
  for (int32_t v : {d.n_embd, d.n_layer, d.n_head, d.n_head_kv, d.n_ff, d.n_vocab, d.n_ctx}) {
    if (v <= 0) return make_error(ErrorCode::kInvalidArgument, "synthetic model dimensions must be positive");
  }
  if (d.n_vocab < 259 && options.vocab_file.empty() && !options.tokenizer_metadata) {
    return make_error(ErrorCode::kInvalidArgument,
                      "n_vocab must be at least 259 (3 special + 256 byte tokens)");
  }
  return d;
}

Status synthesize(const SynthOptions& options, const std::string& path,
                  const std::function<void(size_t, size_t)>& progress) {
  SINTER_ASSIGN(const SynthDims dims, resolve_synth_dims(options));
  const Architecture* arch = find_architecture(options.architecture);
  const auto& traits = dtype_traits(options.type);
  if (traits.quantize == nullptr) {
    return make_error(ErrorCode::kUnsupported, "sinter cannot quantize to ", traits.name);
  }
  GgufWriter writer;
  Metadata& md = writer.metadata();
  // The name leaves out the architecture: llama.cpp keys vocabulary quirks on names containing
  // "phi3" (it expects Phi-3's special tokens), which a synthetic vocabulary does not have.
  md.set("general.name", GgufValue::of_string(concat("sinter synthetic model (", options.preset, ")")));
  SINTER_TRY(arch->write_synth_hparams(dims, md));
  md.set("general.file_type", GgufValue::of_u32(static_cast<uint32_t>(options.type)));
  if (options.tokenizer_metadata) {
    SINTER_TRY(copy_vocab(*options.tokenizer_metadata, "the tokenizer", md, dims.n_vocab));
  } else if (!options.vocab_file.empty()) {
    SINTER_ASSIGN(GgufFile vocab, GgufFile::open(options.vocab_file));
    SINTER_TRY(copy_vocab(vocab.metadata(), options.vocab_file, md, dims.n_vocab));
  } else {
    write_synthetic_vocab(md, dims.n_vocab);
  }

  WeightBinder schema;
  auto model = arch->create(md, schema);
  if (!model) return model.error().with_context("synthetic model");
  for (const WeightSpec& spec : schema.specs()) {
    if (!spec.in_synth) continue;
    // Biases stay F32 even where they are matrices (gpt-oss's per-expert biases), as converted
    // files have them and as llama.cpp's quantizer leaves them.
    const bool bias = spec.name.ends_with(".bias");
    // So do the matrices llama.cpp's quantizer keeps (BERT's position and token-type embeddings,
    // routers, RWKV's LoRAs and shares: model/quantize/tensor_rules.h), and LFM2's convolution
    // kernels, which the convolution reads as F32 (llama.cpp's too), and the weights an op reads
    // as floats (WeightSpec::f32: Mamba's A and convolution kernels).
    const bool kept = !tensor_is_quantizable(spec.name, spec.shape) ||
                      spec.name.ends_with("shortconv.conv.weight") || spec.f32;
    const DType type =
        spec.is_matrix() && !bias && !kept ? storage_type(options.type, spec.shape[0]) : DType::F32;
    const uint64_t seed = options.seed;
    SINTER_TRY(
        writer.add_tensor(spec.name, type, spec.shape, [spec, type, seed]() -> Result<std::vector<uint8_t>> {
          const std::vector<float> values = synth_values(spec, seed);
          const int64_t rows = static_cast<int64_t>(values.size()) / spec.shape[0];
          std::vector<uint8_t> bytes(row_bytes(type, spec.shape[0]) * static_cast<size_t>(rows));
          const auto& t = dtype_traits(type);
          for (int64_t r = 0; r < rows; ++r) {
            t.quantize(values.data() + r * spec.shape[0],
                       bytes.data() + static_cast<size_t>(r) * row_bytes(type, spec.shape[0]), spec.shape[0]);
          }
          return bytes;
        }));
  }
  return writer.write(path, progress);
}

}  // namespace sinter
