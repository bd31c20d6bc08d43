// The Backend interface: a peer that owns memory (buffers), declares what it can run (its op
// table, backend/op_table.h) and runs graphs or parts of them.
//
// A backend allocates the buffers of a model's weights, its KV cache and every graph's arena;
// above src/backend nothing reads or writes tensor bytes except through tensor_set/tensor_get
// (backend/buffer.h). docs/ADDING_A_BACKEND.md says what a new backend implements.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/buffer.h"
#include "backend/op_table.h"
#include "graph/graph.h"
#include "sinter/result.h"

namespace sinter {

struct BackendOptions {
  int threads = 0;  // 0: all cores
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual int threads() const = 0;

  // The contract: how each op runs here, by key type.
  virtual const OpCapabilities& ops() const = 0;
  ExecutionPath path(Op op, DType type) const { return ops().path(op, type); }
  bool supports(const Tensor& node) const { return ops().supports(node); }

  // A buffer for `usage` of `bytes` bytes.
  virtual Result<std::unique_ptr<Buffer>> allocate(BufferUsage usage, size_t bytes) = 0;

  // Makes a weight the backend's own. `weight->data` points at its bytes in the mapped file
  // (buffer null); the backend adopts them (a kHostMapped buffer) or copies or repacks them into
  // memory of its own, repointing the tensor. `consumer` is the op that reads the weight
  // (runtime/weight_use.h): a layout of the backend's own is only for the ops that read it. The
  // returned buffer must outlive the tensor's use.
  virtual Result<std::unique_ptr<Buffer>> load_weight(Tensor* weight, Op consumer) = 0;

  // Bytes of scratch the backend needs to run these nodes, beyond the planned arena.
  virtual size_t scratch_bytes(std::span<Tensor* const> nodes) const = 0;
  size_t scratch_bytes(const Graph& graph) const { return scratch_bytes(graph.nodes()); }

  // Runs nodes of a finalized, memory-bound graph, in order: the whole graph, or the segment
  // placement gave this backend (backend/placement.h). Every node must be supported.
  virtual Status compute(const Graph& graph, std::span<Tensor* const> nodes) = 0;
  Status compute(const Graph& graph) { return compute(graph, graph.nodes()); }
};

// Registry: backends join by name from their own files.
using BackendFactory = std::function<Result<std::unique_ptr<Backend>>(const BackendOptions&)>;
struct BackendRegistration {
  BackendRegistration(std::string name, BackendFactory factory);
};
Result<std::unique_ptr<Backend>> create_backend(std::string_view name, const BackendOptions& options);
std::vector<std::string> backend_names();

// The ops a weight can be consumed by (the capability matrix of weight types).
std::vector<Op> weight_ops();

// A refusal naming the node a backend cannot run (for compute()'s checks).
Status unsupported_node(std::string_view backend, const Tensor& node);

}  // namespace sinter
