// WordPiece (`tokenizer.ggml.model = bert`) with BERT's normalization, as Hugging Face's
// BertNormalizer + BertPreTokenizer + WordPiece run it: control characters removed, whitespace
// unified, CJK characters spaced apart, accents stripped (NFD, marks removed) and lowercased as
// the vocabulary says, words split at whitespace and punctuation, then longest-match-first
// pieces. GGUF stores the vocabulary the llama.cpp way: a word-initial piece is "▁piece" and a
// continuation is bare (Hugging Face: "piece" and "##piece").
#pragma once

#include "tokenizer/special_split.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

class WordPieceTokenizer final : public Tokenizer {
 public:
  static Result<std::unique_ptr<Tokenizer>> create(Vocabulary vocabulary);

  Result<std::vector<TokenId>> encode(std::string_view text,
                                      const EncodeOptions& options = {}) const override;
  std::string token_to_piece(TokenId id, bool render_special = false) const override;

  // BERT normalization and pre-tokenization of plain text (exposed for tests).
  std::vector<std::string> words(std::string_view text) const;

 private:
  explicit WordPieceTokenizer(Vocabulary vocabulary)
      : Tokenizer(std::move(vocabulary)), splitter_(vocabulary_) {}
  Status encode_word(const std::string& word, std::vector<TokenId>* out) const;

  SpecialTokenSplitter splitter_;
};

}  // namespace sinter
