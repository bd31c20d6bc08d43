// A fixed-size array whose elements start as all-zero bytes and whose memory is committed as it
// is first touched (LargeBuffer::allocate_zeroed): the bookkeeping of a KV cache with millions of
// cells costs RAM only for the cells in use. T must be trivially copyable, and all-zero bytes
// must be its empty value.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>

#include "core/large_buffer.h"

namespace sinter {

template <class T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static Result<ZeroedArray> allocate(size_t count) {
    if (count > SIZE_MAX / sizeof(T))
      return make_error(ErrorCode::kInvalidArgument, "an array of ", count, " elements is too large");
    ZeroedArray array;
    SINTER_ASSIGN(array.buffer_, LargeBuffer::allocate_zeroed(count * sizeof(T)));
    array.count_ = count;
    return array;
  }

  size_t size() const { return count_; }
  T* data() { return reinterpret_cast<T*>(buffer_.data()); }
  const T* data() const { return reinterpret_cast<const T*>(buffer_.data()); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  std::span<const T> span() const { return {data(), count_}; }

 private:
  LargeBuffer buffer_;
  size_t count_ = 0;
};

}  // namespace sinter
