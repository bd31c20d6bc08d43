#include "sample/grammar/token_trie.h"

#include <algorithm>
#include <numeric>

#include "sample/grammar/grammar_matcher.h"

namespace sinter {

TokenTrie TokenTrie::build(const std::vector<std::string>& pieces, const std::vector<bool>& skip) {
  TokenTrie trie;
  for (size_t id = 0; id < pieces.size(); ++id) {
    if (!pieces[id].empty() && !skip[id]) trie.tokens_.push_back(static_cast<TokenId>(id));
  }
  std::stable_sort(trie.tokens_.begin(), trie.tokens_.end(), [&](TokenId a, TokenId b) {
    return pieces[static_cast<size_t>(a)] < pieces[static_cast<size_t>(b)];
  });
  // Sorted pieces: each one shares a prefix with the one before; the nodes of that prefix are
  // on `path`, and the rest of the piece hangs below as new nodes (created in byte order).
  trie.nodes_.emplace_back();
  std::vector<uint32_t> path{0};
  std::vector<uint32_t> last_child{kNone};
  std::string_view previous;
  for (size_t k = 0; k < trie.tokens_.size(); ++k) {
    const std::string_view piece = pieces[static_cast<size_t>(trie.tokens_[k])];
    size_t common = 0;
    while (common < piece.size() && common < previous.size() && piece[common] == previous[common]) ++common;
    path.resize(common + 1);
    for (size_t d = common; d < piece.size(); ++d) {
      const auto node = static_cast<uint32_t>(trie.nodes_.size());
      Node created;
      created.byte = static_cast<uint8_t>(piece[d]);
      trie.nodes_.push_back(created);
      last_child.push_back(kNone);
      const uint32_t parent = path[d];
      if (last_child[parent] == kNone) {
        trie.nodes_[parent].first_child = node;
      } else {
        trie.nodes_[last_child[parent]].next_sibling = node;
      }
      last_child[parent] = node;
      path.push_back(node);
    }
    Node& end = trie.nodes_[path[piece.size()]];
    if (end.tokens_end == end.tokens_begin) end.tokens_begin = static_cast<uint32_t>(k);
    end.tokens_end = static_cast<uint32_t>(k + 1);
    previous = piece;
  }
  return trie;
}

std::shared_ptr<const GrammarVocabulary> GrammarVocabulary::build(std::vector<std::string> pieces,
                                                                  std::vector<bool> end_of_generation) {
  auto vocab = std::make_shared<GrammarVocabulary>();
  end_of_generation.resize(pieces.size(), false);
  for (std::string& piece : pieces) piece.resize(grammar_piece(piece).size());
  for (size_t id = 0; id < pieces.size(); ++id) {
    if (end_of_generation[id]) vocab->eog_tokens_.push_back(static_cast<TokenId>(id));
  }
  vocab->trie_ = TokenTrie::build(pieces, end_of_generation);
  vocab->pieces_ = std::move(pieces);
  vocab->end_of_generation_ = std::move(end_of_generation);
  return vocab;
}

}  // namespace sinter
