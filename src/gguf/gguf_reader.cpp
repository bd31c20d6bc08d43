// Parsing of one GGUF v2/v3 file: header, metadata, tensor infos, data section. Every read goes
// through Cursor, which checks the remaining length first and reports the offset of what it
// could not read; every count is checked against the bytes left before anything is allocated,
// so parsed metadata never takes more than a few times the file's own size.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "core/utf8.h"
#include "gguf/gguf_shard.h"

namespace sinter {
namespace {

static_assert(std::endian::native == std::endian::little,
              "GGUF files are little-endian; array elements are kept as the file's bytes");

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian uint32
// Keys and tensor names longer than this are malformed (llama.cpp's names are < 64 bytes).
constexpr uint64_t kMaxNameLength = 1 << 16;
// The fewest bytes a metadata entry can take: key length (8) + a 1-byte key + type (4) + a
// 1-byte value; and a tensor info: name length (8) + a 1-byte name + n_dims (4) + one
// dimension (8) + type (4) + offset (8).
constexpr uint64_t kMinEntryBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;
// Arrays of arrays grow as they are read instead of trusting the declared count up front.
constexpr uint64_t kMaxNestedReserve = 1024;

// Key or tensor name for a message: printable ASCII as is, anything else as \xNN.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text.substr(0, 200)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > 200) out += "...";
  return out;
}

// Checked reads from the file's bytes. `what` (and `name`, when given) say what was being read
// ("the value of metadata key" 'general.name'); they are only formatted when a read fails.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size, std::string_view file) : data_(data), size_(size), file_(file) {}

  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return size_ - offset_; }
  const uint8_t* here() const { return data_ + offset_; }
  void skip(uint64_t bytes) { offset_ += bytes; }  // bytes <= remaining(), checked by the caller

  Error error_at(uint64_t offset, const std::string& problem) const {
    return make_error(ErrorCode::kFormat, file_, ": ", problem, " (at byte offset ", offset, ")");
  }

  template <class T>
  Result<T> read(std::string_view what, std::string_view name = {}) {
    if (remaining() < sizeof(T)) {
      return error_at(offset_, concat("file ends inside ", describe(what, name), " (needs ", sizeof(T),
                                      " bytes, ", remaining(), " left)"));
    }
    T value;
    std::memcpy(&value, data_ + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  // A view of the string's bytes in the file (no copy: a vocabulary is read as 150k of these).
  Result<std::string_view> read_string(std::string_view what, std::string_view name = {}) {
    const uint64_t start = offset_;
    SINTER_ASSIGN(const uint64_t length, read<uint64_t>(what, name));
    if (length > remaining()) {
      return error_at(start, concat(describe(what, name), " has length ", length, " but only ", remaining(),
                                    " bytes remain in the file"));
    }
    const std::string_view value(reinterpret_cast<const char*>(data_ + offset_), static_cast<size_t>(length));
    offset_ += length;
    return value;
  }

  static std::string describe(std::string_view what, std::string_view name) {
    if (name.empty()) return std::string(what);
    return concat(what, " '", printable(name), "'");
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t offset_ = 0;
  std::string_view file_;
};

Result<GgufValue> read_value(Cursor& cursor, GgufType type, int depth, const std::string& key);

Result<GgufType> read_type(Cursor& cursor, const std::string& key, bool element_type) {
  const uint64_t at = cursor.offset();
  SINTER_ASSIGN(
      const uint32_t raw,
      cursor.read<uint32_t>(
          element_type ? "the array element type of metadata key" : "the value type of metadata key", key));
  if (raw >= kGgufTypeCount) {
    return cursor.error_at(
        at, concat("metadata key '", printable(key), "' has ",
                   element_type ? "an array of unknown element type " : "unknown value type ", raw));
  }
  return static_cast<GgufType>(raw);
}

Result<GgufValue> read_scalar(Cursor& cursor, GgufType type, const std::string& key) {
  constexpr std::string_view kWhat = "the value of metadata key";
  switch (type) {
    case GgufType::kUint8: {
      SINTER_ASSIGN(auto v, cursor.read<uint8_t>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kInt8: {
      SINTER_ASSIGN(auto v, cursor.read<int8_t>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kUint16: {
      SINTER_ASSIGN(auto v, cursor.read<uint16_t>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kInt16: {
      SINTER_ASSIGN(auto v, cursor.read<int16_t>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kUint32: {
      SINTER_ASSIGN(auto v, cursor.read<uint32_t>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kInt32: {
      SINTER_ASSIGN(auto v, cursor.read<int32_t>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kUint64: {
      SINTER_ASSIGN(auto v, cursor.read<uint64_t>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kInt64: {
      SINTER_ASSIGN(auto v, cursor.read<int64_t>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kFloat32: {
      SINTER_ASSIGN(auto v, cursor.read<float>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kFloat64: {
      SINTER_ASSIGN(auto v, cursor.read<double>(kWhat, key));
      return GgufValue::of(v);
    }
    case GgufType::kBool: {
      const uint64_t at = cursor.offset();
      SINTER_ASSIGN(auto v, cursor.read<uint8_t>(kWhat, key));
      if (v > 1)
        return cursor.error_at(at,
                               concat("metadata key '", printable(key), "' is a bool with value ", int{v}));
      return GgufValue::of(v == 1);
    }
    case GgufType::kString: {
      SINTER_ASSIGN(const std::string_view v, cursor.read_string(kWhat, key));
      return GgufValue::of_string(std::string(v));
    }
    case GgufType::kArray: break;
  }
  return cursor.error_at(cursor.offset(), "internal: read_scalar called for an array");
}

// An array's element type, count and elements; `depth` is 0 for an array that is a value itself.
Result<GgufArray> read_array(Cursor& cursor, int depth, const std::string& key) {
  const uint64_t start = cursor.offset();
  if (depth >= kGgufMaxArrayDepth) {
    return cursor.error_at(start, concat("metadata key '", printable(key), "' has arrays nested deeper than ",
                                         kGgufMaxArrayDepth, " levels"));
  }
  SINTER_ASSIGN(const GgufType element_type, read_type(cursor, key, /*element_type=*/true));
  SINTER_ASSIGN(const uint64_t count, cursor.read<uint64_t>("the array length of metadata key", key));
  // Every element takes at least this many bytes: rejects absurd counts before allocating.
  const uint64_t min_element_bytes = element_type == GgufType::kString  ? 8
                                     : element_type == GgufType::kArray ? 12
                                                                        : gguf_scalar_size(element_type);
  if (count > cursor.remaining() / min_element_bytes) {
    return cursor.error_at(start, concat("metadata key '", printable(key), "' declares an array of ", count,
                                         " ", gguf_type_name(element_type), " elements but only ",
                                         cursor.remaining(), " bytes remain in the file"));
  }
  GgufArray array;
  array.element_type = element_type;
  if (element_type == GgufType::kString) {
    array.strings.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
      SINTER_ASSIGN(const std::string_view item, cursor.read_string("an array element of metadata key", key));
      array.strings.emplace_back(item);
    }
  } else if (element_type == GgufType::kArray) {
    array.arrays.reserve(static_cast<size_t>(std::min(count, kMaxNestedReserve)));
    for (uint64_t i = 0; i < count; ++i) {
      SINTER_ASSIGN(GgufArray item, read_array(cursor, depth + 1, key));
      array.arrays.push_back(std::move(item));
    }
  } else {
    // Numbers and bools: one copy of the file's bytes (count × width fits, checked above).
    const uint64_t bytes = count * min_element_bytes;
    array.scalar_bytes.assign(cursor.here(), cursor.here() + bytes);
    if (element_type == GgufType::kBool) {
      for (uint64_t i = 0; i < count; ++i) {
        if (array.scalar_bytes[i] > 1) {
          return cursor.error_at(cursor.offset() + i,
                                 concat("metadata key '", printable(key), "' element ", i,
                                        " is a bool with value ", int{array.scalar_bytes[i]}));
        }
      }
    }
    cursor.skip(bytes);
  }
  return array;
}

Result<GgufValue> read_value(Cursor& cursor, GgufType type, int depth, const std::string& key) {
  if (type != GgufType::kArray) return read_scalar(cursor, type, key);
  SINTER_ASSIGN(GgufArray array, read_array(cursor, depth, key));
  return GgufValue::of_array(std::move(array));
}

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

uint64_t align_up(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

// A tensor info as read, with where it was found (for messages).
struct PendingTensor {
  GgufTensorInfo info;
  uint64_t info_at = 0;
};

}  // namespace

std::string gguf_name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameLength)
    return concat("is ", name.size(), " bytes long (at most ", kMaxNameLength, ")");
  if (!utf8_is_valid(name)) return concat("'", printable(name), "' is not valid UTF-8");
  return {};
}

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

Result<GgufShard> parse_gguf_shard(const MappedFile& file, uint32_t shard_index) {
  Cursor cursor(file.data(), file.size(), file.path());

  // --- Header: magic, version, counts.
  SINTER_ASSIGN(const uint32_t magic, cursor.read<uint32_t>("the magic number"));
  if (magic != kMagic) {
    return cursor.error_at(
        0,
        concat("not a GGUF file: the magic number is '",
               printable(std::string_view(reinterpret_cast<const char*>(file.data()), 4)), "', not 'GGUF'"));
  }
  const uint64_t version_at = cursor.offset();
  SINTER_ASSIGN(const uint32_t version, cursor.read<uint32_t>("the version"));
  if (version != 2 && version != 3) {
    const uint32_t swapped = __builtin_bswap32(version);
    return cursor.error_at(version_at,
                           concat("GGUF version ", version, " is not supported (only 2 and 3)",
                                  swapped == 2 || swapped == 3 ? "; the file looks big-endian" : ""));
  }
  const uint64_t counts_at = cursor.offset();
  SINTER_ASSIGN(const uint64_t tensor_count, cursor.read<uint64_t>("the tensor count"));
  SINTER_ASSIGN(const uint64_t kv_count, cursor.read<uint64_t>("the metadata entry count"));
  if (tensor_count > cursor.remaining() / kMinTensorInfoBytes) {
    return cursor.error_at(counts_at, concat("tensor count ", tensor_count, " cannot fit in the ",
                                             cursor.remaining(), " bytes that remain"));
  }
  if (kv_count > cursor.remaining() / kMinEntryBytes) {
    return cursor.error_at(counts_at + 8, concat("metadata entry count ", kv_count, " cannot fit in the ",
                                                 cursor.remaining(), " bytes that remain"));
  }

  // --- Metadata.
  Metadata metadata;
  uint64_t alignment_at = 0;
  for (uint64_t i = 0; i < kv_count; ++i) {
    const uint64_t key_at = cursor.offset();
    SINTER_ASSIGN(const std::string_view key_bytes, cursor.read_string("a metadata key"));
    const std::string key(key_bytes);
    if (const std::string problem = gguf_name_problem(key); !problem.empty()) {
      return cursor.error_at(key_at, concat("metadata key ", i, " ", problem));
    }
    if (metadata.contains(key))
      return cursor.error_at(key_at, concat("metadata key '", printable(key), "' appears twice"));
    SINTER_ASSIGN(const GgufType type, read_type(cursor, key, /*element_type=*/false));
    if (key == "general.alignment") alignment_at = cursor.offset();
    SINTER_ASSIGN(GgufValue value, read_value(cursor, type, 0, key));
    metadata.set(key, std::move(value));
  }

  uint32_t alignment = kGgufDefaultAlignment;
  if (const GgufValue* value = metadata.find_value("general.alignment")) {
    // The specification makes it a uint32; llama.cpp rejects any other type too.
    if (value->type != GgufType::kUint32) {
      return cursor.error_at(alignment_at,
                             concat("general.alignment is ", value->type_description(), ", expected uint32"));
    }
    const uint64_t raw = std::get<uint64_t>(value->data);
    if (!is_power_of_two(raw)) {
      return cursor.error_at(alignment_at, concat("general.alignment ", raw, " is not a power of two"));
    }
    alignment = static_cast<uint32_t>(raw);
  }

  // --- Tensor infos.
  std::vector<PendingTensor> pending;
  std::unordered_set<std::string> seen_names;
  pending.reserve(static_cast<size_t>(tensor_count));
  seen_names.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    PendingTensor& tensor = pending.emplace_back();
    GgufTensorInfo& info = tensor.info;
    tensor.info_at = cursor.offset();
    SINTER_ASSIGN(info.name, cursor.read_string("a tensor name"));
    if (const std::string problem = gguf_name_problem(info.name); !problem.empty()) {
      return cursor.error_at(tensor.info_at, concat("tensor ", i, " name ", problem));
    }
    if (!seen_names.insert(info.name).second) {
      return cursor.error_at(tensor.info_at,
                             concat("tensor name '", printable(info.name), "' appears twice"));
    }
    const uint64_t dims_at = cursor.offset();
    SINTER_ASSIGN(const uint32_t n_dims, cursor.read<uint32_t>("the dimension count of tensor", info.name));
    if (n_dims == 0 || n_dims > kGgufMaxDims) {
      return cursor.error_at(dims_at, concat("tensor '", printable(info.name), "' has ", n_dims,
                                             " dimensions (1 to ", kGgufMaxDims, " allowed)"));
    }
    int64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim_at = cursor.offset();
      SINTER_ASSIGN(const uint64_t dim, cursor.read<uint64_t>("a dimension of tensor", info.name));
      if (dim == 0) {
        return cursor.error_at(dim_at,
                               concat("tensor '", printable(info.name), "' dimension ", d, " is zero"));
      }
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(elements, static_cast<int64_t>(dim), &elements)) {
        return cursor.error_at(dim_at, concat("tensor '", printable(info.name), "' dimension ", d, " = ", dim,
                                              " makes its element count overflow int64"));
      }
      info.shape.push_back(static_cast<int64_t>(dim));
    }
    const uint64_t type_at = cursor.offset();
    SINTER_ASSIGN(const uint32_t type_id, cursor.read<uint32_t>("the type of tensor", info.name));
    const DTypeTraits* traits = dtype_traits(type_id);
    if (traits == nullptr) {
      return cursor.error_at(type_at,
                             concat("tensor '", printable(info.name), "' has unknown type id ", type_id));
    }
    info.type = traits->type;
    if (info.shape[0] % traits->block_size != 0) {
      return cursor.error_at(
          dims_at, concat("tensor '", printable(info.name), "' row length ", info.shape[0],
                          " is not a multiple of the ", traits->name, " block size ", traits->block_size));
    }
    // elements / block_size × block_bytes: at most int64 max × (bytes per value ≤ 8), checked.
    const uint64_t blocks = static_cast<uint64_t>(elements / traits->block_size);
    if (__builtin_mul_overflow(blocks, traits->block_bytes, &info.bytes)) {
      return cursor.error_at(dims_at, concat("tensor '", printable(info.name), "' byte size overflows"));
    }
    const uint64_t offset_at = cursor.offset();
    SINTER_ASSIGN(info.offset, cursor.read<uint64_t>("the data offset of tensor", info.name));
    if (info.offset % alignment != 0) {
      return cursor.error_at(offset_at,
                             concat("tensor '", printable(info.name), "' data offset ", info.offset,
                                    " is not a multiple of the alignment ", alignment));
    }
    info.shard = shard_index;
  }

  // --- Data section: starts at the next multiple of the alignment after the tensor infos.
  const uint64_t data_start = align_up(cursor.offset(), alignment);
  if (tensor_count > 0 && data_start > file.size()) {
    return cursor.error_at(cursor.offset(),
                           concat("file ends before its data section (the file has ", file.size(),
                                  " bytes, the data section starts at byte offset ", data_start, ")"));
  }
  const uint64_t data_size = file.size() - std::min<uint64_t>(data_start, file.size());

  // Extents: inside the file and not overlapping each other.
  for (auto& [info, info_at] : pending) {
    if (info.offset > data_size || info.bytes > data_size - info.offset) {
      return make_error(ErrorCode::kFormat, file.path(), ": tensor '", printable(info.name), "' ",
                        info.shape_string(), " ", dtype_name(info.type), " needs ", info.bytes,
                        " bytes at data offset ", info.offset, " but the data section (from byte offset ",
                        data_start, ") holds only ", data_size, " bytes (tensor info at byte offset ",
                        info_at, ")");
    }
    info.file_offset = data_start + info.offset;
    info.data = file.data() + info.file_offset;
  }
  std::vector<const GgufTensorInfo*> by_offset;
  by_offset.reserve(pending.size());
  for (const auto& tensor : pending) by_offset.push_back(&tensor.info);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const auto* previous = by_offset[i - 1];
    if (previous->offset + previous->bytes > by_offset[i]->offset) {
      return make_error(ErrorCode::kFormat, file.path(), ": tensors '", printable(previous->name), "' and '",
                        printable(by_offset[i]->name), "' overlap: '", printable(previous->name),
                        "' holds data bytes [", previous->offset, ", ", previous->offset + previous->bytes,
                        ") and '", printable(by_offset[i]->name), "' starts at ", by_offset[i]->offset,
                        " (data section at byte offset ", data_start, ")");
    }
  }

  GgufShard shard;
  shard.version = version;
  shard.alignment = alignment;
  shard.metadata = std::move(metadata);
  shard.tensors.reserve(pending.size());
  for (auto& tensor : pending) shard.tensors.push_back(std::move(tensor.info));
  return shard;
}

}  // namespace sinter
