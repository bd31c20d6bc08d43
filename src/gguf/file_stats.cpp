#include "gguf/file_stats.h"

namespace sinter {

GgufFileStats compute_file_stats(const GgufFile& file) {
  GgufFileStats stats;
  for (const auto& tensor : file.tensors()) {
    // The reader checked that each tensor's bytes lie in the file; a tensor's elements are at
    // most ~5 per stored byte (IQ1_S), so these sums cannot overflow for any real file.
    const auto elements = static_cast<uint64_t>(tensor.element_count());
    GgufTypeStats& type = stats.tensors_by_type[std::string(dtype_name(tensor.type))];
    type.count += 1;
    type.bytes += tensor.bytes;
    type.f32_bytes += elements * sizeof(float);
    stats.payload_bytes += tensor.bytes;
    stats.f32_bytes += elements * sizeof(float);
    stats.n_params += elements;
  }
  if (stats.payload_bytes > 0) {
    stats.f32_expansion_ratio =
        static_cast<double>(stats.f32_bytes) / static_cast<double>(stats.payload_bytes);
  }
  return stats;
}

}  // namespace sinter
