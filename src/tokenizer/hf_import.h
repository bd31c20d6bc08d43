// Import of Hugging Face tokenizer files (tokenizer.json, tokenizer_config.json) into the GGUF
// tokenizer keys, so that sinter (and llama.cpp) can tokenize with a model's original vocabulary.
//
//  - byte-level BPE (ByteLevel pre-tokenizer) → `gpt2`, with `pre` recognized from the
//    pre-tokenizer's definition (its regular expressions and normalizer), never from a name;
//  - SentencePiece-style BPE (byte_fallback, spaces as "▁": Llama 2, Gemma) → `llama`, with
//    scores that make highest-score-first merging follow the merge ranks;
//  - WordPiece (BERT) → `bert`, with the vocabulary in llama.cpp's "▁word"/"piece" form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gguf/metadata.h"
#include "sinter/result.h"

namespace sinter {

struct HfImportOptions {
  // Write this tokenizer.ggml.pre instead of recognizing it (for pre-tokenizers sinter does not know).
  std::string force_pre;
};

struct HfImport {
  Metadata metadata;               // the tokenizer.* keys
  std::vector<std::string> notes;  // what was inferred or approximated, one line each
};

// `tokenizer_config_json` may be empty (no tokenizer_config.json).
Result<HfImport> import_hf_tokenizer(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                                     const HfImportOptions& options = {});

// The canonical regex list of a tokenizer.json pre_tokenizer (exposed for tests and messages).
Result<std::vector<std::string>> hf_pre_tokenizer_patterns(std::string_view pre_tokenizer_json);

}  // namespace sinter
