#include "model/hparams.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

#include "gguf/gguf_file.h"
#include "model/tensor_blocks.h"

namespace sinter {
namespace {

std::string render(uint32_t v) { return std::to_string(v); }
std::string render(int32_t v) { return std::to_string(v); }
std::string render(uint64_t v) { return std::to_string(v); }
std::string render(bool v) { return v ? "true" : "false"; }
std::string render(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}
// A JSON string literal: quotes, backslashes and control characters escaped. (Bytes that are
// not UTF-8 pass through; the JSON writer of `sinter inspect` replaces them.)
std::string render(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 15];
      out += kHex[c & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}
std::string render(const std::vector<uint32_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

// The value as a JSON literal: as rendered, except that JSON has no NaN or infinity, so a
// non-finite float is the string "nan", "inf" or "-inf" (as `sinter inspect` writes metadata).
template <class T>
std::string render_json(const T& v) {
  if constexpr (std::is_same_v<T, float>) {
    if (!std::isfinite(v)) return concat('"', render(v), '"');
  }
  return render(v);
}

// Strings from a file quoted in a message, cut short: a message never grows with the file.
std::string quoted(std::string_view text) {
  constexpr size_t kMax = 64;
  if (text.size() <= kMax) return concat("'", text, "'");
  return concat("'", text.substr(0, kMax), "...' (", text.size(), " bytes)");
}

constexpr uint32_t kMaxCount = static_cast<uint32_t>(std::numeric_limits<int32_t>::max());

GgufValue to_value(uint32_t v) { return GgufValue::of_u32(v); }
GgufValue to_value(int32_t v) { return GgufValue::of_i32(v); }
GgufValue to_value(uint64_t v) { return GgufValue::of_u64(v); }
GgufValue to_value(bool v) { return GgufValue::of_bool(v); }
GgufValue to_value(float v) { return GgufValue::of_f32(v); }
GgufValue to_value(const std::string& v) { return GgufValue::of_string(v); }

}  // namespace

HParams::HParams(const Metadata& metadata, std::string architecture, const GgufFile* file)
    : mode_(Mode::kRead), in_(&metadata), file_(file), architecture_(std::move(architecture)) {}

HParams::HParams(Metadata* out, std::string architecture)
    : mode_(Mode::kWrite), out_(out), architecture_(std::move(architecture)) {}

bool HParams::has(std::string_view key) const {
  return in_ != nullptr && in_->find_value(resolve(key)) != nullptr;
}

std::string HParams::resolve(std::string_view key) const {
  std::string out(key);
  const auto at = out.find("{arch}");
  if (at != std::string::npos) out.replace(at, 6, architecture_);
  return out;
}

template <class T>
void HParams::record(const std::string& key, const T& value, bool defaulted) {
  entries_.push_back({key, render(value), defaulted, render_json(value)});
}

template <class T>
bool HParams::check_read(const std::string& key, const T& value) {
  if constexpr (std::is_same_v<T, uint32_t>) {
    if (value > kMaxCount) {
      errors_.push_back(concat("metadata key '", key, "' is ", value, ", more than ", kMaxCount,
                               " (counts and sizes are int32)"));
      return false;
    }
  } else if constexpr (std::is_same_v<T, std::vector<uint32_t>>) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (value[i] > kMaxCount) {
        errors_.push_back(concat("metadata key '", key, "' element ", i, " is ", value[i], ", more than ",
                                 kMaxCount, " (counts and sizes are int32)"));
        return false;
      }
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) {
      errors_.push_back(concat("metadata key '", key, "' is ", render(static_cast<float>(value)),
                               "; it must be a finite number"));
      return false;
    }
    // A norm's epsilon is added to a variance before its square root: below zero it turns the
    // norms of small activations into NaN.
    if (key.find("epsilon") != std::string::npos && value < 0) {
      errors_.push_back(concat("metadata key '", key, "' is ", render(static_cast<float>(value)),
                               "; an epsilon must not be negative"));
      return false;
    }
  }
  return true;
}

Result<uint32_t> HParams::file_blocks() const {
  const TensorBlocks blocks = tensor_blocks(file_->tensors());
  if (!blocks.contiguous()) {
    return make_error(ErrorCode::kFormat, "the file's blocks are not numbered from blk.0 without gaps (blk.",
                      blocks.first_absent, " has no tensors, blk.", blocks.highest, " has)");
  }
  return static_cast<uint32_t>(std::min<uint64_t>(blocks.count, kMaxCount));
}

template <class T>
void HParams::required(std::string_view key_pattern, T& field) {
  const std::string key = resolve(key_pattern);
  if (mode_ == Mode::kWrite) {
    out_->set(key, to_value(field));
    record(key, field, false);
    return;
  }
  auto value = in_->get<T>(key);
  if (!value) {
    errors_.push_back(value.error().message());
    return;
  }
  if (!check_read(key, *value)) return;
  field = std::move(value).value();
  record(key, field, false);
}

template <class T>
void HParams::optional(std::string_view key_pattern, T& field, const T& default_value) {
  const std::string key = resolve(key_pattern);
  if (mode_ == Mode::kWrite) {
    out_->set(key, to_value(field));
    record(key, field, false);
    return;
  }
  auto value = in_->find<T>(key);
  if (!value) {
    errors_.push_back(value.error().message());
    return;
  }
  // A default can come from the file too (the tokenizer's vocabulary size): checked alike.
  const T& read = value->has_value() ? **value : default_value;
  if (!check_read(key, read)) return;
  field = read;
  record(key, field, !value->has_value());
}

void HParams::block_count(std::string_view key_pattern, uint32_t& field) {
  if (mode_ == Mode::kWrite || file_ == nullptr) {
    required(key_pattern, field);
    return;
  }
  const std::string key = resolve(key_pattern);
  auto claimed = in_->get<uint32_t>(key);
  if (!claimed) {
    errors_.push_back(claimed.error().message());
    return;
  }
  if (!check_read(key, *claimed)) return;
  auto present = file_blocks();
  if (!present) {
    errors_.push_back(concat("metadata key '", key, "' is ", *claimed, " but ", present.error().message()));
    return;
  }
  if (*claimed != *present) {
    const std::string held =
        *present == 0   ? "no blk.N tensors"
        : *present == 1 ? "tensors for 1 block (blk.0)"
                        : concat("tensors for ", *present, " blocks (blk.0 to blk.", *present - 1, ")");
    errors_.push_back(concat("metadata key '", key, "' is ", *claimed, " but the file has ", held));
    return;
  }
  field = *claimed;
  record(key, field, false);
}

void HParams::per_layer(std::string_view key_pattern, std::vector<uint32_t>& field, uint32_t layers,
                        uint32_t default_value) {
  const std::string key = resolve(key_pattern);
  if (mode_ == Mode::kWrite) {
    bool uniform = true;
    for (uint32_t v : field) uniform = uniform && v == field.front();
    if (uniform && !field.empty()) {
      out_->set(key, GgufValue::of_u32(field.front()));
    } else {
      out_->set(key, GgufValue{GgufType::kArray, GgufArray::of<uint32_t>(field)});
    }
    record(key, field, false);
    return;
  }
  if (file_ != nullptr) {
    // Never sized beyond what the file holds, whatever count the caller was given.
    auto present = file_blocks();
    if (!present || layers > *present) {
      errors_.push_back(
          concat("metadata key '", key, "' is read for ", layers, " layers, but ",
                 present ? concat("the file has ", *present, " blocks") : present.error().message()));
      return;
    }
  }
  if (!check_read(key, default_value)) return;
  const GgufValue* stored = in_->find_value(key);
  if (stored == nullptr) {
    field.assign(layers, default_value);
    record(key, field, true);
    return;
  }
  if (stored->type == GgufType::kArray) {
    auto values = convert_value<std::vector<uint32_t>>(*stored, key);
    if (!values) {
      errors_.push_back(values.error().message());
      return;
    }
    if (values->size() != layers) {
      errors_.push_back(
          concat("metadata key '", key, "' has ", values->size(), " values for ", layers, " layers"));
      return;
    }
    if (!check_read(key, *values)) return;
    field = std::move(values).value();
  } else {
    auto value = convert_value<uint32_t>(*stored, key);
    if (!value) {
      errors_.push_back(value.error().message());
      return;
    }
    if (!check_read(key, *value)) return;
    field.assign(layers, *value);
  }
  record(key, field, false);
}

void HParams::array(std::string_view key_pattern, std::vector<uint32_t>& field, size_t max_count) {
  const std::string key = resolve(key_pattern);
  if (mode_ == Mode::kWrite) {
    std::vector<int32_t> values;
    for (uint32_t v : field) values.push_back(static_cast<int32_t>(std::min(v, kMaxCount)));
    out_->set(key, GgufValue::of_i32s(values));
    record(key, field, false);
    return;
  }
  const GgufValue* stored = in_->find_value(key);
  if (stored == nullptr || stored->type != GgufType::kArray) {
    errors_.push_back(
        concat("metadata key '", key, stored == nullptr ? "' is missing" : "' is not an array"));
    return;
  }
  auto values = convert_value<std::vector<uint32_t>>(*stored, key);
  if (!values) {
    errors_.push_back(values.error().message());
    return;
  }
  if (values->size() > max_count) {
    errors_.push_back(
        concat("metadata key '", key, "' has ", values->size(), " values, more than ", max_count));
    return;
  }
  if (!check_read(key, *values)) return;
  field = std::move(values).value();
  field.resize(max_count, 0);
  record(key, field, false);
}

void HParams::fail(const std::string& message) { errors_.push_back(message); }

std::string HParams::quote(std::string_view text) { return quoted(text); }

Status HParams::status() const {
  if (errors_.empty()) return ok_status();
  std::string message = errors_.front();
  for (size_t i = 1; i < errors_.size(); ++i) message += "; " + errors_[i];
  return Error(ErrorCode::kFormat, message);
}

std::vector<HParamEntry> HParams::defaults_used() const {
  std::vector<HParamEntry> out;
  for (const auto& e : entries_) {
    if (e.defaulted) out.push_back(e);
  }
  return out;
}

template void HParams::required<uint32_t>(std::string_view, uint32_t&);
template void HParams::required<int32_t>(std::string_view, int32_t&);
template void HParams::required<uint64_t>(std::string_view, uint64_t&);
template void HParams::required<float>(std::string_view, float&);
template void HParams::required<bool>(std::string_view, bool&);
template void HParams::required<std::string>(std::string_view, std::string&);
template void HParams::optional<uint32_t>(std::string_view, uint32_t&, const uint32_t&);
template void HParams::optional<int32_t>(std::string_view, int32_t&, const int32_t&);
template void HParams::optional<uint64_t>(std::string_view, uint64_t&, const uint64_t&);
template void HParams::optional<float>(std::string_view, float&, const float&);
template void HParams::optional<bool>(std::string_view, bool&, const bool&);
template void HParams::optional<std::string>(std::string_view, std::string&, const std::string&);

}  // namespace sinter
