// The vocabulary as grammar-constrained sampling sees it: each token's bytes and whether it ends
// generation, plus a prefix tree (trie) of the token bytes, so that the tokens a grammar allows
// are found by one walk over shared prefixes instead of one match per token. Built once per
// vocabulary and shared, read-only, by every sequence (thread-safe to read).
//
// Which tokens take part follows llama.cpp (llama_grammar_apply_impl): a token's bytes are its
// piece with special tokens rendered as their text (so a control token such as "<s>" that does
// not end generation can be matched by a grammar like any other text), cut at the first NUL; an
// empty piece is never allowed; end-of-generation tokens are allowed exactly where the grammar
// can be complete and are not in the trie.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/token.h"

namespace sinter {

class TokenTrie {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint32_t first_child = kNone;  // children in increasing byte order
    uint32_t next_sibling = kNone;
    uint32_t tokens_begin = 0;  // [tokens_begin, tokens_end) in tokens(): the ids whose bytes end here
    uint32_t tokens_end = 0;
    uint8_t byte = 0;  // the byte on the edge from the parent
  };

  // Every token whose piece is non-empty; `pieces` indexed by token id.
  static TokenTrie build(const std::vector<std::string>& pieces, const std::vector<bool>& skip);

  const std::vector<Node>& nodes() const { return nodes_; }  // nodes()[0] is the root (no bytes)
  const std::vector<TokenId>& tokens() const { return tokens_; }

 private:
  std::vector<Node> nodes_;
  std::vector<TokenId> tokens_;  // ids sorted by their bytes
};

class GrammarVocabulary {
 public:
  // pieces[id]: the token's bytes (special tokens rendered); end_of_generation[id]: it ends
  // generation. Both of the vocabulary's size.
  static std::shared_ptr<const GrammarVocabulary> build(std::vector<std::string> pieces,
                                                        std::vector<bool> end_of_generation);

  int32_t size() const { return static_cast<int32_t>(pieces_.size()); }
  // The bytes the grammar sees (cut at the first NUL); empty for ids outside the vocabulary.
  std::string_view piece(TokenId id) const {
    return id >= 0 && id < size() ? std::string_view(pieces_[static_cast<size_t>(id)]) : std::string_view();
  }
  bool is_end_of_generation(TokenId id) const {
    return id >= 0 && id < size() && end_of_generation_[static_cast<size_t>(id)];
  }
  const std::vector<TokenId>& end_of_generation_tokens() const { return eog_tokens_; }
  const TokenTrie& trie() const { return trie_; }

 private:
  std::vector<std::string> pieces_;
  std::vector<bool> end_of_generation_;
  std::vector<TokenId> eog_tokens_;
  TokenTrie trie_;
};

}  // namespace sinter
