#include "server/model_info.h"

#include <cctype>
#include <cstdio>

#include "gguf/file_stats.h"

namespace sinter::server {
namespace {

using Json = nlohmann::ordered_json;

Json scalar_json(const GgufValue& value) {
  return std::visit(
      [](const auto& data) -> Json {
        using T = std::decay_t<decltype(data)>;
        if constexpr (std::is_same_v<T, GgufArray>) {
          return nullptr;
        } else {
          return data;
        }
      },
      value.data);
}

Json value_json(const GgufValue& value, bool verbose) {
  if (value.type != GgufType::kArray) return scalar_json(value);
  if (!verbose) return Json::array();  // as Ollama: arrays are listed only when verbose
  const auto& array = std::get<GgufArray>(value.data);
  Json items = Json::array();
  for (size_t i = 0; i < array.size(); ++i) items.push_back(value_json(array.at(i), true));
  return items;
}

uint64_t fnv1a(std::string_view bytes, uint64_t seed) {
  uint64_t hash = seed;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

std::string format_parameter_count(uint64_t count) {
  char text[32];
  const double n = static_cast<double>(count);
  if (n >= 1e9) {
    std::snprintf(text, sizeof(text), "%.1fB", n / 1e9);
  } else if (n >= 1e6) {
    std::snprintf(text, sizeof(text), "%.1fM", n / 1e6);
  } else if (n >= 1e3) {
    std::snprintf(text, sizeof(text), "%.1fK", n / 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%llu", static_cast<unsigned long long>(count));
  }
  return text;
}

ModelDetails read_model_details(const GgufFile& file) {
  ModelDetails details;
  if (auto arch = file.metadata().find<std::string>("general.architecture"); arch && arch->has_value()) {
    details.family = **arch;
  }
  const GgufFileStats stats = compute_file_stats(file);
  details.parameter_count = stats.n_params;
  details.parameter_size = format_parameter_count(stats.n_params);
  uint64_t most = 0;
  for (const auto& [type, type_stats] : stats.tensors_by_type) {
    if (type_stats.bytes > most) {
      most = type_stats.bytes;
      details.quantization_level = type;
    }
  }
  for (char& c : details.quantization_level)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return details;
}

Json details_json(const ModelDetails& details) {
  Json families = Json::array();
  if (!details.family.empty()) families.push_back(details.family);
  return Json{{"parent_model", ""},
              {"format", "gguf"},
              {"family", details.family},
              {"families", families},
              {"parameter_size", details.parameter_size},
              {"quantization_level", details.quantization_level}};
}

Json model_info_json(const GgufFile& file, const ModelDetails& details, bool verbose) {
  Json info = Json::object();
  for (const auto& [key, value] : file.metadata().entries()) info[key] = value_json(value, verbose);
  if (!info.contains("general.parameter_count")) info["general.parameter_count"] = details.parameter_count;
  return info;
}

std::string file_digest(const std::string& name, uint64_t bytes, int64_t modified_ns) {
  const std::string key = name + '\0' + std::to_string(bytes) + '\0' + std::to_string(modified_ns);
  std::string digest;
  char part[17];
  for (uint64_t seed :
       {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull, 0x632be59bd9b4e019ull}) {
    std::snprintf(part, sizeof(part), "%016llx", static_cast<unsigned long long>(fnv1a(key, seed)));
    digest += part;
  }
  return digest;
}

}  // namespace sinter::server
