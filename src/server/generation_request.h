// The requested sampling options (server/request_parameters.h) turned into the scheduler's
// GenerationOptions once the model is known.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sequence.h"
#include "server/model_manager.h"
#include "server/request_parameters.h"

namespace sinter::server {

// What the server's flags impose on every request.
struct ServerLimits {
  OverflowPolicy overflow = OverflowPolicy::kError;  // prompts longer than the context
  int32_t max_tokens = 32768;                        // generated tokens per request, whatever it asks
};

// GenerationOptions for `model`: what the request leaves out taken from the model's Modelfile
// parameters (a model of an Ollama store: PARAMETER stop, temperature, num_predict, ...), then
// from the API's defaults; the token limit resolved against the model's context and the server's
// limit, every value checked (logit-bias tokens against the vocabulary).
Result<GenerationOptions> make_generation_options(const RequestedGeneration& requested,
                                                  const SamplingDefaults& defaults, const ServedModel& model,
                                                  const ServerLimits& limits);

}  // namespace sinter::server
