// A tokenizer's vocabulary as GGUF stores it: token texts, types and scores, BPE merges, the
// special-token ids and the flags that steer encoding, with the defaults llama.cpp uses when a
// key is missing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/token.h"
#include "gguf/metadata.h"
#include "sinter/result.h"

namespace sinter {

// GGUF `tokenizer.ggml.token_type` values.
enum class TokenType : int32_t {
  kUndefined = 0,  // absent or out-of-range type: encodable, renders as nothing
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// sinter's own keys (no GGUF standard exists): ids of special tokens that swallow the whitespace
// before (lstrip) or after (rstrip) them, as Hugging Face's added tokens say.
inline constexpr const char* kLstripTokensKey = "tokenizer.sinter.lstrip_token_ids";
inline constexpr const char* kRstripTokensKey = "tokenizer.sinter.rstrip_token_ids";

enum class VocabularyKind { kSentencePiece, kBytePairEncoding, kWordPiece, kRwkv };

struct SpecialTokens {
  TokenId bos = kNoToken;
  TokenId eos = kNoToken;
  TokenId eot = kNoToken;
  TokenId eom = kNoToken;
  TokenId unknown = kNoToken;
  TokenId separator = kNoToken;
  TokenId padding = kNoToken;
  TokenId mask = kNoToken;
  TokenId fim_prefix = kNoToken;
  TokenId fim_suffix = kNoToken;
  TokenId fim_middle = kNoToken;
  TokenId fim_pad = kNoToken;
  TokenId fim_repo = kNoToken;
  TokenId fim_separator = kNoToken;
};

struct VocabularyFlags {
  bool add_bos = false;
  bool add_eos = false;
  bool add_sep = false;           // WordPiece: [SEP] at the end
  bool add_space_prefix = false;  // SentencePiece: a space in front of text that starts a segment
  bool lowercase = false;         // WordPiece normalization
  bool strip_accents = false;     // WordPiece normalization
};

struct TokenEntry {
  std::string text;
  float score = 0.0f;
  TokenType type = TokenType::kNormal;
  bool lstrip = false;  // a special token that swallows the whitespace before it
  bool rstrip = false;  // ... and after it
};

class Vocabulary {
 public:
  static Result<Vocabulary> from_metadata(const Metadata& metadata);

  VocabularyKind kind() const { return kind_; }
  std::string_view model_name() const { return model_name_; }  // "llama", "gpt2", "bert", "rwkv"
  std::string_view pre_name() const { return pre_name_; }      // tokenizer.ggml.pre, may be empty
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  bool contains(TokenId id) const { return id >= 0 && id < size(); }

  // Out-of-range ids give "" / kUndefined / 0.
  std::string_view text(TokenId id) const { return contains(id) ? std::string_view(tokens_[id].text) : ""; }
  TokenType type(TokenId id) const { return contains(id) ? tokens_[id].type : TokenType::kUndefined; }
  float score(TokenId id) const { return contains(id) ? tokens_[id].score : 0.0f; }
  const TokenEntry& entry(TokenId id) const { return tokens_[id]; }

  // The id whose text is exactly `text`, or kNoToken.
  TokenId find(std::string_view text) const;

  const SpecialTokens& special() const { return special_; }
  const VocabularyFlags& flags() const { return flags_; }
  bool is_end_of_generation(TokenId id) const;
  const std::vector<TokenId>& end_of_generation() const { return end_of_generation_; }
  // Control, user-defined and unknown tokens: the ones split out of text before tokenizing.
  bool is_special(TokenId id) const;

  // BPE merges in rank order, as "left right" split into its two parts (rank = index).
  const std::vector<std::pair<std::string, std::string>>& merges() const { return merges_; }

  size_t max_token_bytes() const { return max_token_bytes_; }

 private:
  struct TransparentHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  Status load_tokens(const Metadata& metadata);
  Status load_special_ids(const Metadata& metadata);
  void detect_special_tokens();
  Status load_strip_flags(const Metadata& metadata);

  VocabularyKind kind_ = VocabularyKind::kSentencePiece;
  std::string model_name_;
  std::string pre_name_;
  std::vector<TokenEntry> tokens_;
  std::unordered_map<std::string, TokenId, TransparentHash, std::equal_to<>> index_;
  std::vector<std::pair<std::string, std::string>> merges_;
  SpecialTokens special_;
  VocabularyFlags flags_;
  std::vector<TokenId> end_of_generation_;  // sorted
  size_t max_token_bytes_ = 0;
};

}  // namespace sinter
