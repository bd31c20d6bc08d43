// Diagnosis of a GGUF file before any payload is read (the Llamex "inspect before load"):
// architecture, whether sinter can run it and why not, the typed config with the defaults
// assumed, bytes per tensor type and the F32 expansion, the schema check against the
// architecture, and a memory estimate for a context length.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"
#include "gguf/file_stats.h"
#include "gguf/gguf_file.h"
#include "memory/kv_cache.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "runtime/weight_use.h"

namespace sinter {

// The issue list stays short whatever the file: at most this many issues of each severity (then
// one that counts the rest), each message at most this many bytes (then "...").
constexpr size_t kMaxIssuesPerSeverity = 8;
constexpr size_t kMaxIssueBytes = 512;

struct DiagnosisIssue {
  std::string severity;  // "error": cannot load; "warning": loads, but something is off
  std::string message;
};

struct MemoryEstimate {
  int32_t n_ctx = 0;
  int32_t n_batch = 0;
  uint64_t weights_bytes = 0;   // tensor payloads (mapped from the file)
  uint64_t kv_cache_bytes = 0;  // F16 cache for n_ctx tokens of one sequence, all pools
  // The cache's pools: full attention (window 0) and one per sliding window (kv_cache.h).
  std::vector<KvPoolPlan> kv_pools;
  // Recurrent layers' state of one sequence, and the budget of its checkpoints (0 without).
  uint64_t state_bytes = 0;
  uint64_t state_checkpoint_bytes = 0;
  uint64_t compute_bytes = 0;  // planned activations of an n_batch-token pass, plus scratch
  uint64_t total_bytes() const {
    return weights_bytes + kv_cache_bytes + state_bytes + state_checkpoint_bytes + compute_bytes;
  }
};

struct Diagnosis {
  std::string path;
  std::string architecture;  // empty when the file does not say
  bool loadable = false;
  std::vector<DiagnosisIssue> issues;
  std::vector<HParamEntry> config;  // typed hyper-parameters (after defaults)
  std::vector<HParamEntry> defaults_used;
  GgufFileStats stats;
  MemoryEstimate memory;
  std::vector<WeightSpec> schema;  // tensors the architecture expects
  std::vector<WeightIssue> schema_issues;
  std::string backend;                   // the primary backend asked
  std::vector<WeightPlacement> weights;  // each weight: its consumer, backend and path
  TokenReads per_token;                  // active parameters and weight bytes one token reads
  std::string tokenizer_model;
  int32_t n_layer = 0;
  int32_t n_vocab = 0;
  int32_t n_embd = 0;
  int32_t n_ctx_train = 0;
};

struct DiagnosisOptions {
  int32_t n_ctx = 0;  // 0: the model's training context capped at 4096
  int32_t n_batch = 512;
  size_t state_checkpoint_bytes = 0;  // recurrent state checkpoints (ContextOptions; 0: default)
  std::string backend = "cpu";
};

// Never fails for a parsed file: every problem becomes an issue.
Diagnosis diagnose(const GgufFile& file, const DiagnosisOptions& options = {});

}  // namespace sinter
