#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/atomic_file.h"
#include "core/mapping_guard.h"

namespace sinter {
namespace {

int64_t modified_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return make_error(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "cannot open ", path, ": ",
                      std::strerror(err));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(ErrorCode::kIo, "cannot stat ", path, ": ", std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorCode::kInvalidArgument, path, " is not a regular file");
  }
  auto file = std::shared_ptr<MappedFile>(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  file->identity_ = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                     static_cast<uint64_t>(st.st_size), modified_ns(st)};
  if (file->size_ > 0) {
    void* addr = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return make_error(ErrorCode::kIo, "cannot map ", path, ": ", std::strerror(err));
    }
    file->data_ = static_cast<const uint8_t*>(addr);
    file->mapped_ = true;
    file->guard_ = guard_mapping(addr, file->size_, &file->damaged_);
  }
  ::close(fd);  // the mapping keeps the file alive
  return file;
}

std::shared_ptr<MappedFile> MappedFile::from_bytes(std::span<const uint8_t> bytes, std::string name) {
  auto file = std::shared_ptr<MappedFile>(new MappedFile());
  file->path_ = std::move(name);
  file->size_ = bytes.size();
  // Exactly the requested size, so that ASan catches any read past the end.
  file->owned_ = std::make_unique<uint8_t[]>(bytes.size() == 0 ? 1 : bytes.size());
  if (!bytes.empty()) std::memcpy(file->owned_.get(), bytes.data(), bytes.size());
  file->data_ = file->owned_.get();
  return file;
}

bool MappedFile::contains(const void* begin, size_t bytes) const {
  const auto* p = static_cast<const uint8_t*>(begin);
  return p >= data_ && bytes <= size_ && static_cast<size_t>(p - data_) <= size_ - bytes;
}

void MappedFile::release_pages(const void* begin, size_t bytes) const {
  if (!mapped_ || bytes == 0 || !contains(begin, bytes)) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(begin);
  // Only the pages wholly inside the range: the neighbours' bytes may still be read.
  const uintptr_t first = (start + page - 1) / page * page;
  const uintptr_t last = (start + bytes) / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

bool MappedFile::changed_on_disk() const {
  if (!mapped_) return false;
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return true;  // gone
  return !(identity_ == Identity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                                 static_cast<uint64_t>(st.st_size), modified_ns(st)});
}

MappedFile::~MappedFile() {
  if (!mapped_) return;
  unguard_mapping(guard_);
  munmap(const_cast<uint8_t*>(data_), size_);
}

Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes) {
  SINTER_ASSIGN(AtomicFile out, AtomicFile::create(path));
  SINTER_TRY(out.write(bytes.data(), bytes.size()));
  return out.commit();
}

}  // namespace sinter
