// Microbenchmarks of the CPU kernels, one thread:
//   quantize/<format>/<isa>        activation rounding of one 4096-value column
//   gemv/<type>/<isa>/<n_in>x<n_out>   one column (generation); counters: weight bytes/s
//   gemm/<type>/<isa>/<n_in>x<n_out>/<m> m columns (prompt processing); counters: FLOP/s
//   reference/<type>/<n_in>x<n_out>    the generic path (reference dot products on file rows)
//   attention/<isa>/f16/4x64/cells:N  one token's attention for one KV head over N cached cells
//   attention_cold/<isa>/f16/4x64/cells:1024  the same over cells read from memory
//   swiglu/<isa>/8192               silu(gate)·up over one feed-forward row
//   rows/<isa>/to_f16/1024           one token's K row of the 1 B llama written as F16
//   rows/<isa>/sum_squares/2048      RMS norm's sum over one hidden-state row
//   ssm_scan/<isa>/<shape>/T:N       the selective scan of one layer over N tokens of one
//                                  sequence (Mamba-2: d_state 128, head_dim 64, 32 heads; Mamba-1:
//                                  d_state 16, 5120 heads of one value); counters: state values/s
//   ssm_conv/<isa>/<k>x<d>/T:N       the causal convolution of one layer over N tokens
//   rwkv/<isa>/wkv6|wkv7/64x32/tokens:T  RWKV's WKV over 32 heads of 64 (a 1.5 B RWKV-7 layer) for
//                                  T tokens of one sequence: a layer's generation step (T = 1)
//                                  or prompt (T = 512); items are head-tokens
//   delta_net/<isa>/128x32/tokens:T  the gated delta rule over 32 value heads of 128 reading 16 key
//                                  heads (a Qwen 3.5-9B delta-net layer) for T tokens of one
//                                  sequence; items are head-tokens
//   memory/read/readers:N          a plain read of 1 GiB by N threads at once: the bandwidth,
//                                  the ceiling of generation speed (BENCHMARKS.md)
// The weights of one matrix fit in the L3 cache of most servers: gemv figures here are cache
// bandwidth, not DRAM bandwidth (`sinter bench` measures the model end to end). 2048x256 fits L2:
// the kernel's own rate, which must stay well above DRAM bandwidth for generation to stream.
//
//   SINTER_BENCH_TYPES=q4_0,q8_0 sinter_kernels_bench --benchmark_filter=gemv
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/activation_kernels.h"
#include "backend/cpu/attention_kernels.h"
#include "backend/cpu/delta_net_kernels.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/kernels_pack.h"
#include "backend/cpu/recurrent_kernels.h"
#include "backend/cpu/row_kernels.h"
#include "backend/cpu/rwkv_kernels.h"
#include "core/cpu_features.h"
#include "core/large_buffer.h"
#include "tensor/convert.h"
#include "tensor/vec_dot.h"

namespace sinter::cpu {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>((s >> 8) % 20001) / 10000.0f - 1.0f;
  }
  return v;
}

// Allocated as the engine allocates weights (LargeBuffer: huge pages from 2 MiB on), so that the
// cold-gemv and memory figures see the same TLB behaviour as generation.
struct AlignedBytes {
  explicit AlignedBytes(size_t n) : buffer(std::move(LargeBuffer::allocate(n)).value()) {}
  LargeBuffer buffer;
  uint8_t* get() const { return buffer.data(); }
};

struct Problem {
  DType type;
  int64_t n_in, n_out, m;
  std::vector<uint8_t> rows;
  std::unique_ptr<AlignedBytes> packed_bytes, columns;
  PackedMatrix packed;
  ActivationFormat format;
  ColumnLayout layout;
  std::vector<float> x, out;

  Problem(DType t, int64_t in, int64_t outs, int64_t cols, const KernelSet& k)
      : type(t), n_in(in), n_out(outs), m(cols) {
    rows.resize(row_bytes(t, in) * static_cast<size_t>(outs));
    const auto w = random_values(static_cast<size_t>(in * outs), 1);
    (void)quantize_rows(t, w.data(), in, outs, rows.data());
    packed.type = t;
    packed.n_in = in;
    packed.n_out = outs;
    packed.groups = (outs + kGroupRows - 1) / kGroupRows;
    packed.group_bytes = packed_group_bytes(t, in);
    if (packed.group_bytes > 0) {
      packed_bytes = std::make_unique<AlignedBytes>(packed.group_bytes * static_cast<size_t>(packed.groups));
      for (int64_t g = 0; g < packed.groups; ++g) {
        pack_group(t, in, rows.data(), row_bytes(t, in), outs, g,
                   packed_bytes->get() + g * packed.group_bytes);
      }
      packed.data = packed_bytes->get();
    }
    format = activation_format(t);
    layout = column_layout(format, in);
    x = random_values(static_cast<size_t>(in * cols), 2);
    columns = std::make_unique<AlignedBytes>(layout.bytes * static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c)
      k.quantize(x.data() + c * in, format, layout, columns->get() + c * layout.bytes);
    out.resize(static_cast<size_t>(outs * cols));
  }
};

void bench_quantize(benchmark::State& state, DType weight, IsaLevel level) {
  const KernelSet& k = kernels_for(level);
  const int64_t n = 4096;
  const ActivationFormat f = activation_format(weight);
  const ColumnLayout layout = column_layout(f, n);
  const auto x = random_values(n, 3);
  AlignedBytes column(layout.bytes);
  for (auto _ : state) {
    k.quantize(x.data(), f, layout, column.get());
    benchmark::DoNotOptimize(column.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void bench_gemm(benchmark::State& state, DType type, IsaLevel level, int64_t n_in, int64_t n_out, int64_t m) {
  const KernelSet& k = kernels_for(level);
  Problem p(type, n_in, n_out, m, k);
  const GemmFn gemm = gemm_kernel(k, type);
  for (auto _ : state) {
    gemm(p.packed, 0, p.packed.groups, p.columns->get(), p.layout, m, p.out.data(), n_out);
    benchmark::DoNotOptimize(p.out.data());
  }
  const double bytes = static_cast<double>(row_bytes(type, n_in)) * static_cast<double>(n_out);
  state.counters["weight_B/s"] =
      benchmark::Counter(bytes * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["FLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(n_in * n_out * m) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

// gemv over copies of one matrix that together exceed the last-level cache: each iteration reads
// the next copy from memory, as generation reads a model's weights.
void bench_gemv_cold(benchmark::State& state, DType type, IsaLevel level) {
  const KernelSet& k = kernels_for(level);
  Problem p(type, 2048, 8192, 1, k);
  const size_t bytes = p.packed.group_bytes * static_cast<size_t>(p.packed.groups);
  const size_t copies = std::max<size_t>(2, (size_t{768} << 20) / bytes);
  AlignedBytes all(bytes * copies);
  for (size_t i = 0; i < copies; ++i) std::memcpy(all.get() + i * bytes, p.packed.data, bytes);
  const GemmFn gemm = gemm_kernel(k, type);
  size_t next = 0;
  for (auto _ : state) {
    PackedMatrix m = p.packed;
    m.data = all.get() + next * bytes;
    next = (next + 1) % copies;
    gemm(m, 0, m.groups, p.columns->get(), p.layout, 1, p.out.data(), p.n_out);
    benchmark::DoNotOptimize(p.out.data());
  }
  state.counters["weight_B/s"] = benchmark::Counter(
      static_cast<double>(row_bytes(type, 2048)) * 8192.0 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

uint64_t sum_words(const uint64_t* words, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i < n; i += 4) {
    a += words[i];
    b += words[i + 1];
    c += words[i + 2];
    d += words[i + 3];
  }
  return a + b + c + d;
}

// 256-bit loads, four independent sums, and the gemv kernels' software prefetches: into L1 8 KB
// ahead, into L2 16 KB ahead (without them the hardware prefetchers alone reach ~20 % less; with
// the L1 ones only, 4 KB ahead, two readers got 20-23 GB/s where the kernels stream 25-28): one
// core's loads outrun its share of memory bandwidth.
__attribute__((target("avx2"))) uint64_t sum_words_avx2(const uint64_t* words, size_t n) {
  constexpr size_t kL1Ahead = 8192 / sizeof(uint64_t), kL2Ahead = 16384 / sizeof(uint64_t);
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (size_t i = 0; i < n; i += 16) {  // 128 bytes, two lines: each asked into L1 and L2 ahead
    // prefetching past the end is harmless (no fault)
    for (size_t line = 0; line < 16; line += 8) {
      _mm_prefetch(reinterpret_cast<const char*>(words + i + kL1Ahead + line), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(words + i + kL2Ahead + line), _MM_HINT_T1);
    }
    a = _mm256_add_epi64(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(words + i)));
    b = _mm256_add_epi64(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(words + i + 4)));
    c = _mm256_add_epi64(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(words + i + 8)));
    d = _mm256_add_epi64(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(words + i + 12)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// Reads a 1 GiB buffer with `readers` threads at once, each its own slice, and sums it, so that no
// kernel arithmetic limits the rate: what memory gives to that many cores. One timed region
// holds all the reads (the threads start together and the iteration ends when the last one is
// done; starting two threads costs ~0.1 ms of a read of ~40 ms). Google Benchmark's own
// Threads(2) timed each thread alone and reported 32–48 GB/s on a VM whose one core reads 13.
void bench_memory_read(benchmark::State& state) {
  constexpr size_t kBytes = size_t{1} << 30;
  static const AlignedBytes buffer = [] {
    AlignedBytes b(kBytes);
    std::memset(b.get(), 1, kBytes);  // touch every page before timing
    return b;
  }();
  const auto readers = static_cast<size_t>(state.range(0));
  const size_t n = kBytes / readers / sizeof(uint64_t);
  const bool avx2 = isa_level_supported(IsaLevel::kAvx2);
  const auto read = [&](size_t r) {
    const auto* words = reinterpret_cast<const uint64_t*>(buffer.get()) + r * n;
    benchmark::DoNotOptimize(avx2 ? sum_words_avx2(words, n) : sum_words(words, n));
  };
  std::vector<std::thread> others;
  for (auto _ : state) {
    for (size_t r = 1; r < readers; ++r) others.emplace_back(read, r);
    read(0);
    for (auto& t : others) t.join();
    others.clear();
  }
  state.counters["B/s"] = benchmark::Counter(
      static_cast<double>(n * readers * sizeof(uint64_t)) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void bench_reference(benchmark::State& state, DType type, int64_t n_in, int64_t n_out) {
  const DType act = vec_dot_activation_type(type);
  Problem p(type, n_in, n_out, 1, kernels_for(IsaLevel::kGeneric));
  std::vector<uint8_t> x(row_bytes(act, n_in));
  dtype_traits(act).quantize(p.x.data(), x.data(), n_in);
  const VecDotFn dot = reference_vec_dot(type);
  for (auto _ : state) {
    for (int64_t r = 0; r < n_out; ++r)
      p.out[r] = dot(n_in, p.rows.data() + r * row_bytes(type, n_in), x.data());
    benchmark::DoNotOptimize(p.out.data());
  }
  state.counters["weight_B/s"] = benchmark::Counter(
      static_cast<double>(row_bytes(type, n_in) * n_out) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

// One generated token's attention for one KV head of the 1 B llama (4 query heads of 64) over
// `cells` cells of an F16 cache laid out as the KV cache is (one head's rows together, 128 bytes
// apart) on huge pages. Cold: each iteration reads the next of copies of the cache that together
// exceed the last-level cache, as generation reads each layer's cache from memory.
void bench_attention(benchmark::State& state, IsaLevel level, int64_t cells, bool cold) {
  constexpr int64_t kHeadDim = 64, kHeads = 4;
  const size_t stride = row_bytes(DType::F16, kHeadDim);
  const size_t bytes = stride * static_cast<size_t>(cells);
  const size_t copies = cold ? std::max<size_t>(2, (size_t{256} << 20) / (2 * bytes)) : 1;
  AlignedBytes cache(2 * bytes * copies);  // copy c: keys at 2c·bytes, values after them
  const auto kv = random_values(static_cast<size_t>(kHeadDim * cells), 4);
  (void)quantize_rows(DType::F16, kv.data(), kHeadDim, cells, cache.get());
  std::memcpy(cache.get() + bytes, cache.get(), bytes);
  for (size_t c = 1; c < copies; ++c) std::memcpy(cache.get() + 2 * bytes * c, cache.get(), 2 * bytes);
  const auto queries = random_values(kHeadDim * kHeads, 5);
  std::vector<int32_t> order(static_cast<size_t>(cells));
  for (int32_t i = 0; i < static_cast<int32_t>(cells); ++i) order[static_cast<size_t>(i)] = i;
  std::vector<float> out(kHeadDim * kHeads), scratch(attention_scratch_floats(kHeads, kHeadDim, kHeadDim));
  AttentionGroupArgs a;
  a.queries = queries.data();
  a.heads = kHeads;
  a.head_dim = a.head_dim_v = kHeadDim;
  a.key_stride = a.value_stride = stride;
  a.cells = order.data();
  a.cell_count = static_cast<int32_t>(cells);
  a.scale = 0.125f;
  a.out = out.data();
  a.scratch = scratch.data();
  const AttendGroupFn attend = attend_group_for(level);
  size_t next = 0;
  for (auto _ : state) {
    a.keys = cache.get() + 2 * bytes * next;
    a.values = a.keys + bytes;
    next = (next + 1) % copies;
    attend(a);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["cell_heads/s"] =
      benchmark::Counter(static_cast<double>(cells * kHeads) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

// SwiGLU over one feed-forward row of the 1 B llama (8192 values): the element-wise op of
// generation with an exponential per value.
void bench_swiglu(benchmark::State& state, IsaLevel level) {
  constexpr int64_t kN = 8192;
  const auto gate = random_values(kN, 6), up = random_values(kN, 7);
  std::vector<float> out(kN);
  const SiluRowFn silu = activation_kernels_for(level).silu;
  for (auto _ : state) {
    silu(gate.data(), up.data(), out.data(), kN);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kN);
}

void bench_to_f16(benchmark::State& state, IsaLevel level) {
  constexpr int64_t kN = 1024;
  const auto in = random_values(kN, 8);
  std::vector<uint16_t> out(kN);
  const F16RowFn to_f16 = row_kernels_for(level).to_f16;
  for (auto _ : state) {
    to_f16(in.data(), out.data(), kN);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kN);
}

void bench_sum_squares(benchmark::State& state, IsaLevel level) {
  constexpr int64_t kN = 2048;
  const auto x = random_values(kN, 9);
  const SumSquaresFn sum_squares = row_kernels_for(level).sum_squares;
  for (auto _ : state) benchmark::DoNotOptimize(sum_squares(x.data(), kN));
  state.SetItemsProcessed(state.iterations() * kN);
}

// One sequence's tokens 0 .. n - 1 on slot 0: the kernels' SlotRuns.
struct OneSequence {
  std::vector<int32_t> tokens, begin, slot{0};
  explicit OneSequence(int64_t n) : begin{0, static_cast<int32_t>(n)} {
    for (int64_t t = 0; t < n; ++t) tokens.push_back(static_cast<int32_t>(t));
  }
  SlotRuns runs() const { return {tokens.data(), begin.data(), slot.data(), 1}; }
};

// One layer's selective scan over `n_tokens` tokens (recurrent_kernels.h), A per head (Mamba-2)
// or per state value (Mamba-1); the state's values per second.
void bench_ssm_scan(benchmark::State& state, IsaLevel level, int64_t d_state, int64_t head_dim,
                    int64_t n_head, bool per_value, int64_t n_tokens) {
  const int64_t rows = head_dim * n_head;
  const auto x = random_values(static_cast<size_t>(rows * n_tokens), 10);
  const auto bc = random_values(static_cast<size_t>(2 * d_state * n_tokens), 11);
  std::vector<float> dts(static_cast<size_t>(n_head * n_tokens), 0.1f), decay(dts.size(), 0.99f);
  std::vector<float> a(static_cast<size_t>((per_value ? d_state : 1) * n_head), -0.5f);
  std::vector<float> states = random_values(static_cast<size_t>(d_state * rows), 12);
  std::vector<float> y(static_cast<size_t>(rows * n_tokens));
  const SsmScanArgs args{.x = x.data(),
                         .x_stride = rows,
                         .dts = dts.data(),
                         .decay = per_value ? nullptr : decay.data(),
                         .a = a.data(),
                         .b = bc.data(),
                         .b_stride = 2 * d_state,
                         .c = bc.data() + d_state,
                         .c_stride = 2 * d_state,
                         .state = states.data(),
                         .y = y.data(),
                         .d_state = d_state,
                         .head_dim = head_dim,
                         .n_head = n_head,
                         .n_group = 1};
  const RecurrentKernels kernels = recurrent_kernels_for(level);
  const OneSequence sequence(n_tokens);
  std::vector<float> scratch(ssm_scan_kernel_floats(d_state));
  const int64_t tiles = ssm_scan_tiles_per_group(args, kernels.lanes);
  for (auto _ : state) {
    kernels.scan(args, sequence.runs(), 0, tiles, scratch.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["values/s"] = benchmark::Counter(
      static_cast<double>(d_state * rows * n_tokens) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void bench_ssm_conv(benchmark::State& state, IsaLevel level, int64_t k, int64_t channels, int64_t n_tokens) {
  const auto x = random_values(static_cast<size_t>(channels * n_tokens), 13);
  const auto weight = random_values(static_cast<size_t>(k * channels), 14);
  std::vector<float> states = random_values(static_cast<size_t>((k - 1) * channels), 15);
  std::vector<float> y(x.size());
  const SsmConvArgs args{x.data(), channels, weight.data(), states.data(), y.data(), k, channels};
  const RecurrentKernels kernels = recurrent_kernels_for(level);
  const OneSequence sequence(n_tokens);
  std::vector<float> scratch(ssm_conv_kernel_floats(k));
  for (auto _ : state) {
    kernels.conv(args, sequence.runs(), 0, channels, scratch.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * channels * n_tokens);
}

// One layer's WKV on one thread: 32 heads of 64, T tokens of one slot. The layer's state (512 KiB)
// stays in L2 between iterations; in a model of many layers a generation step finds it in L3 or
// memory.
void bench_wkv(benchmark::State& state, IsaLevel level, bool v7, int64_t tokens) {
  constexpr int64_t kN = 64, kHeads = 32;
  const int64_t row = kN * kHeads;
  const auto count = static_cast<size_t>(row * tokens);
  std::vector<std::vector<float>> inputs;
  for (uint32_t i = 0; i < 6; ++i) inputs.push_back(random_values(count, 20 + i));
  for (float& w : inputs[v7 ? 1 : 3]) w = 0.5f + 0.25f * w;  // decay factors in (0, 1)
  if (v7) {
    // a = −kk, b = kk·α with kk a unit vector per head and token (α = 1/2), as RWKV-7 passes them:
    // the state stays bounded over the tokens.
    for (size_t o = 0; o < count; o += kN) {
      float norm = 0.0f;
      for (size_t i = o; i < o + kN; ++i) norm += inputs[4][i] * inputs[4][i];
      norm = std::sqrt(norm);
      for (size_t i = o; i < o + kN; ++i) {
        inputs[5][i] = 0.5f * inputs[4][i] / norm;
        inputs[4][i] = -inputs[4][i] / norm;
      }
    }
  }
  std::vector<float> u = random_values(static_cast<size_t>(row), 30);
  std::vector<float> s = random_values(static_cast<size_t>(kN * kN * kHeads), 31);
  for (float& x : s) x *= 0.1f;
  std::vector<float> y(count);
  const RwkvKernels kernels = rwkv_kernels_for(level);
  for (auto _ : state) {
    for (int64_t h = 0; h < kHeads; ++h) {
      const int64_t o = h * kN;
      float* head_state = s.data() + h * kN * kN;
      if (v7) {
        kernels.wkv7(Wkv7Run{inputs[0].data() + o, inputs[1].data() + o, inputs[2].data() + o,
                             inputs[3].data() + o, inputs[4].data() + o, inputs[5].data() + o, head_state,
                             y.data() + o, kN, tokens, row});
      } else {
        kernels.wkv6(Wkv6Run{inputs[0].data() + o, inputs[1].data() + o, inputs[2].data() + o,
                             inputs[3].data() + o, u.data() + o, head_state, y.data() + o, kN, tokens, row});
      }
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kHeads * tokens);
}

// One delta-net layer on one thread: 32 value heads of 128 over 16 key heads, T tokens of one
// slot, inputs as the model gives them (q, k of unit length; decays e^g in (0.37, 1)). The layer's
// state (2 MiB) stays in L2 or L3 between iterations.
void bench_delta_net(benchmark::State& state, IsaLevel level, int64_t tokens) {
  constexpr int64_t kD = 128, kHeads = 32, kHeadsK = 16;
  std::vector<float> q = random_values(static_cast<size_t>(kD * kHeadsK * tokens), 40);
  std::vector<float> k = random_values(q.size(), 41);
  for (std::vector<float>* x : {&q, &k}) {
    for (size_t o = 0; o < x->size(); o += kD) {
      float norm = 0.0f;
      for (size_t i = o; i < o + kD; ++i) norm += (*x)[i] * (*x)[i];
      for (size_t i = o; i < o + kD; ++i) (*x)[i] /= std::sqrt(norm);
    }
  }
  const std::vector<float> v = random_values(static_cast<size_t>(kD * kHeads * tokens), 42);
  std::vector<float> g = random_values(static_cast<size_t>(kHeads * tokens), 43);
  for (float& x : g) x = 0.5f * (x - 1.0f);
  std::vector<float> beta = random_values(g.size(), 44);
  for (float& x : beta) x = 0.5f + 0.4f * x;
  std::vector<float> s = random_values(static_cast<size_t>(kD * kD * kHeads), 45);
  for (float& x : s) x *= 0.1f;
  std::vector<float> y(v.size());
  const DeltaNetKernels kernels = delta_net_kernels_for(level);
  for (auto _ : state) {
    for (int64_t h = 0; h < kHeads; ++h) {
      const int64_t hk = h % kHeadsK;
      kernels.run(DeltaNetRun{q.data() + hk * kD, k.data() + hk * kD, v.data() + h * kD, g.data() + h,
                              beta.data() + h, s.data() + h * kD * kD, y.data() + h * kD, kD, kD, tokens,
                              kD * kHeadsK, kD * kHeadsK, kD * kHeads, kHeads, kHeads, kD * kHeads, 0.088f});
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kHeads * tokens);
}

std::vector<DType> bench_types() {
  std::vector<DType> types;
  const char* env = std::getenv("SINTER_BENCH_TYPES");
  const std::string list =
      env != nullptr ? env
                     : "f32,f16,bf16,q4_0,q4_1,q5_0,q5_1,q8_0,iq4_nl,mxfp4,q2_K,q3_K,q4_K,q5_K,q6_K,iq4_xs";
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = list.find(',', start);
    const std::string name = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (auto t = dtype_from_name(name)) types.push_back(*t);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return types;
}

void register_all() {
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (!isa_level_supported(level)) continue;
    const std::string isa = isa_level_name(level);
    for (DType weight : {DType::Q4_0, DType::Q4_1, DType::Q4_K, DType::F16, DType::BF16}) {
      const std::string format(dtype_name(activation_format(weight).format));
      benchmark::RegisterBenchmark(
          ("quantize/" + format + "/" + isa + "/for_" + std::string(dtype_name(weight))).c_str(),
          bench_quantize, weight, level);
    }
    for (DType type : bench_types()) {
      if (gemm_kernel(kernels_for(level), type) == nullptr) continue;
      const std::string name(dtype_name(type));
      for (auto [n_in, n_out] :
           {std::pair<int64_t, int64_t>{2048, 256}, {2048, 2048}, {2048, 8192}, {8192, 2048}}) {
        const std::string shape = std::to_string(n_in) + "x" + std::to_string(n_out);
        benchmark::RegisterBenchmark(("gemv/" + name + "/" + isa + "/" + shape).c_str(), bench_gemm, type,
                                     level, n_in, n_out, int64_t{1});
      }
      benchmark::RegisterBenchmark(("gemv_cold/" + name + "/" + isa + "/2048x8192").c_str(), bench_gemv_cold,
                                   type, level);
      for (int64_t m : {8, 64, 512}) {
        benchmark::RegisterBenchmark(("gemm/" + name + "/" + isa + "/2048x2048/" + std::to_string(m)).c_str(),
                                     bench_gemm, type, level, int64_t{2048}, int64_t{2048}, m)
            ->Unit(benchmark::kMillisecond);
      }
      // The feed-forward shapes of a 1B llama at a 512-token prompt.
      for (auto [n_in, n_out] : {std::pair<int64_t, int64_t>{2048, 8192}, {8192, 2048}}) {
        const std::string shape = std::to_string(n_in) + "x" + std::to_string(n_out);
        benchmark::RegisterBenchmark(("gemm/" + name + "/" + isa + "/" + shape + "/512").c_str(), bench_gemm,
                                     type, level, n_in, n_out, int64_t{512})
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (!isa_level_supported(level) || attend_group_for(level) == nullptr) continue;
    const std::string isa = isa_level_name(level);
    for (int64_t cells : {256, 4096}) {
      benchmark::RegisterBenchmark(("attention/" + isa + "/f16/4x64/cells:" + std::to_string(cells)).c_str(),
                                   bench_attention, level, cells, false);
    }
    benchmark::RegisterBenchmark(("attention_cold/" + isa + "/f16/4x64/cells:1024").c_str(), bench_attention,
                                 level, int64_t{1024}, true);
  }
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (!isa_level_supported(level) || activation_kernels_for(level).silu == nullptr) continue;
    benchmark::RegisterBenchmark(("swiglu/" + std::string(isa_level_name(level)) + "/8192").c_str(),
                                 bench_swiglu, level);
  }
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (!isa_level_supported(level) || !row_kernels_for(level)) continue;
    const std::string isa = isa_level_name(level);
    benchmark::RegisterBenchmark(("rows/" + isa + "/to_f16/1024").c_str(), bench_to_f16, level);
    benchmark::RegisterBenchmark(("rows/" + isa + "/sum_squares/2048").c_str(), bench_sum_squares, level);
  }
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (!isa_level_supported(level) || !recurrent_kernels_for(level)) continue;
    const std::string isa = isa_level_name(level);
    for (int64_t tokens : {1, 512}) {
      const std::string t = "/T:" + std::to_string(tokens);
      benchmark::RegisterBenchmark(("ssm_scan/" + isa + "/mamba2/128x64x32" + t).c_str(), bench_ssm_scan,
                                   level, int64_t{128}, int64_t{64}, int64_t{32}, false, tokens);
      benchmark::RegisterBenchmark(("ssm_scan/" + isa + "/mamba1/16x1x5120" + t).c_str(), bench_ssm_scan,
                                   level, int64_t{16}, int64_t{1}, int64_t{5120}, true, tokens);
      benchmark::RegisterBenchmark(("ssm_conv/" + isa + "/4x5120" + t).c_str(), bench_ssm_conv, level,
                                   int64_t{4}, int64_t{5120}, tokens);
    }
  }
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (!isa_level_supported(level) || !rwkv_kernels_for(level)) continue;
    for (bool v7 : {false, true}) {
      for (int64_t tokens : {1, 512}) {
        benchmark::RegisterBenchmark(("rwkv/" + std::string(isa_level_name(level)) +
                                      (v7 ? "/wkv7" : "/wkv6") + "/64x32/tokens:" + std::to_string(tokens))
                                         .c_str(),
                                     bench_wkv, level, v7, tokens);
      }
    }
  }
  for (IsaLevel level : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (!isa_level_supported(level) || !delta_net_kernels_for(level)) continue;
    for (int64_t tokens : {1, 512}) {
      benchmark::RegisterBenchmark(
          ("delta_net/" + std::string(isa_level_name(level)) + "/128x32/tokens:" + std::to_string(tokens))
              .c_str(),
          bench_delta_net, level, tokens);
    }
  }
  benchmark::RegisterBenchmark("memory/read", bench_memory_read)
      ->ArgName("readers")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime();
  for (DType type : bench_types()) {
    if (reference_vec_dot(type) == nullptr) continue;
    benchmark::RegisterBenchmark(("reference/" + std::string(dtype_name(type)) + "/2048x256").c_str(),
                                 bench_reference, type, int64_t{2048}, int64_t{256});
  }
}

}  // namespace
}  // namespace sinter::cpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  sinter::cpu::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
