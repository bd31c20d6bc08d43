#include "runtime/context.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "graph/planner.h"
#include "memory/hybrid_memory.h"
#include "memory/memory_plan.h"

namespace sinter {
namespace {

constexpr size_t kMaxCachedGraphs = 8;
constexpr int32_t kDefaultMaxContext = 4096;

// Attention index inputs are sized in powers of two (at least this many cells), so that a
// generation rebuilds its graph a few times, not once per token.
constexpr int64_t kMinIndexCapacity = 64;

int64_t index_capacity_for(int64_t cells) {
  return std::max(kMinIndexCapacity, static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(cells))));
}

// Places a finalized graph's nodes on the model's backends and plans each backend's nodes in an
// arena of that backend.
struct BoundGraph {
  std::vector<std::unique_ptr<Buffer>> arenas;  // one per backend of the placement
  Placement placement;
};
Result<BoundGraph> bind_graph(Graph& graph, const LoadedModel& model, size_t* arena_bytes = nullptr) {
  BoundGraph bound;
  SINTER_ASSIGN(bound.placement, model.place(graph));
  const MemoryPlan plan = plan_memory(graph, bound.placement.node_backends());
  std::vector<uint8_t*> bases;
  std::vector<Buffer*> buffers;
  for (size_t i = 0; i < plan.arenas.size(); ++i) {
    SINTER_ASSIGN(std::unique_ptr<Buffer> arena,
                  bound.placement.backends()[i]->allocate(BufferUsage::kCompute, plan.arenas[i]));
    bases.push_back(arena->base());
    buffers.push_back(arena.get());
    bound.arenas.push_back(std::move(arena));
  }
  bind_memory(graph, plan, bases, buffers);
  if (arena_bytes != nullptr) *arena_bytes = plan.arena_bytes;
  return bound;
}
}  // namespace

struct Context::PreparedGraph {
  BatchShape shape;
  std::unique_ptr<Graph> graph;
  ForwardContext* forward = nullptr;  // owned below
  std::unique_ptr<ForwardContext> forward_owner;
  Tensor* logits = nullptr;
  BoundGraph bound;
};

Context::~Context() = default;

KvCacheOptions kv_cache_options(const ModelShape& model, const ContextOptions& options) {
  KvCacheOptions cache;
  cache.layers = model.kv_layers;
  cache.windows = model.kv_windows;
  cache.window_kind = model.window_kind;
  cache.n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(model.n_ctx_train, kDefaultMaxContext);
  cache.n_seq_max = options.n_seq_max;
  cache.n_batch = std::min(options.n_batch, cache.n_ctx);
  cache.type = options.kv_type;
  return cache;
}

RecurrentStateOptions recurrent_state_options(const ModelShape& model, const ContextOptions& options) {
  RecurrentStateOptions state;
  state.layers = model.recurrent_layers;
  state.n_seq_max = options.n_seq_max;
  state.checkpoint_bytes = options.state_checkpoint_bytes;
  state.rollback_tokens = options.rollback_tokens;
  if (state.checkpoint_bytes == 0 && !state.layers.empty()) {
    const size_t one = RecurrentState::sequence_bytes_for(state.layers);
    state.checkpoint_bytes =
        std::max(one, std::min(size_t{1} << 30, 8 * one * static_cast<size_t>(options.n_seq_max)));
  }
  return state;
}

uint64_t memory_bytes_for(const ModelShape& model, const ContextOptions& options) {
  uint64_t bytes = model.kv_layers.empty() && !model.recurrent_layers.empty()
                       ? 0
                       : KvCache::bytes_for(kv_cache_options(model, options));
  if (!model.recurrent_layers.empty()) {
    const RecurrentStateOptions state = recurrent_state_options(model, options);
    bytes += RecurrentState::bytes_for(state) + state.checkpoint_bytes;
  }
  return bytes;
}

Result<std::unique_ptr<SequenceMemory>> make_memory(const ModelShape& model, const ContextOptions& options,
                                                    Backend* backend) {
  std::unique_ptr<RecurrentState> state;
  if (!model.recurrent_layers.empty()) {
    SINTER_ASSIGN(state, RecurrentState::create(recurrent_state_options(model, options), backend));
    if (model.kv_layers.empty()) return std::unique_ptr<SequenceMemory>(std::move(state));
  }
  SINTER_ASSIGN(std::unique_ptr<KvCache> kv, KvCache::create(kv_cache_options(model, options), backend));
  if (!state) return std::unique_ptr<SequenceMemory>(std::move(kv));
  return std::unique_ptr<SequenceMemory>(std::make_unique<HybridMemory>(std::move(kv), std::move(state)));
}

Result<std::unique_ptr<Context>> Context::create(std::shared_ptr<const LoadedModel> model,
                                                 const ContextOptions& options) {
  const ModelShape& shape = model->model().shape();
  int32_t n_ctx = options.n_ctx;
  if (n_ctx < 0)
    return make_error(ErrorCode::kInvalidArgument, "context size must not be negative, got ", n_ctx);
  if (n_ctx == 0) n_ctx = std::min(shape.n_ctx_train, kDefaultMaxContext);
  if (n_ctx > kMaxCacheCells) {
    return make_error(ErrorCode::kInvalidArgument, "context size must be at most ", kMaxCacheCells,
                      " tokens, got ", n_ctx);
  }
  if (options.n_batch <= 0)
    return make_error(ErrorCode::kInvalidArgument, "batch size must be positive, got ", options.n_batch);
  if (options.n_seq_max < 1 || options.n_seq_max > kMaxSequences) {
    return make_error(ErrorCode::kInvalidArgument, "sequences must be between 1 and ", kMaxSequences,
                      ", got ", options.n_seq_max);
  }
  auto context = std::unique_ptr<Context>(new Context());
  context->model_ = std::move(model);
  context->options_ = options;
  context->options_.n_ctx = n_ctx;
  // The memory plan, before the memory is allocated: one with shapes only is enough to plan the
  // largest pass's compute buffers.
  SINTER_ASSIGN(context->memory_, make_memory(shape, context->options_, /*backend=*/nullptr));
  ContextMemory need;
  need.n_ctx = n_ctx;
  need.kv_bytes = memory_bytes_for(shape, context->options_);
  need.bookkeeping_bytes = KvCache::bookkeeping_bytes_for(kv_cache_options(shape, context->options_));
  SINTER_ASSIGN(need.compute_bytes, context->compute_bytes(std::min(options.n_batch, n_ctx)));
  SINTER_TRY(check_context_fits(need, available_memory()));
  SINTER_ASSIGN(context->memory_, make_memory(shape, context->options_, &context->model_->backend()));
  return context;
}

Result<Context::PreparedGraph*> Context::graph_for(const BatchShape& shape) {
  for (auto it = graphs_.begin(); it != graphs_.end(); ++it) {
    if ((*it)->shape == shape) {
      graphs_.splice(graphs_.begin(), graphs_, it);  // most recently used first
      ++stats_.reuses;
      return graphs_.front().get();
    }
  }
  auto prepared = std::make_unique<PreparedGraph>();
  prepared->shape = shape;
  prepared->graph = std::make_unique<Graph>();
  prepared->forward_owner = std::make_unique<ForwardContext>(*prepared->graph, shape, *memory_);
  prepared->forward = prepared->forward_owner.get();
  try {
    prepared->logits = model_->model().build_forward(*prepared->forward);
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInternal, "building the forward graph failed: ", e.what());
  }
  prepared->graph->mark_output(prepared->logits);
  prepared->graph->finalize();
  size_t arena_bytes = 0;
  SINTER_ASSIGN(prepared->bound, bind_graph(*prepared->graph, *model_, &arena_bytes));
  stats_.arena_bytes = std::max(stats_.arena_bytes, arena_bytes);
  ++stats_.builds;
  graphs_.push_front(std::move(prepared));
  if (graphs_.size() > kMaxCachedGraphs) graphs_.pop_back();
  return graphs_.front().get();
}

Result<size_t> Context::compute_bytes(int32_t n_tokens) {
  Graph graph;
  // A pass over one sequence sees at most every cell.
  const int64_t cells = memory_->kv() != nullptr ? memory_->kv()->cell_count() : 1;
  ForwardContext forward(graph, BatchShape{n_tokens, n_tokens, cells}, *memory_);
  try {
    graph.mark_output(model_->model().build_forward(forward));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInternal, "building the forward graph failed: ", e.what());
  }
  graph.finalize();
  return plan_memory(graph).arena_bytes + model_->backend().scratch_bytes(graph);
}

Result<uint64_t> Context::weight_bytes_per_token() {
  SINTER_ASSIGN(PreparedGraph * prepared, graph_for(BatchShape{1, 1, kMinIndexCapacity}));
  uint64_t bytes = 0;
  for (const Tensor* node : prepared->graph->nodes()) {
    const Tensor* weight = node->src[0];
    if (weight == nullptr || weight->role != TensorRole::kPersistent) continue;
    if (node->op == Op::kMatMul) bytes += weight->bytes();
    if (node->op == Op::kGetRows) bytes += weight->row_bytes() * static_cast<uint64_t>(node->ne[1]);
    // One token's k experts: k of the n_expert matrices (distinct, as top-k chooses them).
    if (node->op == Op::kMulMatId)
      bytes += weight->bytes() / static_cast<uint64_t>(weight->ne[2]) * static_cast<uint64_t>(node->ne[1]);
  }
  return bytes;
}

Status Context::apply_pending_shift() {
  KvCache* cache = memory_->kv();
  if (cache == nullptr || !cache->has_pending_shift()) return ok_status();
  Graph graph;
  // One input of per-cell deltas per pool that has layers (pool 0 keeps the single pool's name).
  std::vector<Tensor*> deltas(static_cast<size_t>(cache->pool_count()), nullptr);
  for (int pool = 0; pool < cache->pool_count(); ++pool) {
    if (cache->pool_layer_count(pool) == 0) continue;
    deltas[static_cast<size_t>(pool)] =
        graph.input(pool == 0 ? std::string("inp_k_shift") : "inp_k_shift-" + std::to_string(pool),
                    DType::I32, {cache->pool_cells(pool), 1, 1, 1});
  }
  model_->model().build_kv_shift(graph, *cache, deltas);
  graph.finalize();
  SINTER_ASSIGN(const BoundGraph bound, bind_graph(graph, *model_));
  for (int pool = 0; pool < cache->pool_count(); ++pool) {
    if (deltas[static_cast<size_t>(pool)] == nullptr) continue;
    const auto pending = cache->pending_shift(pool);
    tensor_set(*deltas[static_cast<size_t>(pool)], pending.data(), pending.size());
  }
  SINTER_TRY(bound.placement.compute(graph));
  cache->clear_pending_shift();
  return ok_status();
}

Status Context::decode(std::span<const BatchEntry> batch) {
  output_count_ = 0;
  if (batch.empty()) return make_error(ErrorCode::kInvalidArgument, "empty batch");
  const int32_t n_vocab = this->n_vocab();
  const int32_t width = output_width();
  int32_t outputs = 0;
  for (const auto& entry : batch) {
    if (entry.embedding == nullptr && (entry.token < 0 || entry.token >= n_vocab)) {
      return make_error(ErrorCode::kInvalidArgument, "token id ", entry.token,
                        " is outside the vocabulary (0..", n_vocab - 1, ")");
    }
    if (entry.sequence < 0 || entry.sequence >= kMaxSequences) {
      return make_error(ErrorCode::kInvalidArgument, "sequence id ", entry.sequence, " outside 0..",
                        kMaxSequences - 1);
    }
    outputs += entry.want_logits ? 1 : 0;
  }
  if (static_cast<int32_t>(batch.size()) > memory_->free_cells()) {
    return make_error(ErrorCode::kContextFull, "the context holds ", memory_->cell_count(), " tokens; ",
                      memory_->used_cells(), " are in use and the batch needs ", batch.size(), " more");
  }
  SINTER_TRY(apply_pending_shift());
  logits_.resize(static_cast<size_t>(outputs) * static_cast<size_t>(width));
  float* out = logits_.data();
  for (size_t start = 0; start < batch.size(); start += static_cast<size_t>(options_.n_batch)) {
    const size_t count = std::min(batch.size() - start, static_cast<size_t>(options_.n_batch));
    const auto pass = batch.subspan(start, count);
    SINTER_TRY(run_pass(pass, out));
    for (const auto& entry : pass) out += entry.want_logits ? width : 0;
  }
  // Weights read from a truncated file came back as zeros (core/mapping_guard.h): the logits
  // are worthless, and so is every later pass over this mapping.
  if (model_->file().damaged()) {
    return make_error(ErrorCode::kIo, "the model file ", model_->path(),
                      " was truncated while in use (was it replaced?); it must be loaded again");
  }
  output_count_ = outputs;
  return ok_status();
}

Status Context::run_pass(std::span<const BatchEntry> pass, float* logits_out) {
  const auto n_tokens = static_cast<int32_t>(pass.size());
  int32_t n_outputs = 0;
  bool embeddings = false;
  for (const auto& entry : pass) {
    n_outputs += entry.want_logits ? 1 : 0;
    embeddings = embeddings || entry.embedding != nullptr;
  }

  std::vector<CacheToken>& tokens = pass_tokens_;  // capacity reused across passes
  tokens.resize(pass.size());
  for (size_t i = 0; i < pass.size(); ++i) tokens[i] = {pass[i].sequence, pass[i].position};
  SINTER_TRY(memory_->place(tokens));
  // A failed pass leaves no token behind, in any part of the memory.
  const auto fail = [&](Status status) {
    memory_->unplace(tokens);
    return status;
  };
  const ModelShape& model_shape = model_->model().shape();
  const int64_t most_cells = memory_->prepare_pass(tokens, model_shape.causal);
  // A pass without outputs still runs the whole graph for its memory's writes; compute one row.
  const BatchShape shape{n_tokens, std::max(n_outputs, 1), index_capacity_for(most_cells), embeddings};
  auto prepared_or = graph_for(shape);
  if (!prepared_or) return fail(prepared_or.error());
  PreparedGraph* prepared = prepared_or.value();
  // Every input is filled by the batch or the part of the memory that made it.
  for (const auto& input : prepared->forward->inputs) {
    if (Status filled = input->fill(pass); !filled) return fail(filled);
  }
  if (Status computed = prepared->bound.placement.compute(*prepared->graph); !computed) return fail(computed);
  memory_->passed();
  ++stats_.passes;
  if (n_outputs > 0) {
    tensor_get(
        *prepared->logits, logits_out, 0,
        static_cast<size_t>(n_outputs) * static_cast<size_t>(model_shape.output_width()) * sizeof(float));
  }
  return ok_status();
}

Status Context::switch_model(std::shared_ptr<const LoadedModel> model) {
  if (model->file().path() != model_->file().path() ||
      model->model().shape().kv_layers.size() != model_->model().shape().kv_layers.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "switch_model() needs the same model file on another backend");
  }
  SINTER_TRY(memory_->move_to(model->backend()));
  graphs_.clear();  // bound to the old backend's arenas and placement
  model_ = std::move(model);
  return ok_status();
}

std::span<const float> Context::logits(int32_t output_index) const {
  const auto n = static_cast<size_t>(output_width());
  return {logits_.data() + static_cast<size_t>(output_index) * n, n};
}

}  // namespace sinter
