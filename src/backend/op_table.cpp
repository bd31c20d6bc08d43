#include "backend/op_table.h"

namespace sinter {

const char* execution_path_name(ExecutionPath path) {
  switch (path) {
    case ExecutionPath::kDirect: return "direct";
    case ExecutionPath::kRepacked: return "repacked";
    case ExecutionPath::kDequantized: return "dequantized";
    case ExecutionPath::kUnsupported: return "unsupported";
  }
  return "?";
}

DType op_key_type(const Tensor& node) {
  switch (node.op) {
    case Op::kCopy:
    case Op::kStoreRows:
    case Op::kRopeShift:
    case Op::kLeaf:
    case Op::kView: return node.type;
    case Op::kAttention: return node.src[1]->type;
    default: return node.src[0]->type;
  }
}

std::vector<Op> all_ops() {
  std::vector<Op> ops;
  for (size_t i = 0; i < kOpCount; ++i) ops.push_back(static_cast<Op>(i));
  return ops;
}

}  // namespace sinter
