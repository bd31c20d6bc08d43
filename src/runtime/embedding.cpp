#include "runtime/embedding.h"

#include <algorithm>
#include <cmath>

namespace sinter {
namespace {

// At most this many positions per input unless the caller asks for fewer: a long-context
// encoder (8192 positions) still gets a context its memory plan accepts.
constexpr int32_t kDefaultMaxEmbeddingContext = 8192;

// The rows a pooling reads of an input of n tokens: all (mean, none), or one. A reranker's
// score is read at the first token (CLS), or at the last with causal attention (Qwen3), the one
// token that has seen the whole pair.
bool wants_row(Pooling pooling, bool causal, size_t i, size_t n) {
  switch (pooling) {
    case Pooling::kCls: return i == 0;
    case Pooling::kLast: return i + 1 == n;
    case Pooling::kRank: return causal ? i + 1 == n : i == 0;
    default: return true;
  }
}

Status check_encoder(const Context& context) {
  const ModelShape& shape = context.model().model().shape();
  if (!shape.encoder) {
    return make_error(ErrorCode::kUnsupported, "the ", shape.architecture,
                      " model is not an embedding model (an encoder, or a decoder with a pooling type)");
  }
  return ok_status();
}

// Why an input cannot be embedded in one pass of this context, if it cannot.
Status check_input(const Context& context, size_t index, size_t n_tokens) {
  const ModelShape& shape = context.model().model().shape();
  if (n_tokens == 0) return make_error(ErrorCode::kInvalidArgument, "input ", index, " has no tokens");
  const auto limit = static_cast<size_t>(std::min({context.n_batch(), context.n_ctx(), shape.n_ctx_train}));
  if (n_tokens > limit) {
    return make_error(ErrorCode::kContextFull, "input ", index, " has ", n_tokens,
                      " tokens; an embedding pass holds at most ", limit, " (context ", context.n_ctx(),
                      ", batch ", context.n_batch(), ", the model's positions ", shape.n_ctx_train, ")");
  }
  return ok_status();
}

// Runs inputs [first, last) as one pass (each its own sequence, positions from 0) and appends
// their pooled, normalized vectors to *out. The cache is empty before and after.
Status embed_pass(Context& context, std::span<const std::vector<TokenId>> inputs, Pooling pooling,
                  int32_t norm, std::vector<std::vector<float>>* out) {
  const bool causal = context.model().model().shape().causal;
  std::vector<BatchEntry> batch;
  for (size_t s = 0; s < inputs.size(); ++s) {
    const auto& tokens = inputs[s];
    for (size_t i = 0; i < tokens.size(); ++i) {
      batch.push_back({tokens[i], static_cast<Position>(i), static_cast<SequenceId>(s),
                       wants_row(pooling, causal, i, tokens.size())});
    }
  }
  context.memory().clear();
  const Status status = context.decode(batch);
  context.memory().clear();
  SINTER_TRY(status);
  const auto n_embd = static_cast<size_t>(context.output_width());
  int32_t row = 0;
  std::vector<float> rows;
  for (const auto& tokens : inputs) {
    rows.clear();
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (!wants_row(pooling, causal, i, tokens.size())) continue;
      const auto values = context.logits(row++);
      rows.insert(rows.end(), values.begin(), values.end());
    }
    SINTER_ASSIGN(std::vector<float> pooled, pool_hidden_states(rows, static_cast<int32_t>(n_embd), pooling));
    // A reranker's rows are scores: only embeddings go through the model's dense layers.
    if (pooling != Pooling::kRank) context.model().pooled_projection().apply_rows(pooled, n_embd);
    for (size_t at = 0; at < pooled.size(); at += n_embd)
      normalize_embedding({pooled.data() + at, n_embd}, norm);
    out->push_back(std::move(pooled));
  }
  return ok_status();
}

}  // namespace

std::optional<Pooling> pooling_from_name(std::string_view name) {
  for (Pooling p : {Pooling::kNone, Pooling::kMean, Pooling::kCls, Pooling::kLast, Pooling::kRank}) {
    if (name == pooling_name(p)) return p;
  }
  return std::nullopt;
}

std::string_view pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::kNone: return "none";
    case Pooling::kMean: return "mean";
    case Pooling::kCls: return "cls";
    case Pooling::kLast: return "last";
    case Pooling::kRank: return "rank";
  }
  return "unknown";
}

Result<std::vector<float>> pool_hidden_states(std::span<const float> rows, int32_t n_embd, Pooling pooling) {
  if (n_embd <= 0 || rows.empty() || rows.size() % static_cast<size_t>(n_embd) != 0) {
    return make_error(ErrorCode::kInvalidArgument, "pooling needs whole rows of ", n_embd, " values, got ",
                      rows.size());
  }
  const auto n = static_cast<size_t>(n_embd);
  const size_t n_rows = rows.size() / n;
  switch (pooling) {
    case Pooling::kNone: return std::vector<float>(rows.begin(), rows.end());
    case Pooling::kCls:
    case Pooling::kRank:
      return std::vector<float>(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n));
    case Pooling::kLast: return std::vector<float>(rows.end() - static_cast<std::ptrdiff_t>(n), rows.end());
    case Pooling::kMean: {
      // Summed in double, row by row: the order is fixed, so the mean does not depend on anything
      // but the rows.
      std::vector<double> sum(n, 0.0);
      for (size_t r = 0; r < n_rows; ++r) {
        for (size_t i = 0; i < n; ++i) sum[i] += rows[r * n + i];
      }
      std::vector<float> mean(n);
      for (size_t i = 0; i < n; ++i) mean[i] = static_cast<float>(sum[i] / static_cast<double>(n_rows));
      return mean;
    }
  }
  return make_error(ErrorCode::kInternal, "unknown pooling ", static_cast<int>(pooling));
}

void normalize_embedding(std::span<float> values, int32_t norm) {
  double sum = 0.0;
  if (norm < 0) return;
  if (norm == kNormalizeMaxAbs) {
    for (float v : values) sum = std::max(sum, static_cast<double>(std::abs(v)));
    sum /= 32760.0;  // the largest |value| becomes 32760: an int16 range
  } else if (norm == kNormalizeEuclidean) {
    for (float v : values) sum += static_cast<double>(v * v);
    sum = std::sqrt(sum);
  } else {
    for (float v : values) sum += std::pow(static_cast<double>(std::abs(v)), norm);
    sum = std::pow(sum, 1.0 / norm);
  }
  const float scale = sum > 0.0 ? static_cast<float>(1.0 / sum) : 0.0f;
  for (float& v : values) v *= scale;
}

Status check_normalization(int32_t norm) {
  if (norm < kNormalizeNone) {
    return make_error(ErrorCode::kInvalidArgument,
                      "normalization must be -1 (none), 0 (max-abs), 1 (taxicab), ",
                      "2 (euclidean) or a larger p-norm, got ", norm);
  }
  return ok_status();
}

Status check_generative(const ModelShape& model) {
  if (!model.encoder) return ok_status();
  return make_error(ErrorCode::kUnsupported, "the ", model.architecture,
                    " model is an embedding (encoder) model: it cannot generate text; use `sinter embed`");
}

ContextOptions embedding_context_options(const ModelShape& model, int32_t max_ctx) {
  ContextOptions options;
  options.n_ctx = std::min(model.n_ctx_train, max_ctx > 0 ? max_ctx : kDefaultMaxEmbeddingContext);
  options.n_batch = options.n_ctx;
  options.n_seq_max = 1;
  options.kv_type = DType::F32;
  return options;
}

Result<std::vector<float>> embed(Context& context, std::span<const TokenId> tokens,
                                 const EmbedOptions& options) {
  const std::vector<TokenId> input(tokens.begin(), tokens.end());
  SINTER_ASSIGN(auto vectors,
                embed_batch(context, std::span<const std::vector<TokenId>>(&input, 1), options));
  return std::move(vectors.front());
}

Result<std::vector<std::vector<float>>> embed_batch(Context& context,
                                                    std::span<const std::vector<TokenId>> inputs,
                                                    const EmbedOptions& options) {
  SINTER_TRY(check_encoder(context));
  SINTER_TRY(check_normalization(options.normalize));
  const ModelShape& shape = context.model().model().shape();
  const Pooling pooling = options.pooling.value_or(shape.pooling);
  // A reranker's outputs are its head's scores, not hidden states: nothing else pools them.
  if ((pooling == Pooling::kRank) != (shape.n_rank_outputs > 0)) {
    return make_error(ErrorCode::kUnsupported, "the ", shape.architecture, " model ",
                      shape.n_rank_outputs > 0
                          ? "is a reranker: its only pooling is rank"
                          : "is not a reranker (rank pooling with a classification head)");
  }
  for (size_t i = 0; i < inputs.size(); ++i) SINTER_TRY(check_input(context, i, inputs[i].size()));
  const auto limit = static_cast<size_t>(std::min(context.n_batch(), context.n_ctx()));
  std::vector<std::vector<float>> out;
  out.reserve(inputs.size());
  const auto per_pass = static_cast<size_t>(
      options.max_inputs_per_pass > 0 ? std::min(options.max_inputs_per_pass, kMaxSequences) : kMaxSequences);
  // Greedy packing in input order: a pass takes inputs while their tokens fit.
  for (size_t first = 0; first < inputs.size();) {
    size_t last = first, tokens = 0;
    while (last < inputs.size() && last - first < per_pass && tokens + inputs[last].size() <= limit) {
      tokens += inputs[last++].size();
    }
    SINTER_TRY(embed_pass(context, inputs.subspan(first, last - first), pooling, options.normalize, &out));
    first = last;
  }
  return out;
}

}  // namespace sinter
