#include "backend/backend.h"

#include <map>

namespace sinter {
namespace {

std::map<std::string, BackendFactory, std::less<>>& registry() {
  static std::map<std::string, BackendFactory, std::less<>> backends;
  return backends;
}

}  // namespace

BackendRegistration::BackendRegistration(std::string name, BackendFactory factory) {
  registry()[std::move(name)] = std::move(factory);
}

Result<std::unique_ptr<Backend>> create_backend(std::string_view name, const BackendOptions& options) {
  const auto it = registry().find(name);
  if (it == registry().end()) {
    std::string known;
    for (const auto& [n, f] : registry()) known += (known.empty() ? "" : ", ") + n;
    return make_error(ErrorCode::kNotFound, "unknown backend '", name, "' (known: ", known, ")");
  }
  return it->second(options);
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& [n, f] : registry()) names.push_back(n);
  return names;
}

std::vector<Op> weight_ops() { return {Op::kMatMul, Op::kMulMatId, Op::kGetRows}; }

Status unsupported_node(std::string_view backend, const Tensor& node) {
  return make_error(ErrorCode::kUnsupported, "the ", backend, " backend cannot run ", op_name(node.op),
                    " on ", dtype_name(op_key_type(node)), " (", node.name, ")");
}

}  // namespace sinter
