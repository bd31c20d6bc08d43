// RWKV's WKV recurrences (Graph::rwkv_wkv6 / rwkv_wkv7) on the CPU.
//
// Threads split the heads: a head's state matrices (one per slot) are its own, so no two threads
// touch the same state. Each thread walks the batch's tokens in order for each of its heads,
// handing the kernel (rwkv_kernels.h) runs of consecutive tokens of one slot; a slot's state
// passes from one of its runs to the next through the state tensor (slot_runs.h). A token's results are those
// of the reference's formula (graph.h) whatever the batch, the runs or the thread count.
#include <cstring>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/rwkv_kernels.h"
#include "backend/cpu/slot_runs.h"

namespace sinter::cpu {
namespace {

// Head h's state matrix of slot s in a state tensor [n, n, heads, slots].
float* head_state(const Tensor& state, int64_t n, int64_t heads, int64_t h, int32_t s) {
  return state.data_as<float>() + (int64_t{s} * heads + h) * n * n;
}

// Keeps head h's state of `slot` in plane `snapshot` (when >= 0).
void keep_head_state(const Tensor& state, int64_t n, int64_t heads, int64_t h, int32_t slot,
                     int32_t snapshot) {
  if (snapshot < 0) return;
  std::memcpy(head_state(state, n, heads, h, snapshot), head_state(state, n, heads, h, slot),
              static_cast<size_t>(n * n) * sizeof(float));
}

}  // namespace

// y [N·H, T] from k, v, r, w [N, H, T] (src 0, 1, 2, 4), u [N, H] (src 3), state (src 5), slots
// (src 6).
void run_rwkv_wkv6(const Tensor& dst, const OpContext& ctx) {
  const Tensor& k = *dst.src[0];
  const int64_t n = k.ne[0], heads = k.ne[1], tokens = k.ne[2];
  const int64_t stride = n * heads;  // floats between consecutive tokens' rows
  const Wkv6RunFn kernel = rwkv_kernels().wkv6;
  const auto* slots = dst.src[6]->data_as<const int32_t>();
  const int32_t* snapshots = state_snapshots(*dst.src[6]);
  const auto at = [&dst](int source, int64_t offset) {
    return dst.src[source]->data_as<const float>() + offset;
  };
  for (int64_t h = ctx.thread.share_begin(heads); h < ctx.thread.share_end(heads); ++h) {
    for_each_slot_run(slots, snapshots, tokens,
                      [&](int64_t first, int64_t count, int32_t slot, int32_t snapshot) {
                        const int64_t o = first * stride + h * n;
                        kernel(Wkv6Run{at(0, o), at(1, o), at(2, o), at(4, o), at(3, h * n),
                                       head_state(*dst.src[5], n, heads, h, slot), dst.data_as<float>() + o,
                                       n, count, stride});
                        keep_head_state(*dst.src[5], n, heads, h, slot, snapshot);
                      });
  }
}

// y [N·H, T] from r, w, k, v, a, b [N, H, T] (src 0..5), state (src 6), slots (src 7).
void run_rwkv_wkv7(const Tensor& dst, const OpContext& ctx) {
  const Tensor& r = *dst.src[0];
  const int64_t n = r.ne[0], heads = r.ne[1], tokens = r.ne[2];
  const int64_t stride = n * heads;
  const Wkv7RunFn kernel = rwkv_kernels().wkv7;
  const auto* slots = dst.src[7]->data_as<const int32_t>();
  const int32_t* snapshots = state_snapshots(*dst.src[7]);
  const auto at = [&dst](int source, int64_t offset) {
    return dst.src[source]->data_as<const float>() + offset;
  };
  for (int64_t h = ctx.thread.share_begin(heads); h < ctx.thread.share_end(heads); ++h) {
    for_each_slot_run(slots, snapshots, tokens,
                      [&](int64_t first, int64_t count, int32_t slot, int32_t snapshot) {
                        const int64_t o = first * stride + h * n;
                        kernel(Wkv7Run{at(0, o), at(1, o), at(2, o), at(3, o), at(4, o), at(5, o),
                                       head_state(*dst.src[6], n, heads, h, slot), dst.data_as<float>() + o,
                                       n, count, stride});
                        keep_head_state(*dst.src[6], n, heads, h, slot, snapshot);
                      });
  }
}

}  // namespace sinter::cpu
