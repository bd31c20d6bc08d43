#include "tokenizer/vocabulary.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <unordered_set>

#include "core/log.h"

namespace sinter {
namespace {

constexpr const char* kLog = "tokenizer";

// A token-id key: GGUF files store these as uint32 (sometimes int32); 0xFFFFFFFF and -1 mean "none".
Result<std::optional<int64_t>> read_id(const Metadata& metadata, std::string_view key) {
  const GgufValue* value = metadata.find_value(key);
  if (value == nullptr) return std::optional<int64_t>();
  if (const auto* u = std::get_if<uint64_t>(&value->data))
    return std::optional<int64_t>(static_cast<int64_t>(*u));
  if (const auto* s = std::get_if<int64_t>(&value->data)) return std::optional<int64_t>(*s);
  return make_error(ErrorCode::kFormat, "metadata key ", key, " must be an integer token id, not ",
                    gguf_type_name(value->type));
}

TokenType token_type_from_int(int32_t value) {
  return value >= 1 && value <= 6 ? static_cast<TokenType>(value) : TokenType::kUndefined;
}

// Pre-tokenizers for which llama.cpp adds BOS unless the file says otherwise (Llama 3 and kin).
bool pre_adds_bos_by_default(std::string_view pre) {
  static constexpr std::array<std::string_view, 9> kNames = {"llama3",   "llama-v3",  "llama-bpe",
                                                             "falcon3",  "falcon-h1", "pixtral",
                                                             "midm-2.0", "lfm2",      "jina-v5-nano"};
  return std::find(kNames.begin(), kNames.end(), pre) != kNames.end();
}

// Every text detect_special_tokens() looks for (to spot which of them a merge makes).
constexpr std::string_view kMarkerTexts[] = {"<|eot_id|>",
                                             "<|im_end|>",
                                             "<|end|>",
                                             "<end_of_turn>",
                                             "<|endoftext|>",
                                             "<|end_of_text|>",
                                             "<EOT>",
                                             "_<EOT>",
                                             "[EOT]",
                                             "<|eom_id|>",
                                             "<|fim_prefix|>",
                                             "<fim-prefix>",
                                             "<fim_prefix>",
                                             "<PRE>",
                                             "<|code_prefix|>",
                                             "<|prefix|>",
                                             "<|fim_suffix|>",
                                             "<fim-suffix>",
                                             "<fim_suffix>",
                                             "<SUF>",
                                             "<|code_suffix|>",
                                             "<|suffix|>",
                                             "<|fim_middle|>",
                                             "<fim-middle>",
                                             "<fim_middle>",
                                             "<MID>",
                                             "<|code_middle|>",
                                             "<|middle|>",
                                             "<|fim_pad|>",
                                             "<fim-pad>",
                                             "<fim_pad>",
                                             "<PAD>",
                                             "[PAD]",
                                             "<|fim_repo|>",
                                             "<|repo_name|>",
                                             "<fim-repo>",
                                             "<REPO>",
                                             "<reponame>",
                                             "<|file_sep|>",
                                             "<|return|>",
                                             "<|call|>",
                                             "<|flush|>",
                                             "<|calls|>",
                                             "</s>",
                                             "[EOS]",
                                             "<end_of_utterance>",
                                             "<eos>",
                                             "<turn|>",
                                             "<|tool_response>",
                                             "[e~["};
constexpr size_t kLongestMarker = 24;

}  // namespace

TokenId Vocabulary::find(std::string_view text) const {
  const auto it = index_.find(text);
  return it == index_.end() ? kNoToken : it->second;
}

bool Vocabulary::is_end_of_generation(TokenId id) const {
  return std::binary_search(end_of_generation_.begin(), end_of_generation_.end(), id);
}

bool Vocabulary::is_special(TokenId id) const {
  const TokenType t = type(id);
  return t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown;
}

Result<Vocabulary> Vocabulary::from_metadata(const Metadata& metadata) {
  Vocabulary vocab;
  const GgufValue* model = metadata.find_value("tokenizer.ggml.model");
  if (model == nullptr) return make_error(ErrorCode::kNotFound, "metadata has no tokenizer.ggml.model");
  SINTER_ASSIGN(vocab.model_name_, metadata.get<std::string>("tokenizer.ggml.model"));
  SINTER_ASSIGN(auto pre, metadata.find<std::string>("tokenizer.ggml.pre"));
  vocab.pre_name_ = pre.value_or("");

  SpecialTokens& special = vocab.special_;
  VocabularyFlags& flags = vocab.flags_;
  if (vocab.model_name_ == "llama") {
    vocab.kind_ = VocabularyKind::kSentencePiece;
    special.bos = 1;
    special.eos = 2;
    special.unknown = 0;
    flags.add_bos = true;
    flags.add_space_prefix = true;
  } else if (vocab.model_name_ == "gpt2" || vocab.model_name_ == "gemma4") {
    vocab.kind_ = VocabularyKind::kBytePairEncoding;
    if (vocab.model_name_ == "gemma4") vocab.pre_name_ = "gemma4";
    // llama.cpp defaults BOS/EOS of a BPE vocabulary to id 11; sinter leaves them unset instead.
    flags.add_bos = pre_adds_bos_by_default(vocab.pre_name_);
  } else if (vocab.model_name_ == "bert") {
    vocab.kind_ = VocabularyKind::kWordPiece;
    special.bos = 101;  // [CLS]
    special.unknown = 100;
    special.separator = 102;
    special.padding = 0;
    special.mask = 103;
    flags.add_bos = true;
    flags.add_sep = true;
    flags.lowercase = true;
    flags.strip_accents = true;
  } else if (vocab.model_name_ == "rwkv") {
    // No special token by default and nothing added (llama.cpp's defaults); the world
    // vocabulary's files name BOS/EOS 0 and EOT 261 ("\n\n") in their keys.
    vocab.kind_ = VocabularyKind::kRwkv;
  } else {
    return make_error(ErrorCode::kUnsupported, "tokenizer.ggml.model '", vocab.model_name_,
                      "' is not supported (sinter knows llama, gpt2, gemma4, bert and rwkv)");
  }

  SINTER_TRY(vocab.load_tokens(metadata));
  SINTER_TRY(vocab.load_special_ids(metadata));

  SINTER_ASSIGN(auto add_bos, metadata.find<bool>("tokenizer.ggml.add_bos_token"));
  SINTER_ASSIGN(auto add_eos, metadata.find<bool>("tokenizer.ggml.add_eos_token"));
  SINTER_ASSIGN(auto add_sep, metadata.find<bool>("tokenizer.ggml.add_sep_token"));
  SINTER_ASSIGN(auto add_space_prefix, metadata.find<bool>("tokenizer.ggml.add_space_prefix"));
  SINTER_ASSIGN(auto lowercase, metadata.find<bool>("tokenizer.ggml.normalizer.lowercase"));
  SINTER_ASSIGN(auto strip_accents, metadata.find<bool>("tokenizer.ggml.normalizer.strip_accents"));
  flags.add_bos = add_bos.value_or(flags.add_bos);
  flags.add_eos = add_eos.value_or(flags.add_eos);
  flags.add_sep = add_sep.value_or(flags.add_sep);
  flags.add_space_prefix = add_space_prefix.value_or(flags.add_space_prefix);
  if (lowercase) flags.lowercase = flags.strip_accents = *lowercase;
  flags.strip_accents = strip_accents.value_or(flags.strip_accents);
  if (vocab.pre_name_ == "gemma4") flags.add_bos = true;  // as llama.cpp: Gemma 4 files say false, wrongly
  if (flags.add_bos && special.bos == kNoToken) {
    log_warn(kLog, "the vocabulary asks for BOS but has no BOS token; BOS is not added");
    flags.add_bos = false;
  }
  if (flags.add_sep && special.separator == kNoToken) flags.add_sep = false;
  if (flags.add_eos && special.eos == kNoToken) {
    log_warn(kLog, "the vocabulary asks for EOS but has no EOS token; EOS is not added");
    flags.add_eos = false;
  }

  if (vocab.kind_ == VocabularyKind::kBytePairEncoding) {
    SINTER_ASSIGN(auto merges, metadata.get<std::vector<std::string>>("tokenizer.ggml.merges"));
    vocab.merges_.reserve(merges.size());
    for (const std::string& merge : merges) {
      // "left right"; the split is at the first space after the first byte, as llama.cpp does.
      const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string::npos;
      if (space == std::string::npos) {
        vocab.merges_.emplace_back();
      } else {
        vocab.merges_.emplace_back(merge.substr(0, space), merge.substr(space + 1));
      }
    }
  }
  vocab.detect_special_tokens();
  SINTER_TRY(vocab.load_strip_flags(metadata));
  return vocab;
}

Status Vocabulary::load_tokens(const Metadata& metadata) {
  if (!metadata.contains("tokenizer.ggml.tokens")) {
    return make_error(ErrorCode::kNotFound, "metadata has no tokenizer.ggml.tokens");
  }
  SINTER_ASSIGN(auto texts, metadata.get<std::vector<std::string>>("tokenizer.ggml.tokens"));
  if (texts.empty()) return make_error(ErrorCode::kFormat, "tokenizer.ggml.tokens is empty");
  if (texts.size() > static_cast<size_t>(INT32_MAX)) {
    return make_error(ErrorCode::kFormat, "tokenizer.ggml.tokens has ", texts.size(), " entries, too many");
  }
  const size_t n = texts.size();
  std::vector<float> scores;
  std::vector<int32_t> types;
  if (metadata.contains("tokenizer.ggml.scores")) {
    SINTER_ASSIGN(scores, metadata.get<std::vector<float>>("tokenizer.ggml.scores"));
    if (scores.size() < n) {
      return make_error(ErrorCode::kFormat, "tokenizer.ggml.scores has ", scores.size(), " entries for ", n,
                        " tokens");
    }
  }
  if (metadata.contains("tokenizer.ggml.token_type")) {
    SINTER_ASSIGN(types, metadata.get<std::vector<int32_t>>("tokenizer.ggml.token_type"));
    if (types.size() < n) {
      return make_error(ErrorCode::kFormat, "tokenizer.ggml.token_type has ", types.size(), " entries for ",
                        n, " tokens");
    }
  }
  tokens_.resize(n);
  index_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    TokenEntry& entry = tokens_[i];
    entry.text = std::move(texts[i]);
    entry.score = scores.empty() ? 0.0f : scores[i];
    entry.type = types.empty() ? TokenType::kNormal : token_type_from_int(types[i]);
    max_token_bytes_ = std::max(max_token_bytes_, entry.text.size());
    // An empty token can never be produced by encoding; it stays out of the index.
    if (entry.text.empty()) continue;
    const auto [it, inserted] = index_.emplace(entry.text, static_cast<TokenId>(i));
    if (!inserted) {
      return make_error(ErrorCode::kFormat, "tokenizer.ggml.tokens: token ", i, " '", entry.text,
                        "' repeats token ", it->second);
    }
  }
  return ok_status();
}

Status Vocabulary::load_special_ids(const Metadata& metadata) {
  const std::pair<const char*, TokenId*> keys[] = {
      {"tokenizer.ggml.bos_token_id", &special_.bos},
      {"tokenizer.ggml.eos_token_id", &special_.eos},
      {"tokenizer.ggml.eot_token_id", &special_.eot},
      {"tokenizer.ggml.eom_token_id", &special_.eom},
      {"tokenizer.ggml.unknown_token_id", &special_.unknown},
      {"tokenizer.ggml.seperator_token_id", &special_.separator},  // sic: the GGUF key is misspelled
      {"tokenizer.ggml.padding_token_id", &special_.padding},
      {"tokenizer.ggml.mask_token_id", &special_.mask},
      {"tokenizer.ggml.fim_pre_token_id", &special_.fim_prefix},
      {"tokenizer.ggml.fim_suf_token_id", &special_.fim_suffix},
      {"tokenizer.ggml.fim_mid_token_id", &special_.fim_middle},
      {"tokenizer.ggml.fim_pad_token_id", &special_.fim_pad},
      {"tokenizer.ggml.fim_rep_token_id", &special_.fim_repo},
      {"tokenizer.ggml.fim_sep_token_id", &special_.fim_separator},
      {"tokenizer.ggml.prefix_token_id", &special_.fim_prefix},  // older names of the FIM keys
      {"tokenizer.ggml.suffix_token_id", &special_.fim_suffix},
      {"tokenizer.ggml.middle_token_id", &special_.fim_middle},
  };
  for (const auto& [key, id] : keys) {
    if (*id != kNoToken && !contains(*id)) *id = kNoToken;  // a default outside a small vocabulary
    SINTER_ASSIGN(auto stored, read_id(metadata, key));
    if (!stored) continue;
    if (*stored >= 0 && *stored < size()) {
      *id = static_cast<TokenId>(*stored);
    } else if (*stored != 0xFFFFFFFFLL && *stored != -1) {
      log_warn(kLog, key, " = ", *stored, " is outside the vocabulary of ", size(), " tokens; ignored");
    }
  }
  return ok_status();
}

// Which special tokens swallow whitespace next to them. Hugging Face's tokenizer.json says so per
// added token (lstrip/rstrip); GGUF has no standard key for it, so `sinter convert tokenizer`
// writes the two sinter keys below. llama.cpp instead sets them for a few models by name; those
// rules apply too.
Status Vocabulary::load_strip_flags(const Metadata& metadata) {
  for (const auto& [key, is_lstrip] :
       {std::pair{kLstripTokensKey, true}, std::pair{kRstripTokensKey, false}}) {
    SINTER_ASSIGN(auto ids, metadata.find<std::vector<int32_t>>(key));
    if (!ids) continue;
    for (int32_t id : *ids) {
      if (!contains(id))
        return make_error(ErrorCode::kFormat, key, " names token ", id, ", outside the vocabulary");
      (is_lstrip ? tokens_[id].lstrip : tokens_[id].rstrip) = true;
    }
  }
  SINTER_ASSIGN(auto name, metadata.find<std::string>("general.name"));
  SINTER_ASSIGN(auto architecture, metadata.find<std::string>("general.architecture"));
  std::string lower_name = name.value_or("");
  for (char& c : lower_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string arch = architecture.value_or("");
  auto contains_any = [](std::string_view s, std::initializer_list<std::string_view> parts) {
    return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return s.find(p) != s.npos; });
  };
  if (contains_any(pre_name_, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      contains_any(arch, {"nomic-bert-moe", "jina-bert-v3"})) {
    if (const TokenId mask = find("<mask>"); mask != kNoToken) tokens_[mask].lstrip = true;
  } else if (contains_any(lower_name, {"phi-3", "phi3"})) {
    for (TokenId id = 0; id < size(); ++id) {
      if (is_special(id)) tokens_[id].rstrip = true;
    }
    if (const TokenId id = find("</s>"); id != kNoToken) tokens_[id].rstrip = true;
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (const TokenId id = find(text); id != kNoToken) tokens_[id].rstrip = false;
    }
  } else if (contains_any(lower_name, {"modern-bert"})) {
    if (const TokenId mask = find("[MASK]"); mask != kNoToken) tokens_[mask].lstrip = true;
  }
  return ok_status();
}

// Mirrors llama.cpp's detection by token text: the end-of-turn and fill-in-the-middle tokens a
// converter did not name, and the end-of-generation set. Such tokens become control tokens (so
// that their text in a prompt is read as the token), as llama.cpp makes them — except where the
// token is ordinary text of a BPE vocabulary (a merge makes it, as "</s>" in Qwen's): there the
// original tokenizer reads it as text, so sinter leaves it alone (llama.cpp does not).
void Vocabulary::detect_special_tokens() {
  auto make_control = [&](TokenId id) {
    if (tokens_[id].type != TokenType::kControl) tokens_[id].type = TokenType::kControl;
  };
  std::unordered_set<TokenId> ordinary;
  if (kind_ == VocabularyKind::kBytePairEncoding) {
    std::unordered_set<std::string_view> markers(std::begin(kMarkerTexts), std::end(kMarkerTexts));
    std::string joined;
    for (const auto& [left, right] : merges_) {
      if (left.size() + right.size() > kLongestMarker) continue;
      joined.assign(left).append(right);
      if (!markers.count(joined)) continue;
      const TokenId id = find(joined);
      if (id != kNoToken && tokens_[id].type == TokenType::kNormal) ordinary.insert(id);
    }
  }
  auto find_marker = [&](std::string_view text) {
    const TokenId id = find(text);
    return ordinary.count(id) ? kNoToken : id;
  };
  auto detect = [&](TokenId* slot, std::initializer_list<std::string_view> texts) {
    if (*slot != kNoToken) return;
    for (std::string_view text : texts) {
      const TokenId id = find_marker(text);
      if (id == kNoToken) continue;
      *slot = id;
      make_control(id);
      return;
    }
  };
  detect(&special_.eot, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                         "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]",
                         "<\xef\xbd\x9c"
                         "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
                         "<end_of_utterance>"});
  detect(&special_.eom, {"<|eom_id|>"});
  detect(&special_.fim_prefix, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
                                "<\xef\xbd\x9c"
                                "fim\xe2\x96\x81"
                                "begin\xef\xbd\x9c>",
                                "<PRE>", "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"});
  detect(&special_.fim_suffix, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
                                "<\xef\xbd\x9c"
                                "fim\xe2\x96\x81hole\xef\xbd\x9c>",
                                "<SUF>", "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"});
  detect(&special_.fim_middle, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>",
                                "<\xef\xbd\x9c"
                                "fim\xe2\x96\x81"
                                "end\xef\xbd\x9c>",
                                "<MID>", "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"});
  detect(&special_.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
  detect(&special_.fim_repo, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
  detect(&special_.fim_separator, {"<|file_sep|>"});

  std::vector<TokenId> eog;
  for (TokenId id : {special_.fim_pad, special_.fim_repo, special_.fim_separator}) {
    if (id != kNoToken) eog.push_back(id);
  }
  static constexpr std::string_view kEndTexts[] = {"<|eot_id|>",
                                                   "<|im_end|>",
                                                   "<|end|>",
                                                   "<|return|>",
                                                   "<|call|>",
                                                   "<|flush|>",
                                                   "<|calls|>",
                                                   "<end_of_turn>",
                                                   "<|endoftext|>",
                                                   "</s>",
                                                   "<|eom_id|>",
                                                   "<EOT>",
                                                   "_<EOT>",
                                                   "[EOT]",
                                                   "[EOS]",
                                                   "<|end_of_text|>",
                                                   "<end_of_utterance>",
                                                   "<eos>",
                                                   "<turn|>",
                                                   "<|tool_response>",
                                                   "<\xef\xbd\x9c"
                                                   "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
                                                   "[e~["};
  for (std::string_view text : kEndTexts) {
    const TokenId id = find_marker(text);
    if (id == kNoToken) continue;
    eog.push_back(id);
    make_control(id);
  }
  // gpt-oss: these structure tokens always render (llama.cpp makes them user-defined).
  for (std::string_view text : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
    const TokenId id = find(text);
    if (id != kNoToken) tokens_[id].type = TokenType::kUserDefined;
  }
  for (TokenId id : {special_.eos, special_.eot, special_.eom}) {
    if (id != kNoToken) eog.push_back(id);
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  auto drop = [&](std::string_view text, TokenType new_type) {
    const TokenId id = find(text);
    const auto it = std::find(eog.begin(), eog.end(), id);
    if (id == kNoToken || it == eog.end()) return;
    eog.erase(it);
    tokens_[id].type = new_type;
  };
  // o200k_harmony / solar-open: "<|end|>" ends a message, not the generation.
  const bool has_call = find("<|call|>") != kNoToken || find("<|calls|>") != kNoToken;
  if (has_call && (find("<|return|>") != kNoToken || find("<|flush|>") != kNoToken)) {
    drop("<|end|>", TokenType::kUserDefined);
  }
  // Gemma 4 and PaddleOCR: "</s>" is an ordinary token there.
  if (std::find(eog.begin(), eog.end(), find("<|tool_response>")) != eog.end())
    drop("</s>", TokenType::kNormal);
  end_of_generation_ = std::move(eog);
}

}  // namespace sinter
