#include "core/large_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace sinter {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

const bool LargeBuffer::kMapsLargeBuffers = !kUnderAddressSanitizer;

Result<LargeBuffer> LargeBuffer::allocate(size_t bytes) {
  LargeBuffer buffer;
  buffer.size_ = bytes;
  if (!kMapsLargeBuffers || bytes < kHugePage) {
    buffer.heap_block_ = std::aligned_alloc(64, round_up(bytes == 0 ? 1 : bytes, 64));
    if (buffer.heap_block_ == nullptr) return make_error(ErrorCode::kIo, "cannot allocate ", bytes, " bytes");
    buffer.data_ = static_cast<uint8_t*>(buffer.heap_block_);
    return buffer;
  }
  // Map a huge page more than needed, then unmap the ends so that the start is 2 MiB aligned:
  // the kernel backs only aligned 2 MiB stretches with huge pages. The tail past the last whole
  // huge page stays on small pages (no memory is spent on rounding up).
  const size_t length = round_up(bytes, static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    return make_error(ErrorCode::kIo, "cannot map ", bytes, " bytes: ", std::strerror(errno));
  }
  const auto raw_start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = round_up(raw_start, kHugePage);
  if (start > raw_start) munmap(raw, start - raw_start);
  const uintptr_t end = start + length;
  const uintptr_t raw_end = raw_start + length + kHugePage;
  if (raw_end > end) munmap(reinterpret_cast<void*>(end), raw_end - end);
#ifdef MADV_HUGEPAGE
  // Advice only: where huge pages are off or none are free, small pages serve as before.
  madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);
#endif
  buffer.data_ = reinterpret_cast<uint8_t*>(start);
  buffer.mapped_length_ = length;
  return buffer;
}

Result<LargeBuffer> LargeBuffer::allocate_zeroed(size_t bytes) {
  if (kMapsLargeBuffers && bytes >= kHugePage) return allocate(bytes);  // a fresh mapping reads as zeros
  // There is no aligned calloc: take 63 bytes more and align within the block.
  if (bytes > SIZE_MAX - 64) return make_error(ErrorCode::kIo, "cannot allocate ", bytes, " bytes");
  LargeBuffer buffer;
  buffer.heap_block_ = std::calloc(1, bytes + 63 + (bytes == 0));
  if (buffer.heap_block_ == nullptr) return make_error(ErrorCode::kIo, "cannot allocate ", bytes, " bytes");
  buffer.data_ = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(buffer.heap_block_), 64));
  buffer.size_ = bytes;
  return buffer;
}

void LargeBuffer::release() {
  if (data_ == nullptr) return;
  if (mapped_length_ != 0) {
    munmap(data_, mapped_length_);
  } else {
    std::free(heap_block_);
  }
  data_ = nullptr;
  heap_block_ = nullptr;
  size_ = 0;
  mapped_length_ = 0;
}

LargeBuffer::~LargeBuffer() { release(); }

LargeBuffer::LargeBuffer(LargeBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      heap_block_(std::exchange(other.heap_block_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_length_(std::exchange(other.mapped_length_, 0)) {}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    heap_block_ = std::exchange(other.heap_block_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_length_ = std::exchange(other.mapped_length_, 0);
  }
  return *this;
}

}  // namespace sinter
