// Sampling options and limits as the two APIs spell them (Ollama's "options" object, OpenAI's
// top-level parameters), checked field by field before any model is loaded. Depends on nothing
// but JSON, so the parsers can be fuzzed on their own (fuzz/request_fuzz.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sinter/result.h"

namespace sinter::server {

struct RequestedGeneration {
  std::optional<float> temperature, top_p, min_p, typical_p, repeat_penalty, presence_penalty,
      frequency_penalty;
  std::optional<int32_t> top_k, repeat_last_n, keep;
  std::optional<int64_t> max_tokens;  // nullopt: until end of generation or a full context
  std::optional<uint64_t> seed;       // nullopt: a random seed
  std::vector<std::string> stop;
  std::vector<std::pair<int64_t, float>> logit_bias;  // token, bias
  std::optional<int32_t> context_per_sequence;        // Ollama's num_ctx
  // Per generated token, its log-probability and the top_logprobs (0..20) most likely tokens.
  bool logprobs = false;
  int32_t top_logprobs = 0;
  int32_t n = 1;  // completions of the prompt (OpenAI's n)
  // A GBNF grammar every choice follows: llama-server's `grammar`, or what the request's format
  // (Ollama's `format`, OpenAI's `response_format`) asks for (server/structured_output.h).
  std::optional<std::string> grammar;
};

// Ollama's top-level logprobs (a boolean) and top_logprobs (0..20), into `out`.
Status read_ollama_logprobs(const nlohmann::ordered_json& body, RequestedGeneration& out);

// The defaults of each API where the request says nothing.
struct SamplingDefaults {
  float temperature;
  float top_p;
  int32_t top_k;
  float min_p;
};
// Ollama's documented defaults (temperature 0.8, top_k 40, top_p 0.9, min_p 0). Repetition
// penalties are off unless asked for, as in Ollama's own engine.
inline constexpr SamplingDefaults kOllamaDefaults{0.8f, 0.9f, 40, 0.0f};
// OpenAI's (temperature 1, top_p 1, no top-k or min-p).
inline constexpr SamplingDefaults kOpenAiDefaults{1.0f, 1.0f, 0, 0.0f};

// Ollama's "options" object (null or absent: all defaults). Every option is honoured, accepted
// without effect (placement options), or refused by name; wrong types and values are errors
// naming "options.<name>".
Result<RequestedGeneration> read_ollama_options(const nlohmann::ordered_json* options);

// The sampling parameters of an OpenAI request body (/v1/chat/completions, /v1/completions),
// with the llama.cpp extensions top_k, min_p, typical_p, repeat_penalty, repeat_last_n.
// `response_format` and `grammar` become `grammar`. Parameters sinter cannot honour (echo,
// suffix, best_of) are errors.
Result<RequestedGeneration> read_openai_parameters(const nlohmann::ordered_json& body, bool chat);

}  // namespace sinter::server
