#include "runtime/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace sinter {
namespace {

using Clock = std::chrono::steady_clock;

// Deterministic token ids spread over the vocabulary (the oracle's bench uses the same idea).
TokenId bench_token(int64_t i, int32_t n_vocab) { return static_cast<TokenId>((i * 7919 + 13) % n_vocab); }

Status fill(Context& context, int32_t count, Position start, bool last_wants_logits) {
  const int32_t n_vocab = context.n_vocab();
  std::vector<BatchEntry> batch;
  for (int32_t i = 0; i < count; ++i) {
    batch.push_back({bench_token(start + i, n_vocab), start + i, 0, last_wants_logits && i + 1 == count});
  }
  return count > 0 ? context.decode(batch) : ok_status();
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double stddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

Result<BenchResult> run_bench(Context& context, const BenchOptions& options) {
  if (options.repetitions <= 0)
    return make_error(ErrorCode::kInvalidArgument, "repetitions must be positive");
  if (options.prompt_tokens < 0 || options.generate_tokens < 0 || options.depth < 0) {
    return make_error(ErrorCode::kInvalidArgument, "token counts must not be negative");
  }
  const int32_t needed = options.depth + std::max(options.prompt_tokens, options.generate_tokens);
  if (needed > context.n_ctx()) {
    return make_error(ErrorCode::kInvalidArgument, "the benchmark needs a context of ", needed,
                      " tokens, the context holds ", context.n_ctx());
  }
  BenchResult result;
  SINTER_ASSIGN(result.weight_bytes_per_token, context.weight_bytes_per_token());
  // Repetition 0 is the warm-up (graphs built, pages touched) and is not recorded.
  for (int32_t rep = 0; rep <= options.repetitions; ++rep) {
    if (options.prompt_tokens > 0) {
      context.memory().clear();
      SINTER_TRY(fill(context, options.depth, 0, false));
      const auto start = Clock::now();
      SINTER_TRY(fill(context, options.prompt_tokens, options.depth, true));
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (rep > 0) result.pp_tps.push_back(options.prompt_tokens / seconds);
    }
    if (options.generate_tokens > 0) {
      context.memory().clear();
      SINTER_TRY(fill(context, options.depth, 0, false));
      const auto start = Clock::now();
      for (int32_t i = 0; i < options.generate_tokens; ++i) {
        SINTER_TRY(fill(context, 1, options.depth + i, true));
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (rep > 0) result.tg_tps.push_back(options.generate_tokens / seconds);
    }
  }
  result.pp_median = median(result.pp_tps);
  result.pp_stddev = stddev(result.pp_tps);
  result.tg_median = median(result.tg_tps);
  result.tg_stddev = stddev(result.tg_tps);
  return result;
}

}  // namespace sinter
