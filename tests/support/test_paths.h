// Where tests find the shared models, the oracle, the built binaries and scratch space.
#pragma once

#include <string>

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
