#include "model/registry.h"

#include <map>

namespace sinter {
namespace {

std::map<std::string, Architecture, std::less<>>& registry() {
  static std::map<std::string, Architecture, std::less<>> architectures;
  return architectures;
}

}  // namespace

ArchitectureRegistration::ArchitectureRegistration(Architecture architecture) {
  std::string name = architecture.name;
  registry().emplace(std::move(name), std::move(architecture));
}

const Architecture* find_architecture(std::string_view name) {
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const auto& [name, arch] : registry()) names.push_back(name);
  return names;
}

Result<std::string> architecture_of(const Metadata& metadata) {
  return metadata.get<std::string>("general.architecture");
}

bool is_embedding_model_file(const Metadata& metadata) {
  auto name = architecture_of(metadata);
  if (!name) return false;
  const Architecture* architecture = find_architecture(*name);
  if (architecture == nullptr) return false;
  if (architecture->encoder) return true;
  auto pooling = metadata.find<uint32_t>(*name + ".pooling_type");
  return pooling && pooling->has_value() && **pooling > static_cast<uint32_t>(Pooling::kNone);
}

}  // namespace sinter
