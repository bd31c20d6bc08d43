// Test utility: builds GGUF bytes field by field, so that a test can write any file, valid or
// not, and cut or corrupt any part of it; named marks remember where each part starts.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "gguf/gguf_file.h"
#include "gguf/metadata.h"

namespace sinter::testing {

class GgufBytes {
 public:
  template <class T>
  GgufBytes& put(T value) {
    return raw(std::string_view(reinterpret_cast<const char*>(&value), sizeof(T)));
  }
  GgufBytes& u8(uint8_t v) { return put(v); }
  GgufBytes& u32(uint32_t v) { return put(v); }
  GgufBytes& u64(uint64_t v) { return put(v); }
  GgufBytes& raw(std::string_view text) {
    const size_t at = bytes_.size();
    bytes_.resize(at + text.size());  // (vector::insert of a char range trips a GCC 12 false warning)
    if (!text.empty()) std::memcpy(bytes_.data() + at, text.data(), text.size());
    return *this;
  }
  GgufBytes& zeros(size_t count, uint8_t fill = 0) {
    bytes_.insert(bytes_.end(), count, fill);
    return *this;
  }
  // A GGUF string: uint64 length, then the bytes.
  GgufBytes& str(std::string_view text) { return u64(text.size()).raw(text); }
  GgufBytes& type(GgufType t) { return u32(static_cast<uint32_t>(t)); }

  // "GGUF", version, tensor count, metadata entry count.
  GgufBytes& header(uint64_t tensor_count, uint64_t kv_count, uint32_t version = 3) {
    return raw("GGUF").u32(version).u64(tensor_count).u64(kv_count);
  }
  // A metadata entry's key and value type; the value follows. Marks "kv:KEY" and "value:KEY".
  GgufBytes& key(std::string_view key, GgufType value_type) {
    mark("kv:" + std::string(key)).str(key).type(value_type);
    return mark("value:" + std::string(key));
  }
  GgufBytes& array_header(GgufType element_type, uint64_t count) { return type(element_type).u64(count); }
  // A tensor info; marks "tensor:NAME".
  GgufBytes& tensor_info(std::string_view name, const std::vector<uint64_t>& dims, uint32_t type_id,
                         uint64_t offset) {
    mark("tensor:" + std::string(name)).str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type_id).u64(offset);
  }
  GgufBytes& pad_to(uint64_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back(0);
    return *this;
  }

  GgufBytes& mark(const std::string& name) {
    marks_[name] = bytes_.size();
    return *this;
  }
  size_t at(const std::string& name) const {
    const auto it = marks_.find(name);
    EXPECT_NE(it, marks_.end()) << "no mark " << name;
    return it == marks_.end() ? 0 : it->second;
  }

  template <class T>
  GgufBytes& patch(size_t offset, T value) {
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
    return *this;
  }

  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& bytes() { return bytes_; }

  // Parses the first `length` bytes (all by default) as a file named test.gguf.
  Result<GgufFile> parse(size_t length = SIZE_MAX) const {
    const size_t n = length < bytes_.size() ? length : bytes_.size();
    return GgufFile::parse(MappedFile::from_bytes({bytes_.data(), n}, "test.gguf"));
  }

 private:
  std::vector<uint8_t> bytes_;
  std::map<std::string, size_t> marks_;
};

// A valid v3 file with a metadata entry of every value type (arrays of numbers, strings, nested
// and empty arrays among them) and three tensors (F32, Q8_0, F16) with alignment padding between
// them; the file ends right after the last tensor's data. Marks: "infos" (first tensor info),
// "infos_end", "data" (data section), "data_end".
inline GgufBytes sample_gguf() {
  GgufBytes b;
  b.header(3, 17);
  b.key("general.architecture", GgufType::kString).str("llama");
  b.key("t.u8", GgufType::kUint8).u8(200);
  b.key("t.i8", GgufType::kInt8).put<int8_t>(-100);
  b.key("t.u16", GgufType::kUint16).put<uint16_t>(60000);
  b.key("t.i16", GgufType::kInt16).put<int16_t>(-30000);
  b.key("t.u32", GgufType::kUint32).u32(4000000000u);
  b.key("t.i32", GgufType::kInt32).put<int32_t>(-2000000000);
  b.key("t.f32", GgufType::kFloat32).put<float>(0.5f);
  b.key("t.bool", GgufType::kBool).u8(1);
  b.key("t.u64", GgufType::kUint64).u64(1ull << 40);
  b.key("t.i64", GgufType::kInt64).put<int64_t>(-(1ll << 40));
  b.key("t.f64", GgufType::kFloat64).put<double>(-2.25);
  b.key("t.strings", GgufType::kArray).array_header(GgufType::kString, 3).str("a").str("").str("héllo");
  b.key("t.ints", GgufType::kArray).array_header(GgufType::kInt32, 4);
  for (int32_t v : {1, -2, 3, -4}) b.put(v);
  b.key("t.nested", GgufType::kArray).array_header(GgufType::kArray, 2);
  b.array_header(GgufType::kUint8, 2).u8(1).u8(2).array_header(GgufType::kString, 1).str("x");
  b.key("t.empty", GgufType::kArray).array_header(GgufType::kFloat32, 0);
  b.key("general.alignment", GgufType::kUint32).u32(32);
  b.mark("infos");
  b.tensor_info("a", {8, 2}, 0 /*F32*/, 0);  // 64 bytes at 0
  b.tensor_info("b", {32}, 8 /*Q8_0*/, 64);  // 34 bytes at 64
  b.tensor_info("c", {4}, 1 /*F16*/, 128);   // 8 bytes at 128
  b.mark("infos_end").pad_to(32).mark("data");
  for (int i = 0; i < 64; ++i) b.u8(static_cast<uint8_t>(i));
  b.zeros(34, 0x11).zeros(30).zeros(8, 0x22);
  return b.mark("data_end");
}

// Succeeds if `result` failed with a format error whose message contains every part.
template <class T>
::testing::AssertionResult error_mentions(const Result<T>& result,
                                          std::initializer_list<std::string_view> parts,
                                          ErrorCode code = ErrorCode::kFormat) {
  if (result) return ::testing::AssertionFailure() << "succeeded, expected an error";
  const std::string& message = result.error().message();
  if (result.error().code() != code) {
    return ::testing::AssertionFailure()
           << "error code " << error_code_name(result.error().code()) << " for: " << message;
  }
  for (std::string_view part : parts) {
    if (message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks \"" << part << "\": " << message;
    }
  }
  return ::testing::AssertionSuccess() << message;
}

}  // namespace sinter::testing
