#include "tokenizer/wordpiece_tokenizer.h"

#include "core/utf8.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/unicode_text.h"

namespace sinter {
namespace {

constexpr size_t kMaxCharsPerWord = 100;  // Hugging Face's max_input_chars_per_word: longer is [UNK]

// The CJK ideograph blocks BERT puts spaces around (Hugging Face's ranges).
bool is_cjk(uint32_t cp) {
  return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
         (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2b73f) ||
         (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b920 && cp <= 0x2ceaf) ||
         (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}

bool is_bert_punctuation(uint32_t cp) {
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
         (cp >= 123 && cp <= 126) || unicode_is_punctuation(cp);
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> WordPieceTokenizer::create(Vocabulary vocabulary) {
  return std::unique_ptr<Tokenizer>(new WordPieceTokenizer(std::move(vocabulary)));
}

std::vector<std::string> WordPieceTokenizer::words(std::string_view raw) const {
  const std::string text = sanitize_utf8(raw);
  // Clean: drop NUL, U+FFFD and other-category characters (Cc, Cf, Cs, Co, Cn); every whitespace
  // becomes ' '; CJK ideographs get a space on each side.
  std::string cleaned;
  cleaned.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const uint32_t cp = utf8_decode(text, &pos);
    // Control characters go first: U+0085, \v and \f are whitespace but also controls, and
    // BERT drops them (only \t, \n and \r count as whitespace among the controls).
    if (cp == '\t' || cp == '\n' || cp == '\r') {
      cleaned += ' ';
    } else if (cp == 0 || cp == 0xfffd || unicode_is_other(cp)) {
      continue;
    } else if (is_unicode_whitespace(cp)) {
      cleaned += ' ';
    } else if (is_cjk(cp)) {
      cleaned += ' ';
      utf8_append(&cleaned, cp);
      cleaned += ' ';
    } else {
      utf8_append(&cleaned, cp);
    }
  }
  const VocabularyFlags& flags = vocabulary_.flags();
  std::string normalized;
  if (flags.strip_accents) {
    const std::string decomposed = unicode_nfd(cleaned);
    for (size_t pos = 0; pos < decomposed.size();) {
      const uint32_t cp = utf8_decode(decomposed, &pos);
      if (!unicode_is_nonspacing_mark(cp)) utf8_append(&normalized, cp);
    }
  } else {
    normalized = std::move(cleaned);
  }
  if (flags.lowercase) {
    std::string lowered;
    lowered.reserve(normalized.size());
    for (size_t pos = 0; pos < normalized.size();)
      unicode_append_lowercase(&lowered, utf8_decode(normalized, &pos));
    normalized = std::move(lowered);
  }
  // Split at whitespace (dropped) and punctuation (each its own word).
  std::vector<std::string> words;
  std::string current;
  for (size_t pos = 0; pos < normalized.size();) {
    const size_t start = pos;
    const uint32_t cp = utf8_decode(normalized, &pos);
    const std::string_view ch(normalized.data() + start, pos - start);
    if (is_unicode_whitespace(cp) || is_bert_punctuation(cp)) {
      if (!current.empty()) words.push_back(std::move(current));
      current.clear();
      if (!is_unicode_whitespace(cp)) words.emplace_back(ch);
    } else {
      current += ch;
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

Status WordPieceTokenizer::encode_word(const std::string& word, std::vector<TokenId>* out) const {
  const TokenId unknown = vocabulary_.special().unknown;
  auto emit_unknown = [&]() -> Status {
    if (unknown == kNoToken) {
      return make_error(ErrorCode::kUnsupported, "word '", word,
                        "' has no pieces and the vocabulary has no unknown token");
    }
    out->push_back(unknown);
    return ok_status();
  };
  // Character boundaries (byte offsets), with the end.
  std::vector<size_t> bounds;
  for (size_t pos = 0; pos < word.size();) {
    bounds.push_back(pos);
    utf8_decode(word, &pos);
  }
  bounds.push_back(word.size());
  if (bounds.size() - 1 > kMaxCharsPerWord) return emit_unknown();
  const size_t first = out->size();
  std::string candidate;
  for (size_t begin = 0; begin + 1 < bounds.size();) {
    TokenId found = kNoToken;
    size_t found_end = 0;
    for (size_t end = bounds.size() - 1; end > begin; --end) {
      const size_t bytes = bounds[end] - bounds[begin];
      if (bytes + (begin == 0 ? 3 : 0) > vocabulary_.max_token_bytes()) continue;
      candidate = begin == 0 ? "\xe2\x96\x81" : "";  // "▁" marks a word start
      candidate.append(word, bounds[begin], bytes);
      found = vocabulary_.find(candidate);
      if (found != kNoToken) {
        found_end = end;
        break;
      }
    }
    if (found == kNoToken) {
      out->resize(first);
      return emit_unknown();
    }
    out->push_back(found);
    begin = found_end;
  }
  return ok_status();
}

Result<std::vector<TokenId>> WordPieceTokenizer::encode(std::string_view text,
                                                        const EncodeOptions& options) const {
  std::vector<TokenId> out;
  const VocabularyFlags& flags = vocabulary_.flags();
  if (options.add_special && flags.add_bos) out.push_back(bos());
  for (const Fragment& fragment : splitter_.split(text, options.parse_special)) {
    if (fragment.token != kNoToken) {
      out.push_back(fragment.token);
      continue;
    }
    for (const std::string& word : words(fragment.text)) SINTER_TRY(encode_word(word, &out));
  }
  if (options.add_special && flags.add_sep) out.push_back(vocabulary_.special().separator);
  if (options.add_special && flags.add_eos) out.push_back(eos());
  return out;
}

std::string WordPieceTokenizer::token_to_piece(TokenId id, bool render_special) const {
  if (!vocabulary_.contains(id)) return {};
  const std::string_view text = vocabulary_.text(id);
  switch (vocabulary_.type(id)) {
    case TokenType::kNormal: return unescape_spaces(text);
    case TokenType::kUserDefined: return std::string(text);
    case TokenType::kControl:
    case TokenType::kUnknown: return render_special ? std::string(text) : std::string();
    case TokenType::kByte:
    case TokenType::kUndefined:
    case TokenType::kUnused: return {};
  }
  return {};
}

}  // namespace sinter
