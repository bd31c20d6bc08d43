// RWKV's "world" tokenizer (`tokenizer.ggml.model = rwkv`), as llama.cpp runs it: each token
// stands for a byte string, stored escaped as Python writes bytes (`\xe4`, `\n`, `\\`, `\'`), and
// text is cut greedily: at each point the longest token whose bytes start there, from the text's
// bytes alone (no normalization, no pre-tokenizer, no space prefix). Special (control) tokens
// are split out first. No BOS or EOS is added.
#pragma once

#include <string>
#include <vector>

#include "tokenizer/special_split.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

class RwkvTokenizer final : public Tokenizer {
 public:
  static Result<std::unique_ptr<Tokenizer>> create(Vocabulary vocabulary);

  Result<std::vector<TokenId>> encode(std::string_view text,
                                      const EncodeOptions& options = {}) const override;
  // The token's bytes; control and unknown tokens only with render_special.
  std::string token_to_piece(TokenId id, bool render_special = false) const override;

 private:
  explicit RwkvTokenizer(Vocabulary vocabulary);
  Status encode_text(std::string_view text, std::vector<TokenId>* out) const;

  // A byte trie of every token's bytes (a later token of the same bytes wins, as in llama.cpp).
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
    TokenId token = kNoToken;
  };
  int32_t child(int32_t node, uint8_t byte) const;
  void insert(const std::string& bytes, TokenId id);

  SpecialTokenSplitter splitter_;
  std::vector<Node> nodes_;
  std::vector<std::string> bytes_;  // each token's bytes
};

// A token's bytes from its stored text: `\t`, `\n`, `\r`, `\xNN` (lowercase hex) and `\c` for
// any other c (so `\\` and `\'`), as llama.cpp's llama_unescape_rwkv_token reads it.
std::string unescape_rwkv_token(std::string_view escaped);

}  // namespace sinter
