#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace sinter {

Result<AtomicFile> AtomicFile::create(const std::string& path) {
  std::string temp = path + ".tmp-XXXXXX";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) {
    return make_error(ErrorCode::kIo, "cannot create a temporary file beside ", path, ": ",
                      std::strerror(errno));
  }
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
