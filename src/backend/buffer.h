// Backend memory: every tensor's bytes live in a Buffer that a backend allocated (weights, KV
// cache, compute arena) or adopted (a weight's pages in the mapped file). A tensor's `data` is
// an address in its buffer's address space (buffer->base() + offset): a host pointer for host
// buffers, a device address for a device backend's. Code above src/backend never dereferences
// it: it writes inputs and reads results through tensor_set / tensor_get, which ask the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "graph/tensor.h"
#include "sinter/result.h"

namespace sinter {

// What a buffer holds; backends choose where each kind lives.
enum class BufferUsage : uint8_t {
  kWeights,  // a model's weights
  kCache,    // the KV cache: zero at first, committed as cells are used
  kCompute,  // a graph's arena: intermediates and batch inputs
};

// The memory a buffer is (its "buffer type").
enum class BufferKind : uint8_t {
  kHost,          // process memory the backend allocated
  kHostMapped,    // pages of the model file, read-only, adopted as they are
  kHostRepacked,  // process memory holding weights rearranged for the backend's kernels
};

const char* buffer_kind_name(BufferKind kind);

class Buffer {
 public:
  Buffer(std::string_view backend, BufferKind kind, size_t size)
      : backend_(backend), kind_(kind), size_(size) {}
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::string_view backend() const { return backend_; }  // the backend that owns it
  BufferKind kind() const { return kind_; }
  size_t size() const { return size_; }
  // Byte 0 as tensors address it.
  virtual uint8_t* base() const = 0;
  // Whether base() is an address this process can read and write (every host kind).
  virtual bool host_visible() const { return true; }

  // Byte copies in and out; offsets are from base(). Host buffers copy with memcpy.
  virtual void set(size_t offset, const void* src, size_t bytes);
  virtual void get(size_t offset, void* dst, size_t bytes) const;
  // Within the buffer (regions must not overlap).
  virtual void copy(size_t dst_offset, size_t src_offset, size_t bytes);

 private:
  std::string_view backend_;
  BufferKind kind_;
  size_t size_;
};

// Host buffers, for host backends: `kCache` memory is zero and committed lazily (LargeBuffer),
// the others uninitialized and 64-byte aligned.
Result<std::unique_ptr<Buffer>> allocate_host_buffer(std::string_view backend, BufferUsage usage,
                                                     size_t bytes);
// Adopts the `size` bytes `t.data` points at, owned elsewhere (the mapped file, a backend's
// repacked store), without copying, and binds `t` to the buffer at offset 0.
std::unique_ptr<Buffer> adopt_host_bytes(std::string_view backend, BufferKind kind, Tensor& t, size_t size);

// Points `t` at `offset` bytes into `buffer`.
void bind_tensor(Tensor& t, Buffer& buffer, size_t offset);
// Where `t`'s bytes start in its buffer.
size_t tensor_offset(const Tensor& t);

// The only access to tensor bytes above src/backend. `offset`/`bytes` are within the tensor's
// bytes (a contiguous tensor's, or a view's span from its first byte).
void tensor_set(Tensor& t, const void* src, size_t offset, size_t bytes);
void tensor_get(const Tensor& t, void* dst, size_t offset, size_t bytes);
// Copies `bytes` from `src_offset` to `dst_offset` of the same tensor.
void tensor_copy_within(Tensor& t, size_t dst_offset, size_t src_offset, size_t bytes);

// Whole-tensor conveniences.
template <class T>
void tensor_set(Tensor& t, const T* values, size_t count) {
  tensor_set(t, values, 0, count * sizeof(T));
}

}  // namespace sinter
