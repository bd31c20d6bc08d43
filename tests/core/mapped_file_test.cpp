#include "core/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "support/test_paths.h"

namespace sinter {
namespace {

// This process's resident pages (the second field of /proc/self/statm), read without allocating.
long resident_pages() {
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return -1;
  long size = 0, resident = -1;
  if (std::fscanf(statm, "%ld %ld", &size, &resident) != 2) resident = -1;
  std::fclose(statm);
  return resident;
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>((i * 131 + 7) % 251);
  return bytes;
}

TEST(MappedFile, ContainsOnlyRangesInsideTheFile) {
  const auto file = MappedFile::from_bytes(pattern(100), "bytes");
  EXPECT_TRUE(file->contains(file->data(), 100));
  EXPECT_TRUE(file->contains(file->data() + 40, 60));
  EXPECT_TRUE(file->contains(file->data() + 100, 0));
  EXPECT_FALSE(file->contains(file->data() + 40, 61));
  EXPECT_FALSE(file->contains(file->data() - 1, 2));
  EXPECT_FALSE(file->contains(file->data() + 101, 0));
}

// Released pages leave resident memory and read back the same bytes from the file.
TEST(MappedFile, ReleasedPagesReadBackUnchanged) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = 1024 * page + 123;
  const std::vector<uint8_t> expected = pattern(size);
  const std::string path = testing::scratch_dir() + "/mapped.bin";
  ASSERT_TRUE(write_file_atomically(path, expected));
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  const MappedFile& mapped = **file;
  uint64_t sum = 0;
  for (size_t i = 0; i < size; ++i) sum += mapped.data()[i];  // touch every page
  ASSERT_GT(sum, 0u);
  // A range that starts and ends mid-page: only the pages wholly inside it are released, and the
  // process's resident memory drops by about that much.
  const long before = resident_pages();
  mapped.release_pages(mapped.data() + page / 2, 1000 * page);
  const long after = resident_pages();
  EXPECT_GE(before - after, 900) << before << " -> " << after << " resident pages";
  EXPECT_EQ(std::vector<uint8_t>(mapped.data(), mapped.data() + size), expected);
  // Out-of-file ranges and in-memory files are left alone.
  mapped.release_pages(mapped.data() + size - 10, 20);
  const auto copy = MappedFile::from_bytes(expected, "copy");
  copy->release_pages(copy->data(), size);
  EXPECT_EQ(std::vector<uint8_t>(copy->data(), copy->data() + size), expected);
}

// A file truncated under its mapping (a new model copied over the loaded one): reading the part
// that is gone gives zeros and marks the mapping damaged, where it used to kill the process with
// SIGBUS.
TEST(MappedFile, TruncatedFileReadsZerosAndIsDamaged) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> expected = pattern(8 * page);
  const std::string path = testing::scratch_dir() + "/truncated.bin";
  ASSERT_TRUE(write_file_atomically(path, expected));
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file) << file.error().message();
  const MappedFile& mapped = **file;
  EXPECT_FALSE(mapped.damaged());
  EXPECT_FALSE(mapped.changed_on_disk());
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(page)), 0);
  EXPECT_TRUE(mapped.changed_on_disk());
  // The first page is still in the file; the rest is gone.
  EXPECT_EQ(mapped.data()[page - 1], expected[page - 1]);
  EXPECT_FALSE(mapped.damaged());
  uint64_t sum = 0;
  for (size_t i = page; i < 8 * page; ++i) sum += mapped.data()[i];
  EXPECT_EQ(sum, 0u);
  EXPECT_TRUE(mapped.damaged());
}

// A file replaced by a rename (another inode) or rewritten in place is a change; the mapping
// itself still reads the old bytes.
TEST(MappedFile, ReplacedFileIsAChangeOnDisk) {
  const std::string path = testing::scratch_dir() + "/replaced.bin";
  ASSERT_TRUE(write_file_atomically(path, pattern(1000)));
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file);
  EXPECT_FALSE((*file)->changed_on_disk());
  ASSERT_TRUE(write_file_atomically(path, pattern(1000)));
  EXPECT_TRUE((*file)->changed_on_disk());
  EXPECT_EQ(std::vector<uint8_t>((*file)->data(), (*file)->data() + 1000), pattern(1000));
  EXPECT_FALSE((*file)->damaged());
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_TRUE((*file)->changed_on_disk());
}

}  // namespace
}  // namespace sinter
