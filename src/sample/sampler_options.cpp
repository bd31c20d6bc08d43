#include "sample/sampler_options.h"

#include <array>
#include <cmath>

namespace sinter {
namespace {

struct StageName {
  SamplerStage stage;
  std::string_view name;  // the first entry of a stage is its canonical name
};

// One table for names, parsing and formatting. Aliases follow llama.cpp's
// common_sampler_types_from_names.
constexpr std::array kStageNames = {
    StageName{SamplerStage::kLogitBias, "logit_bias"},
    StageName{SamplerStage::kLogitBias, "logit-bias"},
    StageName{SamplerStage::kPenalties, "penalties"},
    StageName{SamplerStage::kTopK, "top_k"},
    StageName{SamplerStage::kTopK, "top-k"},
    StageName{SamplerStage::kTypicalP, "typ_p"},
    StageName{SamplerStage::kTypicalP, "typ-p"},
    StageName{SamplerStage::kTypicalP, "typ"},
    StageName{SamplerStage::kTypicalP, "typical_p"},
    StageName{SamplerStage::kTypicalP, "typical-p"},
    StageName{SamplerStage::kTypicalP, "typical"},
    StageName{SamplerStage::kTopP, "top_p"},
    StageName{SamplerStage::kTopP, "top-p"},
    StageName{SamplerStage::kTopP, "nucleus"},
    StageName{SamplerStage::kMinP, "min_p"},
    StageName{SamplerStage::kMinP, "min-p"},
    StageName{SamplerStage::kTemperature, "temperature"},
    StageName{SamplerStage::kTemperature, "temp"},
};

// Stages are numbered 0..kTemperature.
constexpr size_t kStageCount = static_cast<size_t>(SamplerStage::kTemperature) + 1;

bool is_known_stage(SamplerStage stage) { return static_cast<size_t>(stage) < kStageCount; }

bool is_probability(float x) { return x >= 0.0f && x <= 1.0f; }  // false for NaN

Error invalid(const char* field, float value, const char* allowed) {
  return make_error(ErrorCode::kInvalidArgument, "sampler option ", field, " = ", value,
                    " is invalid: ", allowed);
}

}  // namespace

std::vector<SamplerStage> default_sampler_order() {
  return {SamplerStage::kLogitBias,  SamplerStage::kPenalties, SamplerStage::kTopK,
          SamplerStage::kTypicalP,   SamplerStage::kTopP,      SamplerStage::kMinP,
          SamplerStage::kTemperature};
}

const char* sampler_stage_name(SamplerStage stage) {
  for (const StageName& entry : kStageNames) {
    if (entry.stage == stage) return entry.name.data();
  }
  return "unknown";
}

std::optional<SamplerStage> parse_sampler_stage(std::string_view name) {
  for (const StageName& entry : kStageNames) {
    if (entry.name == name) return entry.stage;
  }
  return std::nullopt;
}

Result<std::vector<SamplerStage>> parse_sampler_order(std::string_view names) {
  std::vector<SamplerStage> order;
  size_t start = 0;
  while (start <= names.size()) {
    size_t end = names.find_first_of(";,", start);
    if (end == std::string_view::npos) end = names.size();
    const std::string_view name = names.substr(start, end - start);
    if (!name.empty()) {
      const std::optional<SamplerStage> stage = parse_sampler_stage(name);
      if (!stage) {
        return make_error(ErrorCode::kInvalidArgument, "unknown sampler stage \"", name,
                          "\" (known: logit_bias, penalties, top_k, typ_p, top_p, min_p, temperature)");
      }
      order.push_back(*stage);
    }
    start = end + 1;
  }
  return order;
}

std::string format_sampler_order(const std::vector<SamplerStage>& order) {
  std::string text;
  for (SamplerStage stage : order) {
    if (!text.empty()) text += ';';
    text += sampler_stage_name(stage);
  }
  return text;
}

Status SamplerOptions::validate(int32_t vocab_size) const {
  if (vocab_size <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "sampler: vocabulary size ", vocab_size,
                      " must be positive");
  }
  if (!(temperature >= 0.0f) || std::isinf(temperature)) {
    return invalid("temperature", temperature, "must be finite and >= 0 (0 means greedy)");
  }
  if (top_k < 0) return invalid("top_k", static_cast<float>(top_k), "must be >= 0 (0 disables)");
  if (!(top_p > 0.0f && top_p <= 1.0f)) return invalid("top_p", top_p, "must be in (0, 1] (1 disables)");
  if (!is_probability(min_p)) return invalid("min_p", min_p, "must be in [0, 1] (0 disables)");
  if (!(typical_p > 0.0f && typical_p <= 1.0f)) {
    return invalid("typical_p", typical_p, "must be in (0, 1] (1 disables)");
  }
  if (min_keep < 0) return invalid("min_keep", static_cast<float>(min_keep), "must be >= 0");
  if (!(repeat_penalty > 0.0f) || std::isinf(repeat_penalty)) {
    return invalid("repeat_penalty", repeat_penalty, "must be finite and > 0 (1 disables)");
  }
  if (repeat_last_n < -1) {
    return invalid("repeat_last_n", static_cast<float>(repeat_last_n),
                   "must be >= -1 (-1: whole history, 0 disables)");
  }
  if (!std::isfinite(frequency_penalty))
    return invalid("frequency_penalty", frequency_penalty, "must be finite");
  if (!std::isfinite(presence_penalty))
    return invalid("presence_penalty", presence_penalty, "must be finite");

  for (size_t i = 0; i < logit_bias.size(); ++i) {
    const LogitBias& entry = logit_bias[i];
    if (entry.token < 0 || entry.token >= vocab_size) {
      return make_error(ErrorCode::kInvalidArgument, "sampler option logit_bias[", i, "]: token ",
                        entry.token, " is outside the vocabulary [0, ", vocab_size, ")");
    }
    if (std::isnan(entry.bias) || (std::isinf(entry.bias) && entry.bias > 0.0f)) {
      return make_error(ErrorCode::kInvalidArgument, "sampler option logit_bias[", i, "]: bias ", entry.bias,
                        " for token ", entry.token, " must be finite or -inf (which bans the token)");
    }
  }

  std::array<bool, kStageCount> seen{};
  for (size_t i = 0; i < order.size(); ++i) {
    const SamplerStage stage = order[i];
    if (!is_known_stage(stage)) {
      return make_error(ErrorCode::kInvalidArgument, "sampler option order[", i, "]: unknown stage ",
                        static_cast<int>(stage));
    }
    if (seen[static_cast<size_t>(stage)]) {
      return make_error(ErrorCode::kInvalidArgument, "sampler option order[", i, "]: stage ",
                        sampler_stage_name(stage), " appears twice");
    }
    seen[static_cast<size_t>(stage)] = true;
  }
  return ok_status();
}

}  // namespace sinter
