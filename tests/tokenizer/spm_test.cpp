// The SentencePiece-style tokenizer on the real stories260K vocabulary. The expected ids are the
// llama.cpp oracle's answers (../shared/oracle/run tokenize stories260K.gguf TEXT); the whole
// corpus is compared with the oracle in slow/reference_test.cpp.
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace sinter {
namespace {

std::unique_ptr<Tokenizer> stories_tokenizer() {
  auto file = GgufFile::open(testing::stories_model());
  EXPECT_TRUE(file) << file.error().message();
  auto tokenizer = Tokenizer::from_metadata(file->metadata());
  EXPECT_TRUE(tokenizer) << tokenizer.error().message();
  return std::move(tokenizer).value();
}

std::vector<TokenId> encode(const Tokenizer& tokenizer, std::string_view text,
                            EncodeOptions options = {false, true}) {
  auto ids = tokenizer.encode(text, options);
  EXPECT_TRUE(ids) << ids.error().message();
  return ids.ok() ? *ids : std::vector<TokenId>{};
}

TEST(SpmTokenizer, MatchesTheOracleOnKnownTexts) {
  const auto tokenizer = stories_tokenizer();
  EXPECT_EQ(tokenizer->model_name(), "llama");
  EXPECT_EQ(tokenizer->vocab_size(), 512);
  EXPECT_EQ(encode(*tokenizer, "Once upon a time"), (std::vector<TokenId>{403, 407, 261, 378}));
  EXPECT_EQ(encode(*tokenizer, "Hello world"), (std::vector<TokenId>{346, 306, 414, 263, 304, 341}));
  EXPECT_EQ(encode(*tokenizer, "  two  spaces"),
            (std::vector<TokenId>{410, 410, 259, 424, 414, 410, 262, 427, 412, 331, 419}));
  EXPECT_EQ(encode(*tokenizer, "tab\there\nnewline"),
            (std::vector<TokenId>{259, 412, 430, 12, 260, 276, 13, 416, 411, 424, 421, 271, 411}));
  // Special tokens split out; the text after one gets the space prefix again.
  EXPECT_EQ(encode(*tokenizer, "<s>x</s>y<unk>"), (std::vector<TokenId>{1, 410, 444, 2, 348, 0}));
  // Characters outside the vocabulary fall back to their UTF-8 bytes.
  EXPECT_EQ(encode(*tokenizer, "naïve café 日本語 🤖"),
            (std::vector<TokenId>{297, 412, 198, 178, 360, 280, 412, 431, 485, 410, 233, 154,
                                  168, 233, 159, 175, 235, 173, 161, 410, 243, 162, 167, 153}));
  EXPECT_TRUE(encode(*tokenizer, "").empty());
}

TEST(SpmTokenizer, AddsBosAsTheVocabularySays) {
  const auto tokenizer = stories_tokenizer();
  EXPECT_TRUE(tokenizer->add_bos());
  EXPECT_FALSE(tokenizer->add_eos());
  EXPECT_EQ(tokenizer->bos(), 1);
  EXPECT_EQ(tokenizer->eos(), 2);
  EXPECT_EQ(encode(*tokenizer, "Once", {true, true}), (std::vector<TokenId>{1, 403}));
  EXPECT_EQ(encode(*tokenizer, "", {true, true}), (std::vector<TokenId>{1}));
  EXPECT_TRUE(tokenizer->is_end_of_generation(2));
  EXPECT_FALSE(tokenizer->is_end_of_generation(1));
}

TEST(SpmTokenizer, ParseSpecialOffKeepsControlTokensAsText) {
  const auto tokenizer = stories_tokenizer();
  const auto ids = encode(*tokenizer, "<s>", {false, false});
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 0);
  EXPECT_EQ(tokenizer->decode(ids), "<s>");
}

TEST(SpmTokenizer, InvalidUtf8BecomesByteTokens) {
  const auto tokenizer = stories_tokenizer();
  // A lone lead byte swallows the next byte into one symbol, as llama.cpp splits; both are bytes.
  const auto ids = encode(*tokenizer, "a\xc3(b\xff");
  EXPECT_EQ(tokenizer->decode(ids), "a\xc3(b\xff");
}

TEST(SpmTokenizer, DecodeRemovesTheSpacePrefixOnce) {
  const auto tokenizer = stories_tokenizer();
  for (const char* text : {"Once upon a time", " leading space", "  two", "x", "a\nb"}) {
    EXPECT_EQ(tokenizer->decode(encode(*tokenizer, text, {false, true})), std::string(text)) << text;
    // A rendered BOS comes first, so the space the encoder added stays (as Hugging Face decodes).
    EXPECT_EQ(tokenizer->decode(encode(*tokenizer, text, {true, true}), true), "<s> " + std::string(text))
        << text;
  }
  // Text after a special token gets the space prefix too, so it comes back with that space.
  EXPECT_EQ(tokenizer->decode(encode(*tokenizer, "<s>after", {false, true}), true), "<s> after");
  // Not rendering BOS: the space still goes (Hugging Face's behaviour; llama.cpp would keep it).
  EXPECT_EQ(tokenizer->decode(encode(*tokenizer, "Once", {true, true})), "Once");
  EXPECT_EQ(tokenizer->token_to_piece(403), " Once");
  EXPECT_EQ(tokenizer->token_to_piece(1), "");
  EXPECT_EQ(tokenizer->token_to_piece(1, true), "<s>");
  EXPECT_EQ(tokenizer->token_to_piece(13), "\n");  // <0x0A>
  EXPECT_EQ(tokenizer->token_text(403), "\xe2\x96\x81Once");
  EXPECT_EQ(tokenizer->token_type(13), TokenType::kByte);
  EXPECT_EQ(tokenizer->token_type(1), TokenType::kControl);
}

TEST(SpmTokenizer, OutOfRangeIdsAreRejectedByCheckAndRenderAsNothing) {
  const auto tokenizer = stories_tokenizer();
  const std::vector<TokenId> ids = {403, 512};
  const Status status = tokenizer->check_ids(ids);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("512"), std::string::npos);
  EXPECT_TRUE(tokenizer->check_ids(std::vector<TokenId>{0, 511}));
  EXPECT_EQ(tokenizer->token_to_piece(-1), "");
  EXPECT_EQ(tokenizer->decode(ids), "Once");
}

TEST(StreamingDetokenizer, HoldsBackIncompleteCharacters) {
  const auto tokenizer = stories_tokenizer();
  // "日" is E6 97 A5: three byte tokens <0xE6> <0x97> <0xA5> (ids 233, 154, 168).
  StreamingDetokenizer stream(*tokenizer);
  EXPECT_EQ(stream.push(403), " Once");
  EXPECT_EQ(stream.push(233), "");
  EXPECT_EQ(stream.push(154), "");
  EXPECT_EQ(stream.push(168), "\xe6\x97\xa5");
  EXPECT_EQ(stream.push(233), "");
  EXPECT_EQ(stream.flush(), "\xe6");
  EXPECT_EQ(stream.flush(), "");
}

TEST(StreamingDetokenizer, ConcatenationEqualsThePieces) {
  const auto tokenizer = stories_tokenizer();
  const auto ids = encode(*tokenizer, "naïve café 日本語 🤖 done");
  StreamingDetokenizer stream(*tokenizer);
  std::string streamed;
  for (TokenId id : ids) streamed += stream.push(id);
  streamed += stream.flush();
  std::string joined;
  for (TokenId id : ids) joined += tokenizer->token_to_piece(id);
  EXPECT_EQ(streamed, joined);
}

}  // namespace
}  // namespace sinter
