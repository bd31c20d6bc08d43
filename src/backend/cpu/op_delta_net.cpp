// The gated delta rule (Graph::gated_delta_net) on the CPU.
//
// Threads split the value heads: a head's state matrices (one per slot) are its own, so no two
// threads touch the same state. Each thread walks the batch's tokens in order for each of its
// heads, handing the kernel (delta_net_kernels.h) runs of consecutive tokens of one slot; a
// slot's state passes from one of its runs to the next through the state tensor (slot_runs.h). A token's
// results are those of the reference's formula (graph.h) whatever the batch, the runs or the
// thread count.
#include <cstring>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/delta_net_kernels.h"
#include "backend/cpu/slot_runs.h"

namespace sinter::cpu {
namespace {

int64_t float_stride(const Tensor& t, int dim) { return static_cast<int64_t>(t.nb[dim] / sizeof(float)); }

// The first float of row (i1, i2) of t.
const float* at(const Tensor& t, int64_t i1, int64_t i2) {
  return reinterpret_cast<const float*>(t.row(i1, i2));
}

}  // namespace

// y [d_v·H, T] from q, k [d_k, H_k, T] (src 0, 1), v [d_v, H, T] (2), g [H, T] or [d_k, H, T] and
// beta [H, T] (3, 4), the
// state [d_v, d_k, H, S] (5) and the slots I32 [T] (6); params: scale, grouped heads.
void run_gated_delta_net(const Tensor& dst, const OpContext& ctx) {
  const Tensor& q = *dst.src[0];
  const Tensor& k = *dst.src[1];
  const Tensor& v = *dst.src[2];
  const Tensor& g = *dst.src[3];
  const Tensor& beta = *dst.src[4];
  const Tensor& state = *dst.src[5];
  const int64_t d_k = q.ne[0], n_head_k = q.ne[1], d_v = v.ne[0], n_head = v.ne[1], tokens = v.ne[2];
  const bool grouped = dst.params[1] != 0;
  const bool per_key_gate = dst.params[2] != 0;  // Kimi's KDA: g [d_k, H, T]
  const float scale = dst.param_float(0);
  const DeltaNetRunFn kernel = delta_net_kernels().run;
  const auto* slots = dst.src[6]->data_as<const int32_t>();
  const int32_t* snapshots = state_snapshots(*dst.src[6]);
  const int64_t y_stride = float_stride(dst, 1);
  const int64_t head_floats = d_k * d_v;
  const auto head_state = [&](int32_t slot, int64_t h) {
    return state.data_as<float>() + (int64_t{slot} * n_head + h) * head_floats;
  };
  for (int64_t h = ctx.thread.share_begin(n_head); h < ctx.thread.share_end(n_head); ++h) {
    const int64_t hk = grouped ? h / (n_head / n_head_k) : h % n_head_k;
    for_each_slot_run(
        slots, snapshots, tokens, [&](int64_t first, int64_t count, int32_t slot, int32_t snapshot) {
          kernel(DeltaNetRun{
              at(q, hk, first), at(k, hk, first), at(v, h, first),
              per_key_gate ? at(g, h, first) : reinterpret_cast<const float*>(g.row(first)) + h,
              reinterpret_cast<const float*>(beta.row(first)) + h, head_state(slot, h),
              dst.data_as<float>() + first * y_stride + h * d_v, d_k, d_v, count, float_stride(q, 2),
              float_stride(k, 2), float_stride(v, 2), float_stride(g, per_key_gate ? 2 : 1),
              float_stride(beta, 1), y_stride, scale, per_key_gate});
          if (snapshot >= 0)
            std::memcpy(head_state(snapshot, h), head_state(slot, h),
                        static_cast<size_t>(head_floats) * sizeof(float));
        });
  }
}

}  // namespace sinter::cpu
