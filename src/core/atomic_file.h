// A file that appears under its name only when complete: writes go to a temporary file in the
// same folder, and commit() flushes it and renames it into place. Destroyed without commit(),
// the temporary is removed and the target is untouched: a crash never leaves a half-written file.
// A writer killed outright (SIGKILL) leaves its temporary, locked while it lived: the next
// create() for the same path removes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sinter/result.h"

namespace sinter {

class AtomicFile {
 public:
  static Result<AtomicFile> create(const std::string& path);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();

  Status write(const void* data, size_t size);
  Status write_zeros(size_t count);
  uint64_t bytes_written() const { return written_; }
  Status commit();

 private:
  AtomicFile(std::string path, std::string temp_path, int fd)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
};

}  // namespace sinter
