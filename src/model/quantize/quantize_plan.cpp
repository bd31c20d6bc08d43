#include "model/quantize/quantize_plan.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <optional>

namespace sinter {
namespace {

// The layer of "blk.N.…", or nullopt.
std::optional<int32_t> layer_of(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  int32_t layer = 0;
  const auto [next, error] = std::from_chars(begin, end, layer);
  if (error != std::errc() || next == begin || next == end || *next != '.') return std::nullopt;
  return layer;
}

// A per-layer key may be a scalar or an array (one value per layer); the rules read layer 0.
Result<std::optional<int64_t>> first_layer_value(const Metadata& md, const std::string& key) {
  const GgufValue* value = md.find_value(key);
  if (value == nullptr) return std::optional<int64_t>();
  if (value->type == GgufType::kArray) {
    SINTER_ASSIGN(auto values, convert_value<std::vector<int64_t>>(*value, key));
    if (values.empty()) return std::optional<int64_t>();
    return std::optional<int64_t>(values.front());
  }
  SINTER_ASSIGN(int64_t scalar, convert_value<int64_t>(*value, key));
  return std::optional<int64_t>(scalar);
}

// llama.cpp's LLM_TYPE_70B by architecture and layer count (the attn_v rule depends on it).
struct SizeClass70B {
  std::string_view architecture;
  int32_t n_layer;
  bool needs_gqa;  // llama with 80 layers is 65B without GQA, 70B with it
};
constexpr SizeClass70B kSize70B[] = {
    {"llama", 80, true}, {"deci", 80, false}, {"olmo", 80, false}, {"qwen2", 80, false}, {"jais2", 68, false},
};

// llama.cpp visits tensors ordered by layer (non-layer tensors first), then by name; the
// attn_v and FFN counters follow that order.
std::vector<size_t> llama_cpp_order(const std::vector<GgufTensorInfo>& tensors) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int32_t layer_a = layer_of(tensors[a].name).value_or(-1);
    const int32_t layer_b = layer_of(tensors[b].name).value_or(-1);
    if (layer_a != layer_b) return layer_a < layer_b;
    return tensors[a].name < tensors[b].name;
  });
  return order;
}

bool is_float_type(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16 || dtype_traits(type).is_quantized;
}

}  // namespace

uint64_t TensorPlan::source_bytes() const {
  const int64_t rows =
      std::accumulate(shape.begin() + (shape.empty() ? 0 : 1), shape.end(), int64_t{1}, std::multiplies<>());
  return row_bytes(source_type, shape.empty() ? 1 : shape[0]) * static_cast<uint64_t>(rows);
}

uint64_t TensorPlan::target_bytes() const {
  const int64_t rows =
      std::accumulate(shape.begin() + (shape.empty() ? 0 : 1), shape.end(), int64_t{1}, std::multiplies<>());
  return row_bytes(target_type, shape.empty() ? 1 : shape[0]) * static_cast<uint64_t>(rows);
}

uint64_t QuantizePlan::source_bytes() const {
  uint64_t total = 0;
  for (const TensorPlan& t : tensors) total += t.source_bytes();
  return total;
}

uint64_t QuantizePlan::target_bytes() const {
  uint64_t total = 0;
  for (const TensorPlan& t : tensors) total += t.target_bytes();
  return total;
}

std::vector<std::string> QuantizePlan::warnings() const {
  std::vector<std::string> lines;
  for (const TensorPlan& t : tensors) {
    if (t.fell_back()) {
      lines.push_back(concat(t.name, ": row length ", t.shape[0], " is not a multiple of ",
                             dtype_traits(t.chosen_type).block_size, " (the block of ",
                             dtype_name(t.chosen_type), "): falling back to ", dtype_name(t.target_type)));
    }
    if (t.requantized()) {
      lines.push_back(
          concat(t.name, ": requantizing ", dtype_name(t.source_type), " to ", dtype_name(t.target_type),
                 " (the errors of both quantizations add up; quantize from F32, F16 or BF16 if you can)"));
    }
  }
  return lines;
}

Result<ModelFacts> read_model_facts(const GgufFile& file, std::vector<std::string>* assumptions) {
  const Metadata& md = file.metadata();
  ModelFacts facts;
  SINTER_ASSIGN(auto architecture, md.find<std::string>("general.architecture"));
  facts.architecture = architecture.value_or("");
  const std::string prefix = facts.architecture + ".";

  SINTER_ASSIGN(auto block_count, first_layer_value(md, prefix + "block_count"));
  if (block_count && *block_count > 0 && *block_count < (int64_t{1} << 20)) {
    facts.n_layer = static_cast<int32_t>(*block_count);
  } else {
    for (const GgufTensorInfo& t : file.tensors()) {
      facts.n_layer = std::max(facts.n_layer, layer_of(t.name).value_or(-1) + 1);
    }
    if (assumptions != nullptr) {
      assumptions->push_back(concat("no usable ", prefix, "block_count: ", facts.n_layer,
                                    " layers, counted from the tensor names"));
    }
  }

  SINTER_ASSIGN(auto n_head, first_layer_value(md, prefix + "attention.head_count"));
  SINTER_ASSIGN(auto n_head_kv, first_layer_value(md, prefix + "attention.head_count_kv"));
  const int64_t heads = n_head.value_or(0);
  const int64_t kv_heads = n_head_kv.value_or(heads);  // llama.cpp's default: no GQA
  facts.n_gqa = kv_heads > 0 ? static_cast<int32_t>(std::clamp<int64_t>(heads / kv_heads, 0, 1 << 20)) : 0;

  SINTER_ASSIGN(auto n_expert, first_layer_value(md, prefix + "expert_count"));
  facts.n_expert = static_cast<int32_t>(std::clamp<int64_t>(n_expert.value_or(0), 0, 1 << 20));

  for (const SizeClass70B& size : kSize70B) {
    if (facts.architecture == size.architecture && facts.n_layer == size.n_layer && facts.n_expert != 8 &&
        (!size.needs_gqa || heads != kv_heads)) {
      facts.is_70b = true;
    }
  }
  return facts;
}

Result<QuantizePlan> plan_quantization(const GgufFile& file, const QuantizeOptions& options) {
  QuantizePlan plan;
  plan.mixture = options.mixture;
  SINTER_ASSIGN(plan.model, read_model_facts(file, &plan.assumptions));
  const Mixture& m = mixture(options.mixture);
  const std::vector<GgufTensorInfo>& tensors = file.tensors();

  // A model without output.weight uses token_embd for the output too, so it gets the output's
  // type (llama.cpp's "tied embeddings").
  const bool tied_embeddings = file.find_tensor("output.weight") == nullptr;
  int32_t attention_v_count = 0;
  for (const GgufTensorInfo& t : tensors) attention_v_count += weight_role(t.name) == WeightRole::kAttentionV;

  plan.tensors.resize(tensors.size());
  int32_t attention_v_seen = 0;
  int32_t ffn_seen[3] = {0, 0, 0};  // up, gate, down
  for (size_t i : llama_cpp_order(tensors)) {
    const GgufTensorInfo& info = tensors[i];
    TensorPlan& t = plan.tensors[i];
    t.name = info.name;
    t.shape = info.shape;
    t.source_type = info.type;
    t.role = weight_role(info.name);
    if (tied_embeddings && t.role == WeightRole::kTokenEmbedding) t.role = WeightRole::kOutput;
    t.quantizable = is_float_type(info.type) && tensor_is_quantizable(info.name, info.shape);
    if (!t.quantizable) {
      t.chosen_type = t.target_type = info.type;
      continue;
    }
    if (options.pure || !dtype_traits(m.default_type).is_quantized) {
      t.chosen_type = m.default_type;
    } else if (options.mixture == MixtureId::kMXFP4_MOE) {
      // As llama.cpp: a tensor of experts (a third dimension) MXFP4, the output and the rest Q8_0.
      t.chosen_type = info.shape.size() > 2 && info.shape[2] > 1 ? DType::MXFP4 : DType::Q8_0;
    } else {
      RolePosition position;
      if (t.role == WeightRole::kAttentionV) {
        position = {attention_v_seen++, attention_v_count};
      } else if (t.role == WeightRole::kFfnUp || t.role == WeightRole::kFfnGate ||
                 t.role == WeightRole::kFfnDown) {
        int32_t& seen = ffn_seen[t.role == WeightRole::kFfnUp ? 0 : t.role == WeightRole::kFfnGate ? 1 : 2];
        position = {seen++, plan.model.n_layer};
        if (plan.model.n_expert > 1) {
          // Expert tensors are not one per layer: their layer comes from the name.
          const auto layer = layer_of(info.name);
          if (!layer || *layer >= plan.model.n_layer) {
            return make_error(ErrorCode::kFormat, "tensor '", info.name, "': cannot tell its layer (0..",
                              plan.model.n_layer - 1, ") from its name");
          }
          position.index = *layer;
        }
      }
      t.chosen_type = mixture_tensor_type(options.mixture, t.role, position, plan.model, info.row_length());
    }
    t.target_type = dtype_traits(t.chosen_type).is_quantized ? fallback_type(t.chosen_type, info.row_length())
                                                             : t.chosen_type;
    if (t.converted()) {
      if (dtype_traits(t.source_type).dequantize == nullptr) {
        return make_error(ErrorCode::kUnsupported, "tensor '", info.name, "' is ", dtype_name(t.source_type),
                          ", which sinter cannot read");
      }
      if (dtype_traits(t.target_type).quantize == nullptr) {
        return make_error(ErrorCode::kUnsupported, "tensor '", info.name, "' would be ",
                          dtype_name(t.target_type), ", which sinter cannot write");
      }
    }
  }
  return plan;
}

}  // namespace sinter
