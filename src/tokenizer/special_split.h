// Splits text at the special tokens it contains before the text is tokenized.
//
// Matching is leftmost-longest over all special tokens (Hugging Face's added-token matching);
// a token marked lstrip/rstrip also takes the whitespace before/after it. With parse_special
// off only user-defined tokens are split out (control and unknown tokens stay text), as llama.cpp
// and Hugging Face both do.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/token.h"
#include "tokenizer/vocabulary.h"

namespace sinter {

struct Fragment {
  TokenId token = kNoToken;  // a special token, or kNoToken for text
  std::string_view text;     // the text (a view into the input) when token == kNoToken
};

class SpecialTokenSplitter {
 public:
  explicit SpecialTokenSplitter(const Vocabulary& vocabulary);

  // Text fragments are never empty.
  std::vector<Fragment> split(std::string_view text, bool parse_special) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
    TokenId token = kNoToken;
  };
  int32_t child(int32_t node, uint8_t byte) const;
  // The longest special token starting at text[start], or kNoToken; *length gets its byte length.
  TokenId longest_match(std::string_view text, size_t start, bool parse_special, size_t* length) const;

  const Vocabulary& vocabulary_;
  std::vector<Node> nodes_;
};

// Unicode White_Space (what Hugging Face's lstrip/rstrip trims).
bool is_unicode_whitespace(uint32_t code_point);

}  // namespace sinter
