// Expert weights of mixture-of-experts layers, [n_in, n_out, n_expert]: each expert is a matrix
// that the dense kernels run on once it is repacked into 16-row groups (kernels_pack.h). The
// tensor stays in the mapped file, and an expert is repacked the first time a batch routes a
// token to it, so the pages of experts that are never chosen are never read; the packed copies
// live in one buffer that is committed only where experts were packed.
#pragma once

#include <atomic>
#include <memory>
#include <unordered_map>

#include "backend/cpu/kernels.h"
#include "core/large_buffer.h"
#include "graph/tensor.h"
#include "sinter/result.h"

namespace sinter::cpu {

class ExpertMatrices {
 public:
  ExpertMatrices(const Tensor& weight, LargeBuffer buffer);

  int64_t count() const { return n_expert_; }
  // Expert e's packed matrix. Only after ensure_packed(e) has returned on some thread and a
  // barrier (or ensure_packed on this one) has ordered its bytes before the read.
  PackedMatrix matrix(int64_t e) const;
  // Packs expert e unless it is packed: the first thread to ask packs it, any other waits for it.
  void ensure_packed(int64_t e) const;
  bool is_packed(int64_t e) const { return state_[e].load(std::memory_order_acquire) == kReady; }
  // How many experts have been packed so far (the rest were never read).
  int64_t packed_count() const;

 private:
  enum : uint8_t { kUnpacked, kPacking, kReady };
  DType type_;
  int64_t n_in_, n_out_, n_expert_;
  int64_t groups_;
  size_t group_bytes_;
  const uint8_t* file_;   // the tensor's bytes in the mapped file
  size_t expert_stride_;  // bytes from one expert's rows to the next (nb[2])
  LargeBuffer buffer_;    // n_expert × groups × group_bytes, committed as experts are packed
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
};

// A backend's expert tensors, found by their (file) data pointer.
class ExpertStore {
 public:
  // Registers a 3-D weight whose type has a packed kernel in `kernels` (others are left alone and
  // run the plain path); nothing of the tensor is read. Returns whether it was registered.
  Result<bool> add(const Tensor& weight, const KernelSet& kernels);
  const ExpertMatrices* find(const void* data) const;

 private:
  std::unordered_map<const void*, std::unique_ptr<ExpertMatrices>> entries_;
};

}  // namespace sinter::cpu
