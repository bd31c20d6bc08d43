// Hyper-parameters: each architecture declares its typed struct's fields once, with GGUF key,
// and default where the key is optional. The same declaration reads a file (reporting every
// default it assumed), writes the keys of a synthetic model, and lists the config for
// `sinter inspect`.
//
//   void declare(HParams& p, LlamaHParams& h) {
//     p.required("{arch}.embedding_length", h.n_embd);
//     p.optional("{arch}.rope.freq_base", h.rope_freq_base, 10000.0f);
//   }
//
// Rules every value read from a file obeys, so that no architecture has to repeat them:
// - uint32 fields hold counts and sizes the runtime keeps as int32: above INT32_MAX is an error
//   (a context length of 2^32-1 must not become -1);
// - float fields must be finite (a NaN RoPE base or an infinite epsilon is an error);
// - a block count (block_count()) must equal the number of blk.N blocks among the file's
//   tensors, numbered 0..N-1, so that per-layer vectors and the weights bound per layer are
//   sized by what the file holds, never by a number it merely claims;
// - per_layer() arrays are never sized beyond the blocks the file holds.
// A value that breaks a rule is reported and leaves its field at its previous value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/metadata.h"
#include "sinter/result.h"

namespace sinter {

class GgufFile;

struct HParamEntry {
  std::string key;    // the GGUF key, "{arch}" resolved
  std::string value;  // the value the model runs with, rendered
  bool defaulted = false;
  // The value as a JSON literal; always valid JSON: a non-finite float (possible only in
  // write mode) is the string "nan", "inf" or "-inf".
  std::string json;
};

class HParams {
 public:
  enum class Mode { kRead, kWrite };

  // Reads from `metadata`; `file`, when given, is what block counts are checked against.
  HParams(const Metadata& metadata, std::string architecture, const GgufFile* file = nullptr);
  // Writes declared fields into `out` (synthetic models).
  HParams(Metadata* out, std::string architecture);

  Mode mode() const { return mode_; }
  const std::string& architecture() const { return architecture_; }

  template <class T>
  void required(std::string_view key, T& field);
  template <class T>
  void optional(std::string_view key, T& field, const T& default_value);
  // A required block count: checked against the file's blk.N tensors (when reading with a file).
  // On a mismatch `field` is left as it was (0 in a fresh struct): nothing is sized from the claim.
  void block_count(std::string_view key, uint32_t& field);
  // An optional array: one value per layer, or a single value for all layers. Missing → default.
  void per_layer(std::string_view key, std::vector<uint32_t>& field, uint32_t layers, uint32_t default_value);

  // A required array of at most `max_count` integers (llama.cpp's get_key_or_arr into a fixed array:
  // rope.dimension_sections), zeros appended up to max_count; written as llama.cpp's converter
  // writes it (INT32).
  void array(std::string_view key, std::vector<uint32_t>& field, size_t max_count);
  // Records an invalid combination found by the architecture's own checks.
  void fail(const std::string& message);
  // 'text' for a message, cut short when long: a message never grows with what a file holds.
  static std::string quote(std::string_view text);

  // Reading: whether the file holds this key (for keys whose absence means something).
  bool has(std::string_view key) const;

  Status status() const;
  const std::vector<HParamEntry>& entries() const { return entries_; }
  std::vector<HParamEntry> defaults_used() const;
  std::string resolve(std::string_view key) const;

 private:
  template <class T>
  void record(const std::string& key, const T& value, bool defaulted);
  // The rules on read values (above); false (and an error recorded) when `value` breaks one.
  template <class T>
  bool check_read(const std::string& key, const T& value);
  // Blocks numbered blk.0 .. blk.(n-1) in the file, or an error saying how they are not.
  Result<uint32_t> file_blocks() const;

  Mode mode_;
  const Metadata* in_ = nullptr;
  Metadata* out_ = nullptr;
  const GgufFile* file_ = nullptr;
  std::string architecture_;
  std::vector<HParamEntry> entries_;
  std::vector<std::string> errors_;
};

}  // namespace sinter
