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

// GenerationOptions for `model`: the defaults filled in, the token limit resolved against the
// model's context, every value checked (logit-bias tokens against the vocabulary).
Result<GenerationOptions> make_generation_options(const RequestedGeneration& requested,
                                                  const SamplingDefaults& defaults, const ServedModel& model,
                                                  OverflowPolicy overflow);

}  // namespace sinter::server
