// Byte-level BPE on small hand-made vocabularies: merges by rank, the byte mapping, pre-tokenizer
// selection and its errors, special tokens with lstrip/rstrip.
#include <gtest/gtest.h>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace sinter {
namespace {

// The 256 byte characters, then the given extra tokens; merges as "left right".
Metadata byte_level_vocabulary(const std::vector<std::string>& extra, const std::vector<std::string>& merges,
                               const std::string& pre = "gpt-2") {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_to_unicode(static_cast<uint8_t>(b)));
  std::vector<int32_t> types(tokens.size(), 1);
  for (const std::string& t : extra) {
    tokens.push_back(t);
    types.push_back(t.size() > 2 && t.front() == '<' && t.back() == '>' ? 3 : 1);
  }
  Metadata m;
  m.set("tokenizer.ggml.model", GgufValue::of_string("gpt2"));
  if (!pre.empty()) m.set("tokenizer.ggml.pre", GgufValue::of_string(pre));
  m.set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  m.set("tokenizer.ggml.merges", GgufValue::of_strings(merges));
  return m;
}

std::vector<TokenId> encode(const Tokenizer& tokenizer, std::string_view text) {
  auto ids = tokenizer.encode(text, {false, true});
  EXPECT_TRUE(ids) << ids.error().message();
  return ids.ok() ? *ids : std::vector<TokenId>{};
}

TEST(ByteLevel, MappingIsGpt2s) {
  EXPECT_EQ(byte_to_unicode(' '), "\xc4\xa0");   // Ġ
  EXPECT_EQ(byte_to_unicode('\n'), "\xc4\x8a");  // Ċ
  EXPECT_EQ(byte_to_unicode('a'), "a");
  EXPECT_EQ(byte_to_unicode(0xff), "\xc3\xbf");  // ÿ stands for itself
  for (int b = 0; b < 256; ++b) {
    size_t pos = 0;
    const std::string& s = byte_to_unicode(static_cast<uint8_t>(b));
    uint32_t cp = 0;
    for (unsigned char c : s) cp = (s.size() == 1) ? c : cp;
    (void)pos;
    if (s.size() == 2) cp = ((s[0] & 0x1f) << 6) | (s[1] & 0x3f);
    EXPECT_EQ(unicode_to_byte(cp), b);
  }
}

TEST(BpeTokenizer, MergesByLowestRankFirst) {
  // "Ġ" + "a" (rank 0), "a" + "b" (rank 1), "Ġa" + "b" (rank 2).
  const std::string space = byte_to_unicode(' ');
  auto tokenizer = Tokenizer::from_metadata(
      byte_level_vocabulary({space + "a", "ab", space + "ab"}, {space + " a", "a b", space + "a b"}));
  ASSERT_TRUE(tokenizer) << tokenizer.error().message();
  EXPECT_EQ((*tokenizer)->pre_tokenizer_name(), "gpt-2");
  // " ab": Ġ+a first (rank 0), then Ġa+b (rank 2) → one token.
  EXPECT_EQ(encode(**tokenizer, " ab"), (std::vector<TokenId>{258}));
  // "ab": a+b (rank 1).
  EXPECT_EQ(encode(**tokenizer, "ab"), (std::vector<TokenId>{257}));
  EXPECT_EQ((*tokenizer)->decode(encode(**tokenizer, " ab ab\n")), " ab ab\n");
  EXPECT_EQ((*tokenizer)->token_to_piece(256), " a");
}

TEST(BpeTokenizer, InvalidUtf8BecomesReplacementCharacters) {
  auto tokenizer = Tokenizer::from_metadata(byte_level_vocabulary({}, {}));
  ASSERT_TRUE(tokenizer);
  // As llama.cpp: each invalid byte is read as U+FFFD (EF BF BD) before pre-tokenizing.
  EXPECT_EQ((*tokenizer)
                ->decode(encode(**tokenizer,
                                "a\xff"
                                "b")),
            "a\xef\xbf\xbd"
            "b");
}

TEST(BpeTokenizer, UnknownOrMissingPreTokenizerIsAnErrorNamingIt) {
  auto unknown = Tokenizer::from_metadata(byte_level_vocabulary({}, {}, "no-such-pre"));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("'no-such-pre'"), std::string::npos) << unknown.error().message();
  EXPECT_NE(unknown.error().message().find("--force-pre"), std::string::npos);
  auto missing = Tokenizer::from_metadata(byte_level_vocabulary({}, {}, ""));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("no tokenizer.ggml.pre"), std::string::npos);
  // The escape hatch.
  auto forced =
      Tokenizer::from_metadata(byte_level_vocabulary({}, {}, "no-such-pre"), TokenizerOptions{"llama-bpe"});
  ASSERT_TRUE(forced) << forced.error().message();
  EXPECT_EQ((*forced)->pre_tokenizer_name(), "llama-bpe");
  auto bad_force = Tokenizer::from_metadata(byte_level_vocabulary({}, {}, "gpt-2"), TokenizerOptions{"nope"});
  EXPECT_FALSE(bad_force);
}

TEST(BpeTokenizer, SpecialTokensSplitOutWithLstripAndRstrip) {
  Metadata m = byte_level_vocabulary({"<|end|>", "<|start|>"}, {});
  const TokenId end = 256, start = 257;
  m.set(kLstripTokensKey, GgufValue::of_i32s({end}));
  m.set(kRstripTokensKey, GgufValue::of_i32s({start}));
  auto tokenizer = Tokenizer::from_metadata(m);
  ASSERT_TRUE(tokenizer) << tokenizer.error().message();
  const TokenId a = static_cast<TokenId>('a'), space = 220 - 220 + 32 + 256 - 256;  // bytes map to ids 0..255
  (void)space;
  // "a \t<|end|>": lstrip takes the whitespace before the token.
  EXPECT_EQ(encode(**tokenizer, "a \t<|end|>"), (std::vector<TokenId>{a, end}));
  // "<|start|>  a": rstrip takes the whitespace after.
  EXPECT_EQ(encode(**tokenizer, "<|start|>  a"), (std::vector<TokenId>{start, a}));
  // With parse_special off, control tokens stay text.
  auto plain = (*tokenizer)->encode("<|end|>", {false, false});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->size(), 7u);
  EXPECT_EQ((*tokenizer)->token_to_piece(end), "");
  EXPECT_EQ((*tokenizer)->token_to_piece(end, true), "<|end|>");
  EXPECT_TRUE((*tokenizer)->is_end_of_generation(end));  // "<|end|>" is an end-of-generation text
}

// As llama.cpp sets it by the model's name: a modern-bert file's [MASK] takes the whitespace
// before it (its original tokenizer's lstrip), another file's does not.
TEST(BpeTokenizer, ModernBertsMaskStripsTheSpaceBeforeIt) {
  for (const bool modern : {true, false}) {
    Metadata m = byte_level_vocabulary({"[MASK]"}, {}, "modern-bert");
    m.set("tokenizer.ggml.token_type", GgufValue::of_i32s([] {
            std::vector<int32_t> types(257, 1);
            types[256] = 3;  // control, as converters mark [MASK]
            return types;
          }()));
    m.set("general.name", GgufValue::of_string(modern ? "Modern-BERT Base" : "Some BERT"));
    auto tokenizer = Tokenizer::from_metadata(m);
    ASSERT_TRUE(tokenizer) << tokenizer.error().message();
    const TokenId a = static_cast<TokenId>('a'), mask = 256;
    const std::vector<TokenId> ids = encode(**tokenizer, "a [MASK]");
    EXPECT_EQ(ids.back(), mask);
    EXPECT_EQ(ids.front(), a);
    EXPECT_EQ(ids.size(), modern ? 2u : 3u) << (modern ? "the space is stripped" : "the space stays a token");
  }
}

TEST(PreTokenizer, SplitsLikeTheOriginalExpressions) {
  auto split = [](const std::string& name, const std::string& text) {
    const PreTokenizerSpec* spec = find_pre_tokenizer(name);
    EXPECT_NE(spec, nullptr) << name;
    auto regex = RegexSplitter::compile(spec->patterns);
    EXPECT_TRUE(regex);
    auto pieces = (*regex)->split(text);
    EXPECT_TRUE(pieces);
    return std::vector<std::string>(pieces->begin(), pieces->end());
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(split("gpt-2", "Hello world's  12345!!"), (V{"Hello", " world", "'s", " ", " 12345", "!!"}));
  EXPECT_EQ(split("llama-bpe", "Hello world's  12345!!"),
            (V{"Hello", " world", "'s", " ", " ", "123", "45", "!!"}));
  EXPECT_EQ(split("llama3", "I'M"), (V{"I", "'M"}));  // (?i:...) contractions
  EXPECT_EQ(split("qwen2", "x 123"), (V{"x", " ", "1", "2", "3"}));
  EXPECT_EQ(split("starcoder", "a12"), (V{"a", "1", "2"}));
  EXPECT_EQ(split("gemma4", "a b\n\nc"), (V{"a b", "\n\n", "c"}));
  // gpt-4o keeps combining marks with their letters (\p{M}).
  EXPECT_EQ(split("gpt-4o", "नमस्ते दुनिया"), (V{"नमस्ते", " दुनिया"}));
  EXPECT_EQ(split("deepseek-v3", "abc 1234"), (V{"abc", " ", "123", "4"}));
  EXPECT_TRUE(split("gpt-2", "").empty());
}

TEST(PreTokenizer, EveryKnownSpecCompiles) {
  for (const PreTokenizerSpec& spec : pre_tokenizer_specs()) {
    auto regex = RegexSplitter::compile(spec.patterns);
    EXPECT_TRUE(regex) << spec.name << ": " << (regex ? "" : regex.error().message());
  }
  EXPECT_NE(find_pre_tokenizer("default"), nullptr);
  EXPECT_EQ(find_pre_tokenizer("nonexistent"), nullptr);
  EXPECT_NE(known_pre_tokenizer_names().find("tekken"), std::string::npos);
}

TEST(PreTokenizer, SanitizeReplacesOnlyInvalidBytes) {
  EXPECT_EQ(sanitize_utf8("ok é"), "ok é");
  EXPECT_EQ(sanitize_utf8("a\xc3"), "a\xef\xbf\xbd");
  EXPECT_EQ(sanitize_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
}

}  // namespace
}  // namespace sinter
