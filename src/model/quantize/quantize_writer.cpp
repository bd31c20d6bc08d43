#include "model/quantize/quantize_writer.h"

#include <cstring>

#include "gguf/gguf_writer.h"
#include "tensor/convert.h"

namespace sinter {
namespace {

// Split keys describe the input's shards; the output is one file.
constexpr std::string_view kDroppedKeys[] = {"split.no", "split.count", "split.tensors.count"};

// One tensor's output bytes: the input's as they are, or F32 (converted if need be) quantized.
Result<std::vector<uint8_t>> convert_tensor(const GgufTensorInfo& info, const TensorPlan& t,
                                            ThreadPool* pool) {
  if (!t.converted()) return std::vector<uint8_t>(info.data, info.data + info.bytes);
  const int64_t row_length = info.row_length();
  const int64_t rows = info.row_count();
  const float* values = nullptr;
  std::vector<float> widened;
  if (t.source_type == DType::F32 && reinterpret_cast<uintptr_t>(info.data) % alignof(float) == 0) {
    values = reinterpret_cast<const float*>(info.data);
  } else {
    widened.resize(static_cast<size_t>(row_length * rows));
    if (auto status = dequantize_rows(t.source_type, info.data, row_length, rows, widened.data(), pool);
        !status) {
      return status.error().with_context(concat("tensor '", info.name, "'"));
    }
    values = widened.data();
  }
  std::vector<uint8_t> bytes(t.target_bytes());
  if (auto status = quantize_rows(t.target_type, values, row_length, rows, bytes.data(), pool); !status) {
    return status.error().with_context(concat("tensor '", info.name, "'"));
  }
  return bytes;
}

}  // namespace

Status write_quantized_model(const GgufFile& file, const QuantizePlan& plan, const std::string& path,
                             ThreadPool* pool, const std::function<void(size_t, size_t)>& progress) {
  if (plan.tensors.size() != file.tensors().size()) {
    return make_error(ErrorCode::kInvalidArgument, "the quantization plan has ", plan.tensors.size(),
                      " tensors, the model ", file.tensors().size());
  }
  GgufWriter writer;
  writer.set_alignment(file.alignment());
  Metadata& md = writer.metadata();
  for (const auto& [key, value] : file.metadata().entries()) md.set(key, value);
  for (std::string_view key : kDroppedKeys) md.erase(key);
  md.set("general.quantization_version", GgufValue::of_u32(kQuantizationVersion));
  md.set("general.file_type", GgufValue::of_u32(mixture(plan.mixture).file_type));

  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const GgufTensorInfo* info = &file.tensors()[i];
    const TensorPlan* t = &plan.tensors[i];
    if (t->name != info->name) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the quantization plan does not match the model at tensor ", i, " ('", t->name,
                        "' vs '", info->name, "')");
    }
    SINTER_TRY(writer.add_tensor(info->name, t->target_type, info->shape,
                                 [info, t, pool] { return convert_tensor(*info, *t, pool); }));
  }
  // Progress in output bytes, so that one large tensor counts for what it weighs.
  std::vector<uint64_t> bytes_done(plan.tensors.size() + 1, 0);
  for (size_t i = 0; i < plan.tensors.size(); ++i)
    bytes_done[i + 1] = bytes_done[i] + plan.tensors[i].target_bytes();
  return writer.write(path, [&](size_t done, size_t total) {
    if (progress && done <= plan.tensors.size() && total == plan.tensors.size()) {
      progress(bytes_done[done], bytes_done.back());
    }
  });
}

}  // namespace sinter
