// What a caller can ask of the sampler: the options, their defaults (llama.cpp's), their
// validation, and the order of the stages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/token.h"
#include "sample/stages.h"
#include "sinter/result.h"

namespace sinter {

// The stages a chain can run, in any order; each appears at most once. The draw (or greedy
// pick) always comes last and is not a stage.
enum class SamplerStage : uint8_t {
  kLogitBias,
  kPenalties,
  kTopK,
  kTypicalP,
  kTopP,
  kMinP,
  kTemperature,
};

// llama.cpp's order: logit bias (common_sampler_init adds it before the configurable samplers),
// then its default `samplers` list minus the ones sinter lacks (DRY, top-n-sigma, XTC):
// logit_bias, penalties, top_k, typ_p, top_p, min_p, temperature.
std::vector<SamplerStage> default_sampler_order();

// The stage's name as llama.cpp's --samplers spells it ("logit_bias" is sinter's own).
const char* sampler_stage_name(SamplerStage stage);

// A stage from its name: the canonical names above and llama.cpp's aliases ("top-k", "nucleus",
// "typical", "typical_p", "temp", ...).
std::optional<SamplerStage> parse_sampler_stage(std::string_view name);

// An order from names separated by ';' or ',' (e.g. "penalties;top_k;temperature").
Result<std::vector<SamplerStage>> parse_sampler_order(std::string_view names);

// "logit_bias;penalties;top_k;..." for logs and reports.
std::string format_sampler_order(const std::vector<SamplerStage>& order);

// Defaults are llama.cpp's (common_params_sampling, 2025): temp 0.80, top_k 40, top_p 0.95,
// min_p 0.05, typical_p 1.00, penalty_last_n 64, penalty_repeat 1.00, freq 0, present 0,
// min_keep 0, a random seed.
struct SamplerOptions {
  float temperature = 0.8f;     // 0: greedy (argmax, lowest id wins ties); negative: an error
  int32_t top_k = 40;           // 0 disables
  float top_p = 0.95f;          // in (0, 1]; 1 disables
  float min_p = 0.05f;          // in [0, 1]; 0 disables
  float typical_p = 1.0f;       // in (0, 1]; 1 disables
  int32_t min_keep = 0;         // truncating stages keep at least max(min_keep, 1) tokens
  float repeat_penalty = 1.0f;  // > 0; 1 disables
  int32_t repeat_last_n = 64;   // window of the penalties: -1 whole history, 0 disables
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::vector<LogitBias> logit_bias;  // summed when a token appears twice; -inf bans
  std::optional<uint64_t> seed;       // unset: a random seed (reported by SamplerChain::seed())
  std::vector<SamplerStage> order = default_sampler_order();

  // Every option checked, with the first problem named: field, value and the allowed range.
  Status validate(int32_t vocab_size) const;
};

}  // namespace sinter
