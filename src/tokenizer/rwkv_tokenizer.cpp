#include "tokenizer/rwkv_tokenizer.h"

#include <algorithm>

namespace sinter {

std::string unescape_rwkv_token(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  bool escaping = false;
  int hex_left = 0;  // hex digits of \xNN still to read
  uint8_t hex = 0;
  for (char c : escaped) {
    if (hex_left > 0) {
      // llama.cpp's digit rule: lowercase letters and digits (Python writes nothing else).
      hex = static_cast<uint8_t>((hex << 4) + (c >= 'a' ? c - 'a' + 10 : c - '0'));
      if (--hex_left == 0) out += static_cast<char>(hex);
      continue;
    }
    if (escaping) {
      escaping = false;
      switch (c) {
        case 't': out += '\t'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 'x':
          hex_left = 2;
          hex = 0;
          break;
        default: out += c;
      }
      continue;
    }
    if (c == '\\') {
      escaping = true;
    } else {
      out += c;
    }
  }
  return out;
}

RwkvTokenizer::RwkvTokenizer(Vocabulary vocabulary)
    : Tokenizer(std::move(vocabulary)), splitter_(vocabulary_), nodes_(1) {
  bytes_.reserve(static_cast<size_t>(vocabulary_.size()));
  for (TokenId id = 0; id < vocabulary_.size(); ++id) {
    bytes_.push_back(unescape_rwkv_token(vocabulary_.text(id)));
    insert(bytes_.back(), id);
  }
}

Result<std::unique_ptr<Tokenizer>> RwkvTokenizer::create(Vocabulary vocabulary) {
  return std::unique_ptr<Tokenizer>(new RwkvTokenizer(std::move(vocabulary)));
}

int32_t RwkvTokenizer::child(int32_t node, uint8_t byte) const {
  const auto& children = nodes_[static_cast<size_t>(node)].children;
  const auto it = std::lower_bound(children.begin(), children.end(), std::pair<uint8_t, int32_t>{byte, -1});
  return it != children.end() && it->first == byte ? it->second : -1;
}

void RwkvTokenizer::insert(const std::string& bytes, TokenId id) {
  if (bytes.empty()) return;  // an empty token can never be produced
  int32_t node = 0;
  for (char c : bytes) {
    const auto byte = static_cast<uint8_t>(c);
    int32_t next = child(node, byte);
    if (next < 0) {
      next = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
      auto& children = nodes_[static_cast<size_t>(node)].children;
      children.insert(
          std::upper_bound(children.begin(), children.end(), std::pair<uint8_t, int32_t>{byte, -1}),
          {byte, next});
    }
    node = next;
  }
  nodes_[static_cast<size_t>(node)].token = id;
}

Result<std::vector<TokenId>> RwkvTokenizer::encode(std::string_view text,
                                                   const EncodeOptions& options) const {
  std::vector<TokenId> out;
  const VocabularyFlags& flags = vocabulary_.flags();
  if (options.add_special && flags.add_bos) out.push_back(bos());
  for (const Fragment& fragment : splitter_.split(text, options.parse_special)) {
    if (fragment.token != kNoToken) {
      out.push_back(fragment.token);
    } else {
      SINTER_TRY(encode_text(fragment.text, &out));
    }
  }
  if (options.add_special && flags.add_eos) out.push_back(eos());
  return out;
}

Status RwkvTokenizer::encode_text(std::string_view text, std::vector<TokenId>* out) const {
  for (size_t position = 0; position < text.size();) {
    // The longest token starting here.
    TokenId longest = kNoToken;
    size_t end = position;
    int32_t node = 0;
    for (size_t i = position; i < text.size(); ++i) {
      node = child(node, static_cast<uint8_t>(text[i]));
      if (node < 0) break;
      if (nodes_[static_cast<size_t>(node)].token != kNoToken) {
        longest = nodes_[static_cast<size_t>(node)].token;
        end = i + 1;
      }
    }
    if (longest != kNoToken) {
      out->push_back(longest);
      position = end;
      continue;
    }
    // No token starts with this byte (the world vocabulary has one for every byte): the unknown
    // token, as llama.cpp gives. (Where a byte only begins longer tokens, llama.cpp restarts at
    // the text's start and never ends; sinter takes the unknown token for it too.)
    const TokenId unknown = vocabulary_.special().unknown;
    if (unknown == kNoToken) {
      return make_error(ErrorCode::kUnsupported, "byte 0x", std::hex,
                        static_cast<int>(static_cast<uint8_t>(text[position])),
                        " begins no token and the vocabulary has no unknown token");
    }
    out->push_back(unknown);
    ++position;
  }
  return ok_status();
}

std::string RwkvTokenizer::token_to_piece(TokenId id, bool render_special) const {
  if (!vocabulary_.contains(id)) return {};
  const TokenType type = vocabulary_.type(id);
  if ((type == TokenType::kControl || type == TokenType::kUnknown) && !render_special) return {};
  return bytes_[static_cast<size_t>(id)];
}

}  // namespace sinter
