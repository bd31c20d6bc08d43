// Parsing of GGUF v2/v3: header, metadata, tensor infos, data section. Every read goes through
// Cursor, which checks the remaining length first and reports the offset of what it could not
// read.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "core/utf8.h"
#include "gguf/gguf_file.h"

namespace sinter {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian uint32
// Keys and tensor names longer than this are malformed (llama.cpp's names are < 64 bytes).
constexpr uint64_t kMaxNameLength = 1 << 16;

class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size, std::string_view file) : data_(data), size_(size), file_(file) {}

  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return size_ - offset_; }

  Error error_here(const std::string& what) const { return error_at(offset_, what); }
  Error error_at(uint64_t offset, const std::string& what) const {
    return make_error(ErrorCode::kFormat, file_, ": ", what, " (at byte offset ", offset, ")");
  }

  template <class T>
  Result<T> read(const char* what) {
    if (remaining() < sizeof(T)) {
      return error_here(concat("file ends inside ", what, " (needs ", sizeof(T), " bytes, ",
                               remaining(), " left)"));
    }
    T value;
    std::memcpy(&value, data_ + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  Result<std::string> read_string(const char* what) {
    const uint64_t start = offset_;
    SINTER_ASSIGN(const uint64_t length, read<uint64_t>(what));
    if (length > remaining()) {
      return error_at(start, concat(what, " has length ", length, " but only ", remaining(),
                                    " bytes remain in the file"));
    }
    std::string value(reinterpret_cast<const char*>(data_ + offset_), static_cast<size_t>(length));
    offset_ += length;
    return value;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t offset_ = 0;
  std::string_view file_;
};

Result<GgufValue> read_value(Cursor& cursor, GgufType type, int depth, const std::string& key);

Result<GgufValue> read_scalar(Cursor& cursor, GgufType type, const char* what) {
  switch (type) {
    case GgufType::kUint8: { SINTER_ASSIGN(auto v, cursor.read<uint8_t>(what)); return GgufValue{type, uint64_t{v}}; }
    case GgufType::kUint16: { SINTER_ASSIGN(auto v, cursor.read<uint16_t>(what)); return GgufValue{type, uint64_t{v}}; }
    case GgufType::kUint32: { SINTER_ASSIGN(auto v, cursor.read<uint32_t>(what)); return GgufValue{type, uint64_t{v}}; }
    case GgufType::kUint64: { SINTER_ASSIGN(auto v, cursor.read<uint64_t>(what)); return GgufValue{type, v}; }
    case GgufType::kInt8: { SINTER_ASSIGN(auto v, cursor.read<int8_t>(what)); return GgufValue{type, int64_t{v}}; }
    case GgufType::kInt16: { SINTER_ASSIGN(auto v, cursor.read<int16_t>(what)); return GgufValue{type, int64_t{v}}; }
    case GgufType::kInt32: { SINTER_ASSIGN(auto v, cursor.read<int32_t>(what)); return GgufValue{type, int64_t{v}}; }
    case GgufType::kInt64: { SINTER_ASSIGN(auto v, cursor.read<int64_t>(what)); return GgufValue{type, v}; }
    case GgufType::kFloat32: { SINTER_ASSIGN(auto v, cursor.read<float>(what)); return GgufValue{type, double{v}}; }
    case GgufType::kFloat64: { SINTER_ASSIGN(auto v, cursor.read<double>(what)); return GgufValue{type, v}; }
    case GgufType::kBool: {
      const uint64_t at = cursor.offset();
      SINTER_ASSIGN(auto v, cursor.read<uint8_t>(what));
      if (v > 1) return cursor.error_at(at, concat(what, " is a bool with value ", int{v}));
      return GgufValue{type, v == 1};
    }
    case GgufType::kString: { SINTER_ASSIGN(auto v, cursor.read_string(what)); return GgufValue{type, std::move(v)}; }
    case GgufType::kArray: break;
  }
  return cursor.error_here("internal: read_scalar called for an array");
}

Result<GgufType> read_type(Cursor& cursor, const std::string& key, const char* what) {
  const uint64_t at = cursor.offset();
  SINTER_ASSIGN(const uint32_t raw, cursor.read<uint32_t>(what));
  if (raw >= kGgufTypeCount) {
    return cursor.error_at(at, concat("metadata key '", key, "' has unknown value type ", raw));
  }
  return static_cast<GgufType>(raw);
}

Result<GgufValue> read_array(Cursor& cursor, int depth, const std::string& key) {
  const uint64_t start = cursor.offset();
  if (depth >= kGgufMaxArrayDepth) {
    return cursor.error_here(concat("metadata key '", key, "' has arrays nested deeper than ",
                                    kGgufMaxArrayDepth));
  }
  SINTER_ASSIGN(const GgufType element_type, read_type(cursor, key, "array element type"));
  SINTER_ASSIGN(const uint64_t count, cursor.read<uint64_t>("array length"));
  // Every element takes at least this many bytes: rejects absurd counts before allocating.
  const uint64_t min_element_bytes = element_type == GgufType::kString  ? 8
                                     : element_type == GgufType::kArray ? 12
                                                                        : gguf_scalar_size(element_type);
  if (count > cursor.remaining() / min_element_bytes) {
    return cursor.error_at(start, concat("metadata key '", key, "' declares ", count, " ",
                                         gguf_type_name(element_type), " elements but only ",
                                         cursor.remaining(), " bytes remain"));
  }
  GgufArray array{element_type, {}};
  array.items.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    SINTER_ASSIGN(GgufValue item, read_value(cursor, element_type, depth + 1, key));
    array.items.push_back(std::move(item));
  }
  return GgufValue{GgufType::kArray, std::move(array)};
}

Result<GgufValue> read_value(Cursor& cursor, GgufType type, int depth, const std::string& key) {
  if (type == GgufType::kArray) return read_array(cursor, depth, key);
  return read_scalar(cursor, type, "metadata value");
}

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

uint64_t align_up(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

// Multiplies with overflow detection (int64 range, as ggml stores element counts).
bool checked_multiply(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace

int64_t GgufTensorInfo::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string GgufTensorInfo::shape_string() const {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

Result<GgufFile> GgufFile::parse(std::shared_ptr<MappedFile> file) {
  GgufFile gguf;
  SINTER_TRY(gguf.add_shard(std::move(file), 0));
  return gguf;
}

Status GgufFile::add_shard(std::shared_ptr<MappedFile> file, uint32_t shard_index) {
  Cursor cursor(file->data(), file->size(), file->path());
  SINTER_ASSIGN(const uint32_t magic, cursor.read<uint32_t>("the magic number"));
  if (magic != kMagic) return cursor.error_at(0, "not a GGUF file (the magic number is not \"GGUF\")");
  const uint64_t version_at = cursor.offset();
  SINTER_ASSIGN(const uint32_t version, cursor.read<uint32_t>("the version"));
  if (version != 2 && version != 3) {
    return cursor.error_at(version_at, concat("GGUF version ", version, " is not supported (only 2 and 3)"));
  }
  const uint64_t counts_at = cursor.offset();
  SINTER_ASSIGN(const uint64_t tensor_count, cursor.read<uint64_t>("the tensor count"));
  SINTER_ASSIGN(const uint64_t kv_count, cursor.read<uint64_t>("the metadata count"));
  // A key-value pair takes at least 13 bytes, a tensor info at least 24.
  if (kv_count > cursor.remaining() / 13) {
    return cursor.error_at(counts_at + 8, concat("metadata count ", kv_count, " cannot fit in the ",
                                                 cursor.remaining(), " bytes that remain"));
  }
  if (tensor_count > cursor.remaining() / 24) {
    return cursor.error_at(counts_at, concat("tensor count ", tensor_count, " cannot fit in the ",
                                             cursor.remaining(), " bytes that remain"));
  }

  Metadata metadata;
  for (uint64_t i = 0; i < kv_count; ++i) {
    const uint64_t key_at = cursor.offset();
    SINTER_ASSIGN(std::string key, cursor.read_string("a metadata key"));
    if (key.empty() || key.size() > kMaxNameLength) {
      return cursor.error_at(key_at, concat("metadata key ", i, " has invalid length ", key.size()));
    }
    if (!utf8_is_valid(key)) return cursor.error_at(key_at, concat("metadata key ", i, " is not valid UTF-8"));
    if (metadata.contains(key)) return cursor.error_at(key_at, concat("metadata key '", key, "' appears twice"));
    SINTER_ASSIGN(const GgufType type, read_type(cursor, key, "a metadata value type"));
    SINTER_ASSIGN(GgufValue value, read_value(cursor, type, 0, key));
    metadata.set(key, std::move(value));
  }

  uint32_t alignment = kGgufDefaultAlignment;
  if (metadata.contains("general.alignment")) {
    auto value = metadata.get<uint32_t>("general.alignment");
    if (!value) return value.error().with_context(file->path());
    if (!is_power_of_two(*value)) {
      return make_error(ErrorCode::kFormat, file->path(), ": general.alignment ", *value,
                        " is not a power of two");
    }
    alignment = *value;
  }

  std::vector<GgufTensorInfo> infos;
  std::unordered_set<std::string> seen_names;
  infos.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    const uint64_t info_at = cursor.offset();
    GgufTensorInfo info;
    SINTER_ASSIGN(info.name, cursor.read_string("a tensor name"));
    if (info.name.empty() || info.name.size() > kMaxNameLength || !utf8_is_valid(info.name)) {
      return cursor.error_at(info_at, concat("tensor ", i, " has an invalid name"));
    }
    if (!seen_names.insert(info.name).second) {
      return cursor.error_at(info_at, concat("tensor name '", info.name, "' appears twice"));
    }
    const uint64_t dims_at = cursor.offset();
    SINTER_ASSIGN(const uint32_t n_dims, cursor.read<uint32_t>("a tensor's dimension count"));
    if (n_dims == 0 || n_dims > kGgufMaxDims) {
      return cursor.error_at(dims_at, concat("tensor '", info.name, "' has ", n_dims,
                                             " dimensions (1 to ", kGgufMaxDims, " allowed)"));
    }
    int64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim_at = cursor.offset();
      SINTER_ASSIGN(const uint64_t dim, cursor.read<uint64_t>("a tensor dimension"));
      if (dim == 0 || dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          !checked_multiply(elements, static_cast<int64_t>(dim), &elements)) {
        return cursor.error_at(dim_at, concat("tensor '", info.name, "' dimension ", d, " = ", dim,
                                              " is zero or makes the element count overflow"));
      }
      info.shape.push_back(static_cast<int64_t>(dim));
    }
    const uint64_t type_at = cursor.offset();
    SINTER_ASSIGN(const uint32_t type_id, cursor.read<uint32_t>("a tensor type"));
    const DTypeTraits* traits = dtype_traits(type_id);
    if (traits == nullptr) {
      return cursor.error_at(type_at, concat("tensor '", info.name, "' has unknown type id ", type_id));
    }
    info.type = traits->type;
    if (info.shape[0] % traits->block_size != 0) {
      return cursor.error_at(dims_at, concat("tensor '", info.name, "' row length ", info.shape[0],
                                             " is not a multiple of the ", traits->name,
                                             " block size ", traits->block_size));
    }
    const uint64_t blocks = static_cast<uint64_t>(elements / traits->block_size);
    if (blocks > std::numeric_limits<uint64_t>::max() / traits->block_bytes) {
      return cursor.error_at(dims_at, concat("tensor '", info.name, "' byte size overflows"));
    }
    info.bytes = blocks * traits->block_bytes;
    const uint64_t offset_at = cursor.offset();
    SINTER_ASSIGN(info.offset, cursor.read<uint64_t>("a tensor offset"));
    if (info.offset % alignment != 0) {
      return cursor.error_at(offset_at, concat("tensor '", info.name, "' offset ", info.offset,
                                               " is not a multiple of the alignment ", alignment));
    }
    info.shard = shard_index;
    infos.push_back(std::move(info));
  }

  // The data section starts at the next multiple of the alignment after the tensor infos.
  const uint64_t data_start = align_up(cursor.offset(), alignment);
  if (tensor_count > 0 && data_start > file->size()) {
    return cursor.error_here(concat("file ends before its data section (expected at byte ", data_start, ")"));
  }
  const uint64_t data_size = file->size() - std::min<uint64_t>(data_start, file->size());

  // Extents: inside the file and not overlapping each other.
  std::vector<const GgufTensorInfo*> by_offset;
  for (auto& info : infos) {
    if (info.offset > data_size || info.bytes > data_size - info.offset) {
      return make_error(ErrorCode::kFormat, file->path(), ": tensor '", info.name, "' data [",
                        info.offset, ", ", info.offset + info.bytes, ") of the data section lies outside the file (data section is ",
                        data_size, " bytes from byte offset ", data_start, ")");
    }
    info.file_offset = data_start + info.offset;
    info.data = file->data() + info.file_offset;
    by_offset.push_back(&info);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const auto* previous = by_offset[i - 1];
    if (previous->offset + previous->bytes > by_offset[i]->offset) {
      return make_error(ErrorCode::kFormat, file->path(), ": tensors '", previous->name, "' and '",
                        by_offset[i]->name, "' overlap (data offsets ", previous->offset, " and ",
                        by_offset[i]->offset, ")");
    }
  }

  if (shard_index == 0) {
    version_ = version;
    alignment_ = alignment;
    metadata_ = std::move(metadata);
  }
  for (auto& info : infos) {
    tensor_index_.emplace(info.name, tensors_.size());
    tensors_.push_back(std::move(info));
  }
  shards_.push_back(std::move(file));
  return ok_status();
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

uint64_t GgufFile::file_bytes() const {
  uint64_t total = 0;
  for (const auto& shard : shards_) total += shard->size();
  return total;
}

std::string gguf_shard_path(const std::string& first, uint32_t index, uint32_t count) {
  // Expect "<prefix>-00001-of-NNNNN.gguf".
  char expected_tail[64];
  std::snprintf(expected_tail, sizeof expected_tail, "-%05u-of-%05u.gguf", 1u, count);
  const std::string tail(expected_tail);
  if (first.size() < tail.size() || first.compare(first.size() - tail.size(), tail.size(), tail) != 0) {
    return {};
  }
  char shard_tail[64];
  std::snprintf(shard_tail, sizeof shard_tail, "-%05u-of-%05u.gguf", index + 1, count);
  return first.substr(0, first.size() - tail.size()) + shard_tail;
}

Result<GgufFile> GgufFile::open(const std::string& path) {
  SINTER_ASSIGN(auto file, MappedFile::open(path));
  GgufFile gguf;
  SINTER_TRY(gguf.add_shard(std::move(file), 0));
  SINTER_ASSIGN(const auto split_count, gguf.metadata_.find<uint32_t>("split.count"));
  if (!split_count || *split_count <= 1) return gguf;

  SINTER_ASSIGN(const auto split_no, gguf.metadata_.find<uint32_t>("split.no"));
  if (split_no && *split_no != 0) {
    return make_error(ErrorCode::kInvalidArgument, path, " is shard ", *split_no + 1, " of ",
                      *split_count, "; open the first shard");
  }
  for (uint32_t i = 1; i < *split_count; ++i) {
    const std::string shard_path = gguf_shard_path(path, i, *split_count);
    if (shard_path.empty()) {
      return make_error(ErrorCode::kInvalidArgument, path, " declares split.count ", *split_count,
                        " but is not named like NAME-00001-of-", *split_count, ".gguf");
    }
    SINTER_ASSIGN(auto shard_file, MappedFile::open(shard_path));
    GgufFile shard_probe;
    // Check the shard's own split.no before merging its tensors.
    SINTER_TRY(shard_probe.add_shard(shard_file, i));
    SINTER_ASSIGN(const auto shard_no, shard_probe.metadata_.find<uint32_t>("split.no"));
    if (!shard_no || *shard_no != i) {
      return make_error(ErrorCode::kFormat, shard_path, ": split.no is ",
                        shard_no ? std::to_string(*shard_no) : std::string("missing"), ", expected ", i);
    }
    for (auto& info : shard_probe.tensors_) {
      if (gguf.tensor_index_.count(info.name) != 0) {
        return make_error(ErrorCode::kFormat, shard_path, ": tensor '", info.name,
                          "' also appears in an earlier shard");
      }
      gguf.tensor_index_.emplace(info.name, gguf.tensors_.size());
      gguf.tensors_.push_back(std::move(info));
    }
    gguf.shards_.push_back(std::move(shard_file));
  }
  SINTER_ASSIGN(const auto expected_tensors, gguf.metadata_.find<uint64_t>("split.tensors.count"));
  if (expected_tensors && *expected_tensors != gguf.tensors_.size()) {
    return make_error(ErrorCode::kFormat, path, ": split.tensors.count is ", *expected_tensors,
                      " but the shards hold ", gguf.tensors_.size(), " tensors");
  }
  return gguf;
}

}  // namespace sinter
