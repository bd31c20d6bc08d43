// The bodies of the embedding and reranking routes, checked field by field before any model is
// loaded: Ollama's /api/embed and /api/embeddings, OpenAI's /v1/embeddings, and the rerank shape
// llama-server and Jina share (/v1/rerank, /rerank). JSON only, no model (fuzzed with the other
// request parsers).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/durations.h"
#include "sinter/result.h"

namespace sinter::server {

// One input to embed: a text (tokenized with the model's special tokens) or token ids (used as
// they are).
struct EmbeddingInput {
  std::optional<std::string> text;
  std::vector<int64_t> tokens;  // when text is not set (checked against the vocabulary later)
};

struct EmbedRequest {
  std::string model;
  std::vector<EmbeddingInput> inputs;
  // Inputs longer than the context: cut to fit (keeping the special tokens the tokenizer adds
  // at either end), or an error.
  bool truncate = true;
  std::optional<int32_t> dimensions;  // keep the first N values, then normalize again
  // llama-server's embd_normalize (runtime/embedding.h): 2 (L2) unless asked, -1 none.
  int32_t normalize = 2;
  std::optional<KeepAlive> keep_alive;          // nullopt: the server's default
  std::optional<int32_t> context_per_sequence;  // Ollama's options.num_ctx
  bool base64 = false;                          // OpenAI's encoding_format "base64"
};

// POST /api/embed: {model, input: string | [string], truncate, dimensions, keep_alive, options}.
// An empty string or list is no input (the model is loaded, as in Ollama).
Result<EmbedRequest> parse_ollama_embed(const nlohmann::ordered_json& body);
// POST /api/embeddings (the older route): {model, prompt, keep_alive, options}; its vector is
// not normalized, as Ollama's is not. An empty prompt is no input.
Result<EmbedRequest> parse_ollama_embeddings(const nlohmann::ordered_json& body);
// POST /v1/embeddings: {model, input: string | [string] | [int] | [[int]], encoding_format:
// "float" | "base64", dimensions, user}; sinter's extensions: truncate (default false: an input
// over the context is an error, as OpenAI answers) and llama-server's embd_normalize.
Result<EmbedRequest> parse_openai_embeddings(const nlohmann::ordered_json& body);

struct RerankRequest {
  std::string model;
  std::string query;
  std::vector<std::string> documents;
  std::optional<int32_t> top_n;  // nullopt: every document
  bool return_documents = false;
};

// POST /v1/rerank, /rerank: {model, query, documents: [string | {text}], top_n,
// return_documents} (llama-server's and Jina's shape; "texts" is taken for "documents" as
// text-embeddings-inference names it).
Result<RerankRequest> parse_rerank(const nlohmann::ordered_json& body);

// The bytes of float32 values, little-endian, in base64 (OpenAI's encoding_format "base64").
std::string base64_floats(std::span<const float> values);

}  // namespace sinter::server
