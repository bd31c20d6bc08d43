#include "core/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/test_paths.h"

namespace sinter {
namespace {

namespace fs = std::filesystem;

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

void make_old(const std::string& path) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::minutes(5));
}

// A writer killed outright (SIGKILL, or SIGXFSZ past a file-size limit before sinter ignored
// it) left its temporary: the next writer of the same file removes it, and leaves alone the
// temporaries of writers still alive (locked) or just started (new).
TEST(AtomicFile, LeftoverTemporariesOfDeadWritersAreRemoved) {
  const std::string dir = testing::scratch_dir() + "/atomic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string target = dir + "/model.gguf";
  const std::string dead = target + ".tmp-AbC123";
  const std::string alive = target + ".tmp-XyZ789";
  const std::string young = target + ".tmp-QrS456";
  const std::string other = dir + "/other.gguf.tmp-AbC123";
  for (const auto& path : {dead, alive, young, other}) write_text(path, "partial");
  for (const auto& path : {dead, alive, other}) make_old(path);
  const int held = ::open(alive.c_str(), O_RDONLY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);

  auto file = AtomicFile::create(target);
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(young));
  EXPECT_TRUE(fs::exists(other));
  ASSERT_TRUE(file->write("ok", 2));
  ASSERT_TRUE(file->commit());
  ::close(held);
  EXPECT_TRUE(fs::exists(target));
}

}  // namespace
}  // namespace sinter
