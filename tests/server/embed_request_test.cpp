// The embedding and rerank request bodies without a server, base64 vectors, and the steps the
// embedding routes share (truncation keeping special tokens, shortened and normalized vectors).
#include "server/embed_request.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "server/embeddings.h"
#include "server/json_fields.h"

namespace sinter::server {
namespace {

using namespace std::chrono_literals;

Json parse(const char* text) { return Json::parse(text); }

// The error message of a parse that must fail.
template <class T>
std::string error_of(const Result<T>& result) {
  EXPECT_FALSE(result.ok());
  return result.ok() ? std::string() : result.error().message();
}

TEST(EmbedRequest, OllamaEmbedStringListAndOptions) {
  auto one = parse_ollama_embed(parse(R"({"model": "bge", "input": "hello"})"));
  ASSERT_TRUE(one.ok()) << one.error().message();
  EXPECT_EQ(one->model, "bge");
  ASSERT_EQ(one->inputs.size(), 1u);
  EXPECT_EQ(*one->inputs[0].text, "hello");
  EXPECT_TRUE(one->truncate);  // Ollama's default
  EXPECT_EQ(one->normalize, 2);
  EXPECT_FALSE(one->dimensions);
  EXPECT_FALSE(one->keep_alive);

  auto many = parse_ollama_embed(parse(R"({"model": "bge", "input": ["a", "", "c"], "truncate": false,
      "dimensions": 64, "keep_alive": "10m", "options": {"num_ctx": 256, "temperature": 0.5}})"));
  ASSERT_TRUE(many.ok()) << many.error().message();
  ASSERT_EQ(many->inputs.size(), 3u);
  EXPECT_EQ(*many->inputs[1].text, "");
  EXPECT_FALSE(many->truncate);
  EXPECT_EQ(many->dimensions, 64);
  EXPECT_EQ(many->keep_alive, 10min);
  EXPECT_EQ(many->context_per_sequence, 256);

  // "" and [] are no input (the model loads), as in Ollama; so is a missing input.
  EXPECT_TRUE(parse_ollama_embed(parse(R"({"model": "m", "input": ""})"))->inputs.empty());
  EXPECT_TRUE(parse_ollama_embed(parse(R"({"model": "m", "input": []})"))->inputs.empty());
  EXPECT_TRUE(parse_ollama_embed(parse(R"({"model": "m"})"))->inputs.empty());
}

TEST(EmbedRequest, OllamaEmbedErrors) {
  EXPECT_EQ(error_of(parse_ollama_embed(parse(R"({"input": "x"})"))), "model is required");
  EXPECT_EQ(error_of(parse_ollama_embed(parse(R"({"model": "m", "input": 5})"))),
            "input must be a string or an array of strings, got number 5");
  EXPECT_EQ(error_of(parse_ollama_embed(parse(R"({"model": "m", "input": ["a", 1]})"))),
            "input[1] must be a string, got number 1");
  EXPECT_NE(error_of(parse_ollama_embed(parse(R"({"model": "m", "input": "x", "dimensions": 0})")))
                .find("dimensions"),
            std::string::npos);
  EXPECT_NE(error_of(parse_ollama_embed(parse(R"({"model": "m", "input": "x", "dimensions": 1.5})")))
                .find("dimensions must be an integer"),
            std::string::npos);
  EXPECT_EQ(error_of(parse_ollama_embed(parse(R"({"model": "m", "input": "x", "truncate": "yes"})"))),
            "truncate must be true or false, got string \"yes\"");
  EXPECT_NE(error_of(parse_ollama_embed(parse(R"({"model": "m", "input": "x", "keep_alive": "soon"})")))
                .find("keep_alive"),
            std::string::npos);
  EXPECT_NE(
      error_of(parse_ollama_embed(parse(R"({"model": "m", "input": "x", "options": {"num_ctx": "x"}})")))
          .find("options.num_ctx"),
      std::string::npos);
}

TEST(EmbedRequest, OllamaLegacyEmbeddings) {
  auto request = parse_ollama_embeddings(parse(R"({"model": "m", "prompt": "hi", "keep_alive": 0})"));
  ASSERT_TRUE(request.ok()) << request.error().message();
  ASSERT_EQ(request->inputs.size(), 1u);
  EXPECT_EQ(*request->inputs[0].text, "hi");
  EXPECT_EQ(request->normalize, -1);  // the older route's vectors are not normalized
  EXPECT_EQ(request->keep_alive, 0s);
  EXPECT_TRUE(parse_ollama_embeddings(parse(R"({"model": "m", "prompt": ""})"))->inputs.empty());
  EXPECT_EQ(error_of(parse_ollama_embeddings(parse(R"({"model": "m", "prompt": ["a"]})"))),
            "prompt must be a string, got array");
}

TEST(EmbedRequest, OpenAiInputShapes) {
  auto text = parse_openai_embeddings(parse(R"({"model": "m", "input": "hello"})"));
  ASSERT_TRUE(text.ok());
  ASSERT_EQ(text->inputs.size(), 1u);
  EXPECT_EQ(*text->inputs[0].text, "hello");
  EXPECT_FALSE(text->truncate);  // too long is an error, as OpenAI answers
  EXPECT_FALSE(text->base64);

  auto texts =
      parse_openai_embeddings(parse(R"({"model": "m", "input": ["a", "b"], "encoding_format": "base64"})"));
  ASSERT_TRUE(texts.ok());
  EXPECT_EQ(texts->inputs.size(), 2u);
  EXPECT_TRUE(texts->base64);

  auto ids = parse_openai_embeddings(parse(R"({"model": "m", "input": [101, 7592, 102]})"));
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->inputs.size(), 1u);
  EXPECT_FALSE(ids->inputs[0].text);
  EXPECT_EQ(ids->inputs[0].tokens, (std::vector<int64_t>{101, 7592, 102}));

  auto lists = parse_openai_embeddings(
      parse(R"({"model": "m", "input": [[1, 2], [3]], "dimensions": 8, "truncate": true, "embd_normalize": -1,
                "user": "u"})"));
  ASSERT_TRUE(lists.ok()) << lists.error().message();
  ASSERT_EQ(lists->inputs.size(), 2u);
  EXPECT_EQ(lists->inputs[1].tokens, (std::vector<int64_t>{3}));
  EXPECT_EQ(lists->dimensions, 8);
  EXPECT_TRUE(lists->truncate);
  EXPECT_EQ(lists->normalize, -1);

  // Strings and token lists may mix, one input each.
  auto mixed = parse_openai_embeddings(parse(R"({"model": "m", "input": ["a", [5, 6]]})"));
  ASSERT_TRUE(mixed.ok());
  EXPECT_TRUE(mixed->inputs[0].text);
  EXPECT_EQ(mixed->inputs[1].tokens, (std::vector<int64_t>{5, 6}));
}

TEST(EmbedRequest, OpenAiErrors) {
  EXPECT_EQ(error_of(parse_openai_embeddings(parse(R"({"model": "m"})"))), "input is required");
  EXPECT_EQ(error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": []})"))),
            "input must not be an empty array");
  EXPECT_EQ(error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": [[]]})"))),
            "input[0] has no token ids");
  EXPECT_EQ(error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": [1, -2]})"))),
            "input[1] is not a token id: -2");
  EXPECT_EQ(error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": [1, "a"]})"))),
            "input[1] must be a token id (an integer), got string \"a\"");
  EXPECT_EQ(error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": [[1], {"a": 1}]})"))),
            "input[1] must be a string or an array of token ids, got object");
  EXPECT_EQ(error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": true})"))),
            "input must be a string, an array of strings, or token ids, got true");
  EXPECT_EQ(
      error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": "x", "encoding_format": "int8"})"))),
      "encoding_format must be \"float\" or \"base64\", got \"int8\"");
  EXPECT_NE(error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": "x", "dimensions": -3})")))
                .find("dimensions"),
            std::string::npos);
  EXPECT_NE(error_of(parse_openai_embeddings(parse(R"({"model": "m", "input": "x", "embd_normalize": -2})")))
                .find("embd_normalize"),
            std::string::npos);
  Json too_many = {{"model", "m"}, {"input", Json::array()}};
  for (int i = 0; i < 2049; ++i) too_many["input"].push_back("x");
  EXPECT_EQ(error_of(parse_openai_embeddings(too_many)), "input has 2049 items, more than the limit of 2048");
}

// Every input is a vector in the answer: Ollama's routes and rerank are bounded as OpenAI's is.
TEST(EmbedRequest, InputCountsAreBoundedOnEveryRoute) {
  Json inputs = Json::array();
  for (int i = 0; i < 2049; ++i) inputs.push_back("x");
  EXPECT_EQ(error_of(parse_ollama_embed({{"model", "m"}, {"input", inputs}})),
            "input has 2049 items, more than the limit of 2048");
  EXPECT_EQ(error_of(parse_rerank({{"model", "r"}, {"query", "q"}, {"documents", inputs}})),
            "documents has 2049 items, more than the limit of 2048");
  inputs.erase(inputs.begin());
  EXPECT_TRUE(parse_ollama_embed({{"model", "m"}, {"input", inputs}}));
  EXPECT_TRUE(parse_rerank({{"model", "r"}, {"query", "q"}, {"documents", inputs}}));
}

TEST(EmbedRequest, Rerank) {
  auto request = parse_rerank(parse(
      R"({"model": "r", "query": "q", "documents": ["a", {"text": "b"}], "top_n": 1, "return_documents": true})"));
  ASSERT_TRUE(request.ok()) << request.error().message();
  EXPECT_EQ(request->query, "q");
  EXPECT_EQ(request->documents, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(request->top_n, 1);
  EXPECT_TRUE(request->return_documents);
  auto texts = parse_rerank(parse(R"({"model": "r", "query": "q", "texts": ["a"]})"));
  ASSERT_TRUE(texts.ok());
  EXPECT_FALSE(texts->top_n);
  EXPECT_FALSE(texts->return_documents);

  EXPECT_EQ(error_of(parse_rerank(parse(R"({"model": "r", "documents": ["a"]})"))),
            "query is required (a string)");
  EXPECT_EQ(error_of(parse_rerank(parse(R"({"model": "r", "query": "q", "documents": []})"))),
            "documents is required (a non-empty array of strings)");
  EXPECT_EQ(error_of(parse_rerank(parse(R"({"model": "r", "query": "q", "documents": [1]})"))),
            "documents[0] must be a string, got number 1");
  EXPECT_NE(error_of(parse_rerank(parse(R"({"model": "r", "query": "q", "documents": ["a"], "top_n": 0})")))
                .find("top_n"),
            std::string::npos);
}

// Decodes base64 (the standard alphabet, with padding) for the round trip.
std::vector<uint8_t> from_base64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    const size_t value = alphabet.find(c);
    EXPECT_NE(value, std::string::npos) << c;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<uint8_t>(bits >> count));
    }
  }
  return out;
}

TEST(EmbedRequest, Base64FloatsAreLittleEndianFloat32) {
  EXPECT_EQ(base64_floats({}), "");
  const float one = 1.0f;  // 0x3f800000: bytes 00 00 80 3f
  EXPECT_EQ(base64_floats({&one, 1}), "AACAPw==");
  for (size_t n : {1u, 2u, 3u, 5u, 384u}) {
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = std::sin(static_cast<float>(i) * 0.37f) * 3.0f - 1e-7f * i;
    const std::string encoded = base64_floats(values);
    EXPECT_EQ(encoded.size() % 4, 0u);
    const auto bytes = from_base64(encoded);
    ASSERT_EQ(bytes.size(), n * 4);
    std::vector<float> back(n);
    std::memcpy(back.data(), bytes.data(), bytes.size());
    EXPECT_EQ(back, values);
  }
}

TEST(Embeddings, TruncateKeepsTheSpecialTokens) {
  const std::vector<TokenId> body = {10, 11, 12, 13, 14, 15};
  std::vector<TokenId> full = {101};
  full.insert(full.end(), body.begin(), body.end());
  full.push_back(102);
  EXPECT_EQ(truncate_tokens(full, body, 8), full);  // fits
  EXPECT_EQ(truncate_tokens(full, body, 5), (std::vector<TokenId>{101, 10, 11, 12, 102}));
  EXPECT_EQ(truncate_tokens(full, body, 3), (std::vector<TokenId>{101, 10, 102}));
  // BOS only (a decoder's tokenizer): the text is cut at its end.
  std::vector<TokenId> bos = {1, 10, 11, 12};
  EXPECT_EQ(truncate_tokens(bos, std::vector<TokenId>{10, 11, 12}, 3), (std::vector<TokenId>{1, 10, 11}));
  // When the special tokens would leave no room, or the text does not appear whole, the first tokens.
  EXPECT_EQ(truncate_tokens(full, body, 2), (std::vector<TokenId>{101, 10}));
  EXPECT_EQ(truncate_tokens(full, std::vector<TokenId>{99, 98}, 3), (std::vector<TokenId>{101, 10, 11}));
}

TEST(Embeddings, DimensionsShortenThenNormalize) {
  std::vector<float> values = {3, 4, 12, 100};
  ASSERT_TRUE(shape_embedding(values, 3, 2).ok());
  ASSERT_EQ(values.size(), 3u);
  EXPECT_FLOAT_EQ(values[0], 3.0f / 13);
  EXPECT_FLOAT_EQ(values[1], 4.0f / 13);
  EXPECT_FLOAT_EQ(values[2], 12.0f / 13);

  std::vector<float> kept = {3, 4};
  ASSERT_TRUE(shape_embedding(kept, std::nullopt, -1).ok());
  EXPECT_EQ(kept, (std::vector<float>{3, 4}));
  ASSERT_TRUE(shape_embedding(kept, std::nullopt, 2).ok());
  EXPECT_FLOAT_EQ(kept[0], 0.6f);

  std::vector<float> small = {1, 2};
  const Status status = shape_embedding(small, 3, 2);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message(), "dimensions must be between 1 and 2, got 3");
}

TEST(Embeddings, RankDocuments) {
  const std::vector<float> scores = {0.1f, 2.5f, -1.0f, 2.5f, 0.7f};
  EXPECT_EQ(rank_documents(scores, std::nullopt), (std::vector<size_t>{1, 3, 4, 0, 2}));
  EXPECT_EQ(rank_documents(scores, 2), (std::vector<size_t>{1, 3}));
  EXPECT_EQ(rank_documents(scores, 10), (std::vector<size_t>{1, 3, 4, 0, 2}));
  EXPECT_TRUE(rank_documents({}, 3).empty());
  const std::vector<float> with_nan = {NAN, 1.0f, -INFINITY};
  EXPECT_EQ(rank_documents(with_nan, std::nullopt), (std::vector<size_t>{1, 0, 2}));
}

}  // namespace
}  // namespace sinter::server
