#include "backend/cpu/expert_store.h"

#include <thread>

#include "backend/cpu/kernels_pack.h"

namespace sinter::cpu {

ExpertMatrices::ExpertMatrices(const Tensor& weight, LargeBuffer buffer)
    : type_(weight.type),
      n_in_(weight.ne[0]),
      n_out_(weight.ne[1]),
      n_expert_(weight.ne[2]),
      groups_((weight.ne[1] + kGroupRows - 1) / kGroupRows),
      group_bytes_(packed_group_bytes(weight.type, weight.ne[0])),
      file_(static_cast<const uint8_t*>(weight.data)),
      expert_stride_(weight.nb[2]),
      buffer_(std::move(buffer)),
      state_(std::make_unique<std::atomic<uint8_t>[]>(static_cast<size_t>(weight.ne[2]))) {
  for (int64_t e = 0; e < n_expert_; ++e) state_[e].store(kUnpacked, std::memory_order_relaxed);
}

PackedMatrix ExpertMatrices::matrix(int64_t e) const {
  PackedMatrix m;
  m.type = type_;
  m.n_in = n_in_;
  m.n_out = n_out_;
  m.groups = groups_;
  m.group_bytes = group_bytes_;
  m.data = buffer_.data() + static_cast<size_t>(e) * group_bytes_ * static_cast<size_t>(groups_);
  return m;
}

void ExpertMatrices::ensure_packed(int64_t e) const {
  uint8_t expected = kUnpacked;
  if (state_[e].compare_exchange_strong(expected, kPacking, std::memory_order_acquire)) {
    const uint8_t* rows = file_ + static_cast<size_t>(e) * expert_stride_;
    auto* out = const_cast<uint8_t*>(matrix(e).data);  // the buffer is this store's own
    for (int64_t g = 0; g < groups_; ++g) {
      pack_group(type_, n_in_, rows, row_bytes(type_, n_in_), n_out_, g,
                 out + static_cast<size_t>(g) * group_bytes_);
    }
    state_[e].store(kReady, std::memory_order_release);
    return;
  }
  while (state_[e].load(std::memory_order_acquire) != kReady) std::this_thread::yield();
}

int64_t ExpertMatrices::packed_count() const {
  int64_t n = 0;
  for (int64_t e = 0; e < n_expert_; ++e) n += is_packed(e) ? 1 : 0;
  return n;
}

Result<bool> ExpertStore::add(const Tensor& weight, const KernelSet& kernels) {
  const DType type = weight.type;
  if (gemm_kernel(kernels, type) == nullptr || !has_packed_layout(type)) return false;
  if (weight.ne[3] != 1 || weight.ne[0] % dtype_traits(type).block_size != 0 || !weight.is_contiguous())
    return false;
  const int64_t groups = (weight.ne[1] + kGroupRows - 1) / kGroupRows;
  const size_t bytes = packed_group_bytes(type, weight.ne[0]) * static_cast<size_t>(groups) *
                       static_cast<size_t>(weight.ne[2]);
  // Mapped and committed as it is written: experts never packed cost address space only.
  Result<LargeBuffer> buffer = LargeBuffer::allocate(bytes);
  if (!buffer.ok()) return buffer.error().with_context(concat("room to repack the experts of ", weight.name));
  entries_.emplace(weight.data, std::make_unique<ExpertMatrices>(weight, std::move(buffer).value()));
  return true;
}

const ExpertMatrices* ExpertStore::find(const void* data) const {
  const auto it = entries_.find(data);
  return it == entries_.end() ? nullptr : it->second.get();
}

}  // namespace sinter::cpu
