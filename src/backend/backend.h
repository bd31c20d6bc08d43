// The Backend interface: what runs a graph, and the capability contract that says how.
//
// Every backend declares, for each op and weight type, its execution path (the Llamex
// "backend contract"): directly on the compact blocks, after repacking them at load, after
// dequantizing them at load, or not at all. Model loading asks before binding weights, and
// `sinter inspect --supported` prints the matrix.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "sinter/result.h"

namespace sinter {

enum class ExecutionPath {
  kDirect,       // computed on the file's blocks as they are
  kRepacked,     // blocks rearranged at load into an interleaved layout, same bits
  kDequantized,  // expanded at load to a wider type
  kUnsupported,
};

const char* execution_path_name(ExecutionPath path);

struct BackendOptions {
  int threads = 0;  // 0: all cores
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;

  // How this backend executes `op` when its weight (first) operand has type `weight_type`.
  virtual ExecutionPath path(Op op, DType weight_type) const = 0;

  // Called once per weight at load; may rearrange the bytes for faster kernels (repacking).
  // `tensor->data` may be repointed at backend-owned memory.
  virtual Status prepare_weight(Tensor* /*weight*/) { return ok_status(); }

  // Bytes of scratch the backend needs to run this graph (beyond the planned arena).
  virtual size_t scratch_bytes(const Graph& graph) const = 0;

  // Runs every node of a finalized, memory-bound graph.
  virtual Status compute(Graph& graph) = 0;

  virtual int threads() const = 0;
};

// Registry: backends join by name from their own files.
using BackendFactory = std::function<Result<std::unique_ptr<Backend>>(const BackendOptions&)>;
struct BackendRegistration {
  BackendRegistration(std::string name, BackendFactory factory);
};
Result<std::unique_ptr<Backend>> create_backend(std::string_view name, const BackendOptions& options);
std::vector<std::string> backend_names();

// The ops the capability matrix lists (those with a weight operand).
std::vector<Op> weight_ops();

}  // namespace sinter
