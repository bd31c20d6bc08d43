#include "runtime/diagnosis.h"

#include <algorithm>

#include "graph/planner.h"
#include "model/builder.h"
#include "model/registry.h"
#include "runtime/context.h"
#include "tokenizer/tokenizer.h"

namespace sinter {
namespace {

void add(Diagnosis& d, const char* severity, const std::string& message) {
  d.issues.push_back({severity, message});
}

// Activations of one pass of `n_tokens` tokens, planned as the runtime would plan them.
uint64_t compute_estimate(const Model& model, const ContextOptions& options, int32_t n_tokens,
                          const Backend& backend) {
  auto memory = make_memory(model.shape(), options, /*backend=*/nullptr);
  if (!memory) return 0;
  Graph graph;
  ForwardContext forward(graph, BatchShape{n_tokens, n_tokens, options.n_ctx}, **memory);
  try {
    graph.mark_output(model.build_forward(forward));
  } catch (const std::exception&) {
    return 0;
  }
  graph.finalize();
  return plan_memory(graph).arena_bytes + backend.scratch_bytes(graph);
}

// Cuts a message that quotes too much of a file (a token's text, a name) at a UTF-8 boundary.
void shorten(std::string& message, size_t max_bytes) {
  if (message.size() <= max_bytes) return;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  message.resize(end);
  message += "...";
}

// However many tensors a file lacks, misshapes or adds, the issue list stays short: the first
// `kept` of each severity, then one issue counting the rest (`inspect --schema` lists them all).
void cap_issues(std::vector<DiagnosisIssue>& issues, size_t kept) {
  std::vector<DiagnosisIssue> out;
  size_t errors = 0, warnings = 0;
  for (auto& issue : issues) {
    size_t& seen = issue.severity == "error" ? errors : warnings;
    if (seen++ >= kept) continue;
    shorten(issue.message, kMaxIssueBytes);
    out.push_back(std::move(issue));
  }
  if (errors > kept) out.push_back({"error", concat("and ", errors - kept, " more errors")});
  if (warnings > kept) out.push_back({"warning", concat("and ", warnings - kept, " more warnings")});
  issues = std::move(out);
}

// Each weight asked about with the op that consumes it, on the backend (or the CPU fallback) as
// loading would place it.
void place_weights(Diagnosis& d, const Model& model, const Backend& primary) {
  auto uses = weight_uses(model);
  if (!uses) {
    add(d, "error", uses.error().message());
    return;
  }
  Result<std::unique_ptr<Backend>> fallback = primary.name() == "cpu"
                                                  ? Result<std::unique_ptr<Backend>>(nullptr)
                                                  : create_backend("cpu", BackendOptions{1});
  const Backend* fallback_backend = fallback ? fallback->get() : nullptr;
  for (const Tensor& weight : model.weights()) {
    WeightPlacement placement = place_weight(weight, *uses, primary, fallback_backend);
    if (placement.consumer != Op::kLeaf && placement.backend.empty()) {
      add(d, "error",
          concat("tensor ", HParams::quote(weight.name), " has type ", dtype_name(weight.type),
                 ", which the ", primary.name(), " backend cannot compute with (",
                 op_name(placement.consumer), ")"));
    }
    d.weights.push_back(std::move(placement));
  }
  d.per_token = token_reads(model, *uses);
}

}  // namespace

Diagnosis diagnose(const GgufFile& file, const DiagnosisOptions& options) {
  Diagnosis d;
  d.path = file.path();
  d.stats = compute_file_stats(file);
  const Metadata& metadata = file.metadata();

  // Tokenizer.
  if (auto model = metadata.find<std::string>("tokenizer.ggml.model"); model && model->has_value()) {
    d.tokenizer_model = **model;
    if (auto tokenizer = Tokenizer::from_metadata(metadata); !tokenizer) {
      add(d, "error", "tokenizer: " + tokenizer.error().message());
    }
  } else {
    add(d, "error", "no tokenizer (tokenizer.ggml.model is missing)");
  }

  // Architecture, hyper-parameters and the schema check.
  auto arch_name = architecture_of(metadata);
  if (!arch_name) {
    add(d, "error", arch_name.error().message());
  } else {
    d.architecture = *arch_name;
    const Architecture* arch = find_architecture(d.architecture);
    if (arch == nullptr) {
      add(d, "error", "unknown architecture '" + d.architecture + "'");
    } else {
      WeightBinder binder(file, WeightBinder::Mode::kCheck);
      auto model = arch->create(metadata, binder);
      if (!model) {
        add(d, "error", model.error().message());
      } else {
        binder.finish();
        (*model)->weights() = binder.take_tensors();
        const Model& m = **model;
        d.config = m.hparams();
        for (const auto& entry : d.config) {
          if (entry.defaulted) d.defaults_used.push_back(entry);
        }
        d.schema = binder.specs();
        d.schema_issues = binder.issues();
        for (const auto& issue : binder.issues()) {
          add(d, issue.kind == WeightIssue::Kind::kUnexpected ? "warning" : "error", issue.message);
        }
        const ModelShape& shape = m.shape();
        d.n_layer = shape.n_layer;
        d.n_vocab = shape.n_vocab;
        d.n_embd = shape.n_embd;
        d.n_ctx_train = shape.n_ctx_train;

        auto backend = create_backend(options.backend, BackendOptions{1});
        if (!backend) {
          add(d, "error", backend.error().message());
        } else {
          d.backend = std::string((*backend)->name());
          if (binder.status()) place_weights(d, m, **backend);
          const int32_t n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(shape.n_ctx_train, 4096);
          d.memory.n_ctx = n_ctx;
          d.memory.n_batch = std::min(options.n_batch, n_ctx);
          d.memory.weights_bytes = d.stats.payload_bytes;
          // Only sizes the tensors confirmed: while binding fails, the shapes are claims of the
          // metadata (a KV row of 2^62 bytes), not facts of the file.
          if (binder.status()) {
            ContextOptions context_options;
            context_options.n_ctx = n_ctx;
            context_options.n_batch = d.memory.n_batch;
            context_options.state_checkpoint_bytes = options.state_checkpoint_bytes;
            const KvCacheOptions cache_options = kv_cache_options(shape, context_options);
            if (auto pools = KvCache::plan(cache_options); !pools) {
              add(d, "error", "KV cache: " + pools.error().message());
            } else {
              d.memory.kv_pools = std::move(pools).value();
            }
            const bool recurrent_only = shape.kv_layers.empty() && !shape.recurrent_layers.empty();
            d.memory.kv_cache_bytes = recurrent_only ? 0 : KvCache::bytes_for(cache_options);
            if (!shape.recurrent_layers.empty()) {
              const RecurrentStateOptions state = recurrent_state_options(shape, context_options);
              d.memory.state_bytes = RecurrentState::bytes_for(state);
              d.memory.state_checkpoint_bytes = state.checkpoint_bytes;
            }
            d.memory.compute_bytes = compute_estimate(m, context_options, d.memory.n_batch, **backend);
          }
        }
      }
    }
  }
  d.loadable =
      std::none_of(d.issues.begin(), d.issues.end(), [](const auto& i) { return i.severity == "error"; });
  cap_issues(d.issues, kMaxIssuesPerSeverity);
  return d;
}

}  // namespace sinter
