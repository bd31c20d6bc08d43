// Prompt-processing and generation speed, measured like llama-bench: tokens per second of
// forward passes only (no tokenization, no sampling), the median over repetitions after a
// warm-up, optionally after DEPTH tokens already in the cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/context.h"

namespace sinter {

struct BenchOptions {
  int32_t prompt_tokens = 512;    // pp: one prompt of this many tokens (0: skip)
  int32_t generate_tokens = 128;  // tg: this many one-token passes (0: skip)
  int32_t repetitions = 3;
  int32_t depth = 0;  // tokens in the cache before each measurement
};

struct BenchResult {
  std::vector<double> pp_tps;  // one per repetition
  std::vector<double> tg_tps;
  double pp_median = 0, pp_stddev = 0;
  double tg_median = 0, tg_stddev = 0;
  uint64_t weight_bytes_per_token = 0;  // weight bytes a one-token pass reads
};

// Runs on `context` (its cache is cleared); needs n_ctx ≥ depth + max(pp, tg).
Result<BenchResult> run_bench(Context& context, const BenchOptions& options);

double median(std::vector<double> values);
double stddev(const std::vector<double>& values);

}  // namespace sinter
