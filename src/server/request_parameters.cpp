#include "server/request_parameters.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "server/json_fields.h"
#include "server/structured_output.h"

namespace sinter::server {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kHuge = 1e30;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// A top_p of 0 keeps only the most probable token; the sampler wants (0, 1].
float positive_top_p(float top_p) { return top_p > 0.0f ? top_p : 1e-6f; }

Status read_stop(const JsonFields& fields, RequestedGeneration& out) {
  SINTER_ASSIGN(const auto stop, fields.strings("stop"));
  if (!stop) return ok_status();
  for (size_t i = 0; i < stop->size(); ++i) {
    if ((*stop)[i].empty()) {
      return make_error(ErrorCode::kInvalidArgument, fields.path("stop"), "[", i,
                        "] is empty (a stop string needs text)");
    }
  }
  out.stop = *stop;
  return ok_status();
}

Status read_common_extras(const JsonFields& fields, RequestedGeneration& out) {
  SINTER_ASSIGN(const auto top_k, fields.integer("top_k", 0, kInt32Max));
  if (top_k) out.top_k = static_cast<int32_t>(*top_k);
  SINTER_ASSIGN(out.min_p, fields.number_in("min_p", 0, 1, "in [0, 1] (0 disables)"));
  SINTER_ASSIGN(const auto typical_p, fields.number_in("typical_p", 0, 1, "in (0, 1] (1 disables)"));
  if (typical_p && *typical_p <= 0.0f) {
    return make_error(ErrorCode::kInvalidArgument, fields.path("typical_p"),
                      " must be in (0, 1] (1 disables), got 0");
  }
  out.typical_p = typical_p;
  SINTER_ASSIGN(const auto repeat_penalty, fields.number_in("repeat_penalty", 0, kHuge, "> 0 (1 disables)"));
  if (repeat_penalty && *repeat_penalty <= 0.0f) {
    return make_error(ErrorCode::kInvalidArgument, fields.path("repeat_penalty"),
                      " must be > 0 (1 disables), got 0");
  }
  out.repeat_penalty = repeat_penalty;
  SINTER_ASSIGN(const auto repeat_last_n, fields.integer("repeat_last_n", -1, kInt32Max));
  if (repeat_last_n) out.repeat_last_n = static_cast<int32_t>(*repeat_last_n);
  return ok_status();
}

Status refuse_if(bool condition, const std::string& message) {
  if (condition) return make_error(ErrorCode::kInvalidArgument, message);
  return ok_status();
}

// Ollama's options that place or size the computation, not what it computes: the server's flags
// decide those (threads, batch, memory mapping), so they are accepted and have no effect.
constexpr std::string_view kPlacementOptions[] = {
    "num_gpu",  "main_gpu", "use_mmap",   "use_mlock",  "num_thread",       "num_batch",        "numa",
    "low_vram", "f16_kv",   "vocab_only", "logits_all", "penalize_newline", "draft_num_predict"};
constexpr std::string_view kSamplingOptions[] = {
    "temperature",       "top_p",          "top_k",         "min_p",
    "typical_p",         "repeat_penalty", "repeat_last_n", "presence_penalty",
    "frequency_penalty", "seed",           "num_predict",   "num_ctx",
    "num_keep",          "stop",           "mirostat",      "mirostat_tau",
    "mirostat_eta",      "tfs_z"};

// Every option is one sinter honours or one of the placement options above; any other is refused
// by name rather than ignored. Mirostat and tail-free sampling are refused unless off.
Status check_ollama_option_names(const Json& options) {
  for (const auto& item : options.items()) {
    const std::string& key = item.key();
    const auto known = [&](const auto& list) {
      return std::find(std::begin(list), std::end(list), key) != std::end(list);
    };
    if (!known(kPlacementOptions) && !known(kSamplingOptions)) {
      return make_error(ErrorCode::kInvalidArgument, "options.", key, " is not an option sinter knows");
    }
  }
  JsonFields fields(options, "options.");
  SINTER_ASSIGN(const auto mirostat, fields.integer("mirostat", 0, 2));
  if (mirostat.value_or(0) != 0) {
    return make_error(ErrorCode::kInvalidArgument, "options.mirostat is not supported (only 0, off)");
  }
  SINTER_ASSIGN(const auto tfs_z, fields.number_in("tfs_z", 0, kHuge, "a number"));
  if (tfs_z && *tfs_z != 1.0f) {
    return make_error(ErrorCode::kInvalidArgument, "options.tfs_z is not supported (only 1, off)");
  }
  return ok_status();
}

}  // namespace

Result<RequestedGeneration> read_ollama_options(const Json* options) {
  RequestedGeneration out;
  if (options == nullptr) return out;
  SINTER_TRY(check_ollama_option_names(*options));
  JsonFields fields(*options, "options.");
  SINTER_ASSIGN(out.temperature, fields.number_in("temperature", 0, kHuge, ">= 0 (0 means greedy)"));
  SINTER_ASSIGN(const auto top_p, fields.number_in("top_p", 0, 1, "in [0, 1] (1 disables)"));
  if (top_p) out.top_p = positive_top_p(*top_p);
  SINTER_TRY(read_common_extras(fields, out));
  SINTER_ASSIGN(out.presence_penalty, fields.number_in("presence_penalty", -kHuge, kHuge, "a finite number"));
  SINTER_ASSIGN(out.frequency_penalty,
                fields.number_in("frequency_penalty", -kHuge, kHuge, "a finite number"));
  SINTER_ASSIGN(const auto seed, fields.integer("seed"));
  if (seed && *seed >= 0) out.seed = static_cast<uint64_t>(*seed);  // negative: random, as Ollama
  SINTER_ASSIGN(const auto num_predict, fields.integer("num_predict", -2, kInt32Max));
  if (num_predict && *num_predict == 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      "options.num_predict must be positive, -1 (no limit) or -2 (fill the context), got 0");
  }
  if (num_predict && *num_predict > 0) out.max_tokens = *num_predict;
  SINTER_ASSIGN(const auto num_ctx, fields.integer("num_ctx", 16, 1 << 20));
  if (num_ctx) out.context_per_sequence = static_cast<int32_t>(*num_ctx);
  SINTER_ASSIGN(const auto num_keep, fields.integer("num_keep", -1, kInt32Max));
  if (num_keep && *num_keep >= 0) out.keep = static_cast<int32_t>(*num_keep);
  SINTER_TRY(read_stop(fields, out));
  return out;
}

Status read_ollama_logprobs(const Json& body, RequestedGeneration& out) {
  JsonFields fields(body);
  SINTER_ASSIGN(const auto logprobs, fields.boolean("logprobs"));
  SINTER_ASSIGN(const auto top_logprobs, fields.integer("top_logprobs", 0, 20));
  out.logprobs = logprobs.value_or(false);
  out.top_logprobs = out.logprobs ? static_cast<int32_t>(top_logprobs.value_or(0)) : 0;
  return ok_status();
}

Result<RequestedGeneration> read_openai_parameters(const Json& body, bool chat) {
  RequestedGeneration out;
  JsonFields fields(body);
  SINTER_ASSIGN(out.temperature, fields.number_in("temperature", 0, 2, "in [0, 2]"));
  SINTER_ASSIGN(const auto top_p, fields.number_in("top_p", 0, 1, "in [0, 1]"));
  if (top_p) out.top_p = positive_top_p(*top_p);
  SINTER_TRY(read_common_extras(fields, out));
  SINTER_ASSIGN(out.presence_penalty, fields.number_in("presence_penalty", -2, 2, "in [-2, 2]"));
  SINTER_ASSIGN(out.frequency_penalty, fields.number_in("frequency_penalty", -2, 2, "in [-2, 2]"));
  SINTER_ASSIGN(const auto seed, fields.integer("seed"));
  if (seed) out.seed = static_cast<uint64_t>(*seed);
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    SINTER_ASSIGN(const auto max_tokens, fields.integer(key, 1, kInt32Max));
    if (max_tokens) out.max_tokens = *max_tokens;
  }
  SINTER_TRY(read_stop(fields, out));
  SINTER_ASSIGN(const Json* logit_bias, fields.object("logit_bias"));
  if (logit_bias != nullptr) {
    for (const auto& [key, value] : logit_bias->items()) {
      char* end = nullptr;
      const long long token = std::strtoll(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0') {
        return make_error(ErrorCode::kInvalidArgument, "logit_bias: key '", key, "' is not a token id");
      }
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < -100 ||
          value.get<double>() > 100) {
        return make_error(ErrorCode::kInvalidArgument, "logit_bias[\"", key,
                          "\"] must be a number in [-100, 100], got ", describe_json(value));
      }
      out.logit_bias.emplace_back(token, value.get<float>());
    }
  }
  // n choices share the prompt; the scheduler refuses more than it has sequences (--parallel).
  SINTER_ASSIGN(const auto n, fields.integer("n", 1, 64));
  out.n = static_cast<int32_t>(n.value_or(1));
  if (chat) {
    SINTER_ASSIGN(const auto logprobs, fields.boolean("logprobs"));
    SINTER_ASSIGN(const auto top_logprobs, fields.integer("top_logprobs", 0, 20));
    SINTER_TRY(refuse_if(top_logprobs && !logprobs.value_or(false), "top_logprobs needs logprobs: true"));
    out.logprobs = logprobs.value_or(false);
    out.top_logprobs = static_cast<int32_t>(top_logprobs.value_or(0));
    // tools, tool_choice and reasoning: server/tool_request.h.
  } else {
    // The legacy completions' logprobs is the number of alternatives (0: the sampled token's only).
    SINTER_ASSIGN(const auto logprobs, fields.integer("logprobs", 0, 5));
    out.logprobs = logprobs.has_value();
    out.top_logprobs = static_cast<int32_t>(logprobs.value_or(0));
    SINTER_ASSIGN(const auto echo, fields.boolean("echo"));
    SINTER_TRY(refuse_if(echo.value_or(false), "echo is not supported"));
    SINTER_ASSIGN(const auto suffix, fields.string("suffix"));
    SINTER_TRY(refuse_if(suffix && !suffix->empty(), "suffix (fill-in-the-middle) is not supported"));
    SINTER_ASSIGN(const auto best_of, fields.integer("best_of"));
    SINTER_TRY(refuse_if(best_of && *best_of != 1, "best_of must be 1"));
  }
  // Structured output, on both routes (llama-server takes both fields on completions too).
  SINTER_ASSIGN(auto from_format, openai_response_format_grammar(fields.find("response_format")));
  SINTER_ASSIGN(out.grammar,
                request_grammar(fields.find("grammar"), std::move(from_format), "response_format"));
  return out;
}

}  // namespace sinter::server
