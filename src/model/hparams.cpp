#include "model/hparams.h"

#include <cmath>
#include <sstream>

namespace sinter {
namespace {

std::string render(uint32_t v) { return std::to_string(v); }
std::string render(int32_t v) { return std::to_string(v); }
std::string render(uint64_t v) { return std::to_string(v); }
std::string render(bool v) { return v ? "true" : "false"; }
std::string render(float v) {
  if (std::isinf(v)) return v > 0 ? "1e999" : "-1e999";
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}
std::string render(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
std::string render(const std::vector<uint32_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

GgufValue to_value(uint32_t v) { return GgufValue::of_u32(v); }
GgufValue to_value(int32_t v) { return GgufValue::of_i32(v); }
GgufValue to_value(uint64_t v) { return GgufValue::of_u64(v); }
GgufValue to_value(bool v) { return GgufValue::of_bool(v); }
GgufValue to_value(float v) { return GgufValue::of_f32(v); }
GgufValue to_value(const std::string& v) { return GgufValue::of_string(v); }

}  // namespace

HParams::HParams(const Metadata& metadata, std::string architecture)
    : mode_(Mode::kRead), in_(&metadata), architecture_(std::move(architecture)) {}

HParams::HParams(Metadata* out, std::string architecture)
    : mode_(Mode::kWrite), out_(out), architecture_(std::move(architecture)) {}

std::string HParams::resolve(std::string_view key) const {
  std::string out(key);
  const auto at = out.find("{arch}");
  if (at != std::string::npos) out.replace(at, 6, architecture_);
  return out;
}

template <class T>
void HParams::record(const std::string& key, const T& value, bool defaulted) {
  const std::string text = render(value);
  entries_.push_back({key, text, defaulted, text});
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
  field = value->has_value() ? **value : default_value;
  record(key, field, !value->has_value());
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
      errors_.push_back(concat("metadata key '", key, "' has ", values->size(), " values for ", layers, " layers"));
      return;
    }
    field = std::move(values).value();
  } else {
    auto value = convert_value<uint32_t>(*stored, key);
    if (!value) {
      errors_.push_back(value.error().message());
      return;
    }
    field.assign(layers, *value);
  }
  record(key, field, false);
}

void HParams::fail(const std::string& message) { errors_.push_back(message); }

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
