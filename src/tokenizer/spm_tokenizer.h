// SentencePiece-style tokenizer (`tokenizer.ggml.model = llama`), as llama.cpp runs it:
// spaces become U+2581 "▁", a segment that starts the text or follows a special token gets a
// space in front (add_space_prefix), adjacent pieces merge by highest score (ties: leftmost),
// and text that forms no token falls back to byte tokens <0xXX>.
#pragma once

#include <array>

#include "tokenizer/special_split.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

class SpmTokenizer final : public Tokenizer {
 public:
  static Result<std::unique_ptr<Tokenizer>> create(Vocabulary vocabulary);

  Result<std::vector<TokenId>> encode(std::string_view text,
                                      const EncodeOptions& options = {}) const override;
  std::string token_to_piece(TokenId id, bool render_special = false) const override;

 private:
  explicit SpmTokenizer(Vocabulary vocabulary);
  // Tokenizes one segment whose spaces are already "▁".
  Status encode_segment(std::string_view text, std::vector<TokenId>* out) const;

  SpecialTokenSplitter splitter_;
  std::array<TokenId, 256> byte_tokens_{};  // <0xXX> (or the single byte) per byte, kNoToken if absent
};

// Tokenizer-wide helpers shared by the SentencePiece-style paths.
std::string escape_spaces(std::string_view text);    // ' ' → "▁"
std::string unescape_spaces(std::string_view text);  // "▁" → ' '
int parse_byte_token(std::string_view text);         // "<0x41>" → 0x41, otherwise -1
// Byte length of the UTF-8 sequence a lead byte announces, as llama.cpp counts it (1 for
// continuation and invalid bytes); the caller clamps it to the bytes that remain.
inline size_t lead_byte_length(uint8_t byte) {
  static constexpr uint8_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[byte >> 4];
}

}  // namespace sinter
