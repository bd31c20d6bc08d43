// Serving embeddings: a request's inputs tokenized, cut to the context when asked, embedded in
// one batched call on the model's embedding context, and each vector shortened and normalized as
// the request says. The routes (server/api_routes.h, add_embedding_routes) answer in each API's
// shape; these are the steps they share.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "core/token.h"
#include "sinter/result.h"

namespace sinter::server {

// An input of `full` tokens (the text with the special tokens the tokenizer adds, such as BERT's
// [CLS] ... [SEP]) cut to at most `limit` tokens: the text's tokens (`body`, the same text without
// special tokens) are cut at the end and the special tokens at either end are kept. When `full`
// is not `body` with tokens around it, its first `limit` tokens.
std::vector<TokenId> truncate_tokens(std::span<const TokenId> full, std::span<const TokenId> body,
                                     size_t limit);

// A pooled vector as a request asks for it: its first `dimensions` values (all when not set;
// more than the vector has is an error), normalized with llama-server's rule `normalize`
// (runtime/embedding.h; -1 none). Shortening and normalizing again is what Ollama does for its
// `dimensions`, and what Matryoshka-trained models expect.
Status shape_embedding(std::vector<float>& values, std::optional<int32_t> dimensions, int32_t normalize);

// The documents of a rerank answer: their indices by score, highest first (equal scores in
// document order), the first `top_n` of them (all when not set).
std::vector<size_t> rank_documents(std::span<const float> scores, std::optional<int32_t> top_n);

}  // namespace sinter::server
