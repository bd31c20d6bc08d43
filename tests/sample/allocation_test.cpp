// sample() must not allocate: the chain owns every buffer it needs. This binary counts calls to
// the global operator new (support/allocation_counter).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "sample/sampler_chain.h"
#include "support/allocation_counter.h"

namespace sinter {
namespace {

long allocations_while_sampling(const SamplerOptions& options, int32_t vocab_size) {
  std::vector<float> logits(static_cast<size_t>(vocab_size));
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = static_cast<float>(std::sin(static_cast<double>(i)) * 5.0);
  auto chain = SamplerChain::create(options, vocab_size);
  EXPECT_TRUE(chain.ok());
  for (TokenId t = 0; t < 10; ++t) EXPECT_TRUE(chain->accept(t).ok());
  const testing::CountingAllocations allocations;
  for (int i = 0; i < 50; ++i) {
    auto token = chain->sample(logits);
    if (!token.ok() || !chain->accept(*token).ok()) break;
  }
  return allocations.count();
}

TEST(SamplerChain, SamplingDoesNotAllocate) {
  {  // The counter itself works (the vector object and its ints).
    const testing::CountingAllocations allocations;
    auto probe = std::make_unique<std::vector<int>>(10);
    EXPECT_GE(allocations.count(), 2);
  }

  SamplerOptions defaults;
  defaults.seed = 1;
  EXPECT_EQ(allocations_while_sampling(defaults, 4000), 0);

  SamplerOptions everything = defaults;  // every stage busy, the partial sorts growing
  everything.top_k = 0;
  everything.top_p = 0.99f;
  everything.typical_p = 0.95f;
  everything.repeat_penalty = 1.2f;
  everything.frequency_penalty = 0.1f;
  everything.presence_penalty = 0.1f;
  everything.logit_bias = {{3, -INFINITY}, {7, 2.0f}};
  EXPECT_EQ(allocations_while_sampling(everything, 4000), 0);

  SamplerOptions greedy = everything;
  greedy.temperature = 0.0f;
  EXPECT_EQ(allocations_while_sampling(greedy, 4000), 0);
}

}  // namespace
}  // namespace sinter
