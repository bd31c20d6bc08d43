// Every Jinja feature templates use, one case each (tests/chat/data/jinja_features.json): the
// expected text or error was produced by the Jinja2 reference (update_expectations.py); sinter
// must give the same text, or fail where Jinja2 fails (with the same raise_exception message).
#include <gtest/gtest.h>

#include "chat_test_support.h"

namespace sinter::chat::testing {
namespace {

Json expected_result(const Json& test_case) {
  if (test_case.contains("expected")) return Json{{"ok", true}, {"text", test_case["expected"]}};
  return Json{{"ok", false}, {"error", test_case.value("expected_error", std::string("(no expectation)"))}};
}

TEST(JinjaFeatures, SinterRendersEveryCaseAsJinja2Does) {
  Json cases = read_json(data_path("jinja_features.json"));
  ASSERT_TRUE(cases.is_array());
  ASSERT_GE(cases.size(), 150u);
  int failures = 0;
  for (const auto& test_case : cases) {
    ASSERT_TRUE(test_case.contains("expected") || test_case.contains("expected_error"))
        << test_case["name"] << ": run tests/chat/update_expectations.py";
    std::string why;
    if (!same_outcome(expected_result(test_case), sinter_result(test_case), &why)) {
      ++failures;
      ADD_FAILURE() << test_case["name"].get<std::string>() << ": "
                    << test_case["template"].get<std::string>() << "\n  " << why;
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(JinjaFeatures, ExpectationsAreWhatJinja2RendersToday) {
  Json cases = read_json(data_path("jinja_features.json"));
  ASSERT_TRUE(cases.is_array());
  Json results = reference_results(cases);
  ASSERT_EQ(results.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(results[i], expected_result(cases[i]))
        << cases[i]["name"] << ": the reference changed; rerun tests/chat/update_expectations.py";
  }
}

TEST(JinjaFeatures, CasesCoverErrorsAndSuccesses) {
  Json cases = read_json(data_path("jinja_features.json"));
  int errors = 0;
  for (const auto& test_case : cases) errors += test_case.contains("expected_error");
  EXPECT_GE(errors, 40);
  EXPECT_GE(static_cast<int>(cases.size()) - errors, 120);
}

}  // namespace
}  // namespace sinter::chat::testing
