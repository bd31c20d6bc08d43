#include "gguf/gguf_writer.h"

#include <cstring>
#include <memory>
#include <utility>

#include "core/atomic_file.h"
#include "gguf/gguf_file.h"

namespace sinter {
namespace {

constexpr std::string_view kAlignmentKey = "general.alignment";

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
  void put_array(const GgufArray& array);
  void put_value(const GgufValue& value);
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

void ByteSink::put_array(const GgufArray& array) {
  put<uint32_t>(static_cast<uint32_t>(array.element_type));
  put<uint64_t>(array.size());
  if (array.element_type == GgufType::kString) {
    for (const auto& s : array.strings) put_string(s);
  } else if (array.element_type == GgufType::kArray) {
    for (const auto& nested : array.arrays) put_array(nested);
  } else {
    bytes_.insert(bytes_.end(), array.scalar_bytes.begin(), array.scalar_bytes.end());
  }
}

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
    case GgufType::kArray: put_array(std::get<GgufArray>(value.data)); break;
  }
}

uint64_t align_up(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

// Why an array cannot be written as it is, or "" if it can. `depth` as the reader counts it.
std::string array_problem(const GgufArray& array, int depth) {
  if (depth >= kGgufMaxArrayDepth)
    return concat("has arrays nested deeper than ", kGgufMaxArrayDepth, " levels");
  const auto type = static_cast<uint32_t>(array.element_type);
  if (type >= kGgufTypeCount) return concat("is an array of unknown element type ", type);
  const bool strings = array.element_type == GgufType::kString;
  const bool arrays = array.element_type == GgufType::kArray;
  if ((!strings && !array.strings.empty()) || (!arrays && !array.arrays.empty()) ||
      ((strings || arrays) && !array.scalar_bytes.empty())) {
    return concat("is an array of ", gguf_type_name(array.element_type), " holding elements of another kind");
  }
  if (strings) return {};
  if (arrays) {
    for (const auto& nested : array.arrays) {
      if (std::string problem = array_problem(nested, depth + 1); !problem.empty()) return problem;
    }
    return {};
  }
  const size_t width = gguf_scalar_size(array.element_type);
  if (array.scalar_bytes.size() % width != 0) {
    return concat("is an array of ", gguf_type_name(array.element_type), " with ", array.scalar_bytes.size(),
                  " bytes, not a multiple of ", width);
  }
  if (array.element_type == GgufType::kBool) {
    for (uint8_t b : array.scalar_bytes) {
      if (b > 1) return concat("is an array of bool holding the byte ", int{b});
    }
  }
  return {};
}

// Why a value cannot be written as it is (its variant does not match its declared type, or the
// number does not fit it), or "" if it can.
std::string value_problem(const GgufValue& value) {
  const auto mismatch = [&] {
    return concat("is declared ", gguf_type_name(value.type), " but holds a value of another kind");
  };
  const auto fits = [&]<class T>() -> std::string {
    if (const auto* u = std::get_if<uint64_t>(&value.data)) {
      if (std::is_unsigned_v<T> && std::in_range<T>(*u)) return {};
      return std::is_unsigned_v<T>
                 ? concat("holds ", *u, ", which does not fit in ", gguf_type_name(value.type))
                 : mismatch();
    }
    if (const auto* s = std::get_if<int64_t>(&value.data)) {
      if (std::is_signed_v<T> && std::in_range<T>(*s)) return {};
      return std::is_signed_v<T>
                 ? concat("holds ", *s, ", which does not fit in ", gguf_type_name(value.type))
                 : mismatch();
    }
    return mismatch();
  };
  switch (value.type) {
    case GgufType::kUint8: return fits.operator()<uint8_t>();
    case GgufType::kUint16: return fits.operator()<uint16_t>();
    case GgufType::kUint32: return fits.operator()<uint32_t>();
    case GgufType::kUint64: return fits.operator()<uint64_t>();
    case GgufType::kInt8: return fits.operator()<int8_t>();
    case GgufType::kInt16: return fits.operator()<int16_t>();
    case GgufType::kInt32: return fits.operator()<int32_t>();
    case GgufType::kInt64: return fits.operator()<int64_t>();
    case GgufType::kFloat32:
    case GgufType::kFloat64: return std::holds_alternative<double>(value.data) ? std::string() : mismatch();
    case GgufType::kBool: return std::holds_alternative<bool>(value.data) ? std::string() : mismatch();
    case GgufType::kString:
      return std::holds_alternative<std::string>(value.data) ? std::string() : mismatch();
    case GgufType::kArray: {
      const auto* array = std::get_if<GgufArray>(&value.data);
      return array == nullptr ? mismatch() : array_problem(*array, 0);
    }
  }
  return concat("has unknown type ", static_cast<uint32_t>(value.type));
}

}  // namespace

Status GgufWriter::add_tensor(std::string name, DType type, std::vector<int64_t> shape,
                              TensorBytesSource source) {
  if (const std::string problem = gguf_name_problem(name); !problem.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "tensor name ", problem);
  }
  if (tensor_names_.count(name) != 0) {
    return make_error(ErrorCode::kInvalidArgument, "tensor '", name, "' added twice");
  }
  const auto& traits = dtype_traits(type);
  if (shape.empty() || shape.size() > static_cast<size_t>(kGgufMaxDims)) {
    return make_error(ErrorCode::kInvalidArgument, "tensor '", name, "' has ", shape.size(),
                      " dimensions (1 to ", kGgufMaxDims, " allowed)");
  }
  int64_t elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0 || __builtin_mul_overflow(elements, shape[d], &elements)) {
      return make_error(ErrorCode::kInvalidArgument, "tensor '", name, "' dimension ", d, " = ", shape[d],
                        " is not positive or makes the element count overflow");
    }
  }
  if (shape[0] % traits.block_size != 0) {
    return make_error(ErrorCode::kInvalidArgument, "tensor '", name, "' row length ", shape[0],
                      " is not a multiple of the ", traits.name, " block size ", traits.block_size);
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(elements / traits.block_size), traits.block_bytes,
                             &bytes)) {
    return make_error(ErrorCode::kInvalidArgument, "tensor '", name, "' byte size overflows");
  }
  tensor_names_.insert(name);
  tensors_.push_back({std::move(name), type, std::move(shape), bytes, std::move(source)});
  return ok_status();
}

Status GgufWriter::add_tensor_bytes(std::string name, DType type, std::vector<int64_t> shape,
                                    std::vector<uint8_t> bytes) {
  auto shared = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  return add_tensor(std::move(name), type, std::move(shape),
                    [shared]() -> Result<std::vector<uint8_t>> { return *shared; });
}

Status GgufWriter::write(const std::string& path, const std::function<void(size_t, size_t)>& progress) const {
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) {
    return make_error(ErrorCode::kInvalidArgument, "GGUF alignment ", alignment_, " is not a power of two");
  }
  const GgufValue alignment_value = GgufValue::of_u32(alignment_);
  const bool append_alignment = alignment_ != kGgufDefaultAlignment && !metadata_.contains(kAlignmentKey);

  ByteSink header;
  header.put<uint32_t>(0x46554747);  // "GGUF"
  header.put<uint32_t>(3);
  header.put<uint64_t>(tensors_.size());
  header.put<uint64_t>(metadata_.size() + (append_alignment ? 1 : 0));
  for (const auto& [key, stored] : metadata_.entries()) {
    const GgufValue& value = key == kAlignmentKey ? alignment_value : stored;
    if (const std::string problem = gguf_name_problem(key); !problem.empty()) {
      return make_error(ErrorCode::kInvalidArgument, "metadata key ", problem);
    }
    if (const std::string problem = value_problem(value); !problem.empty()) {
      return make_error(ErrorCode::kInvalidArgument, "metadata key '", key, "' ", problem);
    }
    header.put_string(key);
    header.put<uint32_t>(static_cast<uint32_t>(value.type));
    header.put_value(value);
  }
  if (append_alignment) {
    header.put_string(std::string(kAlignmentKey));
    header.put<uint32_t>(static_cast<uint32_t>(GgufType::kUint32));
    header.put_value(alignment_value);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    header.put_string(t.name);
    header.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) header.put<uint64_t>(static_cast<uint64_t>(d));
    header.put<uint32_t>(static_cast<uint32_t>(t.type));
    header.put<uint64_t>(offset);
    if (__builtin_add_overflow(offset, align_up(t.bytes, alignment_), &offset)) {
      return make_error(ErrorCode::kInvalidArgument, "the tensors' total size overflows");
    }
  }
  auto& bytes = header.bytes();
  bytes.resize(align_up(bytes.size(), alignment_), 0);

  // Until commit() the bytes go to a temporary beside `path`, removed if anything below fails.
  SINTER_ASSIGN(AtomicFile out, AtomicFile::create(path));
  SINTER_TRY(out.write(bytes.data(), bytes.size()));
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto& t = tensors_[i];
    auto data = t.source();
    if (!data) return data.error().with_context(concat("tensor '", t.name, "'"));
    if (data->size() != t.bytes) {
      return make_error(ErrorCode::kInvalidArgument, "tensor '", t.name, "' source produced ", data->size(),
                        " bytes, expected ", t.bytes);
    }
    SINTER_TRY(out.write(data->data(), data->size()));
    SINTER_TRY(out.write_zeros(align_up(t.bytes, alignment_) - t.bytes));
    if (progress) progress(i + 1, tensors_.size());
  }
  return out.commit();
}

}  // namespace sinter
