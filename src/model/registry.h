// The architecture registry: each architecture joins from its own file,
//
//   const ArchitectureRegistration kLlama{{.name = "llama", .create = ..., .synth = ...}};
//
// and dispatch happens on `general.architecture`. No central switch, no enum.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gguf/metadata.h"
#include "model/model.h"
#include "model/weights.h"

namespace sinter {

// Dimensions of a synthetic model (`sinter synth`); 0 means "the preset's value".
struct SynthDims {
  int32_t n_embd = 0;
  int32_t n_layer = 0;
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t n_ff = 0;
  int32_t n_vocab = 0;
  int32_t n_ctx = 0;
  // Mixture-of-experts models: experts, experts per token, an expert's FFN length (architectures
  // that take it from a key of its own; others use n_ff).
  int32_t n_expert = 0;
  int32_t n_expert_used = 0;
  int32_t n_ff_exp = 0;
  // Embedding models: `{arch}.pooling_type` (model.h's Pooling); -1: the architecture's choice.
  int32_t pooling_type = -1;
  // A named variant of the architecture's features (deepseek2: "v2-lite"), or empty. A preset
  // carries its variant; the variants an architecture knows are those its presets name.
  std::string variant{};
};

struct Architecture {
  std::string name;
  // Reads hyper-parameters and binds weights (in any binder mode) into a model.
  std::function<Result<std::unique_ptr<Model>>(const Metadata& metadata, WeightBinder& binder)> create;
  // Writes the hyper-parameter keys of a synthetic model with these dimensions.
  std::function<Status(const SynthDims& dims, Metadata& out)> write_synth_hparams;
  // Named dimension presets for synth ("tiny", "small", "1b", ...).
  std::vector<std::pair<std::string, SynthDims>> presets;
  // An embedding model (ModelShape::encoder): hidden states, no logits, nothing to generate.
  // Tests that generate from every architecture leave these out.
  bool encoder = false;
};

struct ArchitectureRegistration {
  explicit ArchitectureRegistration(Architecture architecture);
};

const Architecture* find_architecture(std::string_view name);
std::vector<std::string> architecture_names();

// Architecture name of a file's metadata, or an error naming what is missing.
Result<std::string> architecture_of(const Metadata& metadata);

// Whether a file holds an embedding model (its ModelShape::encoder once loaded), from its header
// alone: an encoder architecture (bert, nomic-bert), or a decoder whose file has a pooling type
// other than none (Qwen3-Embedding: `qwen3.pooling_type` = last). False for an unknown
// architecture.
bool is_embedding_model_file(const Metadata& metadata);

}  // namespace sinter
