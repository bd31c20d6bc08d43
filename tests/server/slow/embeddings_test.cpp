// The embedding routes of a real `sinter serve` over a random-weight BERT file (`sinter synth
// bert`) and a random-weight llama: vectors equal `sinter embed`'s, base64, lists of 100 inputs,
// truncation, dimensions, and every bad request a 400 that leaves the server serving.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "server_process.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

constexpr const char* kBert = "bert-tiny";          // 64 wide, 512 positions, mean pooling, WordPiece
constexpr const char* kReranker = "reranker-tiny";  // bert, rank pooling, cls heads
constexpr const char* kQwen3Embedding = "qwen3-embed-tiny";  // qwen3, last-token pooling

// One server for the suite: BERT, reranker, Qwen3-embedding and llama files, one thread.
class Embeddings : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // bert-base-uncased's WordPiece vocabulary, so that texts are [CLS] ... [SEP] as in BGE or MiniLM
    // (first: scratch_dir() empties the scratch folder).
    const std::string tokenizer = bert_tokenizer_dir();
    dir_ = new std::string(scratch_dir() + "/embedding-models");
    std::filesystem::create_directories(*dir_);
    const std::string vocabulary = " --tokenizer " + shell_quote(tokenizer + "/tokenizer.json") +
                                   " --tokenizer-config " + shell_quote(tokenizer + "/tokenizer_config.json");
    const CommandResult bert =
        run_sinter("synth bert " + shell_quote(bert_path()) + " --dims tiny --seed 5" + vocabulary);
    ASSERT_EQ(bert.exit_status, 0) << bert.err;
    // A BGE-reranker-shaped file (rank pooling, classification head) and a Qwen3-Embedding-shaped
    // decoder (last-token pooling, causal).
    const CommandResult reranker = run_sinter("synth bert " + shell_quote(*dir_ + "/" + kReranker + ".gguf") +
                                              " --dims tiny --pooling rank --seed 6" + vocabulary);
    ASSERT_EQ(reranker.exit_status, 0) << reranker.err;
    const CommandResult qwen3 =
        run_sinter("synth qwen3 " + shell_quote(*dir_ + "/" + kQwen3Embedding + ".gguf") +
                   " --dims tiny --pooling last --seed 7" + vocabulary);
    ASSERT_EQ(qwen3.exit_status, 0) << qwen3.err;
    // A file without pooling (a vector per token), which the APIs do not serve.
    const CommandResult none =
        run_sinter("synth bert " + shell_quote(*dir_ + "/bert-none.gguf") + " --dims tiny --pooling none");
    ASSERT_EQ(none.exit_status, 0) << none.err;
    synth_model(*dir_, "llama-tiny.gguf", "tiny");
    server_ = ServerProcess::start({"--models", *dir_, "-t", "1", "--parallel", "1"}).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  static std::string bert_path() { return *dir_ + "/" + kBert + ".gguf"; }

  static inline std::string* dir_ = nullptr;
  static inline ServerProcess* server_ = nullptr;
};

using Vectors = std::vector<std::vector<float>>;

Vectors as_vectors(const Json& list) {
  Vectors out;
  for (const Json& vector : list) out.push_back(vector.get<std::vector<float>>());
  return out;
}

// `sinter embed` on the same file (L2-normalized unless `normalize` says otherwise).
Vectors cli_embed(const std::string& model, const std::vector<std::string>& texts, int normalize = 2) {
  std::string arguments =
      "embed -m " + shell_quote(model) + " -t 1 --output json --normalize " + std::to_string(normalize);
  for (const auto& text : texts) arguments += " " + shell_quote(text);
  const CommandResult result = run_sinter(arguments);
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return as_vectors(Json::parse(result.out));
}

std::vector<float> from_base64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> bytes;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = (bits << 6) | static_cast<uint32_t>(alphabet.find(c));
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes.push_back(static_cast<uint8_t>(bits >> count));
    }
  }
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

double l2(const std::vector<float>& values) {
  double sum = 0;
  for (float v : values) sum += static_cast<double>(v) * v;
  return std::sqrt(sum);
}

// Texts of different lengths, the i-th of `n`.
std::string text_of(int i) {
  static const char* const kWords[] = {"retrieval", "of",     "dense", "vectors", "the",   "quick",
                                       "brown",     "fox",    "jumps", "over",    "lazy",  "dogs",
                                       "local",     "models", "and",   "search",  "works", "well"};
  std::string text;
  for (int w = 0; w < 1 + (i * 7) % 23; ++w) {
    if (w > 0) text += ' ';
    text += kWords[(i * 5 + w * 3) % std::size(kWords)];
  }
  return text;
}

std::string long_text() {
  std::string text;
  for (int i = 0; i < 400; ++i) text += text_of(i % 30).substr(0, 12) + " ";
  return text;
}

void expect_error(const HttpAnswer& answer, int status, const std::string& fragment) {
  EXPECT_EQ(answer.status, status) << answer.body;
  const Json body = Json::parse(answer.body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << answer.body;
  const std::string message = body["error"].is_object() ? body["error"]["message"].get<std::string>()
                                                        : body["error"].get<std::string>();
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

TEST_F(Embeddings, OllamaEmbedEqualsSinterEmbed) {
  const std::vector<std::string> texts = {"hello", text_of(3), text_of(11)};
  const HttpAnswer answer = http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", texts}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Json body = answer.json();
  EXPECT_EQ(body["model"], kBert);
  const Vectors vectors = as_vectors(body["embeddings"]);
  EXPECT_EQ(vectors, cli_embed(bert_path(), texts));  // bit for bit
  ASSERT_EQ(vectors.size(), 3u);
  EXPECT_EQ(vectors[0].size(), 64u);
  for (const auto& vector : vectors) EXPECT_NEAR(l2(vector), 1.0, 1e-6);
  EXPECT_GT(body["total_duration"].get<int64_t>(), 0);
  EXPECT_GE(body["load_duration"].get<int64_t>(), 0);
  int64_t tokens = 0;
  for (const auto& text : texts) {
    tokens += http_post(*server_, "/api/tokenize",
                        Json{{"model", kBert}, {"content", text}, {"parse_special", false}})
                  .json()["tokens"]
                  .size();
  }
  EXPECT_EQ(body["prompt_eval_count"], tokens);

  // A string is one input; "" and [] load the model and answer no vectors, as Ollama does.
  const Json one = http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", "hello"}}).json();
  EXPECT_EQ(as_vectors(one["embeddings"]), Vectors{vectors[0]});
  for (const Json& empty : {Json(""), Json::array()}) {
    const HttpAnswer none = http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", empty}});
    ASSERT_EQ(none.status, 200) << none.body;
    EXPECT_EQ(none.json()["embeddings"], Json::array());
  }
}

// /v1/rerank and /rerank: the scores `sinter rerank` prints, highest first, top_n and documents.
TEST_F(Embeddings, RerankEqualsSinterRerank) {
  const std::vector<std::string> documents = {text_of(2), "hello", text_of(9), text_of(17)};
  const std::string query = "local search models";
  std::string arguments =
      "rerank -m " + shell_quote(*dir_ + "/" + kReranker + ".gguf") + " -t 1 " + shell_quote(query);
  for (const auto& document : documents) arguments += " " + shell_quote(document);
  const CommandResult cli = run_sinter(arguments);
  ASSERT_EQ(cli.exit_status, 0) << cli.err;
  std::vector<float> expected;  // "index<TAB>score<TAB>document" lines, in input order
  std::istringstream lines(cli.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t tab = line.find('\t');
    expected.push_back(std::stof(line.substr(tab + 1)));
  }
  ASSERT_EQ(expected.size(), documents.size()) << cli.out;
  for (const char* route : {"/v1/rerank", "/rerank"}) {
    SCOPED_TRACE(route);
    const HttpAnswer answer = http_post(*server_, route,
                                        Json{{"model", kReranker},
                                             {"query", query},
                                             {"documents", documents},
                                             {"top_n", 3},
                                             {"return_documents", true}});
    ASSERT_EQ(answer.status, 200) << answer.body;
    const Json body = answer.json();
    ASSERT_EQ(body["results"].size(), 3u) << answer.body;
    float previous = INFINITY;
    for (const Json& result : body["results"]) {
      const auto index = result["index"].get<size_t>();
      ASSERT_LT(index, documents.size());
      const float score = result["relevance_score"].get<float>();
      EXPECT_NEAR(score, expected[index],
                  1e-4f * std::max(1.0f, std::fabs(score)));  // the CLI prints 6 digits
      EXPECT_LE(score, previous);
      previous = score;
      EXPECT_EQ(result["document"]["text"], documents[index]);
    }
    EXPECT_GT(body["usage"]["total_tokens"].get<int64_t>(), 0);
  }
  // A reranker does not embed, an embedding model does not rerank, a generator does neither.
  expect_error(http_post(*server_, "/api/embed", Json{{"model", kReranker}, {"input", "x"}}), 400,
               "reranker");
  EXPECT_EQ(
      http_post(*server_, "/v1/rerank", Json{{"model", kBert}, {"query", "q"}, {"documents", {"d"}}}).status,
      400);
  EXPECT_EQ(
      http_post(*server_, "/v1/rerank", Json{{"model", "llama-tiny"}, {"query", "q"}, {"documents", {"d"}}})
          .status,
      400);
}

// A decoder embedding file (Qwen3-Embedding: last-token pooling) embeds as `sinter embed` does
// and does not generate.
TEST_F(Embeddings, DecoderEmbeddingModel) {
  const std::vector<std::string> texts = {"hello", text_of(5)};
  const HttpAnswer answer =
      http_post(*server_, "/api/embed", Json{{"model", kQwen3Embedding}, {"input", texts}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(as_vectors(answer.json()["embeddings"]),
            cli_embed(*dir_ + "/" + kQwen3Embedding + ".gguf", texts));
  expect_error(http_post(*server_, "/api/generate", Json{{"model", kQwen3Embedding}, {"prompt", "hi"}}), 400,
               "embedding model");
  const Json show = http_post(*server_, "/api/show", Json{{"model", kQwen3Embedding}}).json();
  EXPECT_EQ(show["capabilities"], Json::array({"embedding"}));
}

TEST_F(Embeddings, OllamaLegacyEmbeddingsAreNotNormalized) {
  const HttpAnswer answer =
      http_post(*server_, "/api/embeddings", Json{{"model", kBert}, {"prompt", text_of(4)}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.json()["embedding"].get<std::vector<float>>(),
            cli_embed(bert_path(), {text_of(4)}, -1)[0]);
  EXPECT_EQ(
      http_post(*server_, "/api/embeddings", Json{{"model", kBert}, {"prompt", ""}}).json()["embedding"],
      Json::array());
}

TEST_F(Embeddings, OpenAiFloatAndBase64) {
  const std::vector<std::string> texts = {text_of(1), text_of(2)};
  const HttpAnswer answer = http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", texts}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Json body = answer.json();
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], kBert);
  ASSERT_EQ(body["data"].size(), 2u);
  const Vectors expected = cli_embed(bert_path(), texts);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(body["data"][i]["object"], "embedding");
    EXPECT_EQ(body["data"][i]["index"], i);
    EXPECT_EQ(body["data"][i]["embedding"].get<std::vector<float>>(), expected[i]);
  }
  EXPECT_GT(body["usage"]["prompt_tokens"].get<int64_t>(), 2);
  EXPECT_EQ(body["usage"]["total_tokens"], body["usage"]["prompt_tokens"]);

  const Json base64 = http_post(*server_, "/v1/embeddings",
                                Json{{"model", kBert}, {"input", texts}, {"encoding_format", "base64"}})
                          .json();
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(from_base64(base64["data"][i]["embedding"]), expected[i]);
}

TEST_F(Embeddings, OpenAiTokenIds) {
  const Json tokens = http_post(*server_, "/api/tokenize",
                                Json{{"model", kBert}, {"content", text_of(7)}, {"parse_special", false}})
                          .json()["tokens"];
  const Json by_text =
      http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", text_of(7)}}).json();
  const Json by_ids = http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", tokens}}).json();
  ASSERT_EQ(by_ids["data"].size(), 1u) << by_ids;
  EXPECT_EQ(by_ids["data"][0]["embedding"], by_text["data"][0]["embedding"]);
  EXPECT_EQ(by_ids["usage"]["prompt_tokens"], tokens.size());
  const Json lists =
      http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", Json::array({tokens, tokens})}})
          .json();
  ASSERT_EQ(lists["data"].size(), 2u) << lists;
  EXPECT_EQ(lists["data"][1]["embedding"], by_text["data"][0]["embedding"]);
}

// 100 inputs in one request: each vector is the one it gets alone, in both APIs.
TEST_F(Embeddings, HundredInputsEqualOneAtATime) {
  std::vector<std::string> texts;
  for (int i = 0; i < 100; ++i) texts.push_back(text_of(i));
  const HttpAnswer ollama = http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", texts}});
  ASSERT_EQ(ollama.status, 200) << ollama.body;
  const Vectors batched = as_vectors(ollama.json()["embeddings"]);
  ASSERT_EQ(batched.size(), 100u);
  const Json openai = http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", texts}}).json();
  ASSERT_EQ(openai["data"].size(), 100u);
  for (size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(openai["data"][i]["index"], i);
    EXPECT_EQ(openai["data"][i]["embedding"].get<std::vector<float>>(), batched[i]) << i;
  }
  for (size_t i = 0; i < 100; i += 9) {
    const Json alone = http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", texts[i]}}).json();
    EXPECT_EQ(alone["embeddings"][0].get<std::vector<float>>(), batched[i]) << i;
  }
  EXPECT_EQ(batched, cli_embed(bert_path(), texts));
}

TEST_F(Embeddings, TruncateOrRefuseLongInputs) {
  const std::string text = long_text();
  const auto tokenize = [&](bool add_special) {
    return http_post(*server_, "/api/tokenize",
                     Json{{"model", kBert},
                          {"content", text},
                          {"parse_special", false},
                          {"add_special", add_special}})
        .json()["tokens"]
        .get<std::vector<int>>();
  };
  const std::vector<int> full = tokenize(true), body = tokenize(false);
  ASSERT_GT(full.size(), 512u);
  // The expected cut: the tokenizer's special tokens kept, the text's tokens cut at the end.
  const size_t added = full.size() - body.size();
  EXPECT_EQ(added, 2u) << "[CLS] and [SEP]";
  size_t front = 0;
  while (front <= added &&
         !std::equal(body.begin(), body.end(), full.begin() + static_cast<ptrdiff_t>(front)))
    ++front;
  ASSERT_LE(front, added);
  std::vector<int> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(front));
  cut.insert(cut.end(), body.begin(), body.begin() + static_cast<ptrdiff_t>(512 - added));
  cut.insert(cut.end(), full.begin() + static_cast<ptrdiff_t>(front + body.size()), full.end());
  ASSERT_EQ(cut.size(), 512u);

  // Ollama truncates by default.
  const HttpAnswer truncated = http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", text}});
  ASSERT_EQ(truncated.status, 200) << truncated.body;
  EXPECT_EQ(truncated.json()["prompt_eval_count"], 512);
  const Json by_ids = http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", cut}}).json();
  EXPECT_EQ(truncated.json()["embeddings"][0], by_ids["data"][0]["embedding"]);

  expect_error(
      http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", text}, {"truncate", false}}), 400,
      "more than the model's context of 512");
  // OpenAI refuses by default, with OpenAI's code; truncate: true is sinter's extension.
  const HttpAnswer refused = http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", text}});
  expect_error(refused, 400, "input 0 has");
  EXPECT_EQ(refused.json()["error"]["code"], "context_length_exceeded");
  const Json openai_cut =
      http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", text}, {"truncate", true}})
          .json();
  EXPECT_EQ(openai_cut["data"][0]["embedding"], by_ids["data"][0]["embedding"]);
  // Token ids over the context are cut at the end.
  const HttpAnswer ids_cut =
      http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", full}, {"truncate", true}});
  ASSERT_EQ(ids_cut.status, 200) << ids_cut.body;
  EXPECT_EQ(ids_cut.json()["usage"]["prompt_tokens"], 512);
}

TEST_F(Embeddings, Dimensions) {
  const std::string text = text_of(5);
  const auto raw = http_post(*server_, "/api/embeddings", Json{{"model", kBert}, {"prompt", text}})
                       .json()["embedding"]
                       .get<std::vector<float>>();
  ASSERT_EQ(raw.size(), 64u);
  for (const char* path : {"/api/embed", "/v1/embeddings"}) {
    const HttpAnswer answer =
        http_post(*server_, path, Json{{"model", kBert}, {"input", text}, {"dimensions", 16}});
    ASSERT_EQ(answer.status, 200) << answer.body;
    const Json body = answer.json();
    const auto vector =
        (std::string(path) == "/api/embed" ? body["embeddings"][0] : body["data"][0]["embedding"])
            .get<std::vector<float>>();
    ASSERT_EQ(vector.size(), 16u) << path;
    EXPECT_NEAR(l2(vector), 1.0, 1e-6);
    const double norm = l2(std::vector<float>(raw.begin(), raw.begin() + 16));
    for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(vector[i], raw[i] / norm, 1e-6) << path << " " << i;
    expect_error(http_post(*server_, path, Json{{"model", kBert}, {"input", text}, {"dimensions", 65}}), 400,
                 "has 64-dimensional embeddings");
  }
  EXPECT_EQ(http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", text}, {"dimensions", 64}})
                .json()["embeddings"][0]
                .get<std::vector<float>>(),
            cli_embed(bert_path(), {text})[0]);
}

TEST_F(Embeddings, BadRequestsAre400AndTheServerServesOn) {
  const Json llama = "llama-tiny";
  // Generation from an embedding model, embeddings from a generation model.
  expect_error(
      http_post(*server_, "/api/generate", Json{{"model", kBert}, {"prompt", "hi"}, {"stream", false}}), 400,
      "is an embedding model");
  expect_error(http_post(*server_, "/api/chat",
                         Json{{"model", kBert},
                              {"messages", Json::array({{{"role", "user"}, {"content", "hi"}}})},
                              {"stream", false}}),
               400, "is an embedding model");
  expect_error(
      http_post(*server_, "/v1/chat/completions",
                Json{{"model", kBert}, {"messages", Json::array({{{"role", "user"}, {"content", "hi"}}})}}),
      400, "use /api/embed or /v1/embeddings");
  expect_error(http_post(*server_, "/v1/completions", Json{{"model", kBert}, {"prompt", "hi"}}), 400,
               "cannot generate text");
  expect_error(http_post(*server_, "/api/embed", Json{{"model", llama}, {"input", "hi"}}), 400,
               "cannot embed");
  expect_error(http_post(*server_, "/v1/embeddings", Json{{"model", llama}, {"input", "hi"}}), 400,
               "cannot embed");
  expect_error(http_post(*server_, "/api/embed", Json{{"model", "bert-none"}, {"input", "hi"}}), 400,
               "has no pooling");
  // Refused from the file's header: the generation model was not loaded for that.
  for (const Json& model : http_get(*server_, "/api/ps").json()["models"])
    EXPECT_NE(model["name"], "llama-tiny:latest");
  // The generation model still generates.
  const HttpAnswer generated = http_post(
      *server_, "/api/generate",
      Json{{"model", llama}, {"prompt", "hi"}, {"stream", false}, {"options", {{"num_predict", 2}}}});
  EXPECT_EQ(generated.status, 200) << generated.body;

  // Bad bodies.
  expect_error(http_post(*server_, "/api/embed", std::string("{not json")), 400, "not valid JSON");
  expect_error(http_post(*server_, "/api/embed", Json{{"input", "x"}}), 400, "model is required");
  expect_error(http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", 3}}), 400,
               "input must be a string or an array of strings");
  expect_error(http_post(*server_, "/api/embed", Json{{"model", "nope"}, {"input", "x"}}), 404, "not found");
  expect_error(
      http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", Json::array({1, 999999})}}), 400,
      "outside the vocabulary");
  expect_error(http_post(*server_, "/v1/embeddings", Json{{"model", kBert}, {"input", Json::array()}}), 400,
               "must not be an empty array");
  expect_error(http_post(*server_, "/v1/embeddings",
                         Json{{"model", kBert}, {"input", "x"}, {"encoding_format", "hex"}}),
               400, "encoding_format");
  const HttpAnswer openai_error = http_post(*server_, "/v1/embeddings", Json{{"model", kBert}});
  EXPECT_EQ(openai_error.json()["error"]["type"], "invalid_request_error");

  // Ollama's capabilities say which is which.
  EXPECT_EQ(http_post(*server_, "/api/show", Json{{"model", kBert}}).json()["capabilities"],
            Json::array({"embedding"}));
  EXPECT_EQ(http_post(*server_, "/api/show", Json{{"model", llama}}).json()["capabilities"],
            Json::array({"completion"}));

  // Still serving, both kinds.
  EXPECT_EQ(http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", "ok"}}).status, 200);
  EXPECT_EQ(http_get(*server_, "/health").status, 200);
  const Json ps = http_get(*server_, "/api/ps").json();
  bool listed = false;
  for (const Json& model : ps["models"]) listed |= model["name"] == std::string(kBert) + ":latest";
  EXPECT_TRUE(listed) << ps;
}

// Embedding requests from several clients at once, with generation beside them.
TEST_F(Embeddings, ConcurrentRequests) {
  const Vectors expected = cli_embed(bert_path(), {text_of(8), text_of(9)});
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 4; ++r) {
        const HttpAnswer answer =
            http_post(*server_, t % 2 ? "/api/embed" : "/v1/embeddings",
                      Json{{"model", kBert}, {"input", Json::array({text_of(8), text_of(9)})}});
        if (answer.status != 200) continue;
        const Json body = answer.json();
        const Vectors vectors = t % 2 ? as_vectors(body["embeddings"])
                                      : Vectors{body["data"][0]["embedding"].get<std::vector<float>>(),
                                                body["data"][1]["embedding"].get<std::vector<float>>()};
        if (vectors == expected) ++good;
      }
    });
  }
  const HttpAnswer generated = http_post(
      *server_, "/api/generate",
      Json{{"model", "llama-tiny"}, {"prompt", "hi"}, {"stream", false}, {"options", {{"num_predict", 4}}}});
  EXPECT_EQ(generated.status, 200) << generated.body;
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(good.load(), 24);
}

TEST_F(Embeddings, KeepAliveZeroUnloads) {
  ASSERT_EQ(
      http_post(*server_, "/api/embed", Json{{"model", kBert}, {"input", "x"}, {"keep_alive", 0}}).status,
      200);
  EXPECT_TRUE(eventually([&] {
    for (const Json& model : http_get(*server_, "/api/ps").json()["models"])
      if (model["name"] == std::string(kBert) + ":latest") return false;
    return true;
  }));
}

}  // namespace
}  // namespace sinter::testing
