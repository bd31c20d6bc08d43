// Kernel dispatch (chosen once, by CPU detection) and the activation formats and layouts that
// every ISA level shares.
#include "backend/cpu/kernels.h"

#include "tensor/vec_dot.h"

namespace sinter::cpu {
namespace {

size_t round_up_64(size_t bytes) { return (bytes + 63) / 64 * 64; }

const KernelSet& generic_kernel_set() {
  static const KernelSet set = [] {
    KernelSet s;
    s.level = IsaLevel::kGeneric;
    s.quantize = quantize_column_generic;
    return s;  // no packed kernels: the plain path runs the reference dot products
  }();
  return set;
}

}  // namespace

const KernelSet& kernels_for(IsaLevel level) {
  const KernelSet* set = nullptr;
  if (level == IsaLevel::kAvx512) set = avx512_kernel_set();
  if (level == IsaLevel::kAvx2) set = avx2_kernel_set();
  return set != nullptr ? *set : generic_kernel_set();
}

const KernelSet& active_kernels() {
  static const KernelSet& set = kernels_for(selected_isa_level());
  return set;
}

GemmFn gemm_kernel(const KernelSet& set, DType weight) {
  const auto id = static_cast<uint32_t>(weight);
  return id < 40 ? set.gemm[id] : nullptr;
}

ActivationFormat activation_format(DType weight) {
  const DType format = vec_dot_activation_type(weight);
  switch (weight) {
    case DType::Q4_0: return {format, 32, -8};
    case DType::Q5_0: return {format, 32, -16};
    case DType::Q8_0:
    case DType::IQ4_NL:
    case DType::MXFP4: return {format, 32, -128};  // weights stored as unsigned q + 128
    case DType::Q4_1:
    case DType::Q5_1: return {format, 0, 0};  // Q8_1's s instead of sums
    case DType::Q2_K: return {format, 16, 1};
    case DType::Q3_K: return {format, 16, -4};
    case DType::Q4_K:
    case DType::Q5_K: return {format, 32, 1};
    case DType::Q6_K: return {format, 16, -32};
    case DType::IQ4_XS: return {format, 32, -128};
    default: return {format, 0, 0};
  }
}

ColumnLayout column_layout(const ActivationFormat& format, int64_t n) {
  ColumnLayout layout;
  layout.n = n;
  const auto count = static_cast<size_t>(n);
  switch (format.format) {
    case DType::Q8_0:
    case DType::Q8_1:
    case DType::Q8_K: {
      const auto block = static_cast<size_t>(dtype_traits(format.format).block_size);
      layout.scale_offset = round_up_64(count);
      layout.sum_offset = round_up_64(layout.scale_offset + count / block * sizeof(float));
      const size_t sums = format.format == DType::Q8_1 ? count / 32
                          : format.sum_group > 0       ? count / static_cast<size_t>(format.sum_group)
                                                       : 0;
      layout.bytes = round_up_64(layout.sum_offset + sums * 4);
      break;
    }
    default: layout.bytes = round_up_64(count * sizeof(float)); break;
  }
  return layout;
}

}  // namespace sinter::cpu
