#include "tokenizer/spm_tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <queue>

namespace sinter {

namespace {

constexpr std::string_view kSpaceMark = "\xe2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t start;  // byte offset in the segment
  uint32_t length;
};

struct Bigram {
  int32_t left;
  int32_t right;
  float score;
  uint32_t length;
};

// Highest score first; equal scores: leftmost first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

std::string escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (char c : text) {
    if (c == ' ') {
      out += kSpaceMark;
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i, kSpaceMark.size()) == kSpaceMark) {
      out += ' ';
      i += kSpaceMark.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

int parse_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int value = 0;
  for (char c : text.substr(3, 2)) {
    value <<= 4;
    if (c >= '0' && c <= '9')
      value |= c - '0';
    else if (c >= 'A' && c <= 'F')
      value |= c - 'A' + 10;
    else if (c >= 'a' && c <= 'f')
      value |= c - 'a' + 10;
    else
      return -1;
  }
  return value;
}

SpmTokenizer::SpmTokenizer(Vocabulary vocabulary) : Tokenizer(std::move(vocabulary)), splitter_(vocabulary_) {
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", byte);
    TokenId id = vocabulary_.find(name);
    if (id == kNoToken) id = vocabulary_.find(std::string(1, static_cast<char>(byte)));
    byte_tokens_[byte] = id;
  }
}

Result<std::unique_ptr<Tokenizer>> SpmTokenizer::create(Vocabulary vocabulary) {
  return std::unique_ptr<Tokenizer>(new SpmTokenizer(std::move(vocabulary)));
}

Result<std::vector<TokenId>> SpmTokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  std::vector<TokenId> out;
  const VocabularyFlags& flags = vocabulary_.flags();
  if (options.add_special && flags.add_bos) out.push_back(bos());
  bool after_special = true;  // the start of the text counts as "after a special token"
  for (const Fragment& fragment : splitter_.split(text, options.parse_special)) {
    if (fragment.token != kNoToken) {
      out.push_back(fragment.token);
      after_special = true;
      continue;
    }
    std::string segment = flags.add_space_prefix && after_special ? " " : "";
    segment += fragment.text;
    SINTER_TRY(encode_segment(escape_spaces(segment), &out));
    after_special = false;
  }
  if (options.add_special && flags.add_eos) out.push_back(eos());
  return out;
}

Status SpmTokenizer::encode_segment(std::string_view text, std::vector<TokenId>* out) const {
  if (text.empty()) return ok_status();
  std::vector<Symbol> symbols;
  for (size_t offset = 0; offset < text.size();) {
    const size_t length =
        std::min(lead_byte_length(static_cast<uint8_t>(text[offset])), text.size() - offset);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({index - 1, offset + length == text.size() ? -1 : index + 1,
                       static_cast<uint32_t>(offset), static_cast<uint32_t>(length)});
    offset += length;
  }
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const std::string_view joined =
        text.substr(symbols[left].start, symbols[left].length + symbols[right].length);
    const TokenId id = vocabulary_.find(joined);
    if (id == kNoToken) return;
    queue.push({left, right, vocabulary_.score(id), static_cast<uint32_t>(joined.size())});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }

  // A final symbol is a token, or (a character the vocabulary lacks) its bytes. (llama.cpp also
  // looks up how such a symbol was merged, but only merges that form a token ever happen.)
  for (int32_t i = 0; i != -1; i = symbols[i].next) {
    const std::string_view piece = text.substr(symbols[i].start, symbols[i].length);
    if (const TokenId id = vocabulary_.find(piece); id != kNoToken) {
      out->push_back(id);
      continue;
    }
    for (char c : piece) {
      TokenId id = byte_tokens_[static_cast<uint8_t>(c)];
      if (id == kNoToken) id = vocabulary_.special().unknown;
      if (id == kNoToken) {
        return make_error(ErrorCode::kUnsupported, "byte 0x", std::hex,
                          static_cast<int>(static_cast<uint8_t>(c)),
                          " has no token and the vocabulary has no unknown token");
      }
      out->push_back(id);
    }
  }
  return ok_status();
}

std::string SpmTokenizer::token_to_piece(TokenId id, bool render_special) const {
  if (!vocabulary_.contains(id)) return {};
  const std::string_view text = vocabulary_.text(id);
  switch (vocabulary_.type(id)) {
    // User-defined pieces such as Gemma's "▁▁▁▁" stand for spaces too (Hugging Face's decoder
    // turns every "▁" back into a space; llama.cpp writes user-defined pieces as they are).
    case TokenType::kNormal:
    case TokenType::kUserDefined: return unescape_spaces(text);
    case TokenType::kControl:
    case TokenType::kUnknown: return render_special ? std::string(text) : std::string();
    case TokenType::kByte: {
      const int byte = parse_byte_token(text);
      return byte < 0 ? std::string() : std::string(1, static_cast<char>(byte));
    }
    case TokenType::kUndefined:
    case TokenType::kUnused: return {};
  }
  return {};
}

}  // namespace sinter
