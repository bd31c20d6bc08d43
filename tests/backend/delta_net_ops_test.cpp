// The gated delta rule (Graph::gated_delta_net) on every backend: its values are llama.cpp's
// recurrence (S ← e^g·S; S += k ⊗ beta·(v − Sᵀk); y = Sᵀq·scale, computed here in double) with
// value heads reading query and key heads both ways, and a sequence's outputs and final state are
// the same bits however it is cut into passes and whatever other sequences share them.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/delta_net_test_inputs.h"
#include "backend/op_test_support.h"
#include "graph/planner.h"

namespace sinter::testing {
namespace {

// One op's persistent state [d_v, d_k, H, S] on a backend, and passes over batches that carry it.
class DeltaNetSession {
 public:
  DeltaNetSession(const std::string& backend, int threads, int64_t d_k, int64_t d_v, int64_t heads,
                  int64_t slots, const std::vector<float>& initial)
      : threads_(threads) {
    auto created = create_backend(backend, BackendOptions{threads});
    EXPECT_TRUE(created) << backend;
    backend_ = std::move(created).value();
    state_ = make_persistent("delta_state", DType::F32, {d_v, d_k, heads, slots}, nullptr);
    EXPECT_EQ(initial.size(), static_cast<size_t>(state_.elements()));
    auto buffer = backend_->allocate(BufferUsage::kCache, state_.bytes());
    EXPECT_TRUE(buffer);
    buffer_ = std::move(buffer).value();
    bind_tensor(state_, *buffer_, 0);
    tensor_set(state_, initial.data(), initial.size());
  }

  // The op over the batch's tokens (slots[t] each): y [d_v·H, T].
  std::vector<float> pass(const DeltaNetTokens& x, const std::vector<int32_t>& slots, bool grouped) {
    Graph g;
    Tensor* q = g.input("q", DType::F32, {x.d_k, x.heads_k, x.tokens, 1});
    Tensor* k = g.input("k", DType::F32, {x.d_k, x.heads_k, x.tokens, 1});
    Tensor* v = g.input("v", DType::F32, {x.d_v, x.heads, x.tokens, 1});
    // g per head and token, or (Kimi's KDA) per key index too.
    const bool per_key = x.g.size() == static_cast<size_t>(x.d_k * x.heads * x.tokens);
    Tensor* gate = per_key ? g.input("g", DType::F32, {x.d_k, x.heads, x.tokens, 1})
                           : g.input("g", DType::F32, {x.heads, x.tokens, 1, 1});
    Tensor* beta = g.input("beta", DType::F32, {x.heads, x.tokens, 1, 1});
    Tensor* slot_ids = g.input("slots", DType::I32, {x.tokens, 1, 1, 1});
    const DeltaNetParams params{1.0f / std::sqrt(static_cast<float>(x.d_k)), grouped};
    Tensor* y = g.gated_delta_net(q, k, v, gate, beta, &state_, slot_ids, params);
    g.mark_output(y);
    // A 512 × 512 × 8 product beside the op, so that the CPU shares the pass between its threads
    // (below 2e6 multiply-adds it runs a pass on one: cpu_backend.cpp).
    const std::vector<float> zeros(512 * 512, 0.0f);
    Tensor* ballast_w = nullptr;
    Tensor* ballast_x = nullptr;
    if (threads_ > 1) {
      ballast_w = g.input("ballast_w", DType::F32, {512, 512, 1, 1});
      ballast_x = g.input("ballast_x", DType::F32, {512, 8, 1, 1});
      g.mark_output(g.mul_mat(ballast_w, ballast_x));
    }
    g.finalize();
    const MemoryPlan plan = plan_memory(g);
    auto arena = backend_->allocate(BufferUsage::kCompute, plan.arena_bytes);
    EXPECT_TRUE(arena);
    bind_memory(g, plan, arena.value()->base(), arena.value().get());
    tensor_set(*q, x.q.data(), x.q.size());
    tensor_set(*k, x.k.data(), x.k.size());
    tensor_set(*v, x.v.data(), x.v.size());
    tensor_set(*gate, x.g.data(), x.g.size());
    tensor_set(*beta, x.beta.data(), x.beta.size());
    tensor_set(*slot_ids, slots.data(), slots.size());
    if (ballast_w != nullptr) {
      tensor_set(*ballast_w, zeros.data(), zeros.size());
      tensor_set(*ballast_x, zeros.data(), 512 * 8);
    }
    const Status status = backend_->compute(g);
    EXPECT_TRUE(status) << status.error().message();
    std::vector<float> out(static_cast<size_t>(y->elements()));
    tensor_get(*y, out.data(), 0, out.size() * sizeof(float));
    return out;
  }

  std::vector<float> state() const {
    std::vector<float> out(static_cast<size_t>(state_.elements()));
    tensor_get(state_, out.data(), 0, out.size() * sizeof(float));
    return out;
  }

 private:
  int threads_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Buffer> buffer_;
  Tensor state_;
};

struct Where {
  const char* backend;
  int threads;
};
constexpr Where kWhere[] = {{"reference", 1}, {"cpu", 1}, {"cpu", 2}};

// Tokens [first, first + count) of x.
DeltaNetTokens tokens_of(const DeltaNetTokens& x, int64_t first, int64_t count) {
  DeltaNetTokens part = x;
  part.tokens = count;
  const auto cut = [&](const std::vector<float>& all, int64_t per_token) {
    return std::vector<float>(all.begin() + first * per_token, all.begin() + (first + count) * per_token);
  };
  part.q = cut(x.q, x.d_k * x.heads_k);
  part.k = cut(x.k, x.d_k * x.heads_k);
  part.v = cut(x.v, x.d_v * x.heads);
  part.g = cut(x.g, static_cast<int64_t>(x.g.size()) / x.tokens);
  part.beta = cut(x.beta, x.heads);
  return part;
}

// llama.cpp's recurrence in double, one slot, from state S[h][i][j] (key i, value j): y [d_v·H, T].
std::vector<double> recurrence(const DeltaNetTokens& x, std::vector<double>& s, bool grouped) {
  const int64_t d_k = x.d_k, d_v = x.d_v, heads = x.heads;
  std::vector<double> y(static_cast<size_t>(d_v * heads * x.tokens));
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
  for (int64_t t = 0; t < x.tokens; ++t) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t hk = grouped ? h / (heads / x.heads_k) : h % x.heads_k;
      const float* q = x.q.data() + (t * x.heads_k + hk) * d_k;
      const float* k = x.k.data() + (t * x.heads_k + hk) * d_k;
      const float* v = x.v.data() + (t * heads + h) * d_v;
      double* S = s.data() + h * d_k * d_v;
      const double beta = x.beta[static_cast<size_t>(t * heads + h)];
      if (x.g.size() == static_cast<size_t>(d_k * heads * x.tokens)) {
        // Kimi's KDA: key row i decays by its own gate.
        for (int64_t i = 0; i < d_k; ++i) {
          const double e = std::exp(static_cast<double>(x.g[static_cast<size_t>((t * heads + h) * d_k + i)]));
          for (int64_t j = 0; j < d_v; ++j) S[i * d_v + j] *= e;
        }
      } else {
        const double e = std::exp(static_cast<double>(x.g[static_cast<size_t>(t * heads + h)]));
        for (int64_t i = 0; i < d_k * d_v; ++i) S[i] *= e;
      }
      for (int64_t j = 0; j < d_v; ++j) {
        double sk = 0.0;
        for (int64_t i = 0; i < d_k; ++i) sk += S[i * d_v + j] * k[i];
        const double d = (v[j] - sk) * beta;
        for (int64_t i = 0; i < d_k; ++i) S[i * d_v + j] += k[i] * d;
      }
      for (int64_t j = 0; j < d_v; ++j) {
        double out = 0.0;
        for (int64_t i = 0; i < d_k; ++i) out += S[i * d_v + j] * q[i];
        y[static_cast<size_t>((t * heads + h) * d_v + j)] = out * scale;
      }
    }
  }
  return y;
}

::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
  }
  return ::testing::AssertionSuccess();
}

// Six tokens through 4 value heads over 2 key heads, from a random state: both head mappings
// give llama.cpp's values (and differ from each other: the mapping is read).
TEST(DeltaNetOps, LlamaCppsRecurrenceWithEitherHeadMapping) {
  const int64_t d = 8, heads_k = 2, heads = 4, tokens = 6;
  const DeltaNetTokens x = delta_net_tokens(d, d, heads_k, heads, tokens, 17);
  std::mt19937 rng(3);
  const std::vector<float> initial = uniform_values(static_cast<size_t>(d * d * heads), rng, -0.5f, 0.5f);
  for (bool grouped : {false, true}) {
    std::vector<double> s(initial.begin(), initial.end());
    const std::vector<double> expected = recurrence(x, s, grouped);
    for (const Where& w : kWhere) {
      SCOPED_TRACE(std::string(w.backend) + " × " + std::to_string(w.threads) +
                   (grouped ? " grouped" : " tiled"));
      DeltaNetSession session(w.backend, w.threads, d, d, heads, 1, initial);
      const std::vector<float> y = session.pass(x, std::vector<int32_t>(tokens, 0), grouped);
      ASSERT_EQ(y.size(), expected.size());
      for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << "y " << i;
      const std::vector<float> state = session.state();
      for (size_t i = 0; i < state.size(); ++i) EXPECT_NEAR(state[i], s[i], 1e-5) << "state " << i;
    }
  }
  std::vector<double> tiled(initial.begin(), initial.end()), grouped(initial.begin(), initial.end());
  EXPECT_NE(recurrence(x, tiled, false), recurrence(x, grouped, true));
}

// A sequence's 11 tokens in one pass, in passes of 1, 4 and 7 tokens, and interleaved with another
// sequence: the same bits on every backend, the CPU's those of the reference.
TEST(DeltaNetOps, ResultsDoNotDependOnTheBatch) {
  const int64_t d_k = 33, d_v = 33, heads_k = 1, heads = 3, tokens = 11;
  const DeltaNetTokens x = delta_net_tokens(d_k, d_v, heads_k, heads, tokens, 29);
  const DeltaNetTokens other = delta_net_tokens(d_k, d_v, heads_k, heads, tokens, 31);
  std::mt19937 rng(5);
  const std::vector<float> initial =
      uniform_values(static_cast<size_t>(d_k * d_v * heads * 2), rng, -0.5f, 0.5f);
  std::vector<float> reference_y, reference_state;
  for (const Where& w : kWhere) {
    SCOPED_TRACE(std::string(w.backend) + " × " + std::to_string(w.threads));
    DeltaNetSession whole(w.backend, w.threads, d_k, d_v, heads, 2, initial);
    const std::vector<float> y = whole.pass(x, std::vector<int32_t>(tokens, 1), false);
    if (reference_y.empty()) {
      reference_y = y;
      reference_state = whole.state();
    }
    EXPECT_TRUE(same_bits(y, reference_y));
    EXPECT_TRUE(same_bits(whole.state(), reference_state));
    for (int64_t chunk : {1, 4, 7}) {
      DeltaNetSession parts(w.backend, w.threads, d_k, d_v, heads, 2, initial);
      std::vector<float> joined;
      for (int64_t first = 0; first < tokens; first += chunk) {
        const int64_t count = std::min(chunk, tokens - first);
        const std::vector<float> part =
            parts.pass(tokens_of(x, first, count), std::vector<int32_t>(count, 1), false);
        joined.insert(joined.end(), part.begin(), part.end());
      }
      EXPECT_TRUE(same_bits(joined, reference_y)) << "chunks of " << chunk;
      EXPECT_TRUE(same_bits(parts.state(), reference_state)) << "chunks of " << chunk;
    }
    // Interleaved with sequence `other` in slot 0, token by token.
    DeltaNetSession shared(w.backend, w.threads, d_k, d_v, heads, 2, initial);
    DeltaNetTokens both = x;
    both.tokens = 2 * tokens;
    both.q.clear(), both.k.clear(), both.v.clear(), both.g.clear(), both.beta.clear();
    std::vector<int32_t> slots;
    for (int64_t t = 0; t < tokens; ++t) {
      for (const DeltaNetTokens* source : {&other, &x}) {
        const DeltaNetTokens one = tokens_of(*source, t, 1);
        both.q.insert(both.q.end(), one.q.begin(), one.q.end());
        both.k.insert(both.k.end(), one.k.begin(), one.k.end());
        both.v.insert(both.v.end(), one.v.begin(), one.v.end());
        both.g.insert(both.g.end(), one.g.begin(), one.g.end());
        both.beta.insert(both.beta.end(), one.beta.begin(), one.beta.end());
        slots.push_back(source == &x ? 1 : 0);
      }
    }
    const std::vector<float> mixed = shared.pass(both, slots, false);
    std::vector<float> mine;
    const size_t row = static_cast<size_t>(d_v * heads);
    for (int64_t t = 0; t < tokens; ++t) {
      mine.insert(mine.end(), mixed.begin() + static_cast<int64_t>((2 * t + 1) * row),
                  mixed.begin() + static_cast<int64_t>((2 * t + 2) * row));
    }
    EXPECT_TRUE(same_bits(mine, reference_y)) << "beside another sequence";
    const std::vector<float> state = shared.state();
    const std::vector<float> slot1(state.begin() + static_cast<int64_t>(state.size() / 2), state.end());
    EXPECT_TRUE(same_bits(
        slot1, std::vector<float>(reference_state.begin() + static_cast<int64_t>(reference_state.size() / 2),
                                  reference_state.end())));
  }
}

// Kimi's KDA gate: a decay per key index. Its values are llama.cpp's recurrence with that decay on
// every backend, differ from a per-head gate's, and are the same bits however the sequence is cut
// into passes (the CPU's those of the reference, key heads of 33 filling no whole vector).
DeltaNetTokens with_key_gates(DeltaNetTokens x, uint32_t seed) {
  std::mt19937 rng(seed);
  x.g = uniform_values(static_cast<size_t>(x.d_k * x.heads * x.tokens), rng, -1.5f, 0.0f);
  return x;
}

TEST(DeltaNetOps, PerKeyGatesFollowLlamaCppsRecurrence) {
  const int64_t d = 8, heads = 4, tokens = 6;
  const DeltaNetTokens x = with_key_gates(delta_net_tokens(d, d, heads, heads, tokens, 19), 7);
  std::mt19937 rng(4);
  const std::vector<float> initial = uniform_values(static_cast<size_t>(d * d * heads), rng, -0.5f, 0.5f);
  std::vector<double> s(initial.begin(), initial.end());
  const std::vector<double> expected = recurrence(x, s, false);
  for (const Where& w : kWhere) {
    SCOPED_TRACE(std::string(w.backend) + " × " + std::to_string(w.threads));
    DeltaNetSession session(w.backend, w.threads, d, d, heads, 1, initial);
    const std::vector<float> y = session.pass(x, std::vector<int32_t>(tokens, 0), false);
    ASSERT_EQ(y.size(), expected.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << "y " << i;
    const std::vector<float> state = session.state();
    for (size_t i = 0; i < state.size(); ++i) EXPECT_NEAR(state[i], s[i], 1e-5) << "state " << i;
  }
  // The per-key gates are read: one gate per head (each head's first key's) gives other values.
  DeltaNetTokens per_head = x;
  per_head.g.clear();
  for (int64_t e = 0; e < heads * tokens; ++e) per_head.g.push_back(x.g[static_cast<size_t>(e * d)]);
  std::vector<double> s2(initial.begin(), initial.end());
  EXPECT_NE(recurrence(per_head, s2, false), expected);
}

TEST(DeltaNetOps, PerKeyGatesDoNotDependOnTheBatch) {
  const int64_t d = 33, heads = 2, tokens = 9;
  const DeltaNetTokens x = with_key_gates(delta_net_tokens(d, d, heads, heads, tokens, 23), 9);
  std::mt19937 rng(6);
  const std::vector<float> initial = uniform_values(static_cast<size_t>(d * d * heads), rng, -0.5f, 0.5f);
  std::vector<float> reference_y, reference_state;
  for (const Where& w : kWhere) {
    SCOPED_TRACE(std::string(w.backend) + " × " + std::to_string(w.threads));
    DeltaNetSession whole(w.backend, w.threads, d, d, heads, 1, initial);
    const std::vector<float> y = whole.pass(x, std::vector<int32_t>(tokens, 0), false);
    if (reference_y.empty()) {
      reference_y = y;
      reference_state = whole.state();
    }
    EXPECT_TRUE(same_bits(y, reference_y));
    EXPECT_TRUE(same_bits(whole.state(), reference_state));
    for (int64_t chunk : {1, 4}) {
      DeltaNetSession parts(w.backend, w.threads, d, d, heads, 1, initial);
      std::vector<float> joined;
      for (int64_t first = 0; first < tokens; first += chunk) {
        const int64_t count = std::min(chunk, tokens - first);
        const std::vector<float> part =
            parts.pass(tokens_of(x, first, count), std::vector<int32_t>(count, 0), false);
        joined.insert(joined.end(), part.begin(), part.end());
      }
      EXPECT_TRUE(same_bits(joined, reference_y)) << "chunks of " << chunk;
      EXPECT_TRUE(same_bits(parts.state(), reference_state)) << "chunks of " << chunk;
    }
  }
}

}  // namespace
}  // namespace sinter::testing
