// Each CPU op against a direct double-precision implementation of its definition.
#include <cmath>

#include "backend/cpu/cpu_ops.h"
#include "backend/op_test_support.h"
#include "core/half.h"
#include "tensor/convert.h"

namespace sinter {
namespace {

using testing::GraphRunner;
using testing::random_values;

TEST(CpuOps, MatMulOnEveryDequantizableWeightType) {
  const int64_t n_in = 512, n_out = 7, m = 3;
  const auto w_values = random_values(static_cast<size_t>(n_in * n_out), 1);
  const auto x_values = random_values(static_cast<size_t>(n_in * m), 2);
  for (const auto& traits : all_dtypes()) {
    if (traits.quantize == nullptr || traits.dequantize == nullptr) continue;
    if (traits.type == DType::Q8_K || traits.type == DType::Q8_1) continue;  // activation-only formats
    SCOPED_TRACE(std::string(traits.name));
    std::vector<uint8_t> blocks(row_bytes(traits.type, n_in) * n_out);
    ASSERT_TRUE(quantize_rows(traits.type, w_values.data(), n_in, n_out, blocks.data()));
    std::vector<float> w_dequantized(w_values.size());
    ASSERT_TRUE(dequantize_rows(traits.type, blocks.data(), n_in, n_out, w_dequantized.data()));
    Tensor w = make_persistent("w", traits.type, {n_in, n_out, 1, 1}, blocks.data());
    // Activations are rounded to the weight type's activation format before the products.
    std::vector<float> x_rounded = x_values;
    const DType act = cpu::activation_type(traits.type);
    std::vector<uint8_t> x_blocks(row_bytes(act, n_in) * m);
    if (act != DType::F32) {
      ASSERT_TRUE(quantize_rows(act, x_values.data(), n_in, m, x_blocks.data()));
      ASSERT_TRUE(dequantize_rows(act, x_blocks.data(), n_in, m, x_rounded.data()));
    }
    for (int threads : {1, 3}) {
      GraphRunner runner(threads);
      Tensor* x = runner.graph().input("x", DType::F32, {n_in, m, 1, 1});
      Tensor* y = runner.graph().mul_mat(&w, x);
      runner.prepare(y);
      GraphRunner::write(x, x_values);
      runner.run();
      const auto out = GraphRunner::read(y);
      for (int64_t c = 0; c < m; ++c) {
        for (int64_t r = 0; r < n_out; ++r) {
          double expected = 0;
          for (int64_t k = 0; k < n_in; ++k)
            expected += double{w_dequantized[r * n_in + k]} * x_rounded[c * n_in + k];
          if (act == DType::Q8_1) {
            // The weights' block minimum m multiplies Q8_1's s = d·Σq (d unrounded, s rounded to
            // F16, as in llama.cpp) rather than Σ of the rounded activations.
            const size_t wb = dtype_traits(traits.type).block_bytes;
            for (int64_t b = 0; b < n_in / 32; ++b) {
              const uint8_t* xb = x_blocks.data() + (c * (n_in / 32) + b) * 36;
              int sum = 0;
              for (int j = 0; j < 32; ++j) sum += static_cast<int8_t>(xb[4 + j]);
              const double block_min = load_f16(blocks.data() + (r * (n_in / 32) + b) * wb + 2);
              expected += block_min * (double{load_f16(xb + 2)} - double{load_f16(xb)} * sum);
            }
          }
          EXPECT_NEAR(out[c * n_out + r], expected, 1e-4 * (1 + std::fabs(expected)));
        }
      }
    }
  }
}

TEST(CpuOps, RmsNormAndNorm) {
  GraphRunner runner;
  Tensor* x = runner.graph().input("x", DType::F32, {37, 4, 1, 1});
  Tensor* a = runner.graph().rms_norm(x, 1e-5f);
  Tensor* b = runner.graph().norm(x, 1e-5f);
  Tensor* sum = runner.graph().add(a, b);
  runner.prepare(sum);
  const auto v = random_values(37 * 4, 3, 4.0f);
  GraphRunner::write(x, v);
  runner.run();
  const auto out = GraphRunner::read(sum);
  for (int r = 0; r < 4; ++r) {
    double sq = 0, mean = 0;
    for (int i = 0; i < 37; ++i) {
      sq += v[r * 37 + i] * v[r * 37 + i];
      mean += v[r * 37 + i];
    }
    mean /= 37;
    double var = 0;
    for (int i = 0; i < 37; ++i) var += (v[r * 37 + i] - mean) * (v[r * 37 + i] - mean);
    for (int i = 0; i < 37; ++i) {
      const double rms = v[r * 37 + i] / std::sqrt(sq / 37 + 1e-5);
      const double ln = (v[r * 37 + i] - mean) / std::sqrt(var / 37 + 1e-5);
      EXPECT_NEAR(out[r * 37 + i], rms + ln, 1e-5);
    }
  }
}

// Rows (3, 4), (0, 0) and (3e-7, −4e-7) with eps 1e-5: divided by 5, by eps (0 stays 0), by eps.
TEST(CpuOps, L2NormDividesByTheNormOrEps) {
  GraphRunner runner;
  Tensor* x = runner.graph().input("x", DType::F32, {2, 3, 1, 1});
  Tensor* y = runner.graph().l2_norm(x, 1e-5f);
  runner.prepare(y);
  GraphRunner::write(x, std::vector<float>{3, 4, 0, 0, 3e-7f, -4e-7f});
  runner.run();
  const auto out = GraphRunner::read(y);
  const std::vector<float> expected = {0.6f, 0.8f, 0, 0, 0.03f, -0.04f};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_FLOAT_EQ(out[i], expected[i]) << i;
}

TEST(CpuOps, ActivationsAndBroadcast) {
  GraphRunner runner;
  Tensor* x = runner.graph().input("x", DType::F32, {5, 3, 1, 1});
  Tensor* g = runner.graph().input("g", DType::F32, {5, 1, 1, 1});
  Tensor* y =
      runner.graph().add(runner.graph().swiglu(x, runner.graph().mul(x, g)), runner.graph().geglu(x, x));
  runner.prepare(y);
  const auto xv = random_values(15, 4, 3.0f);
  const auto gv = random_values(5, 5);
  GraphRunner::write(x, xv);
  GraphRunner::write(g, gv);
  runner.run();
  const auto out = GraphRunner::read(y);
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 5; ++i) {
      const double v = xv[r * 5 + i];
      const double silu = v / (1 + std::exp(-v));
      const double gelu = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      EXPECT_NEAR(out[r * 5 + i], silu * v * gv[i] + gelu * v, 1e-5);
    }
  }
}

// RoPE against its definition: pair (a, b) of head dimension pair k rotates by
// theta = pos * base^(-2k/n_rot) (/ freq factor, * freq scale), scaled by YaRN where enabled.
double expected_rope(const std::vector<float>& head, int i, int pos, const RopeParams& p,
                     const float* factors) {
  const int half = p.n_rot / 2;
  if (i >= p.n_rot) return head[i];
  const int k = p.neox ? (i % half) : i / 2;
  const int a = p.neox ? k : 2 * k;
  const int b = p.neox ? k + half : 2 * k + 1;
  const double theta_extrap =
      pos * std::pow(double{p.freq_base}, -2.0 * k / p.n_rot) / (factors ? factors[k] : 1.0);
  double theta = p.freq_scale * theta_extrap;
  double mscale = p.attn_factor;
  if (p.ext_factor != 0) {
    const auto corr = [&](double rot) {
      return p.n_rot * std::log(p.n_ctx_orig / (rot * 2 * M_PI)) / (2 * std::log(double{p.freq_base}));
    };
    const double low = std::max(0.0, std::floor(corr(p.beta_fast)));
    const double high = std::min(p.n_rot - 1.0, std::ceil(corr(p.beta_slow)));
    const double y = (k - low) / std::max(0.001, high - low);
    const double ramp = (1 - std::min(1.0, std::max(0.0, y))) * p.ext_factor;
    theta = theta * (1 - ramp) + theta_extrap * ramp;
    mscale *= 1 + 0.1 * std::log(1 / p.freq_scale);
  }
  const double c = std::cos(theta) * mscale, s = std::sin(theta) * mscale;
  return i == a ? head[a] * c - head[b] * s : head[a] * s + head[b] * c;
}

TEST(CpuOps, RopeNormalNeoxScaledAndPartial) {
  struct Case {
    RopeParams p;
    bool factors;
  };
  std::vector<Case> cases;
  RopeParams base;
  base.n_rot = 16;
  base.n_ctx_orig = 4096;
  cases.push_back({base, false});
  RopeParams neox = base;
  neox.neox = true;
  cases.push_back({neox, false});
  RopeParams partial = neox;
  partial.n_rot = 8;  // only the first 8 of 16 dimensions rotate
  cases.push_back({partial, false});
  RopeParams linear = base;
  linear.freq_scale = 0.25f;
  cases.push_back({linear, true});
  RopeParams yarn = neox;
  yarn.freq_scale = 0.25f;
  yarn.ext_factor = 1.0f;
  yarn.n_ctx_orig = 512;
  cases.push_back({yarn, false});
  for (const auto& c : cases) {
    GraphRunner runner;
    Tensor* x = runner.graph().input("x", DType::F32, {16, 3, 4, 1});
    Tensor* pos = runner.graph().input("pos", DType::I32, {4, 1, 1, 1});
    Tensor* factors = c.factors ? runner.graph().input("ff", DType::F32, {c.p.n_rot / 2, 1, 1, 1}) : nullptr;
    Tensor* y = runner.graph().rope(x, pos, c.p, factors);
    runner.prepare(y);
    const auto xv = random_values(16 * 12, 6);
    const std::vector<int32_t> positions = {0, 7, 300, 4095};
    std::vector<float> fv;
    for (int k = 0; k < c.p.n_rot / 2; ++k) fv.push_back(1.0f + static_cast<float>(k));
    GraphRunner::write(x, xv);
    GraphRunner::write(pos, positions);
    if (factors) GraphRunner::write(factors, fv);
    runner.run();
    const auto out = GraphRunner::read(y);
    for (int t = 0; t < 4; ++t) {
      for (int h = 0; h < 3; ++h) {
        std::vector<float> head(xv.begin() + (t * 3 + h) * 16, xv.begin() + (t * 3 + h + 1) * 16);
        for (int i = 0; i < 16; ++i) {
          EXPECT_NEAR(out[(t * 3 + h) * 16 + i],
                      expected_rope(head, i, positions[t], c.p, c.factors ? fv.data() : nullptr), 2e-3)
              << "t " << t << " h " << h << " i " << i;
        }
      }
    }
  }
}

// Attention over a cache written by store_rows, against softmax(q·k * scale) · v in double: a
// cache of rows of all KV heads per cell [head_dim·n_head_kv, cells], and the KV cache's layout,
// each head's rows together [head_dim, cells, n_head_kv].
TEST(CpuOps, AttentionOverCachedRowsWithGroupedHeads) {
  const int64_t head_dim = 8, n_head = 4, n_head_kv = 2, cells = 6, n_tokens = 3;
  for (auto [cache_type, planes] :
       {std::pair{DType::F32, false}, {DType::F16, false}, {DType::F32, true}, {DType::F16, true}}) {
    SCOPED_TRACE(std::string(dtype_name(cache_type)) + (planes ? " head planes" : " cell rows"));
    std::vector<uint8_t> k_bytes(row_bytes(cache_type, head_dim * n_head_kv) * cells);
    std::vector<uint8_t> v_bytes(k_bytes.size());
    const std::array<int64_t, kMaxDims> shape =
        planes ? std::array<int64_t, kMaxDims>{head_dim, cells, n_head_kv, 1}
               : std::array<int64_t, kMaxDims>{head_dim * n_head_kv, cells, 1, 1};
    Tensor k_cache = make_persistent("k", cache_type, shape, k_bytes.data());
    Tensor v_cache = make_persistent("v", cache_type, shape, v_bytes.data());
    GraphRunner runner;
    Graph& g = runner.graph();
    Tensor* q = g.input("q", DType::F32, {head_dim, n_head, n_tokens, 1});
    Tensor* k = g.input("k", DType::F32, {head_dim, n_head_kv, n_tokens, 1});
    Tensor* v = g.input("v", DType::F32, {head_dim * n_head_kv, n_tokens, 1, 1});
    Tensor* slots = g.input("slots", DType::I32, {n_tokens, 1, 1, 1});
    Tensor* index = g.input("index", DType::I32, {attention_index_elements(n_tokens, 3), 1, 1, 1});
    AttentionParams params;
    params.scale = 0.3f;
    Tensor* out =
        g.attention(q, g.store_rows(&k_cache, k, slots), g.store_rows(&v_cache, v, slots), index, params);
    runner.prepare(out);
    const auto qv = random_values(static_cast<size_t>(head_dim * n_head * n_tokens), 7, 2.0f);
    const auto kv = random_values(static_cast<size_t>(head_dim * n_head_kv * n_tokens), 8, 2.0f);
    const auto vv = random_values(static_cast<size_t>(head_dim * n_head_kv * n_tokens), 9);
    GraphRunner::write(q, qv);
    GraphRunner::write(k, kv);
    GraphRunner::write(v, vv);
    const std::vector<int32_t> slot_values = {4, 1, 5};  // scattered cells
    GraphRunner::write(slots, slot_values);
    // Token t sees the tokens 0..t (cells 4, 1, 5 in position order): begin, end, cells.
    GraphRunner::write(index, std::vector<int32_t>{0, 0, 0, 1, 2, 3, 4, 1, 5});
    runner.run();
    const auto result = GraphRunner::read(out);
    const bool f16_cache = cache_type == DType::F16;  // (clang 14 lambdas cannot capture bindings)
    const auto rounded = [&](float x) { return f16_cache ? f16_to_f32(f32_to_f16(x)) : x; };
    for (int t = 0; t < n_tokens; ++t) {
      for (int h = 0; h < n_head; ++h) {
        const int gk = h / 2;
        std::vector<double> scores;
        for (int j = 0; j <= t; ++j) {
          double s = 0;
          for (int i = 0; i < head_dim; ++i)
            s += qv[(t * n_head + h) * head_dim + i] * rounded(kv[(j * n_head_kv + gk) * head_dim + i]);
          scores.push_back(s * 0.3);
        }
        const double max = *std::max_element(scores.begin(), scores.end());
        double total = 0;
        for (double& s : scores) total += (s = std::exp(s - max));
        for (int i = 0; i < head_dim; ++i) {
          double expected = 0;
          for (int j = 0; j <= t; ++j)
            expected += scores[j] / total * rounded(vv[j * head_dim * n_head_kv + gk * head_dim + i]);
          EXPECT_NEAR(result[t * head_dim * n_head + h * head_dim + i], expected, 1e-5);
        }
      }
    }
  }
}

// Rotating cached keys by a delta equals rotating the originals at the shifted position.
TEST(CpuOps, RopeShiftComposesRotations) {
  RopeParams p;
  p.n_rot = 8;
  const int64_t head_dim = 8, heads = 2, cells = 3;
  const auto raw = random_values(static_cast<size_t>(head_dim * heads * cells), 10);
  const std::vector<int32_t> start = {5, 100, 2000};
  const std::vector<int32_t> delta = {-3, 0, -1000};
  // keys rotated at their start positions, stored as F32 in a "cache"
  std::vector<float> cache_values;
  {
    GraphRunner runner;
    Tensor* x = runner.graph().input("x", DType::F32, {head_dim, heads, cells, 1});
    Tensor* pos = runner.graph().input("pos", DType::I32, {cells, 1, 1, 1});
    Tensor* y = runner.graph().rope(x, pos, p);
    runner.prepare(y);
    GraphRunner::write(x, raw);
    GraphRunner::write(pos, start);
    runner.run();
    cache_values = GraphRunner::read(y);
  }
  // Both cache layouts: rows of all heads per cell [head_dim·heads, cells], and each head's rows
  // together [head_dim, cells, heads] (the KV cache's).
  for (bool planes : {false, true}) {
    SCOPED_TRACE(planes ? "head planes" : "cell rows");
    const auto at = [&](int c, int h) {
      return planes ? (h * cells + c) * head_dim : (c * heads + h) * head_dim;
    };
    std::vector<float> cached(cache_values.size());
    for (int c = 0; c < cells; ++c) {
      for (int h = 0; h < heads; ++h)
        std::copy_n(cache_values.begin() + (c * heads + h) * head_dim, head_dim, cached.begin() + at(c, h));
    }
    Tensor cache = make_persistent("k", DType::F32,
                                   planes ? std::array<int64_t, kMaxDims>{head_dim, cells, heads, 1}
                                          : std::array<int64_t, kMaxDims>{head_dim * heads, cells, 1, 1},
                                   cached.data());
    GraphRunner shift_runner;
    Tensor* deltas = shift_runner.graph().input("d", DType::I32, {cells, 1, 1, 1});
    shift_runner.prepare(shift_runner.graph().rope_shift(&cache, deltas, static_cast<int32_t>(head_dim), p));
    GraphRunner::write(deltas, delta);
    shift_runner.run();
    for (int c = 0; c < cells; ++c) {
      for (int h = 0; h < heads; ++h) {
        std::vector<float> head(raw.begin() + (c * heads + h) * head_dim,
                                raw.begin() + (c * heads + h + 1) * head_dim);
        for (int i = 0; i < head_dim; ++i) {
          EXPECT_NEAR(cached[static_cast<size_t>(at(c, h) + i)],
                      expected_rope(head, i, start[c] + delta[c], p, nullptr), 1e-3);
        }
      }
    }
  }
}

TEST(CpuOps, GetRowsFromQuantizedTable) {
  const int64_t n = 64, rows = 5;
  const auto values = random_values(static_cast<size_t>(n * rows), 11);
  std::vector<uint8_t> blocks(row_bytes(DType::Q8_0, n) * rows);
  ASSERT_TRUE(quantize_rows(DType::Q8_0, values.data(), n, rows, blocks.data()));
  std::vector<float> dequantized(values.size());
  ASSERT_TRUE(dequantize_rows(DType::Q8_0, blocks.data(), n, rows, dequantized.data()));
  Tensor table = make_persistent("t", DType::Q8_0, {n, rows, 1, 1}, blocks.data());
  GraphRunner runner;
  Tensor* ids = runner.graph().input("ids", DType::I32, {3, 1, 1, 1});
  Tensor* out = runner.graph().get_rows(&table, ids);
  runner.prepare(out);
  GraphRunner::write(ids, std::vector<int32_t>{4, 0, 4});
  runner.run();
  const auto result = GraphRunner::read(out);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(result[i], dequantized[4 * n + i]);
    EXPECT_EQ(result[n + i], dequantized[i]);
    EXPECT_EQ(result[2 * n + i], dequantized[4 * n + i]);
  }
}

TEST(CpuBackend, CapabilityMatrixAndUnsupportedTypes) {
  auto backend = create_backend("cpu", BackendOptions{1});
  ASSERT_TRUE(backend);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                  DType::Q8_0, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    EXPECT_NE((*backend)->path(Op::kMatMul, t), ExecutionPath::kUnsupported) << dtype_name(t);
  }
  EXPECT_FALSE(create_backend("tpu", {}));
}

}  // namespace
}  // namespace sinter

namespace sinter {
namespace {

TEST(CpuOps, PermuteThenCopyTransposes) {
  testing::GraphRunner runner;
  Tensor* x = runner.graph().input("x", DType::F32, {3, 4, 2, 1});
  Tensor* y = runner.graph().copy(runner.graph().permute(x, {1, 0, 2, 3}), DType::F16);
  runner.prepare(runner.graph().copy(y, DType::F32));
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i) values[static_cast<size_t>(i)] = static_cast<float>(i);
  testing::GraphRunner::write(x, values);
  runner.run();
  const auto out = testing::GraphRunner::read(runner.graph().outputs()[0]);
  ASSERT_EQ(out.size(), 24u);
  // out[z][i][j] = x[z][j][i]: shape [4, 3, 2]
  for (int z = 0; z < 2; ++z)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(out[static_cast<size_t>(z * 12 + i * 4 + j)],
                  values[static_cast<size_t>(z * 12 + j * 3 + i)]);
}

}  // namespace
}  // namespace sinter

namespace sinter {
namespace {

TEST(CpuOps, SoftmaxWithScaleAndMask) {
  testing::GraphRunner runner;
  Tensor* x = runner.graph().input("x", DType::F32, {4, 3, 1, 1});
  Tensor* mask = runner.graph().input("mask", DType::F32, {4, 3, 1, 1});
  Tensor* y = runner.graph().softmax(x, 0.5f, mask);
  runner.prepare(y);
  const std::vector<float> xv = {1, 2, 3, 4, -1, 0, 1, 2, 5, 5, 5, 5};
  const float inf = INFINITY;
  const std::vector<float> mv = {0, 0, 0, 0, 0, -inf, 0, -inf, -inf, -inf, -inf, -inf};
  testing::GraphRunner::write(x, xv);
  testing::GraphRunner::write(mask, mv);
  runner.run();
  const auto out = testing::GraphRunner::read(y);
  double total = 0;
  for (int i = 0; i < 4; ++i) total += std::exp(0.5 * xv[static_cast<size_t>(i)]);
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(out[static_cast<size_t>(i)], std::exp(0.5 * xv[static_cast<size_t>(i)]) / total, 1e-6);
  // Row 2: only columns 0 and 2 are visible.
  const double e0 = std::exp(-0.5), e2 = std::exp(0.5);
  EXPECT_NEAR(out[4], e0 / (e0 + e2), 1e-6);
  EXPECT_EQ(out[5], 0.0f);
  EXPECT_NEAR(out[6], e2 / (e0 + e2), 1e-6);
  EXPECT_EQ(out[7], 0.0f);
  for (int i = 8; i < 12; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], 0.0f);  // all masked
}

}  // namespace
}  // namespace sinter
