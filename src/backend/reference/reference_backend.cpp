// The reference backend ("reference"): every op in scalar, single-threaded code (reference_ops.h),
// host memory, weights read in place from the mapped file. Slow and simple on purpose: it is the
// golden side of cross-backend comparisons, and runs whole (small) models.
#include <memory>

#include "backend/backend.h"
#include "backend/reference/reference_ops.h"
#include "tensor/vec_dot.h"

namespace sinter::reference_backend {
namespace {

// The types a KV cache can hold that store_rows and rope_shift write here (llama.cpp's cache
// types); attention reads the plain ones.
constexpr DType kCacheTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0,  DType::Q4_0,
                                 DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL};
constexpr DType kAttentionCacheTypes[] = {DType::F32, DType::F16, DType::BF16};

// Ops on F32 values alone, keyed by their first source's type.
struct F32Op {
  Op op;
  RefKernel kernel;
};
constexpr F32Op kF32Ops[] = {
    {Op::kRmsNorm, rms_norm}, {Op::kNorm, norm},
    {Op::kAdd, add},          {Op::kMul, mul},
    {Op::kScale, scale},      {Op::kSilu, silu},
    {Op::kGelu, gelu},        {Op::kSoftcap, softcap},
    {Op::kSwiGlu, swiglu},    {Op::kGeGlu, geglu},
    {Op::kRope, rope},        {Op::kSoftmax, softmax},
    {Op::kDiv, div},          {Op::kSigmoid, sigmoid},
    {Op::kClamp, clamp},      {Op::kSumRows, sum_rows},
    {Op::kTopK, top_k},       {Op::kWeightedSum, weighted_sum},
    {Op::kConcat, concat},    {Op::kSwiGluOai, swiglu_oai},
    {Op::kL2Norm, l2_norm},   {Op::kSsmConv, ssm_conv},
    {Op::kSsmScan, ssm_scan}, {Op::kTokenShift, token_shift},
    {Op::kExp, exp},          {Op::kTanh, tanh},
    {Op::kSub, sub},          {Op::kSoftplus, softplus},
};

OpTable<RefKernel> build_table() {
  OpTable<RefKernel> table;
  for (const DTypeTraits& t : all_dtypes()) {
    // Nothing to compute: compute() skips them.
    table.add(Op::kLeaf, t.type, ExecutionPath::kDirect, nullptr);
    table.add(Op::kView, t.type, ExecutionPath::kDirect, nullptr);
    if (t.dequantize != nullptr) {
      // Weights (and get_rows tables) of every readable type: the reference dot product on the
      // stored blocks where the type has one, else rows widened to F32.
      const ExecutionPath path =
          reference_vec_dot(t.type) != nullptr ? ExecutionPath::kDirect : ExecutionPath::kDequantized;
      table.add(Op::kMatMul, t.type, path, mul_mat);
      table.add(Op::kMulMatId, t.type, path, mul_mat_id);
      table.add(Op::kGetRows, t.type, ExecutionPath::kDirect, get_rows);  // rows widened as read
      // Copies and cache writes to every type with a reference quantizer (from any readable
      // source): the golden side of whatever another backend writes.
      if (t.quantize != nullptr) {
        table.add(Op::kCopy, t.type, ExecutionPath::kDirect, copy);
        table.add(Op::kStoreRows, t.type, ExecutionPath::kDirect, store_rows);
      }
    }
  }
  for (DType type : kCacheTypes) table.add(Op::kRopeShift, type, ExecutionPath::kDirect, rope_shift);
  for (DType type : kAttentionCacheTypes) table.add(Op::kAttention, type, ExecutionPath::kDirect, attention);
  for (const F32Op& op : kF32Ops) table.add(op.op, DType::F32, ExecutionPath::kDirect, op.kernel);
  // RWKV's recurrences, each slot's state updated in place (ref_rwkv.cpp).
  table.add(Op::kRwkvWkv6, DType::F32, ExecutionPath::kDirect, rwkv_wkv6);
  table.add(Op::kRwkvWkv7, DType::F32, ExecutionPath::kDirect, rwkv_wkv7);
  // The gated delta rule (ref_delta_net.cpp), likewise.
  table.add(Op::kGatedDeltaNet, DType::F32, ExecutionPath::kDirect, gated_delta_net);
  return table;
}

class ReferenceBackend final : public Backend {
 public:
  ReferenceBackend() : table_(build_table()) {}
  using Backend::compute;
  using Backend::scratch_bytes;

  std::string_view name() const override { return "reference"; }
  int threads() const override { return 1; }
  const OpCapabilities& ops() const override { return table_; }

  Result<std::unique_ptr<Buffer>> allocate(BufferUsage usage, size_t bytes) override {
    return allocate_host_buffer(name(), usage, bytes);
  }

  // The weight's bytes stay where they are in the mapped file.
  Result<std::unique_ptr<Buffer>> load_weight(Tensor* weight, Op /*consumer*/) override {
    return adopt_host_bytes(name(), BufferKind::kHostMapped, *weight, weight->bytes());
  }

  // Ops allocate what little they need as they run.
  size_t scratch_bytes(std::span<Tensor* const> /*nodes*/) const override { return 0; }

  Status compute(const Graph& /*graph*/, std::span<Tensor* const> nodes) override {
    for (Tensor* node : nodes) {
      if (node->op == Op::kLeaf || node->op == Op::kView) continue;
      if (!supports(*node)) return unsupported_node(name(), *node);
      table_.kernel (*node)(*node);
    }
    return ok_status();
  }

 private:
  OpTable<RefKernel> table_;
};

const BackendRegistration kReference{
    "reference", [](const BackendOptions& /*options*/) -> Result<std::unique_ptr<Backend>> {
      return std::unique_ptr<Backend>(std::make_unique<ReferenceBackend>());
    }};

}  // namespace
}  // namespace sinter::reference_backend
