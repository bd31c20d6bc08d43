// The op table: the contract between a backend and everything above it. For each op and key
// type (op_key_type) it records how the backend executes the op — directly on the stored
// blocks, on a layout repacked at load, on values dequantized on the fly, or not at all — and
// the kernel that does it. The backend's dispatch, supports(), the diagnosis and
// `sinter inspect --supported` all read the same table, so they cannot disagree.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "graph/tensor.h"

namespace sinter {

enum class ExecutionPath : uint8_t {
  kUnsupported,
  kDirect,       // computed on the stored values or blocks as they are
  kRepacked,     // on blocks rearranged at load into the backend's layout (same bits)
  kDequantized,  // each row widened to F32 as it is read
};

const char* execution_path_name(ExecutionPath path);

constexpr size_t kOpCount = static_cast<size_t>(Op::kView) + 1;
constexpr size_t kDTypeIdLimit = 40;  // GGUF type ids are below this (tensor/dtype.h)

// The type a node is looked up with: the weight's for ops that consume one (mul_mat, get_rows:
// a weight is asked about with the op that consumes it), the written type for ops that write
// another type (copy, store_rows, rope_shift), the cache's for attention, else the first
// source's.
DType op_key_type(const Tensor& node);

// Every op, in enum order.
std::vector<Op> all_ops();

// The paths of a table, without its kernels: what callers above the backend see.
class OpCapabilities {
 public:
  ExecutionPath path(Op op, DType type) const {
    const auto t = static_cast<size_t>(type);
    return t < kDTypeIdLimit ? paths_[static_cast<size_t>(op)][t] : ExecutionPath::kUnsupported;
  }
  bool supports(Op op, DType type) const { return path(op, type) != ExecutionPath::kUnsupported; }
  bool supports(const Tensor& node) const { return supports(node.op, op_key_type(node)); }

 protected:
  std::array<std::array<ExecutionPath, kDTypeIdLimit>, kOpCount> paths_{};  // all kUnsupported
};

// A backend's table with its kernels (a Kernel is whatever the backend calls per node).
template <class Kernel>
class OpTable : public OpCapabilities {
 public:
  void add(Op op, DType type, ExecutionPath path, Kernel run) {
    paths_[static_cast<size_t>(op)][static_cast<size_t>(type)] = path;
    kernels_[static_cast<size_t>(op)][static_cast<size_t>(type)] = run;
  }
  // The kernel for a node; only for nodes supports() accepts.
  Kernel kernel(const Tensor& node) const {
    return kernels_[static_cast<size_t>(node.op)][static_cast<size_t>(op_key_type(node))];
  }

 private:
  std::array<std::array<Kernel, kDTypeIdLimit>, kOpCount> kernels_{};
};

}  // namespace sinter
