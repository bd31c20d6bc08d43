// An inference context: the memory of up to 64 sequences over one loaded model (a KV cache for
// its attention layers, a recurrent state for its recurrent ones: memory/sequence_memory.h), and
// the forward passes that fill it. decode() takes a batch of tokens from any sequences; it splits
// the batch into passes of at most n_batch tokens, reuses the built graph whenever a pass has
// the same shape as an earlier one, and keeps the logits of the tokens that asked for them.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <vector>

#include "core/token.h"
#include "memory/batch.h"
#include "memory/kv_cache.h"
#include "memory/sequence_memory.h"
#include "model/builder.h"
#include "runtime/loaded_model.h"

namespace sinter {

struct ContextOptions {
  int32_t n_ctx = 0;      // cache cells; 0: the model's training context, capped at 4096
  int32_t n_batch = 512;  // most tokens in one forward pass
  // Sequences holding cells at once (1..64): sizes the cache pools of sliding-window layers.
  int32_t n_seq_max = 1;
  DType kv_type = DType::F16;
  // Host memory for the recurrent state's checkpoints (memory/recurrent_state.h); 0: eight
  // sequence states per sequence, at most 1 GiB (at least one). Models without recurrent layers
  // have none.
  size_t state_checkpoint_bytes = 0;
  // Tokens a sequence can be cut back by from its end at any time (speculative decoding's
  // rejected drafts): a recurrent state keeps each sequence's states after its last this many
  // tokens (memory/recurrent_state.h). A KV cache can always cut back.
  int32_t rollback_tokens = 0;
};

// The KV cache a context with these options has for `model`: its layers, windows and sizes
// (for memory estimates; n_ctx 0 resolves as in Context::create).
KvCacheOptions kv_cache_options(const ModelShape& model, const ContextOptions& options);
// The recurrent state of such a context (no layers for a model without recurrent layers).
RecurrentStateOptions recurrent_state_options(const ModelShape& model, const ContextOptions& options);
// Bytes of a context's memory: the KV cache's and the recurrent state's with its checkpoints.
uint64_t memory_bytes_for(const ModelShape& model, const ContextOptions& options);
// The memory a context of `model` has: a KV cache, a recurrent state, or both (a hybrid); a
// null backend makes one with shapes but no memory, for estimates.
Result<std::unique_ptr<SequenceMemory>> make_memory(const ModelShape& model, const ContextOptions& options,
                                                    Backend* backend);

struct GraphStats {
  int64_t builds = 0;      // graphs built
  int64_t reuses = 0;      // passes that reused a built graph
  int64_t passes = 0;      // forward passes run
  size_t arena_bytes = 0;  // compute memory of the largest graph
};

class Context {
 public:
  // Refuses a context larger than kMaxCacheCells, or one whose cache and compute buffers do not
  // fit the memory available (memory/memory_plan.h), before allocating them.
  static Result<std::unique_ptr<Context>> create(std::shared_ptr<const LoadedModel> model,
                                                 const ContextOptions& options);
  ~Context();

  // Runs the batch. On error nothing was added to the cache.
  Status decode(std::span<const BatchEntry> batch);

  // Logits of the i-th entry of the last decoded batch that asked for them ([n_vocab] floats;
  // an encoder's hidden state, [n_embd] floats: output_width()).
  std::span<const float> logits(int32_t output_index) const;
  int32_t output_count() const { return output_count_; }

  SequenceMemory& memory() { return *memory_; }
  const SequenceMemory& memory() const { return *memory_; }
  // The attention layers' cache (memory().kv(); a model without attention layers has none).
  KvCache& cache() { return *memory_->kv(); }
  const KvCache& cache() const { return *memory_->kv(); }
  const LoadedModel& model() const { return *model_; }
  const std::shared_ptr<const LoadedModel>& shared_model() const { return model_; }
  // Continues on the same model file bound to another backend (LoadedModel::on_backend): the
  // cache's cells move to the new backend's memory, so every sequence keeps its state.
  Status switch_model(std::shared_ptr<const LoadedModel> model);
  int32_t n_ctx() const { return memory_->cell_count(); }
  int32_t n_batch() const { return options_.n_batch; }
  int32_t n_vocab() const { return model_->model().shape().n_vocab; }
  // Floats per output row: n_vocab, or an encoder's n_embd.
  int32_t output_width() const { return model_->model().shape().output_width(); }
  const GraphStats& stats() const { return stats_; }

  // Compute memory a pass of `n_tokens` tokens (all wanting logits) needs: for memory estimates.
  Result<size_t> compute_bytes(int32_t n_tokens);
  // Weight bytes one generation step reads: every matrix a one-token pass multiplies with,
  // and the embedding rows it looks up.
  Result<uint64_t> weight_bytes_per_token();

 private:
  struct PreparedGraph;
  Context() = default;
  Result<PreparedGraph*> graph_for(const BatchShape& shape);
  Status run_pass(std::span<const BatchEntry> pass, float* logits_out);
  Status apply_pending_shift();

  std::shared_ptr<const LoadedModel> model_;
  ContextOptions options_;
  std::unique_ptr<SequenceMemory> memory_;
  std::list<std::unique_ptr<PreparedGraph>> graphs_;  // most recently used first
  std::vector<float> logits_;
  std::vector<CacheToken> pass_tokens_;  // run_pass's tokens, reused per pass
  int32_t output_count_ = 0;
  GraphStats stats_;
};

}  // namespace sinter
