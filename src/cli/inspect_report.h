// Rendering of `sinter inspect`: the diagnosis as JSON or as a human summary, the tensor list,
// the schema check, and the supported surface (architectures, types, tokenizers, backend
// capability matrix).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gguf/gguf_file.h"
#include "runtime/diagnosis.h"

namespace sinter::cli {

nlohmann::json metadata_json(const Metadata& metadata, size_t max_array_items = 16);
nlohmann::json diagnosis_json(const Diagnosis& diagnosis, const Metadata& metadata);
std::string diagnosis_text(const Diagnosis& diagnosis);

nlohmann::json tensors_json(const GgufFile& file);
std::string tensors_text(const GgufFile& file);

nlohmann::json schema_json(const Diagnosis& diagnosis, const GgufFile& file);
std::string schema_text(const Diagnosis& diagnosis, const GgufFile& file);

nlohmann::json supported_json();
std::string supported_text();

}  // namespace sinter::cli
