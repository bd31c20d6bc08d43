#include "backend/buffer.h"

#include <cstring>

#include "core/large_buffer.h"

namespace sinter {
namespace {

// Memory the buffer owns (a LargeBuffer: huge pages for big buffers, zero and lazily committed
// for the cache).
class OwnedHostBuffer final : public Buffer {
 public:
  OwnedHostBuffer(std::string_view backend, LargeBuffer memory)
      : Buffer(backend, BufferKind::kHost, memory.size()), memory_(std::move(memory)) {}
  uint8_t* base() const override { return memory_.data(); }

 private:
  LargeBuffer memory_;
};

// Bytes owned elsewhere.
class WrappedHostBuffer final : public Buffer {
 public:
  WrappedHostBuffer(std::string_view backend, BufferKind kind, const void* bytes, size_t size)
      : Buffer(backend, kind, size), bytes_(static_cast<uint8_t*>(const_cast<void*>(bytes))) {}
  uint8_t* base() const override { return bytes_; }

 private:
  uint8_t* bytes_;
};

}  // namespace

const char* buffer_kind_name(BufferKind kind) {
  switch (kind) {
    case BufferKind::kHost: return "host";
    case BufferKind::kHostMapped: return "host-mapped";
    case BufferKind::kHostRepacked: return "host-repacked";
  }
  return "?";
}

void Buffer::set(size_t offset, const void* src, size_t bytes) { std::memcpy(base() + offset, src, bytes); }
void Buffer::get(size_t offset, void* dst, size_t bytes) const { std::memcpy(dst, base() + offset, bytes); }
void Buffer::copy(size_t dst_offset, size_t src_offset, size_t bytes) {
  std::memcpy(base() + dst_offset, base() + src_offset, bytes);
}

Result<std::unique_ptr<Buffer>> allocate_host_buffer(std::string_view backend, BufferUsage usage,
                                                     size_t bytes) {
  // At least one byte, so that every buffer has an address.
  Result<LargeBuffer> memory = usage == BufferUsage::kCache
                                   ? LargeBuffer::allocate_zeroed(bytes == 0 ? 1 : bytes)
                                   : LargeBuffer::allocate(bytes == 0 ? 1 : bytes);
  if (!memory) return memory.error();
  return std::unique_ptr<Buffer>(std::make_unique<OwnedHostBuffer>(backend, std::move(memory).value()));
}

std::unique_ptr<Buffer> adopt_host_bytes(std::string_view backend, BufferKind kind, Tensor& t, size_t size) {
  auto buffer = std::make_unique<WrappedHostBuffer>(backend, kind, t.data, size);
  bind_tensor(t, *buffer, 0);
  return buffer;
}

size_t tensor_offset(const Tensor& t) {
  return static_cast<size_t>(static_cast<const uint8_t*>(t.data) - t.buffer->base());
}

void bind_tensor(Tensor& t, Buffer& buffer, size_t offset) {
  t.buffer = &buffer;
  t.data = buffer.base() + offset;
}

void tensor_set(Tensor& t, const void* src, size_t offset, size_t bytes) {
  t.buffer->set(tensor_offset(t) + offset, src, bytes);
}

void tensor_get(const Tensor& t, void* dst, size_t offset, size_t bytes) {
  t.buffer->get(tensor_offset(t) + offset, dst, bytes);
}

void tensor_copy_within(Tensor& t, size_t dst_offset, size_t src_offset, size_t bytes) {
  const size_t base = tensor_offset(t);
  t.buffer->copy(base + dst_offset, base + src_offset, bytes);
}

}  // namespace sinter
