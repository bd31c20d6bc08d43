#include "support/test_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace sinter::testing {

std::string shared_dir() {
  if (const char* env = std::getenv("SINTER_SHARED"); env != nullptr && *env != '\0') return env;
  return std::string(SINTER_SOURCE_DIR) + "/../shared";
}

std::string stories_model() { return shared_dir() + "/models/stories260K.gguf"; }
std::string source_dir() { return SINTER_SOURCE_DIR; }
std::string binary_dir() { return SINTER_BINARY_DIR; }
// SINTER_BIN points the tests at another build of the tool (a copy that a rebuild cannot replace
// while they run).
std::string sinter_binary() {
  if (const char* env = std::getenv("SINTER_BIN"); env != nullptr && *env != '\0') return env;
  return std::string(SINTER_BINARY_DIR) + "/bin/sinter";
}

std::string scratch_dir() {
  namespace fs = std::filesystem;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "scratch";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  const fs::path dir = fs::temp_directory_path() / ("sinter-test-" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  static const bool cleanup_registered = [] {
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(fs::temp_directory_path() / ("sinter-test-" + std::to_string(getpid())), ignored);
    });
    return true;
  }();
  (void)cleanup_registered;
  return dir.string();
}

}  // namespace sinter::testing
