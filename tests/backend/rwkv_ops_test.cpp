// The exactness rule for RWKV's WKV ops (Graph::rwkv_wkv6 / rwkv_wkv7), on every backend: a
// token's output and the state it leaves are the same bits however its sequence is cut into
// batches and whatever else shares the batch; the CPU gives the reference's bits; and a tiny case
// computed by hand (dyadic values, so every operation is exact).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/op_test_support.h"
#include "backend/rwkv_test_inputs.h"
#include "graph/planner.h"

namespace sinter::testing {
namespace {

// One WKV op's persistent state [N, N, H, S] on a backend, and passes of the op over batches
// that carry it from one pass to the next.
class WkvSession {
 public:
  WkvSession(const std::string& backend, int threads, bool v7, int64_t n, int64_t heads, int64_t slots,
             const std::vector<float>& initial)
      : v7_(v7), threads_(threads) {
    auto created = create_backend(backend, BackendOptions{threads});
    EXPECT_TRUE(created) << backend;
    backend_ = std::move(created).value();
    state_ = make_persistent("wkv_state", DType::F32, {n, n, heads, slots}, nullptr);
    EXPECT_EQ(initial.size(), static_cast<size_t>(state_.elements()));
    auto buffer = backend_->allocate(BufferUsage::kCache, state_.bytes());
    EXPECT_TRUE(buffer);
    buffer_ = std::move(buffer).value();
    bind_tensor(state_, *buffer_, 0);
    tensor_set(state_, initial.data(), initial.size());
  }

  // The op over the batch's tokens (slots[t] each): y [N·H, T].
  std::vector<float> pass(const WkvTokens& batch, const std::vector<int32_t>& slots) {
    Graph g;
    const std::array<int64_t, kMaxDims> shape{batch.n, batch.heads, batch.tokens, 1};
    std::vector<std::pair<Tensor*, const std::vector<float>*>> inputs;
    std::vector<Tensor*> t;
    static const char* const kNames6[] = {"k", "v", "r", "w"};
    static const char* const kNames7[] = {"r", "w", "k", "v", "a", "b"};
    for (const std::vector<float>& values : batch.inputs) {
      t.push_back(g.input((v7_ ? kNames7 : kNames6)[t.size()], DType::F32, shape));
      inputs.emplace_back(t.back(), &values);
    }
    Tensor* slot_ids = g.input("slots", DType::I32, {batch.tokens, 1, 1, 1});
    Tensor* y;
    if (v7_) {
      y = g.rwkv_wkv7(t[0], t[1], t[2], t[3], t[4], t[5], &state_, slot_ids);
    } else {
      Tensor* u = g.input("u", DType::F32, {batch.n, batch.heads, 1, 1});
      inputs.emplace_back(u, &batch.u);
      y = g.rwkv_wkv6(t[0], t[1], t[2], u, t[3], &state_, slot_ids);
    }
    g.mark_output(y);
    // A 512 × 512 × 8 product beside the op, so that the CPU shares the pass between its
    // threads (below 2e6 multiply-adds it runs a pass on one: cpu_backend.cpp).
    const std::vector<float> zeros(512 * 512, 0.0f);
    if (threads_ > 1) {
      Tensor* w = g.input("ballast_w", DType::F32, {512, 512, 1, 1});
      Tensor* x = g.input("ballast_x", DType::F32, {512, 8, 1, 1});
      inputs.emplace_back(w, &zeros);
      inputs.emplace_back(x, &zeros);
      g.mark_output(g.mul_mat(w, x));
    }
    g.finalize();
    const MemoryPlan plan = plan_memory(g);
    auto arena = backend_->allocate(BufferUsage::kCompute, plan.arena_bytes);
    EXPECT_TRUE(arena);
    bind_memory(g, plan, arena.value()->base(), arena.value().get());
    for (auto& [tensor, values] : inputs)
      tensor_set(*tensor, values->data(), static_cast<size_t>(tensor->elements()));
    tensor_set(*slot_ids, slots.data(), slots.size());
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
  bool v7_;
  int threads_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Buffer> buffer_;
  Tensor state_;
};

// The backends and thread counts every exactness test runs on.
struct Where {
  const char* backend;
  int threads;
};
constexpr Where kWhere[] = {{"reference", 1}, {"cpu", 1}, {"cpu", 2}};

std::vector<int64_t> range(int64_t first, int64_t end) {
  std::vector<int64_t> r(static_cast<size_t>(end - first));
  std::iota(r.begin(), r.end(), first);
  return r;
}

// Bitwise equality of float vectors (memcmp semantics through the values: NaN never appears).
::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
  }
  return ::testing::AssertionSuccess();
}

struct Shape {
  bool v7;
  int64_t n, heads;
};
constexpr Shape kShapes[] = {{false, 64, 3}, {true, 64, 3}, {false, 33, 2},
                             {true, 33, 2},  {false, 5, 1}, {true, 5, 1}};

std::string describe(const Shape& s, const Where& w) {
  return std::string(s.v7 ? "wkv7" : "wkv6") + " N " + std::to_string(s.n) + " H " + std::to_string(s.heads) +
         " on " + w.backend + " × " + std::to_string(w.threads);
}

// (a) One call over a batch equals the same tokens in chunks of 1, 3 and 7 (the state carried by
// the state tensor between calls): outputs and every slot's final state, bit for bit. The batch
// interleaves three sequences; chunks keep the batch order.
TEST(RwkvOps, ChunksEqualOneCall) {
  constexpr int64_t kTokens = 23, kSlots = 4;
  for (const Shape& s : kShapes) {
    const WkvTokens x = wkv_tokens(s.v7, s.n, s.heads, kTokens, 17);
    const std::vector<int32_t> slots = interleaved_slots(kTokens, kSlots, 5);
    const std::vector<float> initial =
        random_values(static_cast<size_t>(s.n * s.n * s.heads * kSlots), 3, 0.5f);
    for (const Where& w : kWhere) {
      SCOPED_TRACE(describe(s, w));
      WkvSession whole(w.backend, w.threads, s.v7, s.n, s.heads, kSlots, initial);
      const std::vector<float> y = whole.pass(x, slots);
      for (int64_t chunk : {1, 3, 7}) {
        SCOPED_TRACE("chunks of " + std::to_string(chunk));
        WkvSession cut(w.backend, w.threads, s.v7, s.n, s.heads, kSlots, initial);
        std::vector<float> y_cut;
        for (int64_t first = 0; first < kTokens; first += chunk) {
          const int64_t end = std::min(kTokens, first + chunk);
          const std::vector<float> part = cut.pass(
              x.select(range(first, end)), std::vector<int32_t>(slots.begin() + first, slots.begin() + end));
          y_cut.insert(y_cut.end(), part.begin(), part.end());
        }
        EXPECT_TRUE(same_bits(y_cut, y));
        EXPECT_TRUE(same_bits(cut.state(), whole.state()));
      }
    }
  }
}

// (b) Sequences interleaved in one batch (slots 2, 0, 1 of 4) equal each sequence alone, in a
// state of one slot holding its initial state: its outputs and its final state, bit for bit.
TEST(RwkvOps, InterleavedSequencesEqualEachAlone) {
  constexpr int64_t kSlots = 4;
  const std::vector<int32_t> slots = {2, 2, 0, 1, 2, 0, 0, 1, 1, 1, 2, 0, 2, 1, 1, 2, 0, 2, 2, 1};
  for (const Shape& s : kShapes) {
    const auto tokens = static_cast<int64_t>(slots.size());
    const WkvTokens x = wkv_tokens(s.v7, s.n, s.heads, tokens, 23);
    const std::vector<float> initial =
        random_values(static_cast<size_t>(s.n * s.n * s.heads * kSlots), 7, 0.5f);
    const int64_t plane = s.n * s.n * s.heads, row = s.n * s.heads;
    for (const Where& w : kWhere) {
      SCOPED_TRACE(describe(s, w));
      WkvSession together(w.backend, w.threads, s.v7, s.n, s.heads, kSlots, initial);
      const std::vector<float> y = together.pass(x, slots);
      const std::vector<float> final_state = together.state();
      for (int32_t slot = 0; slot < kSlots; ++slot) {
        SCOPED_TRACE("slot " + std::to_string(slot));
        std::vector<int64_t> mine;
        for (int64_t t = 0; t < tokens; ++t) {
          if (slots[static_cast<size_t>(t)] == slot) mine.push_back(t);
        }
        const auto plane_of = [&](const std::vector<float>& all) {
          return std::vector<float>(all.begin() + slot * plane, all.begin() + (slot + 1) * plane);
        };
        WkvSession alone(w.backend, w.threads, s.v7, s.n, s.heads, 1, plane_of(initial));
        if (!mine.empty()) {
          const std::vector<float> y_alone = alone.pass(x.select(mine), std::vector<int32_t>(mine.size(), 0));
          std::vector<float> expected;
          for (int64_t t : mine)
            expected.insert(expected.end(), y.begin() + t * row, y.begin() + (t + 1) * row);
          EXPECT_TRUE(same_bits(y_alone, expected));
        }
        EXPECT_TRUE(same_bits(alone.state(), plane_of(final_state)));  // slot 3: untouched
      }
    }
  }
}

// The CPU (each thread count) gives the reference backend's bits on an interleaved batch.
TEST(RwkvOps, CpuGivesTheReferenceBits) {
  constexpr int64_t kTokens = 13, kSlots = 3;
  for (const Shape& s : kShapes) {
    const WkvTokens x = wkv_tokens(s.v7, s.n, s.heads, kTokens, 31);
    const std::vector<int32_t> slots = interleaved_slots(kTokens, kSlots, 2);
    const std::vector<float> initial =
        random_values(static_cast<size_t>(s.n * s.n * s.heads * kSlots), 11, 0.5f);
    WkvSession reference("reference", 1, s.v7, s.n, s.heads, kSlots, initial);
    const std::vector<float> y = reference.pass(x, slots);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(describe(s, Where{"cpu", threads}));
      WkvSession cpu("cpu", threads, s.v7, s.n, s.heads, kSlots, initial);
      EXPECT_TRUE(same_bits(cpu.pass(x, slots), y));
      EXPECT_TRUE(same_bits(cpu.state(), reference.state()));
    }
  }
}

// (c) Head size 2, one head, two tokens in slot 1 of 2 (slot 0 must stay as it was), values whose
// products and sums are exact; the numbers were worked out by hand from graph.h's formulas.
TEST(RwkvOps, HandComputedWkv6) {
  // Per token k, v, r, w; S[i][j] (key i, value j) stored as row i of values.
  WkvTokens x{
      2, 1, 2, {{1, 2, 0.5f, -1}, {3, 1, 2, 4}, {1, 0.5f, 2, 1}, {0.5f, 0.25f, 0.5f, 0.5f}}, {0.5f, 2}};
  for (const Where& w : kWhere) {
    SCOPED_TRACE(std::string(w.backend) + " × " + std::to_string(w.threads));
    WkvSession session(w.backend, w.threads, false, 2, 1, 2, {9, 9, 9, 9, 1, 0, 0, 1});
    // Token 0: kv = [[3, 1], [6, 2]]; y = [1·(1.5 + 1) + 0.5·(12 + 0), 1·(0.5 + 0) + 0.5·(4 + 1)];
    // S = [[3.5, 1], [6, 2.25]]. Token 1: kv = [[1, 2], [−2, −4]]; y = [2·(0.5 + 3.5) + (−4 + 6),
    // 2·(1 + 1) + (−8 + 2.25)]; S = [[2.75, 2.5], [1, −2.875]].
    EXPECT_EQ(session.pass(x, {1, 1}), (std::vector<float>{8.5f, 3.0f, 10.0f, -1.75f}));
    EXPECT_EQ(session.state(), (std::vector<float>{9, 9, 9, 9, 2.75f, 2.5f, 1.0f, -2.875f}));
  }
}

TEST(RwkvOps, HandComputedWkv7) {
  // Per token r, w, k, v, a, b; S[i][j] (value i, key j) stored as column j of values.
  WkvTokens x{2,
              1,
              2,
              {{1, 2, 0.5f, 1},
               {0.5f, 0.25f, 0.5f, 0.5f},
               {2, 1, 1, 2},
               {1, -1, 2, 0.5f},
               {0.5f, 1, -1, 0.5f},
               {1, -0.5f, 0.5f, 0.25f}},
              {}};
  for (const Where& w : kWhere) {
    SCOPED_TRACE(std::string(w.backend) + " × " + std::to_string(w.threads));
    // S = [[1, 2], [0, −1]].
    WkvSession session(w.backend, w.threads, true, 2, 1, 2, {9, 9, 9, 9, 1, 0, 2, -1});
    // Token 0: sa = [2.5, −1]; S = [[5, 0.25], [−3, −0.75]]; y = [5 + 0.5, −3 − 1.5].
    // Token 1: sa = [−5 + 0.125, 3 − 0.375] = [−4.875, 2.625];
    // S = [[2.5 + 2 − 2.4375, 0.125 + 4 − 1.21875], [−1.5 + 0.5 + 1.3125, −0.375 + 1 + 0.65625]]
    //   = [[2.0625, 2.90625], [0.3125, 1.28125]]; y = [1.03125 + 2.90625, 0.15625 + 1.28125].
    EXPECT_EQ(session.pass(x, {1, 1}), (std::vector<float>{5.5f, -4.5f, 3.9375f, 1.4375f}));
    EXPECT_EQ(session.state(), (std::vector<float>{9, 9, 9, 9, 2.0625f, 0.3125f, 2.90625f, 1.28125f}));
  }
}

}  // namespace
}  // namespace sinter::testing
