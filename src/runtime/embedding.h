// Embeddings from encoder models (ModelShape::encoder: BERT and its kin): one forward pass over
// whole inputs with non-causal attention, then pooling of each input's hidden states into one
// vector, the model's dense layers after pooling when it has them (EmbeddingGemma:
// runtime/pooled_projection.h), and an optional normalization, as llama.cpp and llama-server
// compute them.
//
//   auto context = Context::create(model, embedding_context_options(model->model().shape()));
//   auto vector = embed(**context, tokens, {.normalize = kNormalizeEuclidean});
//
// Many inputs go through one forward pass each batch (embed_batch): every input is its own
// sequence of the KV cache, so attention stays within it (the cache's attention index), and an
// input's vector is bit-for-bit the one it gets alone.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/token.h"
#include "runtime/context.h"

namespace sinter {

// llama-server's `embd_normalize`: -1 none, 0 max-abs scaled to the int16 range (the largest
// |value| becomes 32760), 1 taxicab, 2 euclidean (L2: the APIs' default), p > 2 the p-norm.
constexpr int32_t kNormalizeNone = -1;
constexpr int32_t kNormalizeMaxAbs = 0;
constexpr int32_t kNormalizeEuclidean = 2;

struct EmbedOptions {
  std::optional<Pooling> pooling = std::nullopt;  // the file's `{arch}.pooling_type` when not set
  int32_t normalize = kNormalizeNone;
  // embed_batch: most inputs per forward pass (0: as many as fit, up to kMaxSequences; 1: one
  // input per pass, as embedding them one at a time would).
  int32_t max_inputs_per_pass = 0;
};

std::optional<Pooling> pooling_from_name(std::string_view name);  // none, mean, cls, last, rank
std::string_view pooling_name(Pooling pooling);

// Pools one input's hidden states, rows [n_tokens × n_embd] (token-major), into one vector:
// mean of the rows, the first row (CLS), the last row. kNone keeps every row (the result is
// the input unchanged). kRank takes the first row: a reranker's rows are already its head's
// outputs (rerank.h). An empty input is an error.
Result<std::vector<float>> pool_hidden_states(std::span<const float> rows, int32_t n_embd, Pooling pooling);

// Scales `values` in place by llama-server's common_embd_normalize rule `norm` (above). An
// all-zero vector stays zero.
void normalize_embedding(std::span<float> values, int32_t norm);
// A normalization the APIs accept: -1 or more.
Status check_normalization(int32_t norm);

// Generation needs logits: an encoder model is refused with a message naming `sinter embed`.
Status check_generative(const ModelShape& model);

// Context options for embedding with `model`: the whole training context (positions beyond it
// have no embedding), capped at `max_ctx` when positive, as one batch (non-causal attention
// needs all of an input in one pass), keys and values kept in F32.
ContextOptions embedding_context_options(const ModelShape& model, int32_t max_ctx = 0);

// The pooled, normalized vector of one input (token ids with any CLS/SEP already in place). The
// context's model must be an encoder; the input must fit one pass (n_batch, n_ctx) and the
// model's positions. The cache is left empty. With pooling kNone, the rows of every token,
// each normalized, one after another ([n_tokens × n_embd]).
Result<std::vector<float>> embed(Context& context, std::span<const TokenId> tokens,
                                 const EmbedOptions& options = {});

// The vectors of many inputs, in their order: inputs are packed into as few passes as fit
// (at most n_batch tokens and kMaxSequences inputs each). Each vector equals embed()'s for
// its input, bit for bit.
Result<std::vector<std::vector<float>>> embed_batch(Context& context,
                                                    std::span<const std::vector<TokenId>> inputs,
                                                    const EmbedOptions& options = {});

}  // namespace sinter
