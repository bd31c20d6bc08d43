// The CPU backend: a persistent thread pool runs a whole graph in one parallel region, every
// thread taking its share of each node and meeting the others at a spinning barrier.
#include <algorithm>
#include <memory>

#include "backend/backend.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/expert_store.h"
#include "backend/cpu/kernels_pack.h"
#include "backend/cpu/row_kernels.h"
#include "core/thread_pool.h"
#include "tensor/vec_dot.h"

namespace sinter::cpu {
namespace {

// Below this many multiply-adds in the matrix products a pass runs on one thread (~0.1 ms of
// work on one core; a barrier costs 1-5 µs and a pass has a few hundred of them).
constexpr double kSingleThreadFlops = 2e6;

double matmul_flops(std::span<Tensor* const> nodes) {
  double flops = 0;
  for (const Tensor* node : nodes) {
    if (node->op == Op::kMatMul || node->op == Op::kMulMatId) {
      // mul_mat_id: k columns per token (node->ne[1] · ne[2]), each through one expert.
      const double columns = node->op == Op::kMatMul ? static_cast<double>(node->src[1]->rows())
                                                     : static_cast<double>(node->ne[1] * node->ne[2]);
      flops += static_cast<double>(node->src[0]->ne[0]) * static_cast<double>(node->src[0]->ne[1]) * columns;
    }
  }
  return flops;
}

size_t packed_bytes(const PackedMatrix& w) { return w.group_bytes * static_cast<size_t>(w.groups); }

bool has_dequantizer(DType type) { return dtype_traits(type).dequantize != nullptr; }

using CpuKernel = void (*)(const Tensor&, const OpContext&);

// The CPU's op table (backend/op_table.h): the kernel of every op and key type it runs, and how.
OpTable<CpuKernel> make_op_table() {
  OpTable<CpuKernel> table;
  const KernelSet& kernels = active_kernels();
  for (const DTypeTraits& traits : all_dtypes()) {
    const DType type = traits.type;
    table.add(Op::kLeaf, type, ExecutionPath::kDirect, nullptr);
    table.add(Op::kView, type, ExecutionPath::kDirect, nullptr);
    if (has_dequantizer(type)) {
      // Repacked at load into 16-row groups where the CPU's kernels have a packed layout; else
      // on the file's blocks with the reference dot product, or row by row widened to F32
      // (never the whole matrix expanded). run_mul_mat and run_get_rows find a weight's packed
      // copy by its address.
      const bool packed = gemm_kernel(kernels, type) != nullptr && has_packed_layout(type);
      const bool dots = reference_vec_dot(type) != nullptr || type == DType::F32;
      const ExecutionPath product = packed ? ExecutionPath::kRepacked
                                    : dots ? ExecutionPath::kDirect
                                           : ExecutionPath::kDequantized;
      table.add(Op::kMatMul, type, product, run_mul_mat);
      // Experts: repacked on first use where the dense product is repacked (expert_store.h).
      table.add(Op::kMulMatId, type, product, run_mul_mat_id);
      table.add(Op::kGetRows, type, packed ? ExecutionPath::kRepacked : ExecutionPath::kDirect, run_get_rows);
    }
    if (row_writer(type) != nullptr) {
      table.add(Op::kCopy, type, ExecutionPath::kDirect, run_copy);
      table.add(Op::kStoreRows, type, ExecutionPath::kDirect, run_store_rows);
    }
  }
  for (DType cache : {DType::F32, DType::F16, DType::BF16}) {
    table.add(Op::kAttention, cache, ExecutionPath::kDirect, run_attention);
    table.add(Op::kRopeShift, cache, ExecutionPath::kDirect, run_rope_shift);
  }
  const std::pair<Op, CpuKernel> float_ops[] = {
      {Op::kRmsNorm, run_rms_norm}, {Op::kNorm, run_norm},
      {Op::kAdd, run_binary},       {Op::kMul, run_binary},
      {Op::kScale, run_unary},      {Op::kSilu, run_unary},
      {Op::kGelu, run_unary},       {Op::kSoftcap, run_unary},
      {Op::kSwiGlu, run_gated},     {Op::kGeGlu, run_gated},
      {Op::kRope, run_rope},        {Op::kSoftmax, run_softmax},
      {Op::kSigmoid, run_unary},    {Op::kClamp, run_unary},
      {Op::kDiv, run_binary},       {Op::kSumRows, run_sum_rows},
      {Op::kTopK, run_top_k},       {Op::kWeightedSum, run_weighted_sum},
      {Op::kConcat, run_concat},    {Op::kSwiGluOai, run_swiglu_oai},
      {Op::kL2Norm, run_l2_norm},   {Op::kSsmConv, run_ssm_conv},
      {Op::kSsmScan, run_ssm_scan}, {Op::kTokenShift, run_token_shift},
      {Op::kExp, run_unary},        {Op::kTanh, run_unary},
      {Op::kSub, run_binary},       {Op::kSoftplus, run_unary},
  };
  for (const auto& [op, kernel] : float_ops) table.add(op, DType::F32, ExecutionPath::kDirect, kernel);
  // RWKV's recurrences, each slot's state updated in place (op_rwkv.cpp).
  table.add(Op::kRwkvWkv6, DType::F32, ExecutionPath::kDirect, run_rwkv_wkv6);
  table.add(Op::kRwkvWkv7, DType::F32, ExecutionPath::kDirect, run_rwkv_wkv7);
  // The gated delta rule, likewise (op_delta_net.cpp).
  table.add(Op::kGatedDeltaNet, DType::F32, ExecutionPath::kDirect, run_gated_delta_net);
  return table;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads)
      : pool_(threads), scratch_(static_cast<size_t>(pool_.size())), table_(make_op_table()) {}

  std::string_view name() const override { return "cpu"; }
  int threads() const override { return pool_.size(); }
  const OpCapabilities& ops() const override { return table_; }

  Result<std::unique_ptr<Buffer>> allocate(BufferUsage usage, size_t bytes) override {
    return allocate_host_buffer(name(), usage, bytes);
  }

  Result<std::unique_ptr<Buffer>> load_weight(Tensor* weight, Op consumer) override {
    // Only products and the embedding lookup read the 16-row groups; any other op reads the
    // file's rows (Command R+'s Q/K norm weights are [head_dim, n_head] matrices read by mul).
    if (consumer == Op::kMulMatId) {
      // The file's bytes stay: each expert is repacked from them when first chosen (or, for a
      // type without a packed kernel, read as it is).
      SINTER_TRY(experts_.add(*weight, active_kernels()));
      return adopt_host_bytes(name(), BufferKind::kHostMapped, *weight, weight->bytes());
    }
    if (consumer == Op::kMatMul || consumer == Op::kGetRows)
      SINTER_TRY(packed_.pack(weight, active_kernels(), &pool_));
    if (const PackedMatrix* packed = packed_.find(weight->data)) {
      return adopt_host_bytes(name(), BufferKind::kHostRepacked, *weight, packed_bytes(*packed));
    }
    return adopt_host_bytes(name(), BufferKind::kHostMapped, *weight, weight->bytes());
  }

  size_t scratch_bytes(std::span<Tensor* const> nodes) const override {
    const ScratchNeed need = scratch_need(nodes);
    return need.floats * sizeof(float) * static_cast<size_t>(pool_.size()) + need.shared;
  }

  Status compute(const Graph& graph, std::span<Tensor* const> nodes) override {
    SINTER_TRY(plan_steps(nodes));
    const ScratchNeed need = scratch_need(nodes);
    for (auto& s : scratch_) {
      if (s.floats.size() < need.floats) s.floats.resize(need.floats);
    }
    if (shared_.size() < need.shared + 64) shared_.resize(need.shared + 64);
    uint8_t* shared_base = shared_.data() + (64 - reinterpret_cast<uintptr_t>(shared_.data()) % 64) % 64;
    const auto run_all = [&](const ThreadContext& thread) {
      OpContext ctx{thread,   scratch_[static_cast<size_t>(thread.index)], shared_base, graph, &packed_,
                    &experts_};
      for (const Step& step : steps_) {
        if (step.weights[0] != nullptr) {  // packed products, one or a run
          run_mul_mat_run(step.weights, step.nodes, step.count, ctx);
        } else {
          step.kernel(*step.nodes[0], ctx);
        }
        thread.barrier();
      }
    };
    // A pass too small to share (a tiny model's generation step) runs on the calling thread:
    // a barrier per op would cost more than the work. Results do not depend on the thread count.
    if (pool_.size() > 1 && matmul_flops(nodes) < kSingleThreadFlops) {
      run_all(ThreadContext{0, 1, nullptr});
    } else {
      pool_.run(run_all);
    }
    return ok_status();
  }

 private:
  // One step per node that computes, except that consecutive matrix products of packed weights
  // reading the same activations become one step (run_mul_mat_run runs every packed product). Rebuilt every
  // pass (a scan of the nodes; the vector keeps its capacity, so nothing is allocated per token).
  struct Step {
    const Tensor* nodes[kMaxMatMulRun];
    const PackedMatrix* weights[kMaxMatMulRun];  // packed weights of matrix products, else null
    int count;
    CpuKernel kernel;  // the table's, for a single node
  };
  // Refuses a node the table does not list (placement sends those elsewhere).
  Status plan_steps(std::span<Tensor* const> nodes) {
    steps_.clear();
    for (const Tensor* node : nodes) {
      if (!table_.supports(*node)) return unsupported_node(name(), *node);
      const CpuKernel kernel = table_.kernel(*node);
      if (kernel == nullptr) continue;  // leaves and views compute nothing
      const PackedMatrix* weight = node->op == Op::kMatMul ? packed_.find(node->src[0]->data) : nullptr;
      if (weight != nullptr && !steps_.empty() && steps_.back().weights[0] != nullptr) {
        Step& last = steps_.back();
        if (last.count < kMaxMatMulRun && last.nodes[0]->src[1] == node->src[1] &&
            rounds_columns_alike(*last.weights[0], *weight)) {
          last.nodes[last.count] = node;
          last.weights[last.count++] = weight;
          continue;
        }
      }
      steps_.push_back(Step{{node}, {weight}, 1, kernel});
    }
    return ok_status();
  }

  // The most scratch any of the nodes needs: floats per thread, and bytes all threads share.
  struct ScratchNeed {
    size_t floats = 0;
    size_t shared = 0;
  };
  static ScratchNeed scratch_need(std::span<Tensor* const> nodes) {
    ScratchNeed need;
    for (const Tensor* node : nodes) {
      need.floats = std::max(need.floats, scratch_floats(*node));
      need.shared = std::max(need.shared, shared_scratch_bytes(*node));
    }
    return need;
  }

  ThreadPool pool_;
  PackedWeightStore packed_;
  ExpertStore experts_;
  std::vector<Scratch> scratch_;
  std::vector<uint8_t> shared_;
  std::vector<Step> steps_;
  OpTable<CpuKernel> table_;
};

const BackendRegistration kCpu{"cpu", [](const BackendOptions& options) -> Result<std::unique_ptr<Backend>> {
                                 const int threads =
                                     options.threads > 0 ? options.threads : default_thread_count();
                                 return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(threads));
                               }};

}  // namespace
}  // namespace sinter::cpu
