#include "cli/inspect_report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "backend/backend.h"
#include "model/registry.h"
#include "tensor/dtype.h"

namespace sinter::cli {
namespace {

using nlohmann::json;

// JSON has no NaN or infinity: a non-finite number is written as the string "nan", "inf" or
// "-inf" (the same as the config rows of model/hparams.h), so the output always parses.
json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// A config row's JSON literal; should one ever not parse, its text instead of a discarded value.
json config_value_json(const HParamEntry& entry) {
  json value = json::parse(entry.json, nullptr, false);
  return value.is_discarded() ? json(entry.value) : value;
}

json value_json(const GgufValue& value, size_t max_items) {
  if (value.type != GgufType::kArray) {
    return std::visit(
        [](const auto& v) -> json {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, double>) {
            return number_json(v);
          } else if constexpr (std::is_same_v<V, GgufArray>) {
            return json();
          } else if constexpr (std::is_same_v<V, std::string>) {
            return json(v);  // invalid UTF-8 is replaced when dumped
          } else {
            return json(v);
          }
        },
        value.data);
  }
  const auto& array = std::get<GgufArray>(value.data);
  json items = json::array();
  for (size_t i = 0; i < array.size() && i < max_items; ++i)
    items.push_back(value_json(array.at(i), max_items));
  if (array.size() <= max_items) return items;
  // Long arrays (vocabularies, merges) are shortened: their length and the first items.
  return json{{"type", "array"},
              {"element_type", std::string(gguf_type_name(array.element_type))},
              {"length", array.size()},
              {"first", items}};
}

std::string mib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

}  // namespace

json metadata_json(const Metadata& metadata, size_t max_array_items) {
  json out = json::object();
  for (const auto& [key, value] : metadata.entries()) out[key] = value_json(value, max_array_items);
  return out;
}

json diagnosis_json(const Diagnosis& d, const Metadata& metadata) {
  json issues = json::array();
  for (const auto& issue : d.issues)
    issues.push_back({{"severity", issue.severity}, {"message", issue.message}});
  json config = json::object();
  for (const auto& entry : d.config) config[entry.key] = config_value_json(entry);
  json defaults = json::array();
  for (const auto& entry : d.defaults_used) {
    defaults.push_back({{"key", entry.key}, {"value", config_value_json(entry)}});
  }
  json weights = json::array();
  for (const auto& w : d.weights) {
    weights.push_back({{"name", w.name},
                       {"type", std::string(dtype_name(w.type))},
                       {"op", w.consumer == Op::kLeaf ? "" : op_name(w.consumer)},
                       {"backend", w.backend},
                       {"path", execution_path_name(w.path)}});
  }
  json kv_pools = json::array();  // pools with layers: full attention first, then each window
  for (size_t p = 0; p < d.memory.kv_pools.size(); ++p) {
    const KvPoolPlan& pool = d.memory.kv_pools[p];
    if (pool.layers.empty()) continue;
    kv_pools.push_back({{"pool", p},
                        {"window", pool.window},
                        {"symmetric", pool.window_kind == WindowKind::kSymmetric},
                        {"layers", pool.layers.size()},
                        {"cells", pool.cells},
                        {"bytes", pool.bytes}});
  }
  json by_type = json::object();
  for (const auto& [type, stats] : d.stats.tensors_by_type) {
    by_type[type] = {{"count", stats.count}, {"bytes", stats.bytes}, {"f32_bytes", stats.f32_bytes}};
  }
  return json{
      {"file", d.path},
      {"architecture", d.architecture},
      {"loadable", d.loadable},
      {"issues", issues},
      {"n_layer", d.n_layer},
      {"n_vocab", d.n_vocab},
      {"n_embd", d.n_embd},
      {"n_ctx_train", d.n_ctx_train},
      {"tokenizer", d.tokenizer_model},
      {"backend", d.backend},
      {"weights", weights},
      {"metadata", metadata_json(metadata)},
      {"config", config},
      {"defaults_used", defaults},
      {"tensors_by_type", by_type},
      {"payload_bytes", d.stats.payload_bytes},
      {"f32_bytes", d.stats.f32_bytes},
      {"f32_expansion_ratio", number_json(d.stats.f32_expansion_ratio)},
      {"n_params", d.stats.n_params},
      {"active_params_per_token", d.per_token.parameters},
      {"weight_bytes_per_token", d.per_token.bytes},
      {"memory",
       {{"n_ctx", d.memory.n_ctx},
        {"n_batch", d.memory.n_batch},
        {"weights_bytes", d.memory.weights_bytes},
        {"kv_cache_bytes", d.memory.kv_cache_bytes},
        {"kv_pools", kv_pools},
        {"state_bytes", d.memory.state_bytes},
        {"state_checkpoint_bytes", d.memory.state_checkpoint_bytes},
        {"compute_bytes", d.memory.compute_bytes},
        {"total_bytes", d.memory.total_bytes()}}},
  };
}

std::string diagnosis_text(const Diagnosis& d) {
  std::ostringstream out;
  out << d.path << "\n";
  out << "  architecture   " << (d.architecture.empty() ? "(none)" : d.architecture) << "\n";
  out << "  loadable       " << (d.loadable ? "yes" : "no") << "\n";
  out << "  tokenizer      " << (d.tokenizer_model.empty() ? "(none)" : d.tokenizer_model) << "\n";
  out << "  shape          " << d.n_layer << " blocks, embedding " << d.n_embd << ", vocabulary " << d.n_vocab
      << ", trained context " << d.n_ctx_train << "\n";
  out << "  parameters     " << d.stats.n_params;
  // Mixtures of experts read a part of their weights per token.
  if (d.per_token.parameters != 0 && d.per_token.parameters * 100 < d.stats.n_params * 95)
    out << " (" << d.per_token.parameters << " active per token)";
  out << "\n";
  if (d.per_token.bytes != 0) out << "  per token      " << mib(d.per_token.bytes) << " of weights read\n";
  out << "  payload        " << mib(d.stats.payload_bytes) << " (" << mib(d.stats.f32_bytes) << " as F32, x";
  char ratio[16];
  std::snprintf(ratio, sizeof ratio, "%.2f", d.stats.f32_expansion_ratio);
  out << ratio << ")\n";
  for (const auto& [type, stats] : d.stats.tensors_by_type) {
    out << "    " << type << ": " << stats.count << " tensors, " << mib(stats.bytes) << "\n";
  }
  if (!d.backend.empty()) {
    // Weights grouped by (backend, op, type, path): the per-weight list is in --json.
    std::map<std::string, int> groups;
    for (const auto& w : d.weights) {
      if (w.consumer == Op::kLeaf) continue;
      ++groups[w.backend + " " + op_name(w.consumer) + " " + std::string(dtype_name(w.type)) + " " +
               execution_path_name(w.path)];
    }
    out << "  backend        " << d.backend << "\n";
    for (const auto& [group, count] : groups) out << "    " << group << ": " << count << " weights\n";
  }
  // A recurrent state does not grow with the context; its checkpoints have a budget. A model
  // with no attention layers (Mamba) has no KV cache: its memory is the same at any context but
  // for the compute buffers of its passes (at most --ctx tokens each).
  const bool recurrent_only = d.memory.state_bytes > 0 && d.memory.kv_cache_bytes == 0;
  out << "  memory         " << mib(d.memory.total_bytes())
      << (recurrent_only ? concat(" at any context, passes of ", d.memory.n_batch)
                         : concat(" at context ", d.memory.n_ctx))
      << " (weights " << mib(d.memory.weights_bytes);
  if (!recurrent_only) out << ", KV cache " << mib(d.memory.kv_cache_bytes);
  if (d.memory.state_bytes > 0) {
    out << ", recurrent state " << mib(d.memory.state_bytes) << " + checkpoints "
        << mib(d.memory.state_checkpoint_bytes);
  }
  out << ", compute " << mib(d.memory.compute_bytes) << ")\n";
  // The KV cache per pool: the full-attention layers, then each sliding window's.
  for (size_t p = 0; p < d.memory.kv_pools.size(); ++p) {
    const KvPoolPlan& pool = d.memory.kv_pools[p];
    if (pool.layers.empty()) continue;
    out << "    KV pool " << p << ": " << pool.layers.size() << " layers, "
        << (pool.window == 0
                ? std::string("full attention")
                : concat(pool.window_kind == WindowKind::kSymmetric ? "symmetric window " : "window ",
                         pool.window))
        << ", " << pool.cells << " cells, " << mib(pool.bytes) << "\n";
  }
  // The architecture's typed hyper-parameters as the model runs with them.
  if (!d.config.empty()) {
    out << "  config\n";
    for (const auto& entry : d.config)
      out << "    " << entry.key << " = " << entry.value << (entry.defaulted ? "  (default)" : "") << "\n";
  }
  if (!d.defaults_used.empty()) {
    out << "  defaults used\n";
    for (const auto& entry : d.defaults_used) out << "    " << entry.key << " = " << entry.value << "\n";
  }
  if (!d.issues.empty()) {
    out << "  issues\n";
    for (const auto& issue : d.issues) out << "    " << issue.severity << ": " << issue.message << "\n";
  }
  return out.str();
}

json tensors_json(const GgufFile& file) {
  json tensors = json::array();
  for (const auto& t : file.tensors()) {
    tensors.push_back({{"name", t.name},
                       {"type", std::string(dtype_name(t.type))},
                       {"shape", t.shape},
                       {"offset", t.file_offset},
                       {"bytes", t.bytes},
                       {"shard", t.shard}});
  }
  return tensors;
}

std::string tensors_text(const GgufFile& file) {
  std::ostringstream out;
  for (const auto& t : file.tensors()) {
    char line[512];
    std::snprintf(line, sizeof line, "%-40s %-8s %-22s offset %12llu  %12llu bytes\n", t.name.c_str(),
                  std::string(dtype_name(t.type)).c_str(), t.shape_string().c_str(),
                  static_cast<unsigned long long>(t.file_offset), static_cast<unsigned long long>(t.bytes));
    out << line;
  }
  return out.str();
}

json schema_json(const Diagnosis& d, const GgufFile& file) {
  json expected = json::array();
  for (const auto& spec : d.schema) {
    const auto* info = file.find_tensor(spec.name);
    expected.push_back({{"name", spec.name},
                        {"shape", spec.shape},
                        {"optional", spec.optional},
                        {"fallback", spec.fallback},
                        {"present", info != nullptr}});
  }
  json missing = json::array(), mismatched = json::array(), extra = json::array();
  for (const auto& issue : d.schema_issues) {
    json item = {{"tensor", issue.tensor}, {"message", issue.message}};
    if (issue.kind == WeightIssue::Kind::kMissing)
      missing.push_back(item);
    else if (issue.kind == WeightIssue::Kind::kUnexpected)
      extra.push_back(item);
    else
      mismatched.push_back(item);
  }
  return json{{"architecture", d.architecture},
              {"expected", expected},
              {"missing", missing},
              {"mismatched", mismatched},
              {"extra", extra},
              {"ok", missing.empty() && mismatched.empty()}};
}

std::string schema_text(const Diagnosis& d, const GgufFile& file) {
  std::ostringstream out;
  out << "schema of " << (d.architecture.empty() ? "(unknown architecture)" : d.architecture) << ": "
      << d.schema.size() << " tensors expected\n";
  for (const auto& spec : d.schema) {
    const bool present = file.find_tensor(spec.name) != nullptr;
    std::string shape = "[";
    for (size_t i = 0; i < spec.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(spec.shape[i]);
    shape += "]";
    out << "  "
        << (present                  ? "ok      "
            : spec.optional          ? "absent  "
            : !spec.fallback.empty() ? "fallback"
                                     : "MISSING ")
        << " " << spec.name << " " << shape << (spec.optional ? " (optional)" : "") << "\n";
  }
  for (const auto& issue : d.schema_issues) out << "  " << issue.message << "\n";
  return out.str();
}

json supported_json() {
  json types = json::array();
  for (const auto& t : all_dtypes()) {
    types.push_back({{"name", std::string(t.name)},
                     {"id", static_cast<uint32_t>(t.type)},
                     {"block_size", t.block_size},
                     {"block_bytes", t.block_bytes},
                     {"dequantize", t.dequantize != nullptr},
                     {"quantize", t.quantize != nullptr}});
  }
  json backends = json::object();
  for (const auto& name : backend_names()) {
    auto backend = create_backend(name, BackendOptions{1});
    if (!backend) continue;
    // Every op that computes, by key type (backend/op_table.h): the backend's own table.
    json matrix = json::object();
    for (Op op : all_ops()) {
      if (op == Op::kLeaf || op == Op::kView) continue;
      json row = json::object();
      for (const auto& t : all_dtypes())
        row[std::string(t.name)] = execution_path_name((*backend)->path(op, t.type));
      matrix[op_name(op)] = row;
    }
    backends[name] = matrix;
  }
  return json{{"architectures", architecture_names()},
              {"tensor_types", types},
              {"tokenizer_models", json::array({"llama", "gpt2", "bert"})},
              {"backends", backends}};
}

std::string supported_text() {
  std::ostringstream out;
  out << "architectures:";
  for (const auto& name : architecture_names()) out << " " << name;
  out << "\ntokenizer models: llama (SentencePiece), gpt2 (byte-level BPE), bert (WordPiece)\n";
  out << "tensor types (dequantize / quantize):\n";
  for (const auto& t : all_dtypes()) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-8s id %2u  block %3lld x %3zu bytes  %s / %s\n",
                  std::string(t.name).c_str(), static_cast<unsigned>(t.type),
                  static_cast<long long>(t.block_size), t.block_bytes, t.dequantize ? "yes" : "no ",
                  t.quantize ? "yes" : "no");
    out << line;
  }
  for (const auto& name : backend_names()) {
    auto backend = create_backend(name, BackendOptions{1});
    if (!backend) continue;
    out << "backend " << name << " (op x weight type -> execution path):\n";
    out << "  " << std::string(10, ' ');
    for (Op op : weight_ops()) {
      char head[24];
      std::snprintf(head, sizeof head, "%-13s", op_name(op));
      out << head;
    }
    out << "\n";
    for (const auto& t : all_dtypes()) {
      char line[32];
      std::snprintf(line, sizeof line, "  %-10s", std::string(t.name).c_str());
      out << line;
      for (Op op : weight_ops()) {
        char cell[24];
        std::snprintf(cell, sizeof cell, "%-13s", execution_path_name((*backend)->path(op, t.type)));
        out << cell;
      }
      out << "\n";
    }
    // The other ops, with the types they are keyed on.
    for (Op op : all_ops()) {
      if (op == Op::kLeaf || op == Op::kView || op == Op::kMatMul || op == Op::kMulMatId ||
          op == Op::kGetRows)
        continue;
      out << "  " << op_name(op) << ":";
      for (const auto& t : all_dtypes()) {
        const ExecutionPath path = (*backend)->path(op, t.type);
        if (path != ExecutionPath::kUnsupported)
          out << " " << t.name << " (" << execution_path_name(path) << ")";
      }
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace sinter::cli
