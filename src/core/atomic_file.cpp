#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace sinter {
namespace {

constexpr std::string_view kTempMarker = ".tmp-";
// A temporary younger than this may belong to a writer that has not locked it yet.
constexpr auto kStaleAge = std::chrono::seconds(10);

// Removes the temporaries of `path` that earlier writers left when they were killed (SIGKILL, a
// file-size limit): every writer holds a lock on its temporary while it lives, so one that can
// be locked, and is not brand new, has no writer.
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + std::string(kTempMarker);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code error;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::error_code stat_error;
    if (!it->is_regular_file(stat_error) || now - it->last_write_time(stat_error) < kStaleAge || stat_error)
      continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlink(it->path().c_str());
    ::close(fd);
  }
}

}  // namespace

Result<AtomicFile> AtomicFile::create(const std::string& path) {
  remove_stale_temporaries(path);
  std::string temp = path + std::string(kTempMarker) + "XXXXXX";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) {
    return make_error(ErrorCode::kIo, "cannot create a temporary file beside ", path, ": ",
                      std::strerror(errno));
  }
  flock(fd, LOCK_EX);  // for as long as this writer lives (see remove_stale_temporaries)
  fchmod(fd, 0644);
  return AtomicFile(path, std::string(name.data()), fd);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(other.fd_),
      written_(other.written_),
      committed_(other.committed_) {
  other.fd_ = -1;
  other.committed_ = true;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

Status AtomicFile::write(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, bytes, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorCode::kIo, "cannot write ", temp_path_, ": ", std::strerror(errno));
    }
    bytes += n;
    size -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  return ok_status();
}

Status AtomicFile::write_zeros(size_t count) {
  static const uint8_t zeros[256] = {};
  while (count > 0) {
    const size_t n = count < sizeof zeros ? count : sizeof zeros;
    SINTER_TRY(write(zeros, n));
    count -= n;
  }
  return ok_status();
}

Status AtomicFile::commit() {
  if (fsync(fd_) != 0) {
    return make_error(ErrorCode::kIo, "cannot flush ", temp_path_, ": ", std::strerror(errno));
  }
  ::close(fd_);
  fd_ = -1;
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return make_error(ErrorCode::kIo, "cannot rename ", temp_path_, " to ", path_, ": ",
                      std::strerror(errno));
  }
  committed_ = true;
  return ok_status();
}

}  // namespace sinter
