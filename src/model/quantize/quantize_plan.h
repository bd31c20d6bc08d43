// The plan of a quantization: for every tensor of an input model, the type it will have in the
// output and why (its role, the mixture's choice, a fallback when its rows do not fit the
// blocks). Planning reads only the metadata and tensor table, never a payload, so a plan can
// be shown (and checked) before anything is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/quantize/mixture.h"
#include "model/quantize/tensor_rules.h"
#include "sinter/result.h"

namespace sinter {

struct QuantizeOptions {
  MixtureId mixture = MixtureId::kQ8_0;
  // Every quantizable tensor gets the default type (llama-quantize --pure): no per-tensor rules,
  // but still the fallback for rows that do not fit the blocks.
  bool pure = false;
};

struct TensorPlan {
  std::string name;
  std::vector<int64_t> shape;  // ne order
  WeightRole role = WeightRole::kOther;
  bool quantizable = false;  // false: the tensor keeps its type (vectors, norms, ...)
  DType source_type = DType::F32;
  DType chosen_type = DType::F32;  // the mixture's choice (== source_type when not quantizable)
  DType target_type = DType::F32;  // what is written: chosen_type, or its fallback

  bool fell_back() const { return chosen_type != target_type; }
  bool converted() const { return source_type != target_type; }
  // Converting from a block-quantized type: the error of both quantizations adds up.
  bool requantized() const { return converted() && dtype_traits(source_type).is_quantized; }
  uint64_t source_bytes() const;
  uint64_t target_bytes() const;
};

struct QuantizePlan {
  MixtureId mixture = MixtureId::kQ8_0;
  ModelFacts model;
  std::vector<TensorPlan> tensors;  // in the input file's order
  // Facts the planner assumed (e.g. a layer count from tensor names when block_count is missing).
  std::vector<std::string> assumptions;

  uint64_t source_bytes() const;
  uint64_t target_bytes() const;
  // One line per tensor that fell back or is requantized, for stderr.
  std::vector<std::string> warnings() const;
};

// The facts the rules read: architecture, block count, GQA, expert count, size class.
Result<ModelFacts> read_model_facts(const GgufFile& file, std::vector<std::string>* assumptions = nullptr);

// Fails when a tensor that must be converted has a type sinter cannot read (integer types are
// never converted) or when expert tensors do not name their layer.
Result<QuantizePlan> plan_quantization(const GgufFile& file, const QuantizeOptions& options);

}  // namespace sinter
