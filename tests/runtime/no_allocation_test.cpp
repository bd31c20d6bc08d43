// Issue 4: nothing is allocated on the per-token path. Once a context has decoded a prompt and
// a first generated token (the graph of a one-token pass is built and its weights repacked), each
// further generation step — cache placement, attention index, the forward pass on two threads,
// the logits — calls no operator new.
#include <algorithm>

#include "runtime/context.h"
#include "runtime/runtime_test_support.h"
#include "support/allocation_counter.h"

namespace sinter {
namespace {

TEST(Generation, StepsAfterTheFirstAllocateNothing) {
  auto model = LoadedModel::load(testing::tiny_llama(), LoadOptions{"cpu", 2});
  ASSERT_TRUE(model) << model.error().message();
  ContextOptions options;
  options.n_ctx = 128;
  auto context = Context::create(*model, options);
  ASSERT_TRUE(context);
  Context& c = **context;
  std::vector<BatchEntry> prompt;
  for (int i = 0; i < 12; ++i) prompt.push_back({static_cast<TokenId>(5 + 7 * i), i, 0, i == 11});
  ASSERT_TRUE(c.decode(prompt));
  std::vector<BatchEntry> step(1);
  const auto next_token = [&] {
    const auto logits = c.logits(0);
    return static_cast<TokenId>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  };
  step[0] = {next_token(), 12, 0, true};
  ASSERT_TRUE(c.decode(step));  // builds the one-token graph
  for (Position p = 13; p < 60; ++p) {
    step[0] = {next_token(), p, 0, true};
    const testing::CountingAllocations allocations;
    ASSERT_TRUE(c.decode(step));
    EXPECT_EQ(allocations.count(), 0) << "position " << p;
  }
  EXPECT_EQ(c.stats().builds, 2);  // the prompt's graph and the one-token graph
}

}  // namespace
}  // namespace sinter
