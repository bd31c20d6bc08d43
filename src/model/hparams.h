// Hyper-parameters: each architecture declares its typed struct's fields once, with GGUF key,
// and default where the key is optional. The same declaration reads a file (reporting every
// default it assumed), writes the keys of a synthetic model, and lists the config for
// `sinter inspect`.
//
//   void declare(HParams& p, LlamaHParams& h) {
//     p.required("{arch}.embedding_length", h.n_embd);
//     p.optional("{arch}.rope.freq_base", h.rope_freq_base, 10000.0f);
//   }
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/metadata.h"
#include "sinter/result.h"

namespace sinter {

struct HParamEntry {
  std::string key;      // the GGUF key, "{arch}" resolved
  std::string value;    // the value the model runs with, rendered
  bool defaulted = false;
  std::string json;     // the value as a JSON literal
};

class HParams {
 public:
  enum class Mode { kRead, kWrite };

  // Reads from `metadata`.
  HParams(const Metadata& metadata, std::string architecture);
  // Writes declared fields into `out` (synthetic models).
  HParams(Metadata* out, std::string architecture);

  Mode mode() const { return mode_; }
  const std::string& architecture() const { return architecture_; }

  template <class T>
  void required(std::string_view key, T& field);
  template <class T>
  void optional(std::string_view key, T& field, const T& default_value);
  // An optional array: one value per layer, or a single value for all layers. Missing → default.
  void per_layer(std::string_view key, std::vector<uint32_t>& field, uint32_t layers, uint32_t default_value);

  // Records an invalid combination found by the architecture's own checks.
  void fail(const std::string& message);

  Status status() const;
  const std::vector<HParamEntry>& entries() const { return entries_; }
  std::vector<HParamEntry> defaults_used() const;
  std::string resolve(std::string_view key) const;

 private:
  template <class T>
  void record(const std::string& key, const T& value, bool defaulted);

  Mode mode_;
  const Metadata* in_ = nullptr;
  Metadata* out_ = nullptr;
  std::string architecture_;
  std::vector<HParamEntry> entries_;
  std::vector<std::string> errors_;
};

}  // namespace sinter
