#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdio>

#include "core/utf8.h"

namespace sinter {
namespace {

// The regular expressions, as the models' tokenizer.json spell them (PCRE2 accepts Oniguruma's
// syntax for all of them).
const std::string kGpt2 = R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
const std::string kLlama3 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string kQwen2 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string kQwen35 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string kGpt4o =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string kTekken =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string kDeepseekV3Words =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string kBloom = R"re( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)re";

std::vector<PreTokenizerSpec> make_specs() {
  std::vector<PreTokenizerSpec> specs;
  auto add = [&](std::string name, std::vector<std::string> aliases,
                 std::vector<std::string> patterns) -> PreTokenizerSpec& {
    specs.push_back({std::move(name), std::move(aliases), std::move(patterns)});
    return specs.back();
  };
  // llama.cpp's fallback for BPE files without a `pre` value.
  add("default", {},
      {R"re([\p{P}\$\+<=>\^~\|]+)re",
       R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re", R"re(\p{N}+)re",
       R"re([0-9][0-9][0-9])re"});
  add("gpt-2",
      {"mpt", "olmo", "jais", "trillion", "granite-docling", "phi-2", "jina-es", "jina-de", "gigachat",
       "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "exaone4", "jina-v1-en",
       "jina-v2-code", "roberta-bpe"},
      {kGpt2});
  add("llama-bpe",
      {"llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"},
      {kLlama3})
      .ignore_merges = true;
  add("dbrx", {"smaug-bpe", "chatglm-bpe", "glm4"}, {kLlama3});
  add("qwen2", {"deepseek-r1-qwen", "kormo", "f2llmv2", "megrez"}, {kQwen2}).nfc = true;
  add("stablelm2", {"hunyuan", "solar-open", "grok-2"}, {kQwen2});
  add("qwen35", {}, {kQwen35}).nfc = true;
  add("deepseek-llm", {},
      {R"re([\r\n])re",
       R"re(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re",
       R"re(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re",
       R"re(\s+$)re", R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re", R"re(\p{N}+)re"});
  add("deepseek-coder", {},
      {R"re([\r\n])re", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re",
       R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re", R"re(\p{N})re"});
  add("deepseek-v3", {"hunyuan-dense", "joyai-llm"},
      {R"re(\p{N}{1,3})re", R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re",
       kDeepseekV3Words});
  add("falcon", {},
      {R"re([\p{P}\$\+<=>\^~\|`]+)re",
       R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re",
       R"re([0-9][0-9][0-9])re"});
  // Hugging Face: Digits(individual_digits) then ByteLevel(use_regex).
  add("starcoder", {"refact", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
      {R"re(\p{N})re", kGpt2});
  // The same after NFC: Cohere's Command R and Aya tokenizers normalize first.
  add("command-r", {}, {R"re(\p{N})re", kGpt2}).nfc = true;
  add("gpt-4o", {"llama4", "kanana2", "talkie", "minimax-m2"}, {kGpt4o});
  add("tekken", {}, {kTekken}).ignore_merges = true;
  add("poro-chat", {"bloom", "gpt3-finnish"}, {kBloom});
  add("viking", {}, {kBloom, R"re(\p{N})re"});
  add("seed-coder", {},
      {R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re"});
  add("bailingmoe", {"bailingmoe2", "llada-moe"},
      {R"re('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re"});
  add("exaone-moe", {},
      {R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)re"});
  add("minicpm5", {},
      {R"re(\p{N}{1,3})re",
       R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"})
      .ignore_merges = true;
  add("tiny_aya", {"cohere2moe"}, {R"re(\d{1,3}(?=(?:\d{3})*\b))re", kGpt4o});
  add("laguna", {}, {R"re([^\n]+|[\n]+)re", kQwen2});
  // SentencePiece-style BPE over raw UTF-8 (Gemma 4): only runs of newlines are cut out.
  PreTokenizerSpec& gemma4 = add("gemma4", {"sarvam-moe"}, {R"re([^\n]+|[\n]+)re"});
  gemma4.byte_level = false;
  return specs;
}

}  // namespace

const std::vector<PreTokenizerSpec>& pre_tokenizer_specs() {
  static const std::vector<PreTokenizerSpec> specs = make_specs();
  return specs;
}

const PreTokenizerSpec* find_pre_tokenizer(std::string_view name) {
  for (const PreTokenizerSpec& spec : pre_tokenizer_specs()) {
    if (spec.name == name) return &spec;
    if (std::find(spec.aliases.begin(), spec.aliases.end(), name) != spec.aliases.end()) return &spec;
  }
  return nullptr;
}

std::string canonical_regex(std::string_view pattern) {
  std::string out;
  for (size_t pos = 0; pos < pattern.size();) {
    const auto byte = static_cast<uint8_t>(pattern[pos]);
    if (byte < 0x80) {
      if (byte == '\r')
        out += "\\r";
      else if (byte == '\n')
        out += "\\n";
      else if (byte == '\t')
        out += "\\t";
      else
        out += static_cast<char>(byte);
      ++pos;
      continue;
    }
    char escaped[16];
    std::snprintf(escaped, sizeof escaped, "\\x{%X}", utf8_decode(pattern, &pos));
    out += escaped;
  }
  return out;
}

std::string known_pre_tokenizer_names() {
  std::string out;
  for (const PreTokenizerSpec& spec : pre_tokenizer_specs()) {
    out += (out.empty() ? "" : ", ") + spec.name;
    for (const std::string& alias : spec.aliases) out += ", " + alias;
  }
  return out;
}

struct RegexSplitter::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

RegexSplitter::~RegexSplitter() = default;

Result<std::shared_ptr<const RegexSplitter>> RegexSplitter::compile(
    const std::vector<std::string>& patterns) {
  std::shared_ptr<RegexSplitter> splitter(new RegexSplitter());
  for (const std::string& pattern : patterns) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    auto compiled = std::make_unique<Compiled>();
    compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (compiled->code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      return make_error(ErrorCode::kFormat, "pre-tokenizer regex /", pattern, "/ does not compile at offset ",
                        offset, ": ", reinterpret_cast<const char*>(message));
    }
    pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is absent
    splitter->compiled_.push_back(std::move(compiled));
  }
  return std::shared_ptr<const RegexSplitter>(std::move(splitter));
}

namespace {

// Match data and a JIT stack per thread, reused across calls.
struct MatchScratch {
  pcre2_match_data* data = pcre2_match_data_create(16, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  MatchScratch() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~MatchScratch() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

}  // namespace

Result<std::vector<std::string_view>> RegexSplitter::split(std::string_view text) const {
  thread_local MatchScratch scratch;
  std::vector<std::string_view> pieces;
  if (!text.empty()) pieces.push_back(text);
  std::vector<std::string_view> next;
  for (const auto& compiled : compiled_) {
    next.clear();
    for (std::string_view piece : pieces) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t emitted = 0;  // end of the last piece emitted
      size_t start = 0;
      while (start < piece.size()) {
        const int rc = pcre2_match(compiled->code, subject, piece.size(), start, PCRE2_NO_UTF_CHECK,
                                   scratch.data, scratch.context);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          PCRE2_UCHAR message[256];
          pcre2_get_error_message(rc, message, sizeof message);
          return make_error(ErrorCode::kUnsupported, "pre-tokenizer regex failed on a piece of ",
                            piece.size(), " bytes: ", reinterpret_cast<const char*>(message));
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch.data);
        const size_t match_start = ovector[0];
        const size_t match_end = ovector[1];
        if (match_end == match_start) {  // an empty match cuts nothing: step over one character
          start = match_start +
                  std::max<size_t>(1, utf8_sequence_length(static_cast<uint8_t>(piece[match_start])));
          continue;
        }
        if (match_start > emitted) next.push_back(piece.substr(emitted, match_start - emitted));
        next.push_back(piece.substr(match_start, match_end - match_start));
        emitted = start = match_end;
      }
      if (emitted < piece.size()) next.push_back(piece.substr(emitted));
    }
    pieces.swap(next);
  }
  return pieces;
}

std::string sanitize_utf8(std::string_view text) {
  if (utf8_is_valid(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const uint32_t cp = utf8_decode(text, &pos);
    if (cp == 0xfffd && pos - start == 1) {
      out += "\xef\xbf\xbd";
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

}  // namespace sinter
