#include "tokenizer/hf_import.h"

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/vocabulary.h"

namespace sinter {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kSpaceMark = "\xe2\x96\x81";  // "▁"

// A regex that matches `literal` exactly (for Split patterns given as a string).
std::string quote_regex(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string type_of(const Json& node) {
  return node.is_object() ? node.value("type", std::string()) : std::string();
}

Status append_patterns(const Json& node, std::vector<std::string>* patterns) {
  if (node.is_null()) return ok_status();
  const std::string type = type_of(node);
  if (type == "Sequence") {
    for (const Json& step : node.at("pretokenizers")) SINTER_TRY(append_patterns(step, patterns));
  } else if (type == "ByteLevel") {
    if (node.value("add_prefix_space", false)) {
      return make_error(ErrorCode::kUnsupported,
                        "ByteLevel pre-tokenizer with add_prefix_space is not supported");
    }
    if (node.value("use_regex", true)) {
      patterns->push_back(
          R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re");
    }
  } else if (type == "Split") {
    const Json& pattern = node.at("pattern");
    std::string regex = pattern.contains("Regex") ? pattern.at("Regex").get<std::string>()
                                                  : quote_regex(pattern.at("String").get<std::string>());
    const std::string behavior = node.value("behavior", std::string("Isolated"));
    const bool invert = node.value("invert", false);
    // Isolated keeps matches and the text between them as pieces; Removed+invert keeps the
    // matches and drops the rest, the same when the matches cover the text (as in every known one).
    if (!((behavior == "Isolated" && !invert) || (behavior == "Removed" && invert))) {
      return make_error(ErrorCode::kUnsupported, "Split pre-tokenizer with behavior ", behavior,
                        invert ? " (inverted)" : "", " is not supported");
    }
    patterns->push_back(std::move(regex));
  } else if (type == "Digits") {
    patterns->push_back(node.value("individual_digits", false) ? R"re(\p{N})re" : R"re(\p{N}+)re");
  } else if (type == "Punctuation") {
    if (node.value("behavior", std::string("Isolated")) != "Contiguous") {
      return make_error(ErrorCode::kUnsupported, "Punctuation pre-tokenizer must be Contiguous");
    }
    patterns->push_back(R"re([\p{P}\$\+<=>\^~\|`]+)re");
  } else {
    return make_error(ErrorCode::kUnsupported, "pre-tokenizer type '", type, "' is not supported");
  }
  return ok_status();
}

// NFC or nothing: the only normalizers byte-level vocabularies use.
Result<bool> normalizer_is_nfc(const Json& node) {
  if (node.is_null()) return false;
  const std::string type = type_of(node);
  if (type == "NFC") return true;
  if (type == "Sequence") {
    bool nfc = false;
    for (const Json& step : node.at("normalizers")) {
      SINTER_ASSIGN(bool step_nfc, normalizer_is_nfc(step));
      nfc = nfc || step_nfc;
    }
    return nfc;
  }
  return make_error(ErrorCode::kUnsupported, "normalizer '", type,
                    "' is not supported for a byte-level vocabulary");
}

struct AddedToken {
  int32_t id;
  std::string content;
  bool special;
  bool lstrip;
  bool rstrip;
};

// The token a tokenizer_config.json entry names: "text" or {"content": "text", ...}.
std::optional<std::string> config_token(const Json& config, const char* key) {
  if (!config.contains(key)) return std::nullopt;
  const Json& value = config.at(key);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content")) return value.at("content").get<std::string>();
  return std::nullopt;
}

// The special tokens a TemplateProcessing/BertProcessing post-processor puts before and after a text.
void template_tokens(const Json& processor, std::string* first, std::string* last) {
  const std::string type = type_of(processor);
  if (type == "Sequence") {
    for (const Json& step : processor.at("processors")) template_tokens(step, first, last);
  } else if (type == "TemplateProcessing") {
    const Json& single = processor.at("single");
    if (!single.empty() && single.front().contains("SpecialToken"))
      *first = single.front()["SpecialToken"]["id"];
    if (!single.empty() && single.back().contains("SpecialToken"))
      *last = single.back()["SpecialToken"]["id"];
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    *first = processor.at("cls").at(0).get<std::string>();
    *last = processor.at("sep").at(0).get<std::string>();
  }
}

class Importer {
 public:
  Importer(const Json& tokenizer, const Json& config, const HfImportOptions& options)
      : tokenizer_(tokenizer), config_(config), options_(options) {}

  Result<HfImport> run() {
    const Json& model = tokenizer_.at("model");
    const std::string type = model.value("type", std::string());
    if (type != "BPE" && type != "WordPiece") {
      return make_error(ErrorCode::kUnsupported, "tokenizer.json model type '", type,
                        "' is not supported (BPE and WordPiece are)");
    }
    SINTER_TRY(read_vocabulary(model));
    if (type == "BPE") {
      if (model.value("byte_fallback", false) || uses_space_mark()) {
        SINTER_TRY(import_sentencepiece_bpe(model));
      } else {
        SINTER_TRY(import_byte_level_bpe(model));
      }
    } else if (type == "WordPiece") {
      SINTER_TRY(import_wordpiece(model));
    } else {
      return make_error(ErrorCode::kUnsupported, "tokenizer.json model type '", type,
                        "' is not supported (BPE and WordPiece are)");
    }
    write_common();
    return std::move(result_);
  }

 private:
  Status read_vocabulary(const Json& model) {
    const Json& vocab = model.at("vocab");
    if (!vocab.is_object())
      return make_error(ErrorCode::kFormat, "tokenizer.json: model.vocab is not an object");
    int64_t max_id = -1;
    for (const auto& [text, id] : vocab.items()) {
      if (id.get<int64_t>() < 0) {
        return make_error(ErrorCode::kFormat, "tokenizer.json: token '", text, "' has negative id ",
                          id.get<int64_t>());
      }
      max_id = std::max<int64_t>(max_id, id.get<int64_t>());
    }
    for (const Json& added : tokenizer_.value("added_tokens", Json::array())) {
      AddedToken token{added.at("id").get<int32_t>(), added.at("content").get<std::string>(),
                       added.value("special", false), added.value("lstrip", false),
                       added.value("rstrip", false)};
      max_id = std::max<int64_t>(max_id, token.id);
      added_.push_back(std::move(token));
    }
    if (max_id < 0) return make_error(ErrorCode::kFormat, "tokenizer.json has an empty vocabulary");
    if (max_id >= std::numeric_limits<int32_t>::max()) {
      return make_error(ErrorCode::kFormat, "tokenizer.json: token id ", max_id, " is too large");
    }
    texts_.assign(static_cast<size_t>(max_id) + 1, std::string());
    std::vector<bool> present(texts_.size(), false);
    for (const auto& [text, id] : vocab.items()) {
      const int64_t i = id.get<int64_t>();
      if (i < 0)
        return make_error(ErrorCode::kFormat, "tokenizer.json: token '", text, "' has negative id ", i);
      texts_[i] = text;
      present[i] = true;
    }
    for (const AddedToken& token : added_) {
      if (token.id < 0) return make_error(ErrorCode::kFormat, "tokenizer.json: added token has negative id");
      texts_[token.id] = token.content;
      present[token.id] = true;
    }
    types_.assign(texts_.size(), static_cast<int32_t>(TokenType::kNormal));
    for (size_t i = 0; i < texts_.size(); ++i) {
      if (present[i]) continue;
      texts_[i] = "[PAD" + std::to_string(i) + "]";  // a hole in the ids, named as llama.cpp's converter does
      types_[i] = static_cast<int32_t>(TokenType::kUnused);
    }
    for (const AddedToken& token : added_) {
      types_[token.id] = static_cast<int32_t>(token.special ? TokenType::kControl : TokenType::kUserDefined);
    }
    if (model.contains("unk_token") && model.at("unk_token").is_string()) {
      if (const TokenId unk = find(model.at("unk_token").get<std::string>()); unk != kNoToken) {
        types_[unk] = static_cast<int32_t>(TokenType::kUnknown);
        special_ids_["tokenizer.ggml.unknown_token_id"] = unk;
      }
    }
    return ok_status();
  }

  TokenId find(const std::string& text) {
    if (index_.empty()) {
      for (size_t i = 0; i < texts_.size(); ++i) index_.emplace(texts_[i], static_cast<TokenId>(i));
    }
    const auto it = index_.find(text);
    return it == index_.end() ? kNoToken : it->second;
  }

  bool uses_space_mark() const {
    const std::string dump =
        tokenizer_.value("normalizer", Json()).dump() + tokenizer_.value("pre_tokenizer", Json()).dump();
    return dump.find("\\u2581") != std::string::npos || dump.find(kSpaceMark) != std::string::npos;
  }

  std::vector<std::pair<std::string, std::string>> merge_pairs(const Json& model) const {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const Json& merge : model.value("merges", Json::array())) {
      if (merge.is_array() && merge.size() == 2) {
        pairs.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
      } else if (merge.is_string()) {
        const std::string text = merge.get<std::string>();
        const size_t space = text.find(' ', 1);
        if (space != std::string::npos) pairs.emplace_back(text.substr(0, space), text.substr(space + 1));
      }
    }
    return pairs;
  }

  // Llama 2 / Gemma style: BPE over "▁"-for-space text with byte fallback. Stored as llama.cpp's
  // SentencePiece vocabulary; a token's score is minus the rank of the first merge that makes it,
  // so that merging the highest score first is merging the lowest rank first.
  Status import_sentencepiece_bpe(const Json& model) {
    const Json& normalizer = tokenizer_.value("normalizer", Json());
    const Json& pre = tokenizer_.value("pre_tokenizer", Json());
    const std::string normalizer_dump = normalizer.dump();
    bool prefix = normalizer_dump.find("\"Prepend\"") != std::string::npos;
    if (type_of(pre) == "Metaspace") {
      const std::string scheme = pre.value("prepend_scheme", std::string("always"));
      prefix = pre.value("add_prefix_space", true) && scheme != "never";
      if (scheme == "first") {
        result_.notes.push_back(
            "Metaspace prepend_scheme 'first' is stored as add_space_prefix: llama.cpp and "
            "sinter also prefix text that follows a special token");
      }
    }
    std::vector<float> scores(texts_.size(), -1e9f);  // tokens no merge makes come last
    const auto pairs = merge_pairs(model);
    for (size_t rank = 0; rank < pairs.size(); ++rank) {
      const TokenId id = find(pairs[rank].first + pairs[rank].second);
      if (id != kNoToken && scores[id] == -1e9f) scores[id] = -static_cast<float>(rank);
    }
    for (size_t i = 0; i < texts_.size(); ++i) {
      if (types_[i] == static_cast<int32_t>(TokenType::kNormal) && parse_byte_token(texts_[i]) >= 0) {
        types_[i] = static_cast<int32_t>(TokenType::kByte);
      }
    }
    Metadata& m = result_.metadata;
    if (options_.force_pre == "gemma4") {
      // Gemma 4's form of the same thing: merges by rank over raw UTF-8 (`gpt2` + `pre = gemma4`).
      if (prefix) return make_error(ErrorCode::kUnsupported, "pre-tokenizer gemma4 adds no space prefix");
      std::vector<std::string> merges;
      for (const auto& [left, right] : pairs) merges.push_back(left + " " + right);
      m.set("tokenizer.ggml.model", GgufValue::of_string("gpt2"));
      m.set("tokenizer.ggml.pre", GgufValue::of_string("gemma4"));
      m.set("tokenizer.ggml.tokens", GgufValue::of_strings(texts_));
      m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types_));
      m.set("tokenizer.ggml.merges", GgufValue::of_strings(merges));
      return ok_status();
    }
    if (!options_.force_pre.empty()) {
      return make_error(ErrorCode::kUnsupported,
                        "a SentencePiece-style vocabulary takes no pre-tokenizer but gemma4");
    }
    m.set("tokenizer.ggml.model", GgufValue::of_string("llama"));
    m.set("tokenizer.ggml.tokens", GgufValue::of_strings(texts_));
    m.set("tokenizer.ggml.scores", GgufValue::of_f32s(scores));
    m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types_));
    m.set("tokenizer.ggml.add_space_prefix", GgufValue::of_bool(prefix));
    return ok_status();
  }

  Status import_byte_level_bpe(const Json& model) {
    Metadata& m = result_.metadata;
    std::string pre = options_.force_pre;
    if (pre.empty()) {
      std::vector<std::string> patterns;
      SINTER_TRY(append_patterns(tokenizer_.value("pre_tokenizer", Json()), &patterns));
      SINTER_ASSIGN(const bool nfc, normalizer_is_nfc(tokenizer_.value("normalizer", Json())));
      const bool ignore_merges = model.value("ignore_merges", false);
      // The same expressions, however tokenizer.json spells their characters.
      auto same_patterns = [&](const PreTokenizerSpec& spec) {
        if (spec.patterns.size() != patterns.size()) return false;
        for (size_t i = 0; i < patterns.size(); ++i) {
          if (canonical_regex(spec.patterns[i]) != canonical_regex(patterns[i])) return false;
        }
        return true;
      };
      for (const PreTokenizerSpec& spec : pre_tokenizer_specs()) {
        if (spec.byte_level && same_patterns(spec) && spec.nfc == nfc &&
            spec.ignore_merges == ignore_merges) {
          pre = spec.name;
          break;
        }
      }
      if (pre.empty()) {
        std::string listed;
        for (const std::string& p : patterns) listed += "\n  /" + canonical_regex(p) + "/";
        return make_error(
            ErrorCode::kUnsupported, "the pre-tokenizer of tokenizer.json (", nfc ? "NFC, " : "",
            ignore_merges ? "ignore_merges, " : "", "regular expressions:", listed,
            ") is not one sinter knows; give one with --pre NAME (known: ", known_pre_tokenizer_names(), ")");
      }
    } else if (find_pre_tokenizer(pre) == nullptr) {
      return make_error(ErrorCode::kUnsupported, "pre-tokenizer '", pre,
                        "' is not one sinter knows (known: ", known_pre_tokenizer_names(), ")");
    }
    std::vector<std::string> merges;
    for (const auto& [left, right] : merge_pairs(model)) {
      if (left.find(' ') != std::string::npos || right.find(' ') != std::string::npos) {
        return make_error(ErrorCode::kUnsupported, "merge '", left, "' + '", right,
                          "' contains a space, which GGUF's \"left right\" merges cannot hold");
      }
      merges.push_back(left + " " + right);
    }
    m.set("tokenizer.ggml.model", GgufValue::of_string("gpt2"));
    m.set("tokenizer.ggml.pre", GgufValue::of_string(pre));
    m.set("tokenizer.ggml.tokens", GgufValue::of_strings(texts_));
    m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types_));
    m.set("tokenizer.ggml.merges", GgufValue::of_strings(merges));
    return ok_status();
  }

  Status import_wordpiece(const Json& model) {
    const std::string prefix = model.value("continuing_subword_prefix", std::string("##"));
    const Json& normalizer = tokenizer_.value("normalizer", Json());
    if (type_of(normalizer) != "BertNormalizer") {
      return make_error(ErrorCode::kUnsupported, "WordPiece needs a BertNormalizer, not '",
                        type_of(normalizer), "'");
    }
    if (type_of(tokenizer_.value("pre_tokenizer", Json())) != "BertPreTokenizer") {
      return make_error(ErrorCode::kUnsupported, "WordPiece needs a BertPreTokenizer");
    }
    if (!normalizer.value("handle_chinese_chars", true) || !normalizer.value("clean_text", true)) {
      result_.notes.push_back(
          "BertNormalizer without clean_text/handle_chinese_chars: sinter always does both");
    }
    if (model.value("max_input_chars_per_word", 100) != 100) {
      result_.notes.push_back("max_input_chars_per_word is not 100: sinter uses 100");
    }
    const bool lowercase = normalizer.value("lowercase", true);
    const Json& strip = normalizer.value("strip_accents", Json());
    const bool strip_accents = strip.is_boolean() ? strip.get<bool>() : lowercase;
    // llama.cpp's form: a word-initial piece "x" becomes "▁x", a continuation "##x" becomes "x".
    std::vector<std::string> texts = texts_;
    for (size_t i = 0; i < texts.size(); ++i) {
      if (types_[i] != static_cast<int32_t>(TokenType::kNormal)) continue;
      if (texts[i].compare(0, prefix.size(), prefix) == 0 && texts[i].size() > prefix.size()) {
        texts[i].erase(0, prefix.size());
      } else {
        texts[i] = std::string(kSpaceMark) + texts[i];
      }
    }
    Metadata& m = result_.metadata;
    wordpiece_ = true;
    m.set("tokenizer.ggml.model", GgufValue::of_string("bert"));
    m.set("tokenizer.ggml.tokens", GgufValue::of_strings(texts));
    m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types_));
    m.set("tokenizer.ggml.normalizer.lowercase", GgufValue::of_bool(lowercase));
    m.set("tokenizer.ggml.normalizer.strip_accents", GgufValue::of_bool(strip_accents));
    return ok_status();
  }

  void write_common() {
    Metadata& m = result_.metadata;
    std::string first, last;
    template_tokens(tokenizer_.value("post_processor", Json()), &first, &last);
    auto set_id = [&](const char* key, const std::optional<std::string>& text) {
      if (!text) return;
      if (const TokenId id = find(*text); id != kNoToken) special_ids_[key] = id;
    };
    if (wordpiece_) {
      set_id("tokenizer.ggml.bos_token_id", first.empty() ? config_token(config_, "cls_token") : first);
      set_id("tokenizer.ggml.cls_token_id", first.empty() ? config_token(config_, "cls_token") : first);
      set_id("tokenizer.ggml.seperator_token_id", last.empty() ? config_token(config_, "sep_token") : last);
      set_id("tokenizer.ggml.mask_token_id", config_token(config_, "mask_token"));
      m.set("tokenizer.ggml.add_bos_token", GgufValue::of_bool(!first.empty()));
      m.set("tokenizer.ggml.add_sep_token", GgufValue::of_bool(!last.empty()));
    } else {
      set_id("tokenizer.ggml.bos_token_id", config_token(config_, "bos_token"));
      if (!special_ids_.count("tokenizer.ggml.bos_token_id") && !first.empty()) {
        set_id("tokenizer.ggml.bos_token_id", first);
      }
      set_id("tokenizer.ggml.eos_token_id", config_token(config_, "eos_token"));
      // add_bos/add_eos from tokenizer_config.json, else from a post-processor template that puts
      // a special token first/last. With neither, the key stays out and the reader's default for
      // the pre-tokenizer applies (llama.cpp: BOS for llama-bpe and tekken).
      const bool has_bos = special_ids_.count("tokenizer.ggml.bos_token_id") > 0;
      const bool has_eos = special_ids_.count("tokenizer.ggml.eos_token_id") > 0;
      if (config_.contains("add_bos_token") && config_["add_bos_token"].is_boolean()) {
        m.set("tokenizer.ggml.add_bos_token",
              GgufValue::of_bool(config_["add_bos_token"].get<bool>() && has_bos));
      } else if (!first.empty() && has_bos) {
        m.set("tokenizer.ggml.add_bos_token", GgufValue::of_bool(true));
      } else {
        result_.notes.push_back(
            "neither tokenizer_config.json nor the post-processor says whether to add BOS");
      }
      if (config_.contains("add_eos_token") && config_["add_eos_token"].is_boolean()) {
        m.set("tokenizer.ggml.add_eos_token",
              GgufValue::of_bool(config_["add_eos_token"].get<bool>() && has_eos));
      } else if (!last.empty() && special_ids_.count("tokenizer.ggml.eos_token_id") &&
                 find(last) == special_ids_["tokenizer.ggml.eos_token_id"]) {
        m.set("tokenizer.ggml.add_eos_token", GgufValue::of_bool(true));
      }
    }
    set_id("tokenizer.ggml.padding_token_id", config_token(config_, "pad_token"));
    if (const auto unk = config_token(config_, "unk_token");
        unk && !special_ids_.count("tokenizer.ggml.unknown_token_id")) {
      set_id("tokenizer.ggml.unknown_token_id", unk);
    }
    for (const auto& [key, id] : special_ids_) m.set(key, GgufValue::of_u32(static_cast<uint32_t>(id)));
    std::vector<int32_t> lstrip, rstrip;
    for (const AddedToken& token : added_) {
      if (token.lstrip) lstrip.push_back(token.id);
      if (token.rstrip) rstrip.push_back(token.id);
    }
    if (!lstrip.empty()) m.set(kLstripTokensKey, GgufValue::of_i32s(lstrip));
    if (!rstrip.empty()) m.set(kRstripTokensKey, GgufValue::of_i32s(rstrip));
    if (config_.contains("chat_template")) {
      const Json& templates = config_.at("chat_template");
      if (templates.is_string()) {
        m.set("tokenizer.chat_template", GgufValue::of_string(templates.get<std::string>()));
      } else if (templates.is_array()) {
        for (const Json& entry : templates) {
          const std::string name = entry.value("name", std::string());
          const std::string key =
              name == "default" ? "tokenizer.chat_template" : "tokenizer.chat_template." + name;
          m.set(key, GgufValue::of_string(entry.value("template", std::string())));
        }
      }
    }
  }

  const Json& tokenizer_;
  const Json& config_;
  const HfImportOptions& options_;
  HfImport result_;
  std::vector<AddedToken> added_;
  std::vector<std::string> texts_;
  std::vector<int32_t> types_;
  std::unordered_map<std::string, TokenId> index_;
  std::map<std::string, TokenId> special_ids_;
  bool wordpiece_ = false;
};

Result<Json> parse(std::string_view text, const char* what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for numbers like 1e999
    return make_error(ErrorCode::kFormat, what, " is not valid JSON: ", e.what());
  }
}

}  // namespace

Result<HfImport> import_hf_tokenizer(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                                     const HfImportOptions& options) {
  SINTER_ASSIGN(const Json tokenizer, parse(tokenizer_json, "tokenizer.json"));
  Json config = Json::object();
  if (!tokenizer_config_json.empty()) {
    SINTER_ASSIGN(config, parse(tokenizer_config_json, "tokenizer_config.json"));
  }
  if (!tokenizer.is_object() || !tokenizer.contains("model")) {
    return make_error(ErrorCode::kFormat, "tokenizer.json has no \"model\" object");
  }
  if (!config.is_object())
    return make_error(ErrorCode::kFormat, "tokenizer_config.json is not a JSON object");
  try {
    return Importer(tokenizer, config, options).run();
  } catch (const Json::exception& e) {
    return make_error(ErrorCode::kFormat, "tokenizer.json: unexpected structure: ", e.what());
  }
}

Result<std::vector<std::string>> hf_pre_tokenizer_patterns(std::string_view pre_tokenizer_json) {
  SINTER_ASSIGN(const Json node, parse(pre_tokenizer_json, "pre_tokenizer"));
  std::vector<std::string> patterns;
  try {
    SINTER_TRY(append_patterns(node, &patterns));
  } catch (const Json::exception& e) {
    return make_error(ErrorCode::kFormat, "pre_tokenizer: unexpected structure: ", e.what());
  }
  return patterns;
}

}  // namespace sinter
