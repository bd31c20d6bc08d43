// Large, long-lived buffers (the repacked weights): placed on transparent huge pages where the
// system offers them. Generation streams every weight once per token; with 4 KiB pages that is a
// TLB miss (a two-level page walk under a hypervisor) every 4 KiB, with 2 MiB pages one per 2 MiB.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sinter/result.h"

namespace sinter {

class LargeBuffer {
 public:
  // Huge pages are 2 MiB on x86-64 and the common arm64 kernels.
  static constexpr size_t kHugePage = size_t{2} << 20;
  // False in builds with AddressSanitizer, which checks heap bounds, not mappings.
  static const bool kMapsLargeBuffers;

  // `bytes` of uninitialized memory, 64-byte aligned at least. Buffers of a huge page or more are
  // mapped on their own, 2 MiB aligned, and advised for huge pages (where kMapsLargeBuffers);
  // smaller ones come from the heap.
  static Result<LargeBuffer> allocate(size_t bytes);
  // The same, all bytes zero, and committed as it is touched: a mapped buffer is zero without
  // being written, and a heap buffer comes from calloc, which takes large blocks fresh from the
  // system without clearing them (glibc and AddressSanitizer alike). Memory that is never used
  // (the unused cells of a large KV cache) costs address space, not RAM.
  static Result<LargeBuffer> allocate_zeroed(size_t bytes);

  LargeBuffer() = default;
  ~LargeBuffer();
  LargeBuffer(LargeBuffer&& other) noexcept;
  LargeBuffer& operator=(LargeBuffer&& other) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Whether the buffer is its own mapping (advised for huge pages) rather than heap memory.
  bool mapped() const { return mapped_length_ != 0; }

 private:
  void release();
  uint8_t* data_ = nullptr;
  void* heap_block_ = nullptr;  // what to free() for heap memory (data_ is aligned within it)
  size_t size_ = 0;
  size_t mapped_length_ = 0;  // bytes to unmap; 0 for heap memory
};

}  // namespace sinter
