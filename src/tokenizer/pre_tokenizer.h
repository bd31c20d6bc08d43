// BPE pre-tokenizers: how text is cut into words before merges run, selected by the GGUF key
// `tokenizer.ggml.pre`.
//
// Each pre-tokenizer is a list of regular expressions applied in turn: every piece the previous
// step produced is cut into the matches of the next expression and the text between them (Hugging
// Face's `Split` with behavior `Isolated`). The expressions are the originals from the models'
// tokenizer.json where known (llama.cpp rewrites some of them for std::regex), compiled with PCRE2
// in UTF + Unicode-property mode and JIT-compiled.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sinter/result.h"

namespace sinter {

struct PreTokenizerSpec {
  std::string name;                   // the canonical tokenizer.ggml.pre value
  std::vector<std::string> aliases;   // other values that mean the same
  std::vector<std::string> patterns;  // PCRE2 syntax, applied in order
  bool nfc = false;                   // Unicode NFC first (the Qwen 2 family's normalizer)
  bool byte_level = true;             // GPT-2 byte-to-unicode mapping; false: raw UTF-8, spaces as "▁"
  bool ignore_merges = false;         // a word that is a token is taken whole (llama.cpp's flag)
};

// The spec for a tokenizer.ggml.pre value (canonical name or alias), or nullptr.
const PreTokenizerSpec* find_pre_tokenizer(std::string_view name);
const std::vector<PreTokenizerSpec>& pre_tokenizer_specs();
// "default, gpt-2, llama-bpe, ..." for error messages.
std::string known_pre_tokenizer_names();

// Compiled patterns of one pre-tokenizer. Safe to use from several threads at once.
class RegexSplitter {
 public:
  static Result<std::shared_ptr<const RegexSplitter>> compile(const std::vector<std::string>& patterns);
  ~RegexSplitter();

  // Cuts valid UTF-8 `text` into pieces (views into `text`) that cover it exactly.
  Result<std::vector<std::string_view>> split(std::string_view text) const;

 private:
  RegexSplitter() = default;
  struct Compiled;
  std::vector<std::unique_ptr<Compiled>> compiled_;
};

// Replaces every byte that is not part of well-formed UTF-8 by U+FFFD (as llama.cpp does before
// pre-tokenizing). Returns `text` unchanged when it is valid.
std::string sanitize_utf8(std::string_view text);

}  // namespace sinter
