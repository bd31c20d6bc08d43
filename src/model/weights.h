// Weight binding by name: an architecture lists its weights once (name pattern, expected shape,
// optional or with a fallback) and the same list binds a file's tensors, checks a file against
// the architecture (`sinter inspect --schema`), or describes the tensors a synthetic model must
// have (`sinter synth`).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "gguf/gguf_file.h"
#include "graph/tensor.h"

namespace sinter {

// One weight the architecture expects.
struct WeightSpec {
  std::string name;
  std::vector<int64_t> shape;  // ne order: shape[0] is the row length
  bool optional = false;
  std::string fallback;  // used instead when `name` is absent (e.g. output -> token_embd)
  bool in_synth = true;  // written into synthetic models (`sinter synth`)
  // F32 whatever its shape: an op reads it as floats (Mamba's A and convolution kernel), so a
  // file of another type is refused and synthetic models keep it F32. Vectors always are.
  bool f32 = false;
  bool is_matrix() const { return shape.size() >= 2; }
};

struct WeightIssue {
  enum class Kind { kMissing, kShapeMismatch, kUnexpected, kBadType };
  Kind kind;
  std::string tensor;
  std::string message;
};

class WeightBinder {
 public:
  enum class Mode {
    kBind,    // resolve against a file; any issue is an error
    kCheck,   // resolve against a file, collecting every issue
    kSchema,  // no file: only record what is expected
  };

  // For kBind/kCheck; `file` must outlive the bound tensors.
  WeightBinder(const GgufFile& file, Mode mode);
  // For kSchema.
  WeightBinder();

  Mode mode() const { return mode_; }
  // The file bound against; nullptr in schema mode.
  const GgufFile* file() const { return file_; }
  // The file's tensor of that name, for choosing a layout before binding; nullptr when the file
  // has none or in schema mode.
  const GgufTensorInfo* file_tensor(const std::string& name) const {
    return file_ != nullptr ? file_->find_tensor(name) : nullptr;
  }

  // Each returns the bound tensor (a placeholder in schema mode, or when the file lacks it in
  // check mode), or nullptr for an absent optional weight.
  Tensor* require(const std::string& name, std::vector<int64_t> shape);
  Tensor* optional(const std::string& name, std::vector<int64_t> shape);
  Tensor* require_or(const std::string& name, const std::string& fallback, std::vector<int64_t> shape);
  // Optional in a file, but present in synthetic models so that tests exercise what it
  // enables (biases, Q/K norms, RoPE factors that only some files carry).
  Tensor* feature(const std::string& name, std::vector<int64_t> shape);
  // require() and optional() of a weight that must be F32 whatever its shape (WeightSpec::f32).
  Tensor* require_f32(const std::string& name, std::vector<int64_t> shape);
  Tensor* optional_f32(const std::string& name, std::vector<int64_t> shape);

  // After binding: tensors in the file that no weight used are reported as unexpected.
  void finish();

  const std::vector<WeightSpec>& specs() const { return specs_; }
  const std::vector<WeightIssue>& issues() const { return issues_; }
  // The issues as one error (kBind/kCheck), or ok. The message names the first few and counts
  // the rest: it stays short however many tensors a file lacks.
  Status status() const;
  // The bound tensors (stable addresses), to be owned by the model.
  std::deque<Tensor> take_tensors() { return std::move(tensors_); }

 private:
  Tensor* bind(const WeightSpec& spec);
  Tensor* placeholder(const WeightSpec& spec);

  Mode mode_;
  const GgufFile* file_ = nullptr;
  std::vector<WeightSpec> specs_;
  std::vector<WeightIssue> issues_;
  std::deque<Tensor> tensors_;
  std::unordered_set<std::string> used_;
};

std::string format_name(const char* pattern,
                        int layer);  // "blk.%d.attn_q.weight", 3 -> "blk.3.attn_q.weight"

}  // namespace sinter
