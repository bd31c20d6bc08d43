#include "gguf/gguf_writer.h"

#include <cstring>
#include <memory>
#include <unordered_set>

#include "core/atomic_file.h"

namespace sinter {
namespace {

// Serializes into a growing byte buffer (the header and infos are small; tensor data is
// streamed separately).
class ByteSink {
 public:
  template <class T>
  void put(T value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void put_value(const GgufValue& value);
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

void ByteSink::put_value(const GgufValue& value) {
  const auto as_u = [&] { return std::get<uint64_t>(value.data); };
  const auto as_i = [&] { return std::get<int64_t>(value.data); };
  switch (value.type) {
    case GgufType::kUint8: put<uint8_t>(static_cast<uint8_t>(as_u())); break;
    case GgufType::kUint16: put<uint16_t>(static_cast<uint16_t>(as_u())); break;
    case GgufType::kUint32: put<uint32_t>(static_cast<uint32_t>(as_u())); break;
    case GgufType::kUint64: put<uint64_t>(as_u()); break;
    case GgufType::kInt8: put<int8_t>(static_cast<int8_t>(as_i())); break;
    case GgufType::kInt16: put<int16_t>(static_cast<int16_t>(as_i())); break;
    case GgufType::kInt32: put<int32_t>(static_cast<int32_t>(as_i())); break;
    case GgufType::kInt64: put<int64_t>(as_i()); break;
    case GgufType::kFloat32: put<float>(static_cast<float>(std::get<double>(value.data))); break;
    case GgufType::kFloat64: put<double>(std::get<double>(value.data)); break;
    case GgufType::kBool: put<uint8_t>(std::get<bool>(value.data) ? 1 : 0); break;
    case GgufType::kString: put_string(std::get<std::string>(value.data)); break;
    case GgufType::kArray: {
      const auto& array = std::get<GgufArray>(value.data);
      put<uint32_t>(static_cast<uint32_t>(array.element_type));
      put<uint64_t>(array.items.size());
      for (const auto& item : array.items) put_value(item);
      break;
    }
  }
}

uint64_t align_up(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

// True if the value's variant alternative matches what its declared type needs.
bool value_is_consistent(const GgufValue& value) {
  switch (value.type) {
    case GgufType::kUint8: case GgufType::kUint16: case GgufType::kUint32: case GgufType::kUint64:
      return std::holds_alternative<uint64_t>(value.data);
    case GgufType::kInt8: case GgufType::kInt16: case GgufType::kInt32: case GgufType::kInt64:
      return std::holds_alternative<int64_t>(value.data);
    case GgufType::kFloat32: case GgufType::kFloat64: return std::holds_alternative<double>(value.data);
    case GgufType::kBool: return std::holds_alternative<bool>(value.data);
    case GgufType::kString: return std::holds_alternative<std::string>(value.data);
    case GgufType::kArray: {
      const auto* array = std::get_if<GgufArray>(&value.data);
      if (array == nullptr) return false;
      for (const auto& item : array->items) {
        if (item.type != array->element_type || !value_is_consistent(item)) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

Status GgufWriter::add_tensor(std::string name, DType type, std::vector<int64_t> shape, TensorBytesSource source) {
  const auto& traits = dtype_traits(type);
  if (shape.empty() || shape.size() > 4) {
    return make_error(ErrorCode::kInvalidArgument, "tensor '", name, "' has ", shape.size(), " dimensions");
  }
  if (shape[0] % traits.block_size != 0) {
    return make_error(ErrorCode::kInvalidArgument, "tensor '", name, "' row length ", shape[0],
                      " is not a multiple of the ", traits.name, " block size ", traits.block_size);
  }
  for (const auto& t : tensors_) {
    if (t.name == name) return make_error(ErrorCode::kInvalidArgument, "tensor '", name, "' added twice");
  }
  int64_t rows = 1;
  for (size_t i = 1; i < shape.size(); ++i) rows *= shape[i];
  const uint64_t bytes = row_bytes(type, shape[0]) * static_cast<uint64_t>(rows);
  tensors_.push_back({std::move(name), type, std::move(shape), bytes, std::move(source)});
  return ok_status();
}

Status GgufWriter::add_tensor_bytes(std::string name, DType type, std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
  auto shared = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  return add_tensor(std::move(name), type, std::move(shape),
                    [shared]() -> Result<std::vector<uint8_t>> { return *shared; });
}

Status GgufWriter::write(const std::string& path, const std::function<void(size_t, size_t)>& progress) {
  metadata_.set("general.alignment", GgufValue::of_u32(alignment_));
  ByteSink header;
  header.put<uint32_t>(0x46554747);  // "GGUF"
  header.put<uint32_t>(3);
  header.put<uint64_t>(tensors_.size());
  header.put<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_.entries()) {
    if (!value_is_consistent(value)) {
      return make_error(ErrorCode::kInvalidArgument, "metadata key '", key, "' holds a value that does not match its type ",
                        gguf_type_name(value.type));
    }
    header.put_string(key);
    header.put<uint32_t>(static_cast<uint32_t>(value.type));
    header.put_value(value);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    header.put_string(t.name);
    header.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) header.put<uint64_t>(static_cast<uint64_t>(d));
    header.put<uint32_t>(static_cast<uint32_t>(t.type));
    header.put<uint64_t>(offset);
    offset = align_up(offset + t.bytes, alignment_);
  }
  auto& bytes = header.bytes();
  bytes.resize(align_up(bytes.size(), alignment_), 0);

  SINTER_ASSIGN(AtomicFile out, AtomicFile::create(path));
  SINTER_TRY(out.write(bytes.data(), bytes.size()));
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto& t = tensors_[i];
    auto data = t.source();
    if (!data) return data.error().with_context(concat("tensor '", t.name, "'"));
    if (data->size() != t.bytes) {
      return make_error(ErrorCode::kInternal, "tensor '", t.name, "' source produced ", data->size(),
                        " bytes, expected ", t.bytes);
    }
    SINTER_TRY(out.write(data->data(), data->size()));
    SINTER_TRY(out.write_zeros(align_up(t.bytes, alignment_) - t.bytes));
    if (progress) progress(i + 1, tensors_.size());
  }
  return out.commit();
}

}  // namespace sinter
