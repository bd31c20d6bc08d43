// The recurrent ops' exactness rule (graph.h), on every backend: a batch computed in one call
// equals the same tokens in chunks of 1, 3 and 7 with the state carried between calls, and
// sequences interleaved in one batch equal each sequence run alone, bit for bit, outputs and
// final states; and tiny cases computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/op_test_support.h"
#include "core/cpu_features.h"
#include "graph/planner.h"

namespace sinter {
namespace {

using testing::random_values;

// An input given per token: `dims` before the token dimension, and the values of all tokens,
// token after token.
struct TokenInput {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> values;
};
struct FixedInput {
  std::string name;
  std::array<int64_t, kMaxDims> ne;
  std::vector<float> values;
};

// One op over a state: builds it from the inputs (token inputs, then fixed ones, in order).
struct RecurrentCase {
  std::string name;
  std::array<int64_t, kMaxDims> state_ne;
  std::vector<TokenInput> token_inputs;
  std::vector<FixedInput> fixed;
  std::function<Tensor*(Graph&, const std::vector<Tensor*>& inputs, Tensor* state, Tensor* slots)> build;
  bool same_bits_on_every_backend;  // false where a SIMD level's e^x differs (recurrent_kernels.h)
};

int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// A backend and a state buffer that outlives its graphs: each run() is one call of the op on
// some of the case's tokens, with the state carried over from the previous call. On the CPU a
// product computed beside the op makes the pass use both threads (cpu_backend.cpp runs small
// passes on one).
class StatefulRun {
 public:
  StatefulRun(const std::string& backend, const RecurrentCase& c, const std::vector<float>& initial_state)
      : case_(c) {
    auto created = create_backend(backend, BackendOptions{2});
    EXPECT_TRUE(created);
    backend_ = std::move(created).value();
    state_ = make_persistent("state", DType::F32, c.state_ne, nullptr);
    auto buffer = backend_->allocate(BufferUsage::kCache, state_.bytes());
    EXPECT_TRUE(buffer);
    state_buffer_ = std::move(buffer).value();
    bind_tensor(state_, *state_buffer_, 0);
    EXPECT_EQ(initial_state.size(), static_cast<size_t>(state_.elements()));
    tensor_set(state_, initial_state.data(), initial_state.size());
    if (backend != "reference") {
      ballast_values_.assign(512 * 512, 0.01f);
      ballast_ = make_persistent("ballast", DType::F32, {512, 512, 1, 1}, ballast_values_.data());
      auto loaded = backend_->load_weight(&ballast_, Op::kMatMul);
      EXPECT_TRUE(loaded);
      ballast_buffer_ = std::move(loaded).value();
    }
  }

  // The op on the case's tokens `tokens` (in this order) with these slots: its output, token
  // after token.
  std::vector<float> run(const std::vector<int64_t>& tokens, const std::vector<int32_t>& slots) {
    Graph graph;
    const auto n = static_cast<int64_t>(tokens.size());
    std::vector<std::pair<Tensor*, std::vector<float>>> values;
    std::vector<Tensor*> inputs;
    for (const TokenInput& input : case_.token_inputs) {
      std::array<int64_t, kMaxDims> ne{1, 1, 1, 1};
      for (size_t i = 0; i < input.dims.size(); ++i) ne[i] = input.dims[i];
      ne[input.dims.size()] = n;
      const int64_t per_token = product(input.dims);
      std::vector<float> chosen;
      for (int64_t t : tokens) {
        chosen.insert(chosen.end(), input.values.begin() + t * per_token,
                      input.values.begin() + (t + 1) * per_token);
      }
      inputs.push_back(graph.input(input.name, DType::F32, ne));
      values.emplace_back(inputs.back(), std::move(chosen));
    }
    for (const FixedInput& input : case_.fixed) {
      inputs.push_back(graph.input(input.name, DType::F32, input.ne));
      values.emplace_back(inputs.back(), input.values);
    }
    Tensor* slot_input = graph.input("slots", DType::I32, {n, 1, 1, 1});
    Tensor* out = case_.build(graph, inputs, &state_, slot_input);
    graph.mark_output(out);
    Tensor* ballast_x = nullptr;
    if (ballast_buffer_ != nullptr) {
      ballast_x = graph.input("ballast_x", DType::F32, {512, 8, 1, 1});
      graph.mark_output(graph.mul_mat(&ballast_, ballast_x));
    }
    graph.finalize();
    const MemoryPlan plan = plan_memory(graph);
    auto arena = backend_->allocate(BufferUsage::kCompute, plan.arena_bytes);
    EXPECT_TRUE(arena);
    bind_memory(graph, plan, arena.value()->base(), arena.value().get());
    for (auto& [tensor, v] : values) tensor_set(*tensor, v.data(), v.size());
    tensor_set(*slot_input, slots.data(), slots.size());
    if (ballast_x != nullptr) {
      const std::vector<float> ones(512 * 8, 1.0f);
      tensor_set(*ballast_x, ones.data(), ones.size());
    }
    const Status status = backend_->compute(graph);
    EXPECT_TRUE(status) << status.error().message();
    std::vector<float> result(static_cast<size_t>(out->elements()));
    tensor_get(*out, result.data(), 0, result.size() * sizeof(float));
    return result;
  }

  std::vector<float> state() const {
    std::vector<float> v(static_cast<size_t>(state_.elements()));
    tensor_get(state_, v.data(), 0, v.size() * sizeof(float));
    return v;
  }

 private:
  const RecurrentCase& case_;
  std::unique_ptr<Backend> backend_;
  Tensor state_;
  std::unique_ptr<Buffer> state_buffer_;
  std::vector<float> ballast_values_;
  Tensor ballast_;
  std::unique_ptr<Buffer> ballast_buffer_;
};

::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " values vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      return ::testing::AssertionFailure() << "value " << i << ": " << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// 23 tokens of three sequences interleaved, on slots 2, 0 and 1 of 4 (slot 3 is in no batch).
constexpr int64_t kTokens = 23;
constexpr int64_t kSlots = 4;
int sequence_of(int64_t t) {
  constexpr int kPattern[] = {0, 1, 0, 2, 2, 1, 0, 0, 2};
  return kPattern[t % 9];
}
int32_t slot_of_sequence(int s) { return (s + 2) % 3; }

std::vector<float> random_state(const RecurrentCase& c, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : c.state_ne) n *= d;
  return random_values(static_cast<size_t>(n), seed, 2.0f);
}

// The op's cases with kTokens tokens and kSlots slots: ssm_conv (k 4 and 3), ssm_scan (Mamba-2
// with tiles that cross heads and a d_state that is no multiple of the vector width; Mamba-1),
// token_shift.
std::vector<RecurrentCase> recurrent_cases() {
  std::vector<RecurrentCase> cases;
  for (int64_t k : {4, 3}) {
    const int64_t d = 37;
    cases.push_back({"ssm_conv_k" + std::to_string(k),
                     {k - 1, d, kSlots, 1},
                     {{"x", {d}, random_values(static_cast<size_t>(d * kTokens), 1, 2.0f)}},
                     {{"weight", {k, d, 1, 1}, random_values(static_cast<size_t>(k * d), 2)}},
                     [](Graph& g, const std::vector<Tensor*>& in, Tensor* state, Tensor* slots) {
                       return g.ssm_conv(in[0], in[1], state, slots);
                     },
                     true});
  }
  struct ScanShape {
    const char* name;
    int64_t d_state, head_dim, n_head, n_group;
    bool per_value;
  };
  for (const ScanShape& s :
       {ScanShape{"ssm_scan_mamba2", 24, 8, 6, 2, false}, ScanShape{"ssm_scan_mamba1", 16, 1, 21, 1, true}}) {
    const int64_t rows = s.head_dim * s.n_head, a_rows = s.per_value ? s.d_state : 1;
    std::vector<float> dt = random_values(static_cast<size_t>(s.n_head * kTokens), 3, 4.0f);
    dt[5] = 21.0f;
    std::vector<float> a = random_values(static_cast<size_t>(a_rows * s.n_head), 4);
    for (float& v : a) v = -std::exp(v);
    const int64_t bc = s.d_state * s.n_group;
    cases.push_back(
        {s.name,
         {s.d_state, s.head_dim, s.n_head, kSlots},
         {{"x", {s.head_dim, s.n_head}, random_values(static_cast<size_t>(rows * kTokens), 5, 2.0f)},
          {"dt", {s.n_head}, dt},
          {"B", {s.d_state, s.n_group}, random_values(static_cast<size_t>(bc * kTokens), 6)},
          {"C", {s.d_state, s.n_group}, random_values(static_cast<size_t>(bc * kTokens), 7)}},
         {{"A", {a_rows, s.n_head, 1, 1}, a}},
         [](Graph& g, const std::vector<Tensor*>& in, Tensor* state, Tensor* slots) {
           return g.ssm_scan(in[0], in[1], in[4], in[2], in[3], state, slots);
         },
         !s.per_value || selected_isa_level() == IsaLevel::kGeneric});
  }
  cases.push_back({"token_shift",
                   {37, kSlots, 1, 1},
                   {{"x", {37}, random_values(37 * kTokens, 8, 2.0f)}},
                   {},
                   [](Graph& g, const std::vector<Tensor*>& in, Tensor* state, Tensor* slots) {
                     return g.token_shift(in[0], state, slots);
                   },
                   true});
  return cases;
}

struct BatchResult {
  std::vector<float> output;
  std::vector<float> state;
};

// All kTokens tokens in one call.
BatchResult whole_batch(const std::string& backend, const RecurrentCase& c,
                        const std::vector<float>& initial) {
  StatefulRun run(backend, c, initial);
  std::vector<int64_t> tokens;
  std::vector<int32_t> slots;
  for (int64_t t = 0; t < kTokens; ++t) {
    tokens.push_back(t);
    slots.push_back(slot_of_sequence(sequence_of(t)));
  }
  BatchResult result;
  result.output = run.run(tokens, slots);
  result.state = run.state();
  return result;
}

const std::vector<std::string> kBackends = {"cpu", "reference"};

TEST(RecurrentOps, ChunksEqualOneCall) {
  for (const RecurrentCase& c : recurrent_cases()) {
    const std::vector<float> initial = random_state(c, 9);
    for (const std::string& backend : kBackends) {
      SCOPED_TRACE(c.name + " on " + backend);
      const BatchResult whole = whole_batch(backend, c, initial);
      for (int64_t chunk : {1, 3, 7}) {
        SCOPED_TRACE("chunks of " + std::to_string(chunk));
        StatefulRun run(backend, c, initial);
        std::vector<float> output;
        for (int64_t first = 0; first < kTokens; first += chunk) {
          std::vector<int64_t> tokens;
          std::vector<int32_t> slots;
          for (int64_t t = first; t < std::min(kTokens, first + chunk); ++t) {
            tokens.push_back(t);
            slots.push_back(slot_of_sequence(sequence_of(t)));
          }
          const std::vector<float> part = run.run(tokens, slots);
          output.insert(output.end(), part.begin(), part.end());
        }
        EXPECT_TRUE(same_bits(output, whole.output)) << "outputs";
        EXPECT_TRUE(same_bits(run.state(), whole.state)) << "final states";
      }
    }
  }
}

TEST(RecurrentOps, InterleavedSequencesEqualEachAlone) {
  for (const RecurrentCase& c : recurrent_cases()) {
    const std::vector<float> initial = random_state(c, 10);
    for (const std::string& backend : kBackends) {
      SCOPED_TRACE(c.name + " on " + backend);
      const BatchResult whole = whole_batch(backend, c, initial);
      const size_t per_token = whole.output.size() / kTokens;
      StatefulRun run(backend, c, initial);
      std::vector<float> output(whole.output.size());
      for (int s = 0; s < 3; ++s) {
        std::vector<int64_t> tokens;
        for (int64_t t = 0; t < kTokens; ++t) {
          if (sequence_of(t) == s) tokens.push_back(t);
        }
        const std::vector<float> alone =
            run.run(tokens, std::vector<int32_t>(tokens.size(), slot_of_sequence(s)));
        for (size_t j = 0; j < tokens.size(); ++j) {
          std::copy(alone.begin() + j * per_token, alone.begin() + (j + 1) * per_token,
                    output.begin() + tokens[j] * per_token);
        }
      }
      EXPECT_TRUE(same_bits(output, whole.output)) << "outputs";
      EXPECT_TRUE(same_bits(run.state(), whole.state)) << "final states";
    }
    // The unused slot keeps its values (slot 3: the last plane).
    const BatchResult whole = whole_batch("cpu", c, initial);
    const size_t plane = initial.size() / kSlots;
    EXPECT_TRUE(same_bits(std::vector<float>(whole.state.end() - plane, whole.state.end()),
                          std::vector<float>(initial.end() - plane, initial.end())))
        << c.name;
  }
}

// Where the CPU computes each value as the reference does, the two give the same bits.
TEST(RecurrentOps, CpuEqualsReferenceBitForBit) {
  for (const RecurrentCase& c : recurrent_cases()) {
    if (!c.same_bits_on_every_backend) continue;
    SCOPED_TRACE(c.name);
    const std::vector<float> initial = random_state(c, 11);
    const BatchResult cpu = whole_batch("cpu", c, initial);
    const BatchResult reference = whole_batch("reference", c, initial);
    EXPECT_TRUE(same_bits(cpu.output, reference.output)) << "outputs";
    EXPECT_TRUE(same_bits(cpu.state, reference.state)) << "final states";
  }
}

// One call of a hand-checked case on a backend: its output and final state.
BatchResult run_once(const std::string& backend, const RecurrentCase& c, const std::vector<float>& initial,
                     const std::vector<int32_t>& slots) {
  StatefulRun run(backend, c, initial);
  std::vector<int64_t> tokens;
  for (size_t t = 0; t < slots.size(); ++t) tokens.push_back(static_cast<int64_t>(t));
  BatchResult result;
  result.output = run.run(tokens, slots);
  result.state = run.state();
  return result;
}

// 2 channels, k = 3, 3 tokens on slots 1, 0, 1 of 2. Token 0, channel 0: window (−1, 0, 1) ·
// weights (1, 2, 3) = 2, and so on; the window then moves on by x.
TEST(RecurrentOps, SsmConvByHand) {
  const RecurrentCase c{"ssm_conv",
                        {2, 2, 2, 1},
                        {{"x", {2}, {1, 2, 3, 4, 5, 6}}},
                        {{"weight", {3, 2, 1, 1}, {1, 2, 3, 0.5f, -1, 2}}},
                        [](Graph& g, const std::vector<Tensor*>& in, Tensor* state, Tensor* slots) {
                          return g.ssm_conv(in[0], in[1], state, slots);
                        },
                        true};
  // state [2, 2, 2]: slot 0: channel 0 (1, 2), channel 1 (3, 4); slot 1: (−1, 0), (0.5, 1).
  const std::vector<float> initial = {1, 2, 3, 4, -1, 0, 0.5f, 1};
  for (const std::string& backend : kBackends) {
    SCOPED_TRACE(backend);
    const BatchResult r = run_once(backend, c, initial, {1, 0, 1});
    EXPECT_EQ(r.output, (std::vector<float>{2, 3.25f, 14, 5.5f, 17, 10.5f}));
    EXPECT_EQ(r.state, (std::vector<float>{2, 3, 4, 4, 1, 5, 2, 6}));
  }
}

// d_state 2, 2 heads of one value, one group, 3 tokens on one slot: Mamba-2 (A per head) and
// Mamba-1 (A per state value). dt 0 gives softplus ln 2, dt 21 passes through. The expected
// values are the definition computed in double.
TEST(RecurrentOps, SsmScanByHand) {
  const auto scan = [](Graph& g, const std::vector<Tensor*>& in, Tensor* state, Tensor* slots) {
    return g.ssm_scan(in[0], in[1], in[4], in[2], in[3], state, slots);
  };
  const std::vector<TokenInput> inputs = {{"x", {1, 2}, {1, -1, 2, 0.5f, -1, 3}},
                                          {"dt", {2}, {0, 21, 1, -1, -2, 0.5f}},
                                          {"B", {2, 1}, {1, 0.5f, -1, 2, 0.5f, 0.5f}},
                                          {"C", {2, 1}, {1, 1, 0.5f, -1, 2, 1}}};
  const std::vector<float> initial = {0.5f, -0.5f, 1, 2};  // [d_state, 1, head]
  struct Expected {
    const char* name;
    FixedInput a;
    std::vector<double> output, state;
  };
  const Expected expected[] = {
      {"mamba2",
       {"A", {1, 2, 1, 1}, {-1, -0.5f}},
       {1.0397207708399179, -31.49991739065195, -6.465455404577366, -0.3916124257051461, 0.2793153316633088,
        -23.19805641849663},
       {-2.1534827574896, 4.5862808466425085, -9.667695127853214, -3.862666162790203}},
      {"mamba1",
       {"A", {2, 2, 1, 1}, {-1, -2, -0.25f, -0.5f}},
       {1.1647207708399179, -31.49469740870212, -6.4555090703084135, -1.120555441655556, -0.28266424223610365,
        -31.620739575792122},
       {-2.1534827574896, 4.024301272743096, -13.87903670650096, -3.862666162790203}},
  };
  for (const Expected& e : expected) {
    const RecurrentCase c{e.name, {2, 1, 2, 1}, inputs, {e.a}, scan, true};
    for (const std::string& backend : kBackends) {
      SCOPED_TRACE(std::string(e.name) + " on " + backend);
      const BatchResult r = run_once(backend, c, initial, {0, 0, 0});
      ASSERT_EQ(r.output.size(), e.output.size());
      for (size_t i = 0; i < e.output.size(); ++i)
        EXPECT_NEAR(r.output[i], e.output[i], 1e-5 * (1 + std::fabs(e.output[i]))) << i;
      for (size_t i = 0; i < e.state.size(); ++i)
        EXPECT_NEAR(r.state[i], e.state[i], 1e-5 * (1 + std::fabs(e.state[i]))) << i;
    }
  }
}

// 2 channels, 3 tokens on slots 1, 0, 1 of 2: each token gets its sequence's previous x.
TEST(RecurrentOps, TokenShiftByHand) {
  const RecurrentCase c{"token_shift",
                        {2, 2, 1, 1},
                        {{"x", {2}, {1, 2, 3, 4, 5, 6}}},
                        {},
                        [](Graph& g, const std::vector<Tensor*>& in, Tensor* state, Tensor* slots) {
                          return g.token_shift(in[0], state, slots);
                        },
                        true};
  for (const std::string& backend : kBackends) {
    SCOPED_TRACE(backend);
    const BatchResult r = run_once(backend, c, {10, 11, 20, 21}, {1, 0, 1});
    EXPECT_EQ(r.output, (std::vector<float>{20, 21, 10, 11, 1, 2}));
    EXPECT_EQ(r.state, (std::vector<float>{3, 4, 5, 6}));
  }
}

}  // namespace
}  // namespace sinter
