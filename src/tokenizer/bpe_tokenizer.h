// Byte-level BPE (`tokenizer.ggml.model = gpt2`): special tokens are split out, the rest is cut
// into words by the pre-tokenizer, each word's bytes are mapped to printable characters (GPT-2's
// byte-to-unicode table), and adjacent symbols merge by lowest merge rank (ties: leftmost).
// The Gemma 4 style (`pre = gemma4`) skips the byte mapping: spaces become "▁" and characters
// the vocabulary lacks fall back to <0xXX> byte tokens.
#pragma once

#include <array>
#include <unordered_map>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/special_split.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

class BpeTokenizer final : public Tokenizer {
 public:
  // `force_pre` (if not empty) replaces the file's tokenizer.ggml.pre.
  static Result<std::unique_ptr<Tokenizer>> create(Vocabulary vocabulary, const std::string& force_pre);

  Result<std::vector<TokenId>> encode(std::string_view text,
                                      const EncodeOptions& options = {}) const override;
  std::string token_to_piece(TokenId id, bool render_special = false) const override;
  std::string_view pre_tokenizer_name() const override { return spec_->name; }

 private:
  BpeTokenizer(Vocabulary vocabulary, const PreTokenizerSpec* spec,
               std::shared_ptr<const RegexSplitter> splitter);
  Status encode_text(std::string_view text, std::vector<TokenId>* out) const;
  void encode_word(std::string_view word, std::vector<TokenId>* out) const;
  int32_t merge_rank(TokenId left, TokenId right) const;

  const PreTokenizerSpec* spec_;
  std::shared_ptr<const RegexSplitter> regex_;
  SpecialTokenSplitter splitter_;
  std::unordered_map<uint64_t, int32_t> ranks_;  // (left id << 32 | right id) → merge rank
  std::array<TokenId, 256> byte_tokens_{};       // the fallback token of each byte, or kNoToken
};

// GPT-2's reversible byte ↔ printable-character mapping.
const std::string& byte_to_unicode(uint8_t byte);  // UTF-8 of the character standing for `byte`
int unicode_to_byte(uint32_t code_point);          // the byte, or -1 if the character stands for none

}  // namespace sinter
