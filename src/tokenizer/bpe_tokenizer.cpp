#include "tokenizer/bpe_tokenizer.h"

#include <cstdio>
#include <queue>

#include "core/log.h"
#include "core/utf8.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/unicode_text.h"

namespace sinter {
namespace {

struct ByteTables {
  std::array<std::string, 256> to_unicode;
  std::array<int16_t, 512> to_byte;  // indexed by code point; the mapped characters are all < U+0144
  ByteTables() {
    to_byte.fill(-1);
    // Printable Latin-1 bytes stand for themselves; the others get U+0100 onwards, in byte order.
    auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    };
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const int cp = printable(b) ? b : next++;
      utf8_append(&to_unicode[b], static_cast<uint32_t>(cp));
      to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteTables& byte_tables() {
  static const ByteTables tables;
  return tables;
}

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t start;
  uint32_t length;
  TokenId id;  // the token this symbol's text is, or kNoToken
};

struct Candidate {
  int32_t rank;
  int32_t left;
  int32_t right;
  uint32_t left_length;
  uint32_t right_length;
};

// Lowest rank first; equal ranks: leftmost first.
struct CandidateOrder {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

uint64_t pair_key(TokenId left, TokenId right) {
  return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
}

}  // namespace

const std::string& byte_to_unicode(uint8_t byte) { return byte_tables().to_unicode[byte]; }

int unicode_to_byte(uint32_t code_point) {
  return code_point < byte_tables().to_byte.size() ? byte_tables().to_byte[code_point] : -1;
}

Result<std::unique_ptr<Tokenizer>> BpeTokenizer::create(Vocabulary vocabulary, const std::string& force_pre) {
  const std::string pre = force_pre.empty() ? std::string(vocabulary.pre_name()) : force_pre;
  if (pre.empty()) {
    return make_error(ErrorCode::kUnsupported,
                      "the BPE vocabulary has no tokenizer.ggml.pre, so how to pre-tokenize is unknown; "
                      "name a pre-tokenizer with --force-pre (known: ",
                      known_pre_tokenizer_names(), ")");
  }
  const PreTokenizerSpec* spec = find_pre_tokenizer(pre);
  if (spec == nullptr) {
    return make_error(ErrorCode::kUnsupported, "tokenizer.ggml.pre '", pre,
                      "' is not a pre-tokenizer sinter knows; use --force-pre NAME to tokenize with one of: ",
                      known_pre_tokenizer_names());
  }
  SINTER_ASSIGN(auto regex, RegexSplitter::compile(spec->patterns));
  return std::unique_ptr<Tokenizer>(new BpeTokenizer(std::move(vocabulary), spec, std::move(regex)));
}

BpeTokenizer::BpeTokenizer(Vocabulary vocabulary, const PreTokenizerSpec* spec,
                           std::shared_ptr<const RegexSplitter> regex)
    : Tokenizer(std::move(vocabulary)), spec_(spec), regex_(std::move(regex)), splitter_(vocabulary_) {
  const auto& merges = vocabulary_.merges();
  ranks_.reserve(merges.size());
  size_t unusable = 0;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const TokenId left = vocabulary_.find(merges[rank].first);
    const TokenId right = vocabulary_.find(merges[rank].second);
    if (left == kNoToken || right == kNoToken) {
      ++unusable;
      continue;
    }
    ranks_.emplace(pair_key(left, right), static_cast<int32_t>(rank));  // the first (lowest) rank wins
  }
  if (unusable > 0)
    log_info("tokenizer", unusable, " merges name a piece that is not a token; they never apply");
  for (int byte = 0; byte < 256; ++byte) {
    if (spec_->byte_level) {
      // llama.cpp looks up each byte of an unknown symbol as a one-byte token.
      byte_tokens_[byte] = vocabulary_.find(std::string(1, static_cast<char>(byte)));
    } else {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", byte);
      byte_tokens_[byte] = vocabulary_.find(name);
    }
  }
}

int32_t BpeTokenizer::merge_rank(TokenId left, TokenId right) const {
  if (left == kNoToken || right == kNoToken) return -1;
  const auto it = ranks_.find(pair_key(left, right));
  return it == ranks_.end() ? -1 : it->second;
}

Result<std::vector<TokenId>> BpeTokenizer::encode(std::string_view text, const EncodeOptions& options) const {
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

Status BpeTokenizer::encode_text(std::string_view raw, std::vector<TokenId>* out) const {
  std::string text = sanitize_utf8(raw);
  if (spec_->nfc) text = unicode_nfc(text);
  SINTER_ASSIGN(auto words, regex_->split(text));
  std::string word;
  for (std::string_view piece : words) {
    word.clear();
    if (spec_->byte_level) {
      for (char c : piece) word += byte_to_unicode(static_cast<uint8_t>(c));
    } else {
      word = escape_spaces(piece);
    }
    encode_word(word, out);
  }
  return ok_status();
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<TokenId>* out) const {
  if (spec_->ignore_merges) {
    if (const TokenId id = vocabulary_.find(word); id != kNoToken) {
      out->push_back(id);
      return;
    }
  }
  if (!spec_->byte_level && word.find_first_not_of('\n') == std::string_view::npos) {
    // Gemma 4: a run of newlines that is a token is taken whole (llama.cpp's rule).
    if (const TokenId id = vocabulary_.find(word); id != kNoToken) {
      out->push_back(id);
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (size_t offset = 0; offset < word.size();) {
    const size_t length =
        std::min(lead_byte_length(static_cast<uint8_t>(word[offset])), word.size() - offset);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({index - 1, offset + length == word.size() ? -1 : index + 1,
                       static_cast<uint32_t>(offset), static_cast<uint32_t>(length),
                       vocabulary_.find(word.substr(offset, length))});
    offset += length;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> queue;
  auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const int32_t rank = merge_rank(symbols[left].id, symbols[right].id);
    if (rank >= 0) queue.push({rank, left, right, symbols[left].length, symbols[right].length});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) consider(i - 1, i);
  while (!queue.empty()) {
    const Candidate candidate = queue.top();
    queue.pop();
    Symbol& left = symbols[candidate.left];
    Symbol& right = symbols[candidate.right];
    // Stale: one side has merged with something else since this pair was queued.
    if (left.length != candidate.left_length || right.length != candidate.right_length || right.length == 0 ||
        left.next != candidate.right) {
      continue;
    }
    left.length += right.length;
    left.id = vocabulary_.find(word.substr(left.start, left.length));
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = candidate.left;
    consider(left.prev, candidate.left);
    consider(candidate.left, left.next);
  }
  for (int32_t i = 0; i != -1 && !symbols.empty(); i = symbols[i].next) {
    const Symbol& symbol = symbols[i];
    if (symbol.id != kNoToken) {
      out->push_back(symbol.id);
      continue;
    }
    // A character the vocabulary lacks: its bytes' tokens where they exist (llama.cpp drops the rest).
    for (char c : word.substr(symbol.start, symbol.length)) {
      const TokenId id = byte_tokens_[static_cast<uint8_t>(c)];
      if (id != kNoToken) out->push_back(id);
    }
  }
}

std::string BpeTokenizer::token_to_piece(TokenId id, bool render_special) const {
  if (!vocabulary_.contains(id)) return {};
  const std::string_view text = vocabulary_.text(id);
  switch (vocabulary_.type(id)) {
    // Gemma 4 style: user-defined pieces such as "▁▁▁▁" stand for spaces (as Hugging Face decodes).
    case TokenType::kUserDefined: return spec_->byte_level ? std::string(text) : unescape_spaces(text);
    case TokenType::kControl:
    case TokenType::kUnknown: return render_special ? std::string(text) : std::string();
    case TokenType::kNormal: {
      if (!spec_->byte_level) return unescape_spaces(text);
      std::string bytes;
      bytes.reserve(text.size());
      for (size_t pos = 0; pos < text.size();) {
        const size_t start = pos;
        const uint32_t cp = utf8_decode(text, &pos);
        const int byte = unicode_to_byte(cp);
        if (byte >= 0) {
          bytes += static_cast<char>(byte);
        } else {
          bytes.append(text.substr(start, pos - start));  // not a mapped character: kept as it is
        }
      }
      return bytes;
    }
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
