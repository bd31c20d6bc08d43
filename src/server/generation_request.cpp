#include "server/generation_request.h"

#include <algorithm>
#include <cmath>

namespace sinter::server {
namespace {

template <class T>
void fill(std::optional<T>& value, const std::optional<T>& fallback) {
  if (!value) value = fallback;
}

// The request's values over a store model's Modelfile parameters, option by option (as Ollama
// merges a request's options over its model's).
RequestedGeneration with_modelfile_params(const RequestedGeneration& requested, const ServedModel& model) {
  const Modelfile* modelfile = model.modelfile();
  if (modelfile == nullptr || modelfile->params.empty()) return requested;
  // Each parameter was read this way when the store was (server/ollama_store.h): this succeeds.
  const auto params = read_ollama_options(&modelfile->params);
  if (!params) return requested;
  RequestedGeneration merged = requested;
  fill(merged.temperature, params->temperature);
  fill(merged.top_p, params->top_p);
  fill(merged.min_p, params->min_p);
  fill(merged.typical_p, params->typical_p);
  fill(merged.repeat_penalty, params->repeat_penalty);
  fill(merged.presence_penalty, params->presence_penalty);
  fill(merged.frequency_penalty, params->frequency_penalty);
  fill(merged.top_k, params->top_k);
  fill(merged.repeat_last_n, params->repeat_last_n);
  fill(merged.keep, params->keep);
  fill(merged.max_tokens, params->max_tokens);
  fill(merged.seed, params->seed);
  fill(merged.context_per_sequence, params->context_per_sequence);
  if (merged.stop.empty()) merged.stop = params->stop;
  return merged;
}

}  // namespace

Result<GenerationOptions> make_generation_options(const RequestedGeneration& request,
                                                  const SamplingDefaults& defaults, const ServedModel& model,
                                                  const ServerLimits& limits) {
  const RequestedGeneration requested = with_modelfile_params(request, model);
  GenerationOptions options;
  // Without a limit a request runs until end of generation or until its context is full; the
  // server's limit bounds every request (with --overflow shift a context never fills): the tokens
  // of all its n choices together, so that n does not multiply what one request may take.
  const int32_t choices = std::max(requested.n, 1);
  options.max_tokens = static_cast<int32_t>(std::min<int64_t>(
      requested.max_tokens.value_or(model.context_per_sequence), std::max(limits.max_tokens / choices, 1)));
  options.overflow = limits.overflow;
  options.keep = requested.keep.value_or(0);
  options.stop = requested.stop;
  options.logprobs = requested.logprobs;
  options.top_logprobs = requested.top_logprobs;
  options.grammar = requested.grammar.value_or("");
  SamplerOptions& s = options.sampling;
  s.temperature = requested.temperature.value_or(defaults.temperature);
  s.top_p = requested.top_p.value_or(defaults.top_p);
  s.top_k = requested.top_k.value_or(defaults.top_k);
  s.min_p = requested.min_p.value_or(defaults.min_p);
  s.typical_p = requested.typical_p.value_or(1.0f);
  s.repeat_penalty = requested.repeat_penalty.value_or(1.0f);
  s.repeat_last_n = requested.repeat_last_n.value_or(64);
  s.presence_penalty = requested.presence_penalty.value_or(0.0f);
  s.frequency_penalty = requested.frequency_penalty.value_or(0.0f);
  s.seed = requested.seed;
  const int32_t vocab = model.tokenizer->vocab_size();
  for (const auto& [token, bias] : requested.logit_bias) {
    if (token < 0 || token >= vocab) {
      return make_error(ErrorCode::kInvalidArgument, "logit_bias: token ", token,
                        " is outside the vocabulary [0, ", vocab, ")");
    }
    // OpenAI's -100 bans a token in practice; make it exact.
    s.logit_bias.push_back({static_cast<TokenId>(token), bias <= -100.0f ? -INFINITY : bias});
  }
  SINTER_TRY(s.validate(vocab));
  return options;
}

}  // namespace sinter::server
