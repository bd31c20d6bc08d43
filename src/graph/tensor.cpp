#include "graph/tensor.h"

namespace sinter {

const char* op_name(Op op) {
  switch (op) {
    case Op::kLeaf: return "leaf";
    case Op::kGetRows: return "get_rows";
    case Op::kMatMul: return "mul_mat";
    case Op::kRmsNorm: return "rms_norm";
    case Op::kNorm: return "norm";
    case Op::kAdd: return "add";
    case Op::kMul: return "mul";
    case Op::kScale: return "scale";
    case Op::kSilu: return "silu";
    case Op::kGelu: return "gelu";
    case Op::kSoftcap: return "softcap";
    case Op::kSwiGlu: return "swiglu";
    case Op::kGeGlu: return "geglu";
    case Op::kRope: return "rope";
    case Op::kStoreRows: return "store_rows";
    case Op::kAttention: return "attention";
    case Op::kRopeShift: return "rope_shift";
    case Op::kSoftmax: return "softmax";
    case Op::kCopy: return "copy";
    case Op::kSigmoid: return "sigmoid";
    case Op::kClamp: return "clamp";
    case Op::kDiv: return "div";
    case Op::kSumRows: return "sum_rows";
    case Op::kTopK: return "top_k";
    case Op::kMulMatId: return "mul_mat_id";
    case Op::kWeightedSum: return "weighted_sum";
    case Op::kConcat: return "concat";
    case Op::kSwiGluOai: return "swiglu_oai";
    case Op::kSsmConv: return "ssm_conv";
    case Op::kSsmScan: return "ssm_scan";
    case Op::kTokenShift: return "token_shift";
    case Op::kL2Norm: return "l2_norm";
    case Op::kRwkvWkv6: return "rwkv_wkv6";
    case Op::kRwkvWkv7: return "rwkv_wkv7";
    case Op::kExp: return "exp";
    case Op::kTanh: return "tanh";
    case Op::kSub: return "sub";
    case Op::kSoftplus: return "softplus";
    case Op::kGatedDeltaNet: return "gated_delta_net";
    case Op::kView: return "view";
  }
  return "?";
}

std::array<size_t, kMaxDims> contiguous_strides(DType type, const std::array<int64_t, kMaxDims>& ne) {
  const auto& traits = dtype_traits(type);
  std::array<size_t, kMaxDims> nb{};
  nb[0] = traits.block_bytes;  // for block types nb[0] is the block size in bytes, as ggml has it
  nb[1] = sinter::row_bytes(type, ne[0]);
  for (int i = 2; i < kMaxDims; ++i) nb[i] = nb[i - 1] * static_cast<size_t>(ne[i - 1]);
  return nb;
}

bool Tensor::is_contiguous() const { return nb == contiguous_strides(type, ne); }

std::string Tensor::shape_string() const {
  std::string out = "[";
  int dims = kMaxDims;
  while (dims > 1 && ne[dims - 1] == 1) --dims;
  for (int i = 0; i < dims; ++i) out += (i ? ", " : "") + std::to_string(ne[i]);
  return out + "]";
}

Tensor make_persistent(std::string name, DType type, std::array<int64_t, kMaxDims> ne, void* data) {
  Tensor t;
  t.name = std::move(name);
  t.type = type;
  t.role = TensorRole::kPersistent;
  t.ne = ne;
  t.nb = contiguous_strides(type, ne);
  t.data = data;
  return t;
}

}  // namespace sinter
