// `sinter run --temp 0` on the real stories260K model equals llama.cpp's greedy continuation,
// token for token, for 200 tokens, on every backend.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter {
namespace {

class StoriesGreedy : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

// The oracle's continuation of each prompt, asked once for all backends.
const std::vector<int>& oracle_continuation(const std::string& prompt) {
  static std::map<std::string, std::vector<int>> continuations;
  auto it = continuations.find(prompt);
  if (it == continuations.end())
    it = continuations.emplace(prompt, testing::oracle_greedy(testing::stories_model(), 200, prompt)).first;
  return it->second;
}

TEST_P(StoriesGreedy, EqualsTheOracle) {
  const std::string backend = std::get<0>(GetParam());
  const std::string prompt = std::get<1>(GetParam());
  const auto result =
      testing::run_command(testing::shell_quote(testing::sinter_binary()) + " run -m " +
                           testing::shell_quote(testing::stories_model()) + " --backend " + backend + " -p " +
                           testing::shell_quote(prompt) + " -n 200 --temp 0 --output ids");
  ASSERT_EQ(result.exit_status, 0) << result.err;
  const auto ours = nlohmann::json::parse(result.out).get<std::vector<int>>();
  const auto& oracle = oracle_continuation(prompt);
  ASSERT_FALSE(oracle.empty());
  EXPECT_EQ(ours, oracle);
}

INSTANTIATE_TEST_SUITE_P(
    Prompts, StoriesGreedy,
    ::testing::Combine(::testing::Values("cpu", "reference"),
                       ::testing::Values("Once upon a time", "Lily and Tom", "The sun was hot. Ben",
                                         "Once upon a time, there was a dragon", "One day, a little bird")));

}  // namespace
}  // namespace sinter
