// What /api/tags, /api/show, /api/ps and /v1/models say about a model file: Ollama's
// "details" (family, parameter size, quantization), the metadata as "model_info", an id.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "gguf/gguf_file.h"

namespace sinter::server {

struct ModelDetails {
  std::string family;              // general.architecture
  std::string parameter_size;      // "260.1K", "1.1B"
  std::string quantization_level;  // the tensor type holding most bytes, upper case: "Q4_0", "F32"
  uint64_t parameter_count = 0;
};

ModelDetails read_model_details(const GgufFile& file);

// {"parent_model": "", "format": "gguf", "family": ..., "families": [...], "parameter_size": ...,
//  "quantization_level": ...}
nlohmann::ordered_json details_json(const ModelDetails& details);

// The metadata keys with their values; arrays (the vocabulary) are null unless `verbose`, as
// Ollama shows them. general.parameter_count is added when the file lacks it.
nlohmann::ordered_json model_info_json(const GgufFile& file, const ModelDetails& details, bool verbose);

// "260.1K", "7.2M", "1.1B" (the style of Ollama's parameter_size).
std::string format_parameter_count(uint64_t count);

// A 64-hex-digit identifier of the file version (name, size and modification time: the file's
// content is not hashed, which would take minutes for large models).
std::string file_digest(const std::string& name, uint64_t bytes, int64_t modified_ns);

}  // namespace sinter::server
