// The recurrent state and the hybrid memory: slots per sequence, continuity, checkpoints that
// let a sequence go back or fork exactly, and the cache and state of a hybrid kept together.
#include "memory/recurrent_state.h"

#include <gtest/gtest.h>

#include <numeric>

#include "backend/buffer.h"
#include "memory/hybrid_memory.h"

namespace sinter {
namespace {

Backend* cpu_backend() {
  static const std::unique_ptr<Backend> backend = create_backend("cpu", BackendOptions{1}).value();
  return backend.get();
}

std::vector<CacheToken> tokens(SequenceId s, Position from, Position to) {
  std::vector<CacheToken> out;
  for (Position p = from; p < to; ++p) out.push_back({s, p});
  return out;
}

// Two layers: one with a [3, 4] state, one with a [2, 2, 2] and a [5] state.
RecurrentStateOptions small_options(int32_t slots, size_t checkpoint_bytes = 1 << 20, int32_t interval = 8) {
  RecurrentStateOptions options;
  options.layers = {{{RecurrentStateShape{{3, 4, 1}}}},
                    {{RecurrentStateShape{{2, 2, 2}}, RecurrentStateShape{{5, 1, 1}}}}};
  options.n_seq_max = slots;
  options.checkpoint_bytes = checkpoint_bytes;
  options.checkpoint_interval = interval;
  return options;
}

std::unique_ptr<RecurrentState> make_state(const RecurrentStateOptions& options) {
  auto state = RecurrentState::create(options, cpu_backend());
  EXPECT_TRUE(state) << state.error().message();
  return std::move(state).value();
}

// Writes `value` into every state value of a sequence's slot, as a pass would.
void write_slot(RecurrentState& state, int32_t slot, float value) {
  for (int layer = 0; layer < state.layer_count(); ++layer) {
    for (int i = 0; i < (layer == 0 ? 1 : 2); ++i) {
      Tensor& t = *state.state(layer, i);
      const auto plane = static_cast<size_t>(t.ne[0] * t.ne[1] * t.ne[2]);
      std::vector<float> values(plane, value);
      tensor_set(t, values.data(), static_cast<size_t>(slot) * plane * sizeof(float), plane * sizeof(float));
    }
  }
}

// Every value of a slot's planes, in order.
std::vector<float> read_slot(const RecurrentState& state, int32_t slot) {
  std::vector<float> out;
  for (int layer = 0; layer < state.layer_count(); ++layer) {
    for (int i = 0; i < (layer == 0 ? 1 : 2); ++i) {
      const Tensor& t = *const_cast<RecurrentState&>(state).state(layer, i);
      const auto plane = static_cast<size_t>(t.ne[0] * t.ne[1] * t.ne[2]);
      std::vector<float> values(plane);
      tensor_get(t, values.data(), static_cast<size_t>(slot) * plane * sizeof(float), plane * sizeof(float));
      out.insert(out.end(), values.begin(), values.end());
    }
  }
  return out;
}

// A pass: place the tokens, "compute" (write a value into the slot), then passed().
void pass(RecurrentState& state, std::vector<CacheToken> batch, float value) {
  ASSERT_TRUE(state.place(batch));
  write_slot(state, state.placed_slots()[0], value);
  state.passed();
}

TEST(RecurrentState, ShapesAndSlots) {
  const auto options = small_options(3);
  EXPECT_EQ(RecurrentState::sequence_bytes_for(options.layers), (12 + 8 + 5) * sizeof(float));
  EXPECT_EQ(RecurrentState::bytes_for(options), 3 * (12 + 8 + 5) * sizeof(float));
  auto state = make_state(options);
  EXPECT_EQ(state->layer_count(), 2);
  EXPECT_EQ(state->state(1, 0)->ne, (std::array<int64_t, 4>{2, 2, 2, 3}));
  EXPECT_FALSE(state->can_shift());
  EXPECT_EQ(state->kv(), nullptr);
  EXPECT_EQ(state->recurrent(), state.get());
  // Sequences get slots as they first place tokens; a fourth one finds none.
  std::vector<CacheToken> batch = tokens(5, 0, 2);
  for (SequenceId s : {9, 1}) {
    const auto more = tokens(s, 0, 1);
    batch.insert(batch.end(), more.begin(), more.end());
  }
  ASSERT_TRUE(state->place(batch));
  EXPECT_EQ(std::vector<int32_t>(state->placed_slots().begin(), state->placed_slots().end()),
            (std::vector<int32_t>{1, 1, 2, 0}));  // slots by sequence id: 1, 5, 9
  state->passed();
  EXPECT_EQ(state->max_position(5), 1);
  EXPECT_EQ(state->used_cells(), 4);
  const Status full = state->place(tokens(2, 0, 1));
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code(), ErrorCode::kContextFull);
  // An empty sequence gives its slot back, zeroed for the next.
  write_slot(*state, 2, 7.0f);
  state->remove(9, 0, -1);
  ASSERT_TRUE(state->place(tokens(2, 0, 1)));
  EXPECT_EQ(state->placed_slots()[0], 2);
  for (float v : read_slot(*state, 2)) EXPECT_EQ(v, 0.0f);
}

TEST(RecurrentState, TokensMustContinueTheState) {
  auto state = make_state(small_options(2));
  ASSERT_TRUE(state->place(tokens(0, 0, 3)));
  state->passed();
  const Status gap = state->place(tokens(0, 4, 5));
  ASSERT_FALSE(gap);
  EXPECT_EQ(gap.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(gap.error().message().find("is at position 3"), std::string::npos) << gap.error().message();
  EXPECT_FALSE(state->place(tokens(0, 2, 3)));                         // already seen
  EXPECT_FALSE(state->place({{CacheToken{0, 4}, CacheToken{0, 3}}}));  // out of order
  EXPECT_TRUE(state->place(tokens(0, 3, 5)));
}

// A failed pass leaves its sequences' states unknown: they start again from scratch.
TEST(RecurrentState, AFailedPassStartsItsSequencesAgain) {
  auto state = make_state(small_options(2));
  pass(*state, tokens(0, 0, 4), 1.0f);
  pass(*state, tokens(1, 0, 2), 2.0f);
  const auto batch = tokens(0, 4, 6);
  ASSERT_TRUE(state->place(batch));
  state->unplace(batch);
  EXPECT_EQ(state->max_position(0), -1);
  EXPECT_EQ(state->max_position(1), 1);  // not in the failed pass
  EXPECT_EQ(state->resumable_prefix(0, 4), 0);
}

// The state at the end of a prompt (checkpoint()) and every `interval` tokens is kept: a
// sequence goes back to it exactly, or forks from it; other points mean starting again.
TEST(RecurrentState, CheckpointsLetASequenceGoBackExactly) {
  auto state = make_state(small_options(3, 1 << 20, /*interval=*/8));
  pass(*state, tokens(0, 0, 5), 1.0f);
  state->checkpoint(0);                  // the end of a prompt, at 5
  pass(*state, tokens(0, 5, 9), 2.0f);   // 4 past the checkpoint: none due
  pass(*state, tokens(0, 9, 14), 3.0f);  // 9 past it: one at 14
  pass(*state, tokens(0, 14, 16), 4.0f);
  EXPECT_EQ(state->checkpoint_count(), 2u);
  EXPECT_EQ(state->resumable_prefix(0, 100), 16);  // the present
  EXPECT_EQ(state->resumable_prefix(0, 15), 14);
  EXPECT_EQ(state->resumable_prefix(0, 13), 5);
  EXPECT_EQ(state->resumable_prefix(0, 4), 0);

  // A fork from a checkpoint and one from the present.
  state->copy(0, 1, 0, 5);
  EXPECT_EQ(state->max_position(1), 4);
  state->copy(0, 2, 0, 16);
  EXPECT_EQ(state->max_position(2), 15);
  ASSERT_TRUE(state->place(tokens(1, 5, 6)));  // the fork continues from 5
  const int32_t fork_slot = state->placed_slots()[0];
  for (float v : read_slot(*state, fork_slot)) EXPECT_EQ(v, 1.0f);
  state->passed();

  // Back to 14: the values at that point.
  state->remove(0, 14, -1);
  EXPECT_EQ(state->max_position(0), 13);
  ASSERT_TRUE(state->place(tokens(0, 14, 15)));
  for (float v : read_slot(*state, state->placed_slots()[0])) EXPECT_EQ(v, 3.0f);
  state->passed();
  // A point without a checkpoint: the sequence starts again, and its later checkpoints are gone.
  state->remove(0, 10, -1);
  EXPECT_EQ(state->max_position(0), -1);
  EXPECT_EQ(state->resumable_prefix(0, 14), 0);
}

// Checkpoints stay within their budget, the oldest going first; none without a budget.
TEST(RecurrentState, CheckpointsStayWithinTheirBudget) {
  const size_t one = RecurrentState::sequence_bytes_for(small_options(1).layers);
  auto state = make_state(small_options(2, 2 * one, /*interval=*/2));
  for (Position p = 0; p < 10; p += 2) pass(*state, tokens(0, p, p + 2), static_cast<float>(p));
  EXPECT_EQ(state->checkpoint_count(), 2u);
  EXPECT_EQ(state->checkpoint_bytes(), 2 * one);
  EXPECT_EQ(state->resumable_prefix(0, 100), 10);
  EXPECT_EQ(state->resumable_prefix(0, 9), 8);
  EXPECT_EQ(state->resumable_prefix(0, 7), 0);  // 2, 4 and 6 went first
  auto none = make_state(small_options(1, 0, 1));
  pass(*none, tokens(0, 0, 3), 1.0f);
  none->checkpoint(0);
  EXPECT_EQ(none->checkpoint_count(), 0u);
}

// The memory of a recurrent state does not grow with a sequence's length.
TEST(RecurrentState, MemoryIsConstantInTheSequenceLength) {
  auto state = make_state(small_options(1, 0));
  const size_t before = state->bytes();
  for (Position p = 0; p < 5000; p += 500) pass(*state, tokens(0, p, p + 500), 1.0f);
  EXPECT_EQ(state->bytes(), before);
  EXPECT_EQ(state->cell_count(), SequenceMemory::kUnboundedCells);
}

std::unique_ptr<HybridMemory> make_hybrid(int32_t cells, int32_t slots) {
  auto kv = KvCache::create({{16, 16, 2}}, cells, DType::F16, cpu_backend());
  EXPECT_TRUE(kv);
  return std::make_unique<HybridMemory>(std::move(kv).value(), make_state(small_options(slots, 1 << 20, 4)));
}

TEST(HybridMemory, CacheAndStateMoveTogether) {
  auto memory = make_hybrid(64, 2);
  ASSERT_TRUE(memory->place(tokens(0, 0, 6)));
  memory->passed();  // a checkpoint at 6 (interval 4)
  ASSERT_TRUE(memory->place(tokens(0, 6, 9)));
  memory->passed();
  EXPECT_EQ(memory->kv()->used_cells(), 9);
  EXPECT_EQ(memory->max_position(0), 8);
  EXPECT_FALSE(memory->can_shift());
  // Resumable only at the state's points; going back cuts the cells to the same point.
  EXPECT_EQ(memory->resumable_prefix(0, 8), 6);
  memory->remove(0, 6, -1);
  EXPECT_EQ(memory->kv()->used_cells(), 6);
  EXPECT_EQ(memory->recurrent()->max_position(0), 5);
  // A fork shares the cells up to where the state could be copied.
  memory->copy(0, 1, 0, 6);
  EXPECT_EQ(memory->kv()->sequence_cells(1), 6);
  memory->copy(0, 1, 0, 3);  // no state at 3: the fork starts empty, with no cells
  EXPECT_EQ(memory->kv()->sequence_cells(1), 0);
  EXPECT_EQ(memory->recurrent()->max_position(1), -1);
  // A failed pass: the cells of its tokens go, and the state starts again.
  const auto batch = tokens(0, 6, 8);
  ASSERT_TRUE(memory->place(batch));
  memory->unplace(batch);
  EXPECT_EQ(memory->recurrent()->max_position(0), -1);
  EXPECT_EQ(memory->kv()->sequence_cells(0), 0);
  // A batch the cache cannot hold leaves the state as it was.
  auto small = make_hybrid(4, 1);
  const Status full = small->place(tokens(0, 0, 5));
  ASSERT_FALSE(full);
  EXPECT_EQ(small->recurrent()->max_position(0), -1);
}

}  // namespace
}  // namespace sinter
