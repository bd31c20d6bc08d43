// Bad vocabularies and bad tokenizer.json files give clear errors, never a crash.
#include <gtest/gtest.h>

#include "tokenizer/hf_import.h"
#include "tokenizer/tokenizer.h"

namespace sinter {
namespace {

Metadata spm_vocabulary() {
  Metadata m;
  m.set("tokenizer.ggml.model", GgufValue::of_string("llama"));
  m.set("tokenizer.ggml.tokens", GgufValue::of_strings({"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a"}));
  m.set("tokenizer.ggml.scores", GgufValue::of_f32s({0, 0, 0, -1, -2}));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s({2, 3, 3, 1, 1}));
  return m;
}

std::string error_of(const Metadata& metadata) {
  auto tokenizer = Tokenizer::from_metadata(metadata);
  EXPECT_FALSE(tokenizer);
  return tokenizer ? std::string() : tokenizer.error().message();
}

std::string import_error(const std::string& tokenizer_json, const std::string& config = "") {
  auto imported = import_hf_tokenizer(tokenizer_json, config);
  EXPECT_FALSE(imported);
  return imported ? std::string() : imported.error().message();
}

#define EXPECT_MENTIONS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(MalformedVocabulary, ErrorsNameTheKey) {
  ASSERT_TRUE(Tokenizer::from_metadata(spm_vocabulary()));
  EXPECT_MENTIONS(error_of(Metadata()), "tokenizer.ggml.model");

  Metadata unknown_model = spm_vocabulary();
  unknown_model.set("tokenizer.ggml.model", GgufValue::of_string("plamo2"));
  EXPECT_MENTIONS(error_of(unknown_model), "'plamo2'");

  Metadata no_tokens = spm_vocabulary();
  no_tokens.erase("tokenizer.ggml.tokens");
  EXPECT_MENTIONS(error_of(no_tokens), "tokenizer.ggml.tokens");

  Metadata empty = spm_vocabulary();
  empty.set("tokenizer.ggml.tokens", GgufValue::of_strings({}));
  EXPECT_MENTIONS(error_of(empty), "empty");

  Metadata short_scores = spm_vocabulary();
  short_scores.set("tokenizer.ggml.scores", GgufValue::of_f32s({0, 0}));
  EXPECT_MENTIONS(error_of(short_scores), "tokenizer.ggml.scores");

  Metadata short_types = spm_vocabulary();
  short_types.set("tokenizer.ggml.token_type", GgufValue::of_i32s({1}));
  EXPECT_MENTIONS(error_of(short_types), "tokenizer.ggml.token_type");

  Metadata wrong_type = spm_vocabulary();
  wrong_type.set("tokenizer.ggml.tokens", GgufValue::of_string("not an array"));
  EXPECT_MENTIONS(error_of(wrong_type), "tokenizer.ggml.tokens");

  Metadata duplicate = spm_vocabulary();
  duplicate.set("tokenizer.ggml.tokens", GgufValue::of_strings({"<unk>", "<s>", "</s>", "a", "a"}));
  EXPECT_MENTIONS(error_of(duplicate), "repeats token 3");

  Metadata bad_id = spm_vocabulary();
  bad_id.set("tokenizer.ggml.bos_token_id", GgufValue::of_string("one"));
  EXPECT_MENTIONS(error_of(bad_id), "tokenizer.ggml.bos_token_id");

  Metadata bpe_without_merges = spm_vocabulary();
  bpe_without_merges.set("tokenizer.ggml.model", GgufValue::of_string("gpt2"));
  bpe_without_merges.set("tokenizer.ggml.pre", GgufValue::of_string("gpt-2"));
  EXPECT_MENTIONS(error_of(bpe_without_merges), "tokenizer.ggml.merges");

  Metadata strip_out_of_range = spm_vocabulary();
  strip_out_of_range.set(kLstripTokensKey, GgufValue::of_i32s({99}));
  EXPECT_MENTIONS(error_of(strip_out_of_range), "99");
}

TEST(MalformedVocabulary, OutOfRangeSpecialIdsAreIgnored) {
  Metadata m = spm_vocabulary();
  m.set("tokenizer.ggml.eos_token_id", GgufValue::of_u32(1000));
  m.set("tokenizer.ggml.padding_token_id", GgufValue::of_u32(0xFFFFFFFFu));
  auto tokenizer = Tokenizer::from_metadata(m);
  ASSERT_TRUE(tokenizer) << tokenizer.error().message();
  EXPECT_EQ((*tokenizer)->eos(), 2);  // the default stays
}

TEST(MalformedTokenizerJson, ErrorsSayWhatIsWrong) {
  EXPECT_MENTIONS(import_error("{not json"), "not valid JSON");
  EXPECT_MENTIONS(import_error(R"({"model": 99e999})"), "not valid JSON");  // found by fuzz_tokenizer
  EXPECT_MENTIONS(import_error("[]"), "\"model\"");
  EXPECT_MENTIONS(import_error(R"({"model": {"type": "Unigram", "vocab": {}}})"), "'Unigram'");
  EXPECT_MENTIONS(import_error(R"({"model": {"type": "BPE", "vocab": []}})"), "model.vocab");
  EXPECT_MENTIONS(import_error(R"({"model": {"type": "BPE", "vocab": {}}})"), "empty vocabulary");
  EXPECT_MENTIONS(import_error(R"({"model": {"type": "BPE", "vocab": {"a": "zero"}}})"),
                  "unexpected structure");
  EXPECT_MENTIONS(import_error(R"({"model": {"type": "BPE", "vocab": {"a": -4}}})"), "negative id");
  EXPECT_MENTIONS(import_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}}})", "[1]"),
                  "tokenizer_config.json");
  // A byte-level pre-tokenizer sinter does not know is named in the error, with the way out.
  const std::string unknown_pre = R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
      "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\p{L}+x"}, "behavior": "Isolated", "invert": false}})";
  const std::string message = import_error(unknown_pre);
  EXPECT_MENTIONS(message, "\\p{L}+x");
  EXPECT_MENTIONS(message, "--pre");
  auto forced = import_hf_tokenizer(unknown_pre, "", HfImportOptions{"gpt-2"});
  ASSERT_TRUE(forced) << forced.error().message();
  EXPECT_EQ(*forced->metadata.get<std::string>("tokenizer.ggml.pre"), "gpt-2");
  EXPECT_MENTIONS(import_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}},
      "pre_tokenizer": {"type": "Whitespace"}})"),
                  "'Whitespace'");
  EXPECT_MENTIONS(import_error(R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}, "normalizer": null})"),
                  "BertNormalizer");
}

TEST(TokenizerJsonImport, RecognizesThePreTokenizerFromItsDefinition) {
  // GPT-2's ByteLevel with its built-in expression, spelled out as Split + ByteLevel.
  auto patterns =
      hf_pre_tokenizer_patterns(R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})");
  ASSERT_TRUE(patterns);
  ASSERT_EQ(patterns->size(), 1u);
  const std::string tokenizer_json =
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
      "added_tokens": [{"id": 3, "content": "<|end|>", "special": true, "lstrip": true, "rstrip": false}],
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": true},
        {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}]}})";
  auto imported =
      import_hf_tokenizer(tokenizer_json, R"({"eos_token": "<|end|>", "chat_template": "{{ x }}"})");
  ASSERT_TRUE(imported) << imported.error().message();
  const Metadata& m = imported->metadata;
  EXPECT_EQ(*m.get<std::string>("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*m.get<std::string>("tokenizer.ggml.pre"), "starcoder");
  EXPECT_EQ(*m.get<uint32_t>("tokenizer.ggml.eos_token_id"), 3u);
  EXPECT_EQ(*m.get<std::string>("tokenizer.chat_template"), "{{ x }}");
  // Nothing says whether to add BOS: the key stays out, and the note says so.
  EXPECT_FALSE(m.contains("tokenizer.ggml.add_bos_token"));
  EXPECT_FALSE(imported->notes.empty());
  EXPECT_EQ(*m.get<std::vector<int32_t>>(kLstripTokensKey), std::vector<int32_t>{3});
  EXPECT_EQ(*m.get<std::vector<int32_t>>("tokenizer.ggml.token_type"), (std::vector<int32_t>{1, 1, 1, 3}));
  auto tokenizer = Tokenizer::from_metadata(m);
  ASSERT_TRUE(tokenizer) << tokenizer.error().message();
  auto ids = (*tokenizer)->encode("ab <|end|>", {false, true});
  ASSERT_TRUE(ids);
  EXPECT_EQ(*ids, (std::vector<TokenId>{2, 3}));
}

TEST(TokenizerJsonImport, CommandRsNfcBeforeDigitsAndByteLevelIsCommandR) {
  // Cohere's Command R / Aya: NFC, then individual digits and GPT-2's ByteLevel expression.
  // "é" is the bytes C3 A9, written with the GPT-2 byte characters "Ã" and "©".
  const std::string tokenizer_json =
      R"({"model": {"type": "BPE", "vocab": {"e": 0, "\u00c3": 1, "\u00a9": 2, "\u00cc": 3, "\u0123": 4,
                                          "\u00c3\u00a9": 5}, "merges": ["\u00c3 \u00a9"]},
      "normalizer": {"type": "NFC"},
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": true},
        {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}]}})";
  auto imported = import_hf_tokenizer(tokenizer_json, "");
  ASSERT_TRUE(imported) << imported.error().message();
  EXPECT_EQ(*imported->metadata.get<std::string>("tokenizer.ggml.pre"), "command-r");
  auto tokenizer = Tokenizer::from_metadata(imported->metadata);
  ASSERT_TRUE(tokenizer) << tokenizer.error().message();
  // "e" + U+0301 (combining acute, CC 81) composes to "é" first: one token, not "e", "Ì", "ģ".
  auto ids = (*tokenizer)->encode("e\xcc\x81", {false, true});
  ASSERT_TRUE(ids) << ids.error().message();
  EXPECT_EQ(*ids, (std::vector<TokenId>{5}));
}

TEST(TokenizerJsonImport, HolesInTheIdsBecomeUnusedTokens) {
  auto imported = import_hf_tokenizer(
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "c": 2}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}})",
      "");
  ASSERT_TRUE(imported) << imported.error().message();
  EXPECT_EQ(*imported->metadata.get<std::vector<std::string>>("tokenizer.ggml.tokens"),
            (std::vector<std::string>{"a", "[PAD1]", "c"}));
  EXPECT_EQ((*imported->metadata.get<std::vector<int32_t>>("tokenizer.ggml.token_type"))[1],
            static_cast<int32_t>(TokenType::kUnused));
}

}  // namespace
}  // namespace sinter
