// RWKV's world tokenizer on a small vocabulary stored as the converter stores the real one
// (tokenizer/rwkv_test_vocab.h). slow/reference_test.cpp compares it with llama.cpp on the corpus.
#include <gtest/gtest.h>

#include "tokenizer/rwkv_test_vocab.h"
#include "tokenizer/rwkv_tokenizer.h"

namespace sinter {
namespace {

// Ids of the test vocabulary: "<s>" 0, byte b at 1 + b, then the words from 257 on.
constexpr TokenId byte_id(unsigned char byte) { return 1 + byte; }
const std::vector<std::string> kWords = {"hel",
                                         "hello",
                                         "hello world",
                                         "the",
                                         " the",
                                         "\n\n",
                                         "\xe6\x97\xa5\xe6\x9c\xac",  // 日本
                                         "it's",
                                         "say \"it's\"",
                                         "a\\b"};
TokenId word_id(std::string_view word) {
  for (size_t i = 0; i < kWords.size(); ++i) {
    if (kWords[i] == word) return static_cast<TokenId>(257 + i);
  }
  return kNoToken;
}

std::unique_ptr<Tokenizer> tokenizer() {
  auto made = Tokenizer::from_metadata(testing::rwkv_vocabulary(kWords));
  EXPECT_TRUE(made) << made.error().message();
  return std::move(made).value();
}

std::vector<TokenId> encode(const Tokenizer& t, std::string_view text, EncodeOptions options = {true, true}) {
  auto ids = t.encode(text, options);
  EXPECT_TRUE(ids) << ids.error().message();
  return ids.ok() ? *ids : std::vector<TokenId>{};
}

TEST(RwkvTokenizer, UnescapesTokensAsLlamaCppReadsThem) {
  EXPECT_EQ(unescape_rwkv_token("abc"), "abc");
  EXPECT_EQ(unescape_rwkv_token("\\x00\\xff\\x7f"), std::string("\x00\xff\x7f", 3));
  EXPECT_EQ(unescape_rwkv_token("\\t\\n\\r"), "\t\n\r");
  EXPECT_EQ(unescape_rwkv_token("it\\'s \\\\ \\\""), "it's \\ \"");
  EXPECT_EQ(unescape_rwkv_token("\\xe6\\x97\\xa5"), "\xe6\x97\xa5");
  for (int byte = 0; byte < 256; ++byte) {
    const std::string bytes(1, static_cast<char>(byte));
    EXPECT_EQ(unescape_rwkv_token(testing::python_bytes_repr_body(bytes)), bytes) << byte;
  }
}

TEST(RwkvTokenizer, TakesTheLongestTokenAtEachPoint) {
  const auto t = tokenizer();
  EXPECT_EQ(t->model_name(), "rwkv");
  EXPECT_EQ(encode(*t, "hello worlds the\n\n\n"),
            (std::vector<TokenId>{word_id("hello world"), byte_id('s'), word_id(" the"), word_id("\n\n"),
                                  byte_id('\n')}));
  // "hel" + "p": the longest token, not the one that leaves the best rest.
  EXPECT_EQ(encode(*t, "help"), (std::vector<TokenId>{word_id("hel"), byte_id('p')}));
  EXPECT_EQ(encode(*t, "hello wor"),
            (std::vector<TokenId>{word_id("hello"), byte_id(' '), byte_id('w'), byte_id('o'), byte_id('r')}));
  // Characters without a token of their own are their UTF-8 bytes.
  EXPECT_EQ(encode(*t, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"),  // 日本語
            (std::vector<TokenId>{word_id("\xe6\x97\xa5\xe6\x9c\xac"), byte_id(0xe8), byte_id(0xaa),
                                  byte_id(0x9e)}));
  // Tokens stored with escapes match their bytes.
  EXPECT_EQ(encode(*t, "say \"it's\" a\\b"),
            (std::vector<TokenId>{word_id("say \"it's\""), byte_id(' '), word_id("a\\b")}));
  EXPECT_TRUE(encode(*t, "").empty());
}

TEST(RwkvTokenizer, AddsNothingAndSplitsControlTokens) {
  const auto t = tokenizer();
  EXPECT_FALSE(t->add_bos());
  EXPECT_FALSE(t->add_eos());
  EXPECT_EQ(t->bos(), 0);
  EXPECT_EQ(t->eot(), word_id("\n\n"));
  EXPECT_TRUE(t->is_end_of_generation(word_id("\n\n")));
  EXPECT_EQ(encode(*t, "the<s>the"), (std::vector<TokenId>{word_id("the"), 0, word_id("the")}));
  // Unparsed, "<s>" is still the longest match of its bytes (its text is in the trie, as in
  // llama.cpp).
  EXPECT_EQ(encode(*t, "the<s>", {true, false}), (std::vector<TokenId>{word_id("the"), 0}));
}

TEST(RwkvTokenizer, DecodesToTheBytesItEncoded) {
  const auto t = tokenizer();
  for (const std::string& text :
       std::vector<std::string>{"hello worlds the\n\n\n", "say \"it's\" a\\b", "\xff\xfe invalid \x80",
                                std::string("nul\0byte", 8), "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"}) {
    EXPECT_EQ(t->decode(encode(*t, text)), text);
  }
  EXPECT_EQ(t->token_to_piece(word_id("\n\n")), "\n\n");
  EXPECT_EQ(t->token_to_piece(0), "");
  EXPECT_EQ(t->token_to_piece(0, /*render_special=*/true), "<s>");
  EXPECT_EQ(t->token_to_piece(byte_id(0xe6)), "\xe6");
}

}  // namespace
}  // namespace sinter
