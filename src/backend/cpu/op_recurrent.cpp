// The recurrent layers' ops (graph.h): Mamba's convolution and selective scan, RWKV's token
// shift. Threads split the channels (the scan: tiles of state rows); every channel or row runs
// its slot's tokens in batch order (with snapshots, graph.h, in runs that end at each kept
// token, after which the thread copies its part of the state), so each value is computed as the reference
// backend computes it, whatever the batch and the thread count (recurrent_kernels.h says where the SIMD scan
// of Mamba-1 differs).
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
  return static_cast<size_t>(4 * n_tokens + n_slots + 2);
}

// The batch's tokens grouped by slot in increasing slot order, each group in batch order (a
// stable counting sort), built in `ints` (slot_runs_ints of them). With snapshots, a group is cut
// into runs after each token whose state is kept: snapshot[j] is the plane that receives run j's
// final state (−1: none).
struct GroupedRuns {
  SlotRuns runs;
  const int32_t* snapshot;  // [runs.count], or null without snapshots
};
GroupedRuns group_by_slot(const int32_t* slots, const int32_t* snapshots, int64_t n_tokens, int64_t n_slots,
                          int32_t* ints) {
  int32_t* first = ints;                  // [S + 1]: where slot s's tokens start
  int32_t* tokens = first + n_slots + 1;  // [T]
  int32_t* begin = tokens + n_tokens;     // [runs + 1]
  int32_t* slot = begin + n_tokens + 1;   // [runs]
  int32_t* snapshot = slot + n_tokens;    // [runs]
  std::fill(first, first + n_slots + 1, 0);
  for (int64_t t = 0; t < n_tokens; ++t) {
    assert(slots[t] >= 0 && slots[t] < n_slots);  // validated before the graph runs
    ++first[slots[t] + 1];
  }
  for (int64_t s = 0; s < n_slots; ++s) first[s + 1] += first[s];
  for (int64_t t = 0; t < n_tokens; ++t) tokens[first[slots[t]]++] = static_cast<int32_t>(t);
  // first[s] is now where slot s's tokens end.
  int64_t runs = 0;
  for (int64_t s = 0, at = 0; s < n_slots; ++s) {
    for (; at < first[s]; ++runs) {
      begin[runs] = static_cast<int32_t>(at);
      slot[runs] = static_cast<int32_t>(s);
      snapshot[runs] = -1;
      while (at < first[s]) {
        const int32_t kept = snapshots != nullptr ? snapshots[tokens[at]] : -1;
        ++at;
        if (kept >= 0) {
          snapshot[runs] = kept;
          break;
        }
      }
    }
  }
  begin[runs] = static_cast<int32_t>(n_tokens);
  return {{tokens, begin, slot, runs}, snapshots != nullptr ? snapshot : nullptr};
}

// The slot runs in this thread's scratch, after the kernel's `kernel_floats`.
GroupedRuns thread_slot_runs(const Tensor& slots, int64_t n_slots, size_t kernel_floats,
                             const OpContext& ctx) {
  auto* ints = reinterpret_cast<int32_t*>(ctx.scratch.floats.data() + kernel_floats);
  return group_by_slot(slots.data_as<const int32_t>(), state_snapshots(slots), slots.ne[0], n_slots, ints);
}

// Runs the kernel over the runs: all at once, or, with snapshots, run by run, copying this
// thread's part of the state — `floats` floats from `offset` of a slot's plane of `plane` floats
// — to the run's snapshot plane after each run that has one.
template <class Kernel>
void run_with_snapshots(const GroupedRuns& grouped, float* state, int64_t plane, int64_t offset,
                        int64_t floats, Kernel&& kernel) {
  if (grouped.snapshot == nullptr) {
    kernel(grouped.runs);
    return;
  }
  const SlotRuns& runs = grouped.runs;
  for (int64_t r = 0; r < runs.count; ++r) {
    kernel(SlotRuns{runs.tokens, runs.begin + r, runs.slot + r, 1});
    if (grouped.snapshot[r] < 0) continue;
    std::memcpy(state + grouped.snapshot[r] * plane + offset, state + runs.slot[r] * plane + offset,
                static_cast<size_t>(floats) * sizeof(float));
  }
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

// The scan's per-(token, head) values in the shared buffer: softplus(dt) [T, H], then (A [1, H])
// the decay e^(dts·A[h]) [T, H], computed as the reference computes them (std::log1p, std::exp).
float* scan_dts(const OpContext& ctx) { return reinterpret_cast<float*>(ctx.shared); }

}  // namespace

size_t recurrent_scratch_floats(const Tensor& node) {
  switch (node.op) {
    case Op::kSsmConv:
      return ssm_conv_kernel_floats(node.src[1]->ne[0]) + slot_runs_ints(node.ne[1], node.src[2]->ne[2]);
    case Op::kSsmScan:
      return ssm_scan_kernel_floats(node.src[3]->ne[0]) + slot_runs_ints(node.ne[2], node.src[5]->ne[3]);
    default: return 0;
  }
}

size_t recurrent_shared_bytes(const Tensor& node) {
  if (node.op != Op::kSsmScan) return 0;
  const bool decay = node.src[2]->ne[0] == 1;
  return static_cast<size_t>(node.ne[1] * node.ne[2]) * sizeof(float) * (decay ? 2 : 1);
}

// y [d, T]; x [d, T], weight [k, d], state [k - 1, d, S].
void run_ssm_conv(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const Tensor& weight = *dst.src[1];
  const Tensor& state = *dst.src[2];
  const SsmConvArgs args{.x = x.data_as<const float>(),
                         .x_stride = float_stride(x, 1),
                         .weight = weight.data_as<const float>(),
                         .state = state.data_as<float>(),
                         .y = dst.data_as<float>(),
                         .k = weight.ne[0],
                         .channels = x.ne[0]};
  const size_t kernel_floats = ssm_conv_kernel_floats(args.k);
  const GroupedRuns runs = thread_slot_runs(*dst.src[3], state.ne[2], kernel_floats, ctx);
  const Range channels = line_share(ctx.thread, args.channels);
  if (channels.begin >= channels.end) return;
  // A channel's k − 1 taps are contiguous: this thread's channels are one range of each plane.
  const int64_t taps = args.k - 1;
  run_with_snapshots(runs, args.state, args.channels * taps, channels.begin * taps,
                     (channels.end - channels.begin) * taps, [&](const SlotRuns& part) {
                       recurrent_kernels().conv(args, part, channels.begin, channels.end,
                                                ctx.scratch.floats.data());
                     });
}

// y [head_dim, H, T]; x [head_dim, H, T], dt [H, T], A [d_state or 1, H], B and C
// [d_state, G, T], state [d_state, head_dim, H, S]. First the threads fill the shared
// softplus(dt) (and decay) table, then each runs its share of the tiles.
void run_ssm_scan(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const Tensor& dt = *dst.src[1];
  const Tensor& a = *dst.src[2];
  const Tensor& b = *dst.src[3];
  const Tensor& c = *dst.src[4];
  const Tensor& state = *dst.src[5];
  const int64_t n_head = x.ne[1], n_tokens = x.ne[2];
  const bool per_head = a.ne[0] == 1;
  float* dts = scan_dts(ctx);
  float* decay = per_head ? dts + n_head * n_tokens : nullptr;
  const auto* a_values = a.data_as<const float>();
  for (int64_t e = ctx.thread.share_begin(n_head * n_tokens); e < ctx.thread.share_end(n_head * n_tokens);
       ++e) {
    const int64_t t = e / n_head, h = e % n_head;
    const float raw = dt.data_as<const float>()[t * float_stride(dt, 1) + h];
    const float softplus = raw > 20.0f ? raw : std::log1p(std::exp(raw));
    dts[e] = softplus;
    if (decay != nullptr) decay[e] = std::exp(softplus * a_values[h]);
  }
  ctx.thread.barrier();
  const SsmScanArgs args{.x = x.data_as<const float>(),
                         .x_stride = float_stride(x, 2),
                         .dts = dts,
                         .decay = decay,
                         .a = a_values,
                         .b = b.data_as<const float>(),
                         .b_stride = float_stride(b, 2),
                         .c = c.data_as<const float>(),
                         .c_stride = float_stride(c, 2),
                         .state = state.data_as<float>(),
                         .y = dst.data_as<float>(),
                         .d_state = b.ne[0],
                         .head_dim = x.ne[0],
                         .n_head = n_head,
                         .n_group = b.ne[1]};
  const RecurrentKernels& kernels = recurrent_kernels();
  const size_t kernel_floats = ssm_scan_kernel_floats(args.d_state);
  const GroupedRuns runs = thread_slot_runs(*dst.src[6], state.ne[3], kernel_floats, ctx);
  const int64_t tiles_per_group = ssm_scan_tiles_per_group(args, kernels.lanes);
  const int64_t tiles = args.n_group * tiles_per_group;
  const int64_t begin = ctx.thread.share_begin(tiles), end = ctx.thread.share_end(tiles);
  if (begin >= end) return;
  // Tiles are consecutive rows of a group (recurrent_kernels.h), so this thread's tiles are one
  // range of rows [first_row, end_row) of each plane.
  const int64_t rows_per_group = args.head_dim * n_head / args.n_group;
  const auto tile_row = [&](int64_t tile) {
    const int64_t group = tile / tiles_per_group;
    return group * rows_per_group + (tile - group * tiles_per_group) * kernels.lanes;
  };
  const int64_t last_group = (end - 1) / tiles_per_group;
  const int64_t first_row = tile_row(begin);
  const int64_t end_row = std::min(tile_row(end - 1) + kernels.lanes, (last_group + 1) * rows_per_group);
  run_with_snapshots(runs, args.state, args.head_dim * n_head * args.d_state, first_row * args.d_state,
                     (end_row - first_row) * args.d_state, [&](const SlotRuns& part) {
                       kernels.scan(args, part, begin, end, ctx.scratch.floats.data());
                     });
}

// y [d, T]; x [d, T], state [d, S]: per token in batch order, y gets the slot's row and the row
// gets x (threads over whole cache lines of the channels).
void run_token_shift(const Tensor& dst, const OpContext& ctx) {
  const Tensor& x = *dst.src[0];
  const Tensor& state = *dst.src[1];
  const auto* slots = dst.src[2]->data_as<const int32_t>();
  const int32_t* snapshots = state_snapshots(*dst.src[2]);
  const Range channels = line_share(ctx.thread, x.ne[0]);
  const auto bytes = static_cast<size_t>(channels.end - channels.begin) * sizeof(float);
  if (bytes == 0) return;
  for (int64_t t = 0; t < x.ne[1]; ++t) {
    assert(slots[t] >= 0 && slots[t] < state.ne[1]);  // validated before the graph runs
    float* row = reinterpret_cast<float*>(state.row(slots[t])) + channels.begin;
    std::memcpy(reinterpret_cast<float*>(dst.row(t)) + channels.begin, row, bytes);
    std::memcpy(row, reinterpret_cast<const float*>(x.row(t)) + channels.begin, bytes);
    if (snapshots != nullptr && snapshots[t] >= 0)
      std::memcpy(reinterpret_cast<float*>(state.row(snapshots[t])) + channels.begin, row, bytes);
  }
}

}  // namespace sinter::cpu
