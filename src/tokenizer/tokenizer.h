// Tokenizers read from GGUF metadata: SentencePiece-style (`tokenizer.ggml.model = llama`),
// byte-level BPE (`gpt2`), WordPiece (`bert`) and RWKV's greedy byte matching (`rwkv`), all behind
// one interface.
//
// Encoding follows llama.cpp's tokenizer where it agrees with the model's original (Hugging Face)
// tokenizer, and the original where they differ; docs/TOKENIZERS.md lists every such place.
//
// Ids from outside (a request, a command line) may be out of range: check them with
// Tokenizer::check_ids() first. token_to_piece() and decode() render an out-of-range id as
// nothing rather than failing, so that a streaming caller never has to handle an error mid-way.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/token.h"
#include "gguf/metadata.h"
#include "sinter/result.h"
#include "tokenizer/vocabulary.h"

namespace sinter {

struct EncodeOptions {
  bool add_special = true;    // BOS/EOS (CLS/SEP for WordPiece) as the model's add_bos/add_eos flags say
  bool parse_special = true;  // text like "<|eot_id|>" becomes the special token
};

struct TokenizerOptions {
  // Use this pre-tokenizer instead of `tokenizer.ggml.pre` (the escape hatch for files whose
  // `pre` value sinter does not know). Empty: use the file's value.
  std::string force_pre;
};

class Tokenizer {
 public:
  // Reads the `tokenizer.*` keys. An unknown model or pre-tokenizer is an error naming it.
  static Result<std::unique_ptr<Tokenizer>> from_metadata(const Metadata& metadata,
                                                          const TokenizerOptions& options = {});
  virtual ~Tokenizer();

  virtual Result<std::vector<TokenId>> encode(std::string_view text,
                                              const EncodeOptions& options = {}) const = 0;

  // The bytes a token stands for: byte tokens give their byte; control and unknown tokens give
  // their text only when `render_special`; user-defined tokens always give their text.
  virtual std::string token_to_piece(TokenId id, bool render_special = false) const = 0;

  // The pieces concatenated. For SentencePiece vocabularies with a space prefix, the one space
  // the encoder put in front of the first text is removed again (see docs/TOKENIZERS.md).
  std::string decode(std::span<const TokenId> ids, bool render_special = false) const;

  // Ok when every id is inside the vocabulary, otherwise an error naming the first one that is not.
  Status check_ids(std::span<const TokenId> ids) const;

  int32_t vocab_size() const { return vocabulary_.size(); }
  TokenId bos() const { return vocabulary_.special().bos; }
  TokenId eos() const { return vocabulary_.special().eos; }
  TokenId eot() const { return vocabulary_.special().eot; }
  // eos, eot, eom and the other end-of-generation tokens the vocabulary marks.
  bool is_end_of_generation(TokenId id) const { return vocabulary_.is_end_of_generation(id); }
  bool add_bos() const { return vocabulary_.flags().add_bos; }
  bool add_eos() const { return vocabulary_.flags().add_eos; }
  std::string_view token_text(TokenId id) const { return vocabulary_.text(id); }
  TokenType token_type(TokenId id) const { return vocabulary_.type(id); }
  std::string_view model_name() const { return vocabulary_.model_name(); }
  // The pre-tokenizer in use (BPE only; empty otherwise).
  virtual std::string_view pre_tokenizer_name() const { return {}; }

  const Vocabulary& vocabulary() const { return vocabulary_; }

 protected:
  explicit Tokenizer(Vocabulary vocabulary) : vocabulary_(std::move(vocabulary)) {}

  Vocabulary vocabulary_;
};

// Streams text as tokens arrive and never emits half a UTF-8 character: bytes of a character
// that is not complete yet are held back until the rest arrives. flush() returns what is left.
// Pieces are joined exactly as the tokens give them (no leading space is removed: a stream
// continues a prompt). Bytes that can never form a character are passed through unchanged.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool render_special = false)
      : tokenizer_(tokenizer), render_special_(render_special) {}

  std::string push(TokenId id);
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  bool render_special_;
  std::string pending_;
};

}  // namespace sinter
