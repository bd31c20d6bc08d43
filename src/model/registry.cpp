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

}  // namespace sinter
