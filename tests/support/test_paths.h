// Where tests find the shared models, the oracle, the built binaries and scratch space.
#pragma once

#include <cstdlib>
#include <string>

// Skips a test whose reference (the oracle's libraries, a built tool) is not there — except when
// SINTER_REQUIRE_REFERENCES is set, as scripts/test.sh (CI) sets it: there a missing reference is
// a failure, so that no skipped test ever counts as passing.
#define SINTER_SKIP_WITHOUT_REFERENCE(message)                                                         \
  do {                                                                                                 \
    if (std::getenv("SINTER_REQUIRE_REFERENCES") != nullptr) FAIL() << "required reference missing: " << message; \
    GTEST_SKIP() << message;                                                                           \
  } while (0)

namespace sinter::testing {

std::string shared_dir();        // ../shared beside the checkout (or $SINTER_SHARED)
std::string stories_model();     // shared/models/stories260K.gguf
std::string source_dir();
std::string binary_dir();
std::string sinter_binary();     // the built `sinter` CLI
// A fresh empty folder for this test, removed at process exit. Each call empties it again:
// call it once per test and keep the path.
std::string scratch_dir();

}  // namespace sinter::testing
