// A read-only memory-mapped file: the zero-copy ground under the GGUF reader.
//
// The file may change under the mapping (a new model copied over the old one): a read past a
// truncated end would raise SIGBUS, which the mapping's guard (core/mapping_guard.h) turns into
// zeros and damaged() == true. changed_on_disk() compares the file at the path with the one
// mapped (device, inode, size, modification time).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "sinter/result.h"

namespace sinter {

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path);
  // Wraps bytes already in memory (tests, fuzzing); the file then owns a copy.
  static std::shared_ptr<MappedFile> from_bytes(std::span<const uint8_t> bytes, std::string name);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Whether [begin, begin + bytes) lies inside this file's bytes.
  bool contains(const void* begin, size_t bytes) const;
  // Tells the kernel that these bytes (inside this file) will not be read again soon: the whole
  // pages among them leave this process's resident memory. Nothing is lost: a later read maps them
  // again from the file. No effect on files held in memory (from_bytes), whose bytes would be lost.
  void release_pages(const void* begin, size_t bytes) const;

  // A read hit a part of the file that is gone (it was truncated): what was read there is zeros.
  bool damaged() const { return damaged_.load(std::memory_order_relaxed); }
  // The file at path() is no longer the one mapped, or was modified since (a stat call).
  bool changed_on_disk() const;

 private:
  struct Identity {
    uint64_t device = 0, inode = 0, size = 0;
    int64_t modified_ns = 0;
    bool operator==(const Identity&) const = default;
  };
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  Identity identity_;
  int guard_ = -1;
  std::atomic<bool> damaged_{false};
  std::unique_ptr<uint8_t[]> owned_;
  std::string path_;
};

// Writes `bytes` to `path` atomically: a temporary file in the same folder, fsync, rename.
Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace sinter
