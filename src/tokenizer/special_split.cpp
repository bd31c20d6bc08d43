#include "tokenizer/special_split.h"

#include <algorithm>

#include "core/utf8.h"

namespace sinter {

bool is_unicode_whitespace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
         cp == 0x3000;
}

namespace {

// Bytes of whitespace at the end of `text`.
size_t trailing_whitespace(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<uint8_t>(text[start]) & 0xc0) == 0x80) --start;
    size_t pos = start;
    const uint32_t cp = utf8_decode(text, &pos);
    if (pos != end || !is_unicode_whitespace(cp)) break;
    end = start;
  }
  return text.size() - end;
}

size_t leading_whitespace(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    if (!is_unicode_whitespace(utf8_decode(text, &next))) break;
    pos = next;
  }
  return pos;
}

}  // namespace

SpecialTokenSplitter::SpecialTokenSplitter(const Vocabulary& vocabulary) : vocabulary_(vocabulary) {
  nodes_.emplace_back();
  for (TokenId id = 0; id < vocabulary.size(); ++id) {
    if (!vocabulary.is_special(id)) continue;
    const std::string_view text = vocabulary.text(id);
    if (text.empty()) continue;
    int32_t node = 0;
    for (char c : text) {
      const auto byte = static_cast<uint8_t>(c);
      int32_t next = child(node, byte);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        auto& children = nodes_[node].children;
        children.insert(
            std::lower_bound(children.begin(), children.end(), std::pair<uint8_t, int32_t>{byte, 0}),
            {byte, next});
        nodes_.emplace_back();
      }
      node = next;
    }
    if (nodes_[node].token == kNoToken) nodes_[node].token = id;
  }
}

int32_t SpecialTokenSplitter::child(int32_t node, uint8_t byte) const {
  const auto& children = nodes_[node].children;
  const auto it = std::lower_bound(children.begin(), children.end(), std::pair<uint8_t, int32_t>{byte, 0});
  return it != children.end() && it->first == byte ? it->second : -1;
}

TokenId SpecialTokenSplitter::longest_match(std::string_view text, size_t start, bool parse_special,
                                            size_t* length) const {
  TokenId best = kNoToken;
  int32_t node = 0;
  for (size_t i = start; i < text.size(); ++i) {
    node = child(node, static_cast<uint8_t>(text[i]));
    if (node < 0) break;
    const TokenId id = nodes_[node].token;
    if (id == kNoToken) continue;
    if (!parse_special && vocabulary_.type(id) != TokenType::kUserDefined) continue;
    best = id;
    *length = i + 1 - start;
  }
  return best;
}

std::vector<Fragment> SpecialTokenSplitter::split(std::string_view text, bool parse_special) const {
  std::vector<Fragment> fragments;
  size_t text_start = 0;  // start of the text not yet emitted
  size_t pos = 0;
  while (pos < text.size()) {
    size_t length = 0;
    const TokenId id =
        nodes_[0].children.empty() ? kNoToken : longest_match(text, pos, parse_special, &length);
    if (id == kNoToken) {
      ++pos;
      continue;
    }
    std::string_view before = text.substr(text_start, pos - text_start);
    if (vocabulary_.entry(id).lstrip) before.remove_suffix(trailing_whitespace(before));
    if (!before.empty()) fragments.push_back({kNoToken, before});
    fragments.push_back({id, {}});
    pos += length;
    if (vocabulary_.entry(id).rstrip) pos += leading_whitespace(text.substr(pos));
    text_start = pos;
  }
  if (text_start < text.size()) fragments.push_back({kNoToken, text.substr(text_start)});
  return fragments;
}

}  // namespace sinter
