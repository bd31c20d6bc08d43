// The CPU backend: a persistent thread pool runs a whole graph in one parallel region, every
// thread taking its share of each node and meeting the others at a spinning barrier.
#include <algorithm>
#include <memory>

#include "backend/backend.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/kernels_pack.h"
#include "backend/cpu/row_kernels.h"
#include "core/thread_pool.h"

namespace sinter::cpu {
namespace {

// Below this many multiply-adds in the matrix products a pass runs on one thread (~0.1 ms of
// work on one core; a barrier costs 1-5 µs and a pass has a few hundred of them).
constexpr double kSingleThreadFlops = 2e6;

double matmul_flops(const Graph& graph) {
  double flops = 0;
  for (const Tensor* node : graph.nodes()) {
    if (node->op == Op::kMatMul) {
      flops += static_cast<double>(node->src[0]->ne[0]) * static_cast<double>(node->src[0]->ne[1]) *
               static_cast<double>(node->src[1]->rows());
    }
  }
  return flops;
}

bool has_dequantizer(DType type) { return dtype_traits(type).dequantize != nullptr; }

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) : pool_(threads), scratch_(static_cast<size_t>(pool_.size())) {}

  std::string_view name() const override { return "cpu"; }
  int threads() const override { return pool_.size(); }

  ExecutionPath path(Op op, DType weight_type) const override {
    switch (op) {
      case Op::kMatMul:
      case Op::kGetRows:
        // Repacked at load into 16-row groups where the CPU's kernels have a packed layout;
        // otherwise row by row on the file's blocks (never the whole matrix expanded).
        if (gemm_kernel(active_kernels(), weight_type) != nullptr && has_packed_layout(weight_type)) {
          return ExecutionPath::kRepacked;
        }
        return has_dequantizer(weight_type) ? ExecutionPath::kDirect : ExecutionPath::kUnsupported;
      default: return ExecutionPath::kUnsupported;
    }
  }

  Status prepare_weight(Tensor* weight) override { return packed_.pack(weight, active_kernels(), &pool_); }

  size_t scratch_bytes(const Graph& graph) const override {
    size_t floats = 0, shared = 0;
    for (const Tensor* node : graph.nodes()) {
      floats = std::max(floats, scratch_floats(*node));
      shared = std::max(shared, shared_scratch_bytes(*node));
    }
    return floats * sizeof(float) * static_cast<size_t>(pool_.size()) + shared;
  }

  Status compute(Graph& graph) override {
    SINTER_TRY(check_supported(graph));
    size_t floats = 0, shared = 0;
    for (const Tensor* node : graph.nodes()) {
      floats = std::max(floats, scratch_floats(*node));
      shared = std::max(shared, shared_scratch_bytes(*node));
    }
    for (auto& s : scratch_) {
      if (s.floats.size() < floats) s.floats.resize(floats);
    }
    if (shared_.size() < shared + 64) shared_.resize(shared + 64);
    uint8_t* shared_base = shared_.data() + (64 - reinterpret_cast<uintptr_t>(shared_.data()) % 64) % 64;
    plan_steps(graph);
    const auto run_all = [&](const ThreadContext& thread) {
      OpContext ctx{thread, scratch_[static_cast<size_t>(thread.index)], shared_base, graph, &packed_};
      for (const Step& step : steps_) {
        if (step.weights[0] != nullptr) {  // packed products, one or a run
          run_mul_mat_run(step.weights, step.nodes, step.count, ctx);
        } else if (!run_node(*step.nodes[0], ctx)) {
          continue;
        }
        thread.barrier();
      }
    };
    // A pass too small to share (a tiny model's generation step) runs on the calling thread:
    // a barrier per op would cost more than the work. Results do not depend on the thread count.
    if (pool_.size() > 1 && matmul_flops(graph) < kSingleThreadFlops) {
      run_all(ThreadContext{0, 1, nullptr});
    } else {
      pool_.run(run_all);
    }
    return ok_status();
  }

 private:
  // Returns false for nodes that compute nothing (leaves and views).
  static bool run_node(const Tensor& node, const OpContext& ctx) {
    switch (node.op) {
      case Op::kLeaf:
      case Op::kView: return false;
      case Op::kGetRows: run_get_rows(node, ctx); break;
      case Op::kMatMul: run_mul_mat(node, ctx); break;
      case Op::kRmsNorm: run_rms_norm(node, ctx); break;
      case Op::kNorm: run_norm(node, ctx); break;
      case Op::kAdd:
      case Op::kMul: run_binary(node, ctx); break;
      case Op::kScale:
      case Op::kSilu:
      case Op::kGelu: run_unary(node, ctx); break;
      case Op::kSwiGlu:
      case Op::kGeGlu: run_gated(node, ctx); break;
      case Op::kRope: run_rope(node, ctx); break;
      case Op::kRopeShift: run_rope_shift(node, ctx); break;
      case Op::kStoreRows: run_store_rows(node, ctx); break;
      case Op::kAttention: run_attention(node, ctx); break;
      case Op::kCopy: run_copy(node, ctx); break;
      case Op::kSoftmax: run_softmax(node, ctx); break;
    }
    return true;
  }

  // One step per node that computes, except that consecutive matrix products of packed weights
  // reading the same activations become one step (run_mul_mat_run runs every packed product). Rebuilt every
  // pass (a scan of the nodes; the vector keeps its capacity, so nothing is allocated per token).
  struct Step {
    const Tensor* nodes[kMaxMatMulRun];
    const PackedMatrix* weights[kMaxMatMulRun];  // packed weights of matrix products, else null
    int count;
  };
  void plan_steps(const Graph& graph) {
    steps_.clear();
    for (const Tensor* node : graph.nodes()) {
      if (node->op == Op::kLeaf || node->op == Op::kView) continue;
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
      steps_.push_back(Step{{node}, {weight}, 1});
    }
  }

  Status check_supported(const Graph& graph) const {
    for (const Tensor* node : graph.nodes()) {
      if ((node->op == Op::kMatMul || node->op == Op::kGetRows) &&
          path(node->op, node->src[0]->type) == ExecutionPath::kUnsupported) {
        return make_error(ErrorCode::kUnsupported, "cpu backend cannot run ", op_name(node->op), " on ",
                          dtype_name(node->src[0]->type), " weights (", node->src[0]->name, ")");
      }
      const bool converts = node->op == Op::kCopy || node->op == Op::kStoreRows || node->op == Op::kRopeShift;
      if (converts && row_writer(node->type) == nullptr) {
        return make_error(ErrorCode::kUnsupported, "cpu backend cannot write ", dtype_name(node->type), " (",
                          node->name, ")");
      }
    }
    return ok_status();
  }

  ThreadPool pool_;
  PackedWeightStore packed_;
  std::vector<Scratch> scratch_;
  std::vector<uint8_t> shared_;
  std::vector<Step> steps_;
};

const BackendRegistration kCpu{"cpu", [](const BackendOptions& options) -> Result<std::unique_ptr<Backend>> {
                                 const int threads =
                                     options.threads > 0 ? options.threads : default_thread_count();
                                 return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(threads));
                               }};

}  // namespace
}  // namespace sinter::cpu
