// The routes of each API, added to the server's router.
#pragma once

#include "server/streaming.h"

namespace sinter::server {

// /api/generate, /api/chat, /api/tags, /api/show, /api/ps, /api/version, /api/tokenize,
// /api/detokenize, and 501 answers for Ollama's model-management routes.
void add_ollama_routes(http::Router& router, ServerState& state);

// /v1/chat/completions, /v1/completions, /v1/models, /v1/models/{id}.
void add_openai_routes(http::Router& router, ServerState& state);

// /api/embed, /api/embeddings (Ollama), /v1/embeddings (OpenAI), /v1/rerank and /rerank
// (llama-server's and Jina's shape): server/embed_api.cpp.
void add_embedding_routes(http::Router& router, ServerState& state);

// "2024-05-01T12:00:00.123456789Z" for now.
std::string now_rfc3339();

}  // namespace sinter::server
