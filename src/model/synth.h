// Synthetic models: random weights of any registered architecture, size and data type, for
// tests and benchmarks (`sinter synth`). The same options and seed give the same file, byte for
// byte, on any machine: values come from a counter-based generator with integer arithmetic only.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "gguf/metadata.h"
#include "model/registry.h"
#include "tensor/dtype.h"

namespace sinter {

struct SynthOptions {
  std::string architecture = "llama";
  std::string preset = "tiny";  // named dimensions; fields of `dims` that are non-zero override
  SynthDims dims;
  DType type = DType::F32;  // matrices; vectors stay F32
  uint64_t seed = 0;
  std::string vocab_file;  // copy the tokenizer of this GGUF (padded to n_vocab if needed)
  // Or use these tokenizer.* keys (e.g. imported from a Hugging Face tokenizer.json).
  std::optional<Metadata> tokenizer_metadata;
  int threads = 0;
};

// Writes the model to `path` (atomically). `progress(done, total)` is called per tensor.
Status synthesize(const SynthOptions& options, const std::string& path,
                  const std::function<void(size_t, size_t)>& progress = {});

// The dimensions `options` resolve to (preset, then overrides).
Result<SynthDims> resolve_synth_dims(const SynthOptions& options);

}  // namespace sinter
