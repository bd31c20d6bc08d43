// `sinter run --temp 0` on the real stories260K model equals llama.cpp's greedy continuation,
// token for token, for 200 tokens.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

class StoriesGreedy : public ::testing::TestWithParam<const char*> {};

TEST_P(StoriesGreedy, EqualsTheOracle) {
  const std::string prompt = GetParam();
  const auto result = testing::run_command(testing::shell_quote(testing::sinter_binary()) + " run -m " +
                                           testing::shell_quote(testing::stories_model()) + " -p " +
                                           testing::shell_quote(prompt) + " -n 200 --temp 0 --output ids");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  const auto ours = nlohmann::json::parse(result.out).get<std::vector<int>>();
  const auto oracle = testing::oracle_greedy(testing::stories_model(), 200, prompt);
  ASSERT_FALSE(oracle.empty());
  EXPECT_EQ(ours, oracle);
}

INSTANTIATE_TEST_SUITE_P(Prompts, StoriesGreedy,
                         ::testing::Values("Once upon a time", "Lily and Tom", "The sun was hot. Ben",
                                           "Once upon a time, there was a dragon", "One day, a little bird"));

}  // namespace
}  // namespace sinter
