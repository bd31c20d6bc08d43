// Command-line flags shared by the commands that load a model and generate.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "sinter/engine.h"

namespace sinter::cli {

struct EngineFlags {
  std::string model;
  std::string backend = "cpu";
  int threads = 0;
  int32_t n_ctx = 0;
  int32_t n_batch = 512;
  std::string kv_type = "f16";
  std::string force_pre;
  int64_t state_checkpoints_mib = 0;

  void add_to(CLI::App* app);
  Result<EngineOptions> to_options() const;
};

struct GenerationFlags {
  int32_t max_tokens = 128;
  float temperature = 0.8f;
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float typical_p = 1.0f;
  float repeat_penalty = 1.0f;
  int32_t repeat_last_n = 64;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  int64_t seed = -1;  // -1: random
  std::string samplers;
  std::string overflow = "error";
  int32_t keep = 0;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  std::string grammar_file;      // GBNF grammar constraining the output; empty: none
  std::string json_schema_file;  // a JSON schema the output follows; empty: none
  bool json = false;             // the output is a JSON object

  void add_to(CLI::App* app);
  Result<GenerationOptions> to_options() const;
};

}  // namespace sinter::cli
