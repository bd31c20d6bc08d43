// The embedding routes: Ollama's /api/embed and /api/embeddings, OpenAI's /v1/embeddings, and
// reranking (/v1/rerank, /rerank). An embedding model has no scheduler: a request takes the
// model's embedding context for one embed_batch call of up to 64 inputs at a time (requests for
// the same model take turns; other models and other routes are not held up).
#include <algorithm>
#include <cmath>
#include <functional>

#include "core/memory_budget.h"
#include "memory/kv_pool.h"
#include "runtime/embedding.h"
#include "runtime/rerank.h"
#include "server/api_routes.h"
#include "server/embed_request.h"
#include "server/embeddings.h"
#include "server/http/worker_cpu.h"
#include "server/json_fields.h"

namespace sinter::server {
namespace {

using Json = nlohmann::ordered_json;

// Inputs embedded per turn on a model's context (one embed_batch call): as many as one pass
// takes at most (runtime/embedding.h), so packing is as tight as in one call.
constexpr auto kInputsPerTurn = static_cast<size_t>(kMaxSequences);

int64_t nanoseconds_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// The inputs of a request embedded: one vector each, in order.
struct Embedded {
  std::vector<std::vector<float>> vectors;
  int64_t tokens = 0;  // all inputs, after truncation
  int64_t load_ns = 0;
};

// The pooling the model's file asks for, if the APIs can serve it (one vector per input).
Result<Pooling> served_pooling(const std::string& name, const ModelShape& shape) {
  switch (shape.pooling) {
    case Pooling::kNone:
      return make_error(ErrorCode::kInvalidArgument, "model '", name,
                        "' has no pooling (pooling_type none: a vector per token), which the embedding APIs "
                        "do not serve; `sinter embed --pooling` can pool it");
    case Pooling::kRank:
      return make_error(ErrorCode::kInvalidArgument, "model '", name,
                        "' is a reranker (pooling_type rank): use /v1/rerank");
    default: return shape.pooling;
  }
}

// One input's tokens: a text with the model's special tokens (special-token text in it is not
// parsed, as `sinter embed` does), or ids checked against the vocabulary; cut to `limit` when
// the request truncates, otherwise too long is an error.
Result<std::vector<TokenId>> input_tokens(const ServedModel& model, const EmbeddingInput& input, size_t index,
                                          size_t limit, bool truncate) {
  std::vector<TokenId> tokens;
  if (input.text) {
    SINTER_ASSIGN(tokens, model.tokenizer->encode(
                              *input.text, EncodeOptions{.add_special = true, .parse_special = false}));
  } else {
    for (size_t i = 0; i < input.tokens.size(); ++i) {
      const int64_t id = input.tokens[i];
      if (id >= model.tokenizer->vocab_size()) {
        return make_error(ErrorCode::kInvalidArgument, "input ", index, ": token ", id,
                          " is outside the vocabulary [0, ", model.tokenizer->vocab_size(), ")");
      }
      tokens.push_back(static_cast<TokenId>(id));
    }
  }
  if (tokens.empty()) return make_error(ErrorCode::kInvalidArgument, "input ", index, " has no tokens");
  if (tokens.size() <= limit) return tokens;
  if (!truncate) {
    return make_error(ErrorCode::kContextFull, "input ", index, " has ", tokens.size(),
                      " tokens, more than the model's context of ", limit,
                      " (truncate: true cuts inputs to fit)");
  }
  if (!input.text)
    return std::vector<TokenId>(tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>(limit));
  SINTER_ASSIGN(
      const std::vector<TokenId> body,
      model.tokenizer->encode(*input.text, EncodeOptions{.add_special = false, .parse_special = false}));
  return truncate_tokens(tokens, body, limit);
}

// Runs `turn(first, count)` over `total` inputs, kInputsPerTurn at a time, each turn holding the
// model's embedding context: between turns, other requests for the model get the context, and a
// client that went away or a request past the time limit stops.
Status in_turns(ServerState& state, const http::Request& req, Clock::time_point arrived, ServedModel& model,
                size_t total, const std::function<Status(size_t, size_t)>& turn) {
  for (size_t first = 0; first < total; first += kInputsPerTurn) {
    if (req.client_gone()) {
      state.metrics->record_cancelled(model.file.name);
      return make_error(ErrorCode::kCancelled, "the client went away");
    }
    if (state.request_timeout.count() > 0 && Clock::now() - arrived > state.request_timeout) {
      return make_error(ErrorCode::kCancelled, "the request ran past the server's time limit of ",
                        std::chrono::duration<double>(state.request_timeout).count(),
                        " s (--request-timeout)");
    }
    std::lock_guard<std::mutex> lock(model.embed_mutex);
    const http::UncountedCpu model_compute;  // the model's passes are not this worker's share
    SINTER_TRY(turn(first, std::min(kInputsPerTurn, total - first)));
  }
  return ok_status();
}

Result<Embedded> embed_request(ServerState& state, const EmbedRequest& request, const http::Request& req,
                               Clock::time_point arrived) {
  ModelManager::AcquireOptions acquire{
      request.keep_alive.value_or(state.models->options().default_keep_alive), request.context_per_sequence,
      ModelUse::kEmbed};
  SINTER_ASSIGN(ModelLease lease, state.models->acquire(request.model, acquire));
  Embedded out;
  out.load_ns = lease.load_ns();
  ServedModel& model = *lease;
  const ModelShape& shape = model.model->model().shape();
  SINTER_ASSIGN(const Pooling pooling, served_pooling(request.model, shape));
  SINTER_TRY(check_normalization(request.normalize));
  if (request.dimensions && *request.dimensions > shape.n_embd) {
    return make_error(ErrorCode::kInvalidArgument, "dimensions is ", *request.dimensions, " but model '",
                      request.model, "' has ", shape.n_embd, "-dimensional embeddings");
  }
  if (request.inputs.empty()) return out;
  // The answer holds a vector per input, each float a JSON number node and its text (some 48
  // bytes): paid for before any is computed.
  const size_t width = static_cast<size_t>(request.dimensions.value_or(shape.n_embd));
  SINTER_TRY(charge_current_account(request.inputs.size() * width * 48));
  Context& context = *model.embedder;
  const auto limit = static_cast<size_t>(std::min({context.n_ctx(), context.n_batch(), shape.n_ctx_train}));
  std::vector<std::vector<TokenId>> inputs;
  inputs.reserve(request.inputs.size());
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    SINTER_ASSIGN(auto tokens, input_tokens(model, request.inputs[i], i, limit, request.truncate));
    out.tokens += static_cast<int64_t>(tokens.size());
    inputs.push_back(std::move(tokens));
  }
  out.vectors.reserve(inputs.size());
  const std::span<const std::vector<TokenId>> all(inputs);
  SINTER_TRY(in_turns(state, req, arrived, model, all.size(), [&](size_t first, size_t count) -> Status {
    SINTER_ASSIGN(auto vectors, embed_batch(context, all.subspan(first, count),
                                            {.pooling = pooling, .normalize = kNormalizeNone}));
    for (auto& vector : vectors) out.vectors.push_back(std::move(vector));
    return ok_status();
  }));
  for (auto& vector : out.vectors) SINTER_TRY(shape_embedding(vector, request.dimensions, request.normalize));
  return out;
}

Status handle_ollama_embed(ServerState& state, const http::Request& req, http::Response& res) {
  const auto arrived = Clock::now();
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  SINTER_ASSIGN(const EmbedRequest request, parse_ollama_embed(body));
  SINTER_ASSIGN(const Embedded embedded, embed_request(state, request, req, arrived));
  Json vectors = Json::array();
  for (const auto& vector : embedded.vectors) vectors.push_back(vector);
  reply_json(res, {{"model", request.model},
                   {"embeddings", std::move(vectors)},
                   {"total_duration", nanoseconds_since(arrived)},
                   {"load_duration", embedded.load_ns},
                   {"prompt_eval_count", embedded.tokens}});
  return ok_status();
}

Status handle_ollama_embeddings(ServerState& state, const http::Request& req, http::Response& res) {
  const auto arrived = Clock::now();
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  SINTER_ASSIGN(const EmbedRequest request, parse_ollama_embeddings(body));
  SINTER_ASSIGN(const Embedded embedded, embed_request(state, request, req, arrived));
  reply_json(res, {{"embedding", embedded.vectors.empty() ? Json::array() : Json(embedded.vectors.front())}});
  return ok_status();
}

Status handle_openai_embeddings(ServerState& state, const http::Request& req, http::Response& res) {
  const auto arrived = Clock::now();
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  SINTER_ASSIGN(const EmbedRequest request, parse_openai_embeddings(body));
  SINTER_ASSIGN(const Embedded embedded, embed_request(state, request, req, arrived));
  Json data = Json::array();
  for (size_t i = 0; i < embedded.vectors.size(); ++i) {
    const auto& vector = embedded.vectors[i];
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", request.base64 ? Json(base64_floats(vector)) : Json(vector)}});
  }
  reply_json(res, {{"object", "list"},
                   {"data", std::move(data)},
                   {"model", request.model},
                   {"usage", {{"prompt_tokens", embedded.tokens}, {"total_tokens", embedded.tokens}}}});
  return ok_status();
}

// Rerank: the query paired with each document (runtime/rerank.h), scored a turn of 64 pairs
// at a time, answered highest score first. relevance_score is the head's raw score, as
// llama-server answers (Qwen3-Reranker's is P(yes) already).
Status handle_rerank(ServerState& state, const http::Request& req, http::Response& res) {
  const auto arrived = Clock::now();
  SINTER_ASSIGN(const Json body, parse_json_object(req.body));
  SINTER_ASSIGN(const RerankRequest request, parse_rerank(body));
  ModelManager::AcquireOptions acquire{state.models->options().default_keep_alive, 0, ModelUse::kEmbed};
  SINTER_ASSIGN(ModelLease lease, state.models->acquire(request.model, acquire));
  ServedModel& model = *lease;
  SINTER_TRY(check_reranker(model.model->model().shape()));
  Context& context = *model.embedder;
  const auto limit = static_cast<size_t>(std::min(context.n_ctx(), context.n_batch()));
  SINTER_ASSIGN(const std::string prompt, rerank_prompt_template(model.model->file().metadata()));
  std::vector<std::vector<TokenId>> pairs;
  int64_t tokens = 0;
  for (size_t i = 0; i < request.documents.size(); ++i) {
    SINTER_ASSIGN(auto pair, rerank_tokens(*model.tokenizer, request.query, request.documents[i], prompt));
    if (pair.size() > limit) {
      return make_error(ErrorCode::kContextFull, "document ", i, " with the query has ", pair.size(),
                        " tokens, more than the model's context of ", limit);
    }
    tokens += static_cast<int64_t>(pair.size());
    pairs.push_back(std::move(pair));
  }
  std::vector<float> scores;
  const std::span<const std::vector<TokenId>> all(pairs);
  SINTER_TRY(in_turns(state, req, arrived, model, all.size(), [&](size_t first, size_t count) -> Status {
    SINTER_ASSIGN(auto turn_scores, rerank_scores(context, all.subspan(first, count)));
    scores.insert(scores.end(), turn_scores.begin(), turn_scores.end());
    return ok_status();
  }));
  Json results = Json::array();
  for (size_t index : rank_documents(scores, request.top_n)) {
    Json result = {{"index", index}, {"relevance_score", scores[index]}};
    if (request.return_documents) result["document"] = {{"text", request.documents[index]}};
    results.push_back(std::move(result));
  }
  reply_json(res, {{"model", request.model},
                   {"object", "list"},
                   {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}},
                   {"results", std::move(results)}});
  return ok_status();
}

}  // namespace

std::vector<TokenId> truncate_tokens(std::span<const TokenId> full, std::span<const TokenId> body,
                                     size_t limit) {
  if (full.size() <= limit) return {full.begin(), full.end()};
  const auto cut_front = [&] {
    return std::vector<TokenId>(full.begin(), full.begin() + static_cast<ptrdiff_t>(limit));
  };
  if (body.size() > full.size()) return cut_front();
  const size_t added = full.size() - body.size();
  if (added >= limit) return cut_front();
  for (size_t front = 0; front <= added; ++front) {
    if (!std::equal(body.begin(), body.end(), full.begin() + static_cast<ptrdiff_t>(front))) continue;
    std::vector<TokenId> out(full.begin(), full.begin() + static_cast<ptrdiff_t>(front));
    out.insert(out.end(), body.begin(), body.begin() + static_cast<ptrdiff_t>(limit - added));
    out.insert(out.end(), full.begin() + static_cast<ptrdiff_t>(front + body.size()), full.end());
    return out;
  }
  return cut_front();
}

Status shape_embedding(std::vector<float>& values, std::optional<int32_t> dimensions, int32_t normalize) {
  if (dimensions) {
    if (*dimensions < 1 || static_cast<size_t>(*dimensions) > values.size()) {
      return make_error(ErrorCode::kInvalidArgument, "dimensions must be between 1 and ", values.size(),
                        ", got ", *dimensions);
    }
    values.resize(static_cast<size_t>(*dimensions));
  }
  SINTER_TRY(check_normalization(normalize));
  normalize_embedding(values, normalize);
  return ok_status();
}

std::vector<size_t> rank_documents(std::span<const float> scores, std::optional<int32_t> top_n) {
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // NaN (a broken model) ranks last, and keeps the order strict.
  const auto key = [&](size_t i) { return std::isnan(scores[i]) ? -INFINITY : scores[i]; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
  if (top_n && static_cast<size_t>(*top_n) < order.size()) order.resize(static_cast<size_t>(*top_n));
  return order;
}

void add_embedding_routes(http::Router& router, ServerState& state) {
  router.add("POST", "/api/embed", server::guarded(state, handle_ollama_embed, &reply_error));
  router.add("POST", "/api/embeddings", server::guarded(state, handle_ollama_embeddings, &reply_error));
  router.add("POST", "/v1/embeddings", server::guarded(state, handle_openai_embeddings, &reply_openai_error));
  router.add("POST", "/v1/rerank", server::guarded(state, handle_rerank, &reply_openai_error));
  router.add("POST", "/rerank", server::guarded(state, handle_rerank, &reply_error));
}

}  // namespace sinter::server
