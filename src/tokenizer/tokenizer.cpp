#include "tokenizer/tokenizer.h"

#include "core/utf8.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/rwkv_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/wordpiece_tokenizer.h"

namespace sinter {

Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_metadata(const Metadata& metadata,
                                                            const TokenizerOptions& options) {
  SINTER_ASSIGN(Vocabulary vocabulary, Vocabulary::from_metadata(metadata));
  switch (vocabulary.kind()) {
    case VocabularyKind::kSentencePiece: return SpmTokenizer::create(std::move(vocabulary));
    case VocabularyKind::kBytePairEncoding:
      return BpeTokenizer::create(std::move(vocabulary), options.force_pre);
    case VocabularyKind::kWordPiece: return WordPieceTokenizer::create(std::move(vocabulary));
    case VocabularyKind::kRwkv: return RwkvTokenizer::create(std::move(vocabulary));
  }
  return make_error(ErrorCode::kInternal, "unhandled vocabulary kind");
}

namespace {

void replace_all(std::string* text, std::string_view from, std::string_view to) {
  for (size_t pos = text->find(from); pos != std::string::npos; pos = text->find(from, pos + to.size())) {
    text->replace(pos, from.size(), to);
  }
}

// Hugging Face's clean_up_tokenization, which BERT's WordPiece decoder applies.
void clean_up_tokenization(std::string* text) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(text, from, to);
}

}  // namespace

std::string Tokenizer::decode(std::span<const TokenId> ids, bool render_special) const {
  // SentencePiece puts a space in front of the text (add_space_prefix) and WordPiece marks every
  // word start with one; the first one is not part of the text. It is removed from the first
  // piece that gives any text, so that decode(encode(text)) == text, also after a BOS token.
  // (llama.cpp removes it only when the very first id is that piece; Hugging Face's decoders
  // remove it from the joined text, as here.)
  const bool wordpiece = vocabulary_.kind() == VocabularyKind::kWordPiece;
  bool strip_space = wordpiece || (vocabulary_.kind() == VocabularyKind::kSentencePiece &&
                                   vocabulary_.flags().add_space_prefix);
  std::string out;
  for (TokenId id : ids) {
    std::string piece = token_to_piece(id, render_special);
    // WordPiece joins words with spaces, special tokens included ("[CLS] a [SEP]").
    if (wordpiece && !piece.empty() && piece[0] != ' ' && vocabulary_.is_special(id) && !out.empty()) {
      piece.insert(0, 1, ' ');
    }
    if (strip_space && !piece.empty()) {
      if (piece[0] == ' ') piece.erase(0, 1);
      strip_space = false;
    }
    out += piece;
  }
  if (wordpiece) clean_up_tokenization(&out);
  return out;
}

Status Tokenizer::check_ids(std::span<const TokenId> ids) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!vocabulary_.contains(ids[i])) {
      return make_error(ErrorCode::kInvalidArgument, "token id ", ids[i], " at position ", i,
                        " is outside the vocabulary (0..", vocab_size() - 1, ")");
    }
  }
  return ok_status();
}

std::string StreamingDetokenizer::push(TokenId id) {
  pending_ += tokenizer_.token_to_piece(id, render_special_);
  const size_t held = utf8_incomplete_tail(pending_);
  std::string ready = pending_.substr(0, pending_.size() - held);
  pending_.erase(0, pending_.size() - held);
  return ready;
}

std::string StreamingDetokenizer::flush() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

}  // namespace sinter
