// The recurrent layers' ops (graph.h): Mamba's convolution, RWKV's token shift. Threads split the
// channels; every channel runs its slot's tokens in batch order, so each value is computed as the
// reference backend computes it, whatever the batch and the thread count.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/recurrent_kernels.h"

namespace sinter::cpu {
namespace {

// Ints of scratch group_by_slot needs.
size_t slot_runs_ints(int64_t n_tokens, int64_t n_slots) {
  return static_cast<size_t>(3 * n_tokens + n_slots + 2);
}

// The batch's tokens grouped by slot in increasing slot order, each group in batch order (a
// stable counting sort), built in `ints` (slot_runs_ints of them).
SlotRuns group_by_slot(const int32_t* slots, int64_t n_tokens, int64_t n_slots, int32_t* ints) {
  int32_t* first = ints;                  // [S + 1]: where slot s's tokens start
  int32_t* tokens = first + n_slots + 1;  // [T]
  int32_t* begin = tokens + n_tokens;     // [runs + 1]
  int32_t* slot = begin + n_tokens + 1;   // [runs]
  std::fill(first, first + n_slots + 1, 0);
  for (int64_t t = 0; t < n_tokens; ++t) {
    assert(slots[t] >= 0 && slots[t] < n_slots);  // validated before the graph runs
    ++first[slots[t] + 1];
  }
  int64_t runs = 0;
  for (int64_t s = 0; s < n_slots; ++s) {
    if (first[s + 1] > 0) {
      begin[runs] = first[s];
      slot[runs++] = static_cast<int32_t>(s);
    }
    first[s + 1] += first[s];
  }
  begin[runs] = static_cast<int32_t>(n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) tokens[first[slots[t]]++] = static_cast<int32_t>(t);
  return {tokens, begin, slot, runs};
}

// The slot runs in this thread's scratch, after the kernel's `kernel_floats`.
SlotRuns thread_slot_runs(const Tensor& slots, int64_t n_slots, size_t kernel_floats, const OpContext& ctx) {
  auto* ints = reinterpret_cast<int32_t*>(ctx.scratch.floats.data() + kernel_floats);
  return group_by_slot(slots.data_as<const int32_t>(), slots.ne[0], n_slots, ints);
}

// This thread's share of n values in whole cache lines of 16 (threads never write one line).
struct Range {
  int64_t begin, end;
};
Range line_share(const ThreadContext& thread, int64_t n) {
  const int64_t lines = (n + 15) / 16;
  return {std::min(n, thread.share_begin(lines) * 16), std::min(n, thread.share_end(lines) * 16)};
}

int64_t float_stride(const Tensor& t, int dim) { return static_cast<int64_t>(t.nb[dim] / sizeof(float)); }

}  // namespace

size_t recurrent_scratch_floats(const Tensor& node) {
  switch (node.op) {
    case Op::kSsmConv:
      return ssm_conv_kernel_floats(node.src[1]->ne[0]) + slot_runs_ints(node.ne[1], node.src[2]->ne[2]);
    default: return 0;
  }
}

// y [d, T]; x [d, T], weight [k, d], state [k - 1, d, S].
void run_ssm_conv(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const Tensor& weight = *dst.src[1];
  const Tensor& state = *dst.src[2];
  const SsmConvArgs args{x.data_as<const float>(),
                         float_stride(x, 1),
                         weight.data_as<const float>(),
                         state.data_as<float>(),
                         dst.data_as<float>(),
                         weight.ne[0],
                         x.ne[0]};
  const size_t kernel_floats = ssm_conv_kernel_floats(args.k);
  const SlotRuns runs = thread_slot_runs(*dst.src[3], state.ne[2], kernel_floats, ctx);
  const Range channels = line_share(ctx.thread, args.channels);
  if (channels.begin < channels.end)
    recurrent_kernels().conv(args, runs, channels.begin, channels.end, ctx.scratch.floats.data());
}

// y [d, T]; x [d, T], state [d, S]: per token in batch order, y gets the slot's row and the row
// gets x (threads over whole cache lines of the channels).
void run_token_shift(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const Tensor& state = *dst.src[1];
  const auto* slots = dst.src[2]->data_as<const int32_t>();
  const Range channels = line_share(ctx.thread, x.ne[0]);
  const auto bytes = static_cast<size_t>(channels.end - channels.begin) * sizeof(float);
  if (bytes == 0) return;
  for (int64_t t = 0; t < x.ne[1]; ++t) {
    assert(slots[t] >= 0 && slots[t] < state.ne[1]);  // validated before the graph runs
    float* row = reinterpret_cast<float*>(state.row(slots[t])) + channels.begin;
    std::memcpy(reinterpret_cast<float*>(dst.row(t)) + channels.begin, row, bytes);
    std::memcpy(row, reinterpret_cast<const float*>(x.row(t)) + channels.begin, bytes);
  }
}

}  // namespace sinter::cpu
