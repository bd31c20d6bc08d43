#include "model/weights.h"

#include <cstdio>

#include "model/hparams.h"

namespace sinter {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::array<int64_t, kMaxDims> to_ne(const std::vector<int64_t>& shape) {
  std::array<int64_t, kMaxDims> ne{1, 1, 1, 1};
  for (size_t i = 0; i < shape.size() && i < kMaxDims; ++i) ne[i] = shape[i];
  return ne;
}

// Shapes match when they agree after dropping trailing 1s (a [n] vector may be stored [n, 1]).
bool same_shape(std::vector<int64_t> a, std::vector<int64_t> b) {
  while (a.size() > 1 && a.back() == 1) a.pop_back();
  while (b.size() > 1 && b.back() == 1) b.pop_back();
  return a == b;
}

}  // namespace

std::string format_name(const char* pattern, int layer) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, pattern, layer);
  return buffer;
}

WeightBinder::WeightBinder(const GgufFile& file, Mode mode) : mode_(mode), file_(&file) {}
WeightBinder::WeightBinder() : mode_(Mode::kSchema) {}

Tensor* WeightBinder::placeholder(const WeightSpec& spec) {
  Tensor& t = tensors_.emplace_back(make_persistent(spec.name, DType::F32, to_ne(spec.shape), nullptr));
  return &t;
}

Tensor* WeightBinder::bind(const WeightSpec& spec) {
  const GgufTensorInfo* info = file_->find_tensor(spec.name);
  std::string used_name = spec.name;
  if (info == nullptr && !spec.fallback.empty()) {
    info = file_->find_tensor(spec.fallback);
    used_name = spec.fallback;
  }
  if (info == nullptr) {
    if (spec.optional) return nullptr;
    issues_.push_back(
        {WeightIssue::Kind::kMissing, spec.name,
         concat("missing tensor '", spec.name, "'",
                spec.fallback.empty() ? "" : concat(" (and its fallback '", spec.fallback, "')"))});
    return placeholder(spec);
  }
  used_.insert(used_name);
  if (!same_shape(info->shape, spec.shape)) {
    issues_.push_back({WeightIssue::Kind::kShapeMismatch, used_name,
                       concat("tensor '", used_name, "' has shape ", info->shape_string(),
                              ", the hyper-parameters imply ", shape_text(spec.shape))});
    return placeholder(spec);
  }
  if ((!spec.is_matrix() || spec.f32) && info->type != DType::F32) {
    issues_.push_back({WeightIssue::Kind::kBadType, used_name,
                       concat(spec.is_matrix() ? "tensor '" : "vector tensor '", used_name, "' is ",
                              dtype_name(info->type), "; sinter expects f32")});
  }
  Tensor& t = tensors_.emplace_back(
      make_persistent(used_name, info->type, to_ne(spec.shape), const_cast<uint8_t*>(info->data)));
  return &t;
}

Tensor* WeightBinder::require(const std::string& name, std::vector<int64_t> shape) {
  specs_.push_back({name, std::move(shape), false, ""});
  return mode_ == Mode::kSchema ? placeholder(specs_.back()) : bind(specs_.back());
}

Tensor* WeightBinder::optional(const std::string& name, std::vector<int64_t> shape) {
  specs_.push_back({name, std::move(shape), true, "", false});
  return mode_ == Mode::kSchema ? nullptr : bind(specs_.back());
}

Tensor* WeightBinder::feature(const std::string& name, std::vector<int64_t> shape) {
  specs_.push_back({name, std::move(shape), true, "", true});
  return mode_ == Mode::kSchema ? placeholder(specs_.back()) : bind(specs_.back());
}

Tensor* WeightBinder::require_f32(const std::string& name, std::vector<int64_t> shape) {
  specs_.push_back({name, std::move(shape), false, "", true, true});
  return mode_ == Mode::kSchema ? placeholder(specs_.back()) : bind(specs_.back());
}

Tensor* WeightBinder::optional_f32(const std::string& name, std::vector<int64_t> shape) {
  specs_.push_back({name, std::move(shape), true, "", false, true});
  return mode_ == Mode::kSchema ? nullptr : bind(specs_.back());
}

Tensor* WeightBinder::require_or(const std::string& name, const std::string& fallback,
                                 std::vector<int64_t> shape) {
  specs_.push_back({name, std::move(shape), false, fallback});
  return mode_ == Mode::kSchema ? placeholder(specs_.back()) : bind(specs_.back());
}

void WeightBinder::finish() {
  if (file_ == nullptr) return;
  for (const auto& info : file_->tensors()) {
    if (used_.count(info.name) == 0) {
      issues_.push_back({WeightIssue::Kind::kUnexpected, info.name,
                         concat("tensor ", HParams::quote(info.name), " ", info.shape_string(),
                                " is not used by the architecture")});
    }
  }
}

Status WeightBinder::status() const {
  constexpr size_t kListed = 4;
  std::string message;
  size_t count = 0;
  for (const auto& issue : issues_) {
    if (issue.kind == WeightIssue::Kind::kUnexpected) continue;  // extra tensors are a warning
    if (count++ < kListed) message += (count > 1 ? "; " : "") + issue.message;
  }
  if (count == 0) return ok_status();
  if (count > kListed) message += concat("; and ", count - kListed, " more");
  return Error(ErrorCode::kFormat, message);
}

}  // namespace sinter
