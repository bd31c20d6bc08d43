#include "memory/kv_cache.h"

#include <algorithm>
#include <limits>

namespace sinter {

KvCache::~KvCache() = default;

Result<std::vector<KvPoolPlan>> KvCache::plan(const KvCacheOptions& o) {
  if (o.n_ctx <= 0) return make_error(ErrorCode::kInvalidArgument, "KV cache needs at least one cell");
  if (o.n_ctx > kMaxCacheCells) {
    return make_error(ErrorCode::kInvalidArgument, "a KV cache holds at most ", kMaxCacheCells,
                      " cells, not ", o.n_ctx);
  }
  if (o.type != DType::F16 && o.type != DType::F32 && o.type != DType::BF16) {
    return make_error(ErrorCode::kInvalidArgument, "KV cache type must be f16, bf16 or f32, not ",
                      dtype_name(o.type));
  }
  if (o.n_seq_max < 1 || o.n_seq_max > kMaxSequences) {
    return make_error(ErrorCode::kInvalidArgument, "a KV cache serves 1 to ", kMaxSequences,
                      " sequences, not ", o.n_seq_max);
  }
  if (o.n_batch < 1) return make_error(ErrorCode::kInvalidArgument, "KV cache batch size must be positive");
  if (!o.windows.empty() && o.windows.size() != o.layers.size()) {
    return make_error(ErrorCode::kInvalidArgument, "KV cache: ", o.windows.size(), " windows for ",
                      o.layers.size(), " layers");
  }
  for (size_t il = 0; il < o.layers.size(); ++il) {
    const KvLayerShape& layer = o.layers[il];
    if (layer.heads <= 0 || layer.k_row % layer.heads != 0 || layer.v_row % layer.heads != 0) {
      return make_error(ErrorCode::kInvalidArgument, "KV cache layer ", il, ": rows of ", layer.k_row,
                        " and ", layer.v_row, " values do not split into ", layer.heads, " heads");
    }
    if (!o.windows.empty() && o.windows[il] < 0) {
      return make_error(ErrorCode::kInvalidArgument, "KV cache layer ", il, ": negative window ",
                        o.windows[il]);
    }
  }
  // Pool 0: full attention, n_ctx cells; then one pool per distinct window, smallest first.
  std::vector<KvPoolPlan> pools(1);
  pools[0].cells = o.n_ctx;
  std::vector<int32_t> windows;
  for (int32_t w : o.windows) {
    if (w > 0) windows.push_back(w);
  }
  std::sort(windows.begin(), windows.end());
  windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
  for (int32_t w : windows) {
    KvPoolPlan pool;
    pool.window = w;
    pool.window_kind = o.window_kind;
    // Each sequence's last W positions and one batch (llama.cpp's rule), never above the context.
    const int64_t cells = int64_t{w} * o.n_seq_max + o.n_batch;
    pool.cells = static_cast<int32_t>(std::min<int64_t>(o.n_ctx, cells));
    pools.push_back(pool);
  }
  for (size_t il = 0; il < o.layers.size(); ++il) {
    const int32_t w = o.windows.empty() ? 0 : o.windows[il];
    const auto it = std::lower_bound(windows.begin(), windows.end(), w);
    KvPoolPlan& pool = pools[w == 0 ? 0 : static_cast<size_t>(it - windows.begin()) + 1];
    pool.layers.push_back(static_cast<int>(il));
    pool.bytes += KvPool::bytes_for({o.layers[il]}, pool.cells, o.type);
  }
  return pools;
}

Result<std::unique_ptr<KvCache>> KvCache::create(const KvCacheOptions& options, Backend* backend) {
  SINTER_ASSIGN(const std::vector<KvPoolPlan> plans, plan(options));
  auto cache = std::unique_ptr<KvCache>(new KvCache());
  cache->type_ = options.type;
  cache->n_seq_max_ = options.n_seq_max;
  cache->layer_pool_.resize(options.layers.size());
  cache->layer_local_.resize(options.layers.size());
  for (size_t p = 0; p < plans.size(); ++p) {
    std::vector<KvLayerShape> shapes;
    for (size_t i = 0; i < plans[p].layers.size(); ++i) {
      const auto il = static_cast<size_t>(plans[p].layers[i]);
      shapes.push_back(options.layers[il]);
      cache->layer_pool_[il] = static_cast<int>(p);
      cache->layer_local_[il] = static_cast<int>(i);
    }
    SINTER_ASSIGN(std::unique_ptr<KvPool> pool,
                  KvPool::create(shapes, plans[p].layers, plans[p].cells, plans[p].window, options.type,
                                 backend, plans[p].window_kind));
    cache->pools_.push_back(std::move(pool));
  }
  cache->prune_.resize(plans.size());
  return cache;
}

Result<std::unique_ptr<KvCache>> KvCache::create(const std::vector<KvLayerShape>& layers, int32_t cells,
                                                 DType type, Backend* backend) {
  return create(KvCacheOptions{layers, {}, cells, 1, std::max(cells, 1), type}, backend);
}

size_t KvCache::bytes_for(const KvCacheOptions& options) {
  const auto plans = plan(options);
  if (!plans) return 0;
  size_t total = 0;
  for (const KvPoolPlan& pool : *plans) total += pool.bytes;
  return total;
}

size_t KvCache::bytes_for(const std::vector<KvLayerShape>& layers, int32_t cells, DType type) {
  return KvPool::bytes_for(layers, cells, type);
}

size_t KvCache::bookkeeping_bytes_for(const KvCacheOptions& options) {
  const auto plans = plan(options);
  if (!plans) return 0;
  size_t total = 0;
  for (const KvPoolPlan& pool : *plans) total += KvPool::bookkeeping_bytes_for(pool.cells);
  return total;
}

size_t KvCache::bookkeeping_bytes_for(int32_t cells) { return KvPool::bookkeeping_bytes_for(cells); }

size_t KvCache::bytes() const {
  size_t total = 0;
  for (const auto& pool : pools_) total += pool->bytes();
  return total;
}

std::string_view KvCache::backend() const {
  for (const auto& pool : pools_) {
    if (!pool->backend().empty()) return pool->backend();
  }
  return {};
}

Status KvCache::move_to(Backend& backend) {
  if (!full().has_memory())
    return make_error(ErrorCode::kInternal, "move_to() on a KV cache created without memory");
  // Every pool's new buffer first: a failed allocation leaves the cache as it was.
  std::vector<std::unique_ptr<Buffer>> targets;
  for (const auto& pool : pools_) {
    SINTER_ASSIGN(std::unique_ptr<Buffer> target, pool->allocate_on(backend));
    targets.push_back(std::move(target));
  }
  for (size_t p = 0; p < pools_.size(); ++p) pools_[p]->move_into(std::move(targets[p]));
  return ok_status();
}

int64_t KvCache::prepare_pass(std::span<const CacheToken> tokens, bool causal) {
  pass_indices_.resize(pools_.size());  // capacities reused across passes
  size_t most_cells = 0;
  for (size_t p = 0; p < pools_.size(); ++p) {
    AttentionIndex& index = pass_indices_[p];
    if (pools_[p]->layer_count() == 0) {
      index.cells.clear();
      continue;
    }
    fill_attention_index(static_cast<int>(p), tokens, causal, &index);
    most_cells = std::max(most_cells, index.cells.size());
  }
  return static_cast<int64_t>(most_cells);
}

void KvCache::unplace(std::span<const CacheToken> tokens) {
  for (const CacheToken& t : tokens) remove(t.sequence, t.position, t.position + 1);
}

Result<std::vector<int32_t>> KvCache::place_cells(std::span<const CacheToken> tokens) {
  std::vector<int32_t> slots;
  SINTER_TRY(place(tokens, &slots));
  return slots;
}

Status KvCache::place(std::span<const CacheToken> tokens, std::vector<int32_t>* slots) {
  const KvPool& context = full();
  if (!context.has_memory())
    return make_error(ErrorCode::kInternal, "place() on a KV cache created without memory");
  for (const auto& t : tokens) {
    if (t.sequence < 0 || t.sequence >= kMaxSequences) {
      return make_error(ErrorCode::kInvalidArgument, "sequence id ", t.sequence, " outside 0..",
                        kMaxSequences - 1);
    }
    if (t.position < 0) return make_error(ErrorCode::kInvalidArgument, "negative position ", t.position);
  }
  const auto n = static_cast<int32_t>(tokens.size());
  if (n > context.free_cells()) {
    return make_error(ErrorCode::kContextFull, "the context holds ", context.cell_count(), " tokens; ",
                      context.used_cells(), " are in use and the batch needs ", n, " more");
  }
  // Reject a (sequence, position) that is already cached or repeated in the batch. The full
  // pool holds every position a windowed pool holds.
  std::vector<std::pair<SequenceId, Position>>& batch = placing_;
  batch.clear();
  for (const auto& t : tokens) {
    if (context.contains(t.sequence, t.position)) {
      return make_error(ErrorCode::kInvalidArgument, "position ", t.position, " of sequence ", t.sequence,
                        " is already in the cache");
    }
    batch.emplace_back(t.sequence, t.position);
  }
  std::sort(batch.begin(), batch.end());
  if (const auto twice = std::adjacent_find(batch.begin(), batch.end()); twice != batch.end()) {
    return make_error(ErrorCode::kInvalidArgument, "position ", twice->second, " of sequence ", twice->first,
                      " appears twice in the batch");
  }
  // Each sequence's smallest position in the batch (the batch is sorted by sequence, position).
  std::array<Position, kMaxSequences> first;
  first.fill(std::numeric_limits<Position>::max());
  for (const auto& [s, p] : batch) first[static_cast<size_t>(s)] = std::min(first[static_cast<size_t>(s)], p);
  // What each windowed pool drops: a placed sequence's cells that no token at or after its
  // first position sees (p0 <= first - W); if that is not room enough, also another sequence's
  // cells that its next position (max_position + 1) would not see. Decided for every pool
  // before any changes, so that a refusal leaves the cache as it was.
  for (size_t p = 1; p < pools_.size(); ++p) {
    const KvPool& pool = *pools_[p];
    const Position window = pool.window();
    PruneBounds& bounds = prune_[p];
    for (size_t s = 0; s < bounds.size(); ++s) {
      const bool placed = first[s] != std::numeric_limits<Position>::max();
      bounds[s] = placed ? std::max<Position>(-1, first[s] - window) : -1;
    }
    if (pool.free_cells() + pool.cells_freed_by(bounds) >= n) continue;
    for (size_t s = 0; s < bounds.size(); ++s) {
      const KvPool::EntryList& held = context.entries(static_cast<SequenceId>(s));
      if (first[s] != std::numeric_limits<Position>::max() || held.empty()) continue;
      bounds[s] = std::max<Position>(-1, held.back().position + 1 - window);
    }
    if (const int32_t room = pool.free_cells() + pool.cells_freed_by(bounds); room < n) {
      return make_error(ErrorCode::kContextFull, "the cache of the layers with a window of ", window,
                        " positions holds ", pool.cell_count(), " tokens; ", pool.cell_count() - room,
                        " are in use by more sequences than it was sized for and the batch needs ", n);
    }
  }
  for (size_t p = 1; p < pools_.size(); ++p) pools_[p]->prune(prune_[p]);
  for (auto& pool : pools_) pool->place(tokens);
  slots->assign(context.placed().begin(), context.placed().end());
  return ok_status();
}

void KvCache::fill_attention_index(int p, std::span<const CacheToken> tokens, bool causal,
                                   AttentionIndex* index) const {
  pool(p).fill_attention_index(tokens, causal, pool(p).window(), index);
}

void KvCache::fill_attention_index(std::span<const CacheToken> tokens, bool causal, int32_t window,
                                   AttentionIndex* index) const {
  full().fill_attention_index(tokens, causal, window, index);
}

void KvCache::remove(SequenceId sequence, Position p0, Position p1) {
  for (auto& pool : pools_) pool->remove(sequence, p0, p1);
}

void KvCache::copy(SequenceId src, SequenceId dst, Position p0, Position p1) {
  for (auto& pool : pools_) pool->copy(src, dst, p0, p1);
}

void KvCache::shift(SequenceId sequence, Position p0, Position p1, Position delta) {
  if (delta == 0) return;
  // One pool alone keeps its own rule (copy shared cells while free cells last). Several pools
  // must agree on which positions move: when a pool cannot copy all of its shared cells, the
  // positions shared in any pool stay, in every pool.
  staying_.clear();
  if (pools_.size() > 1) {
    const bool room = std::all_of(pools_.begin(), pools_.end(), [&](const auto& pool) {
      return pool->shared_positions(sequence, p0, p1, nullptr) <= pool->free_cells();
    });
    if (!room) {
      for (const auto& pool : pools_) pool->shared_positions(sequence, p0, p1, &staying_);
      std::sort(staying_.begin(), staying_.end());
      staying_.erase(std::unique(staying_.begin(), staying_.end()), staying_.end());
    }
  }
  for (auto& pool : pools_) pool->shift(sequence, p0, p1, delta, staying_);
}

void KvCache::clear() {
  for (auto& pool : pools_) pool->clear();
}

Position KvCache::resumable_in(int p, SequenceId sequence, Position wanted) const {
  const Position window = pool(p).window();
  const KvPool::EntryList& all = full().entries(sequence);
  const KvPool::EntryList& held = pool(p).entries(sequence);
  // The full pool's positions below the candidate, downwards: one that this pool lacks and the
  // candidate would see makes that position the candidate (its token is computed again), until
  // the candidate's window holds no position the pool lacks.
  Position candidate = wanted;
  auto f = std::lower_bound(all.begin(), all.end(), KvPool::Entry{candidate, 0});
  auto h = std::lower_bound(held.begin(), held.end(), KvPool::Entry{candidate, 0});
  while (f != all.begin()) {
    const Position q = (--f)->position;
    if (candidate - q >= window) break;  // q and all below are outside the candidate's window
    while (h != held.begin() && std::prev(h)->position > q) --h;
    const bool present = h != held.begin() && std::prev(h)->position == q;
    if (!present) candidate = q;
  }
  return candidate;
}

Position KvCache::resumable_prefix(SequenceId sequence, Position wanted) const {
  if (wanted <= 0) return wanted;
  // Each windowed pool's answer is an upper bound of the common one; lower until all agree.
  Position p = wanted;
  for (bool lowered = true; lowered;) {
    lowered = false;
    for (int k = 1; k < pool_count(); ++k) {
      const Position q = resumable_in(k, sequence, p);
      lowered = lowered || q < p;
      p = q;
    }
  }
  return p;
}

bool KvCache::has_pending_shift() const {
  return std::any_of(pools_.begin(), pools_.end(),
                     [](const auto& pool) { return pool->has_pending_shift(); });
}

void KvCache::clear_pending_shift() {
  for (auto& pool : pools_) pool->clear_pending_shift();
}

Position KvCache::min_position(SequenceId sequence) const {
  const KvPool::EntryList& list = full().entries(sequence);
  return list.empty() ? -1 : list.front().position;
}

Position KvCache::max_position(SequenceId sequence) const {
  const KvPool::EntryList& list = full().entries(sequence);
  return list.empty() ? -1 : list.back().position;
}

int32_t KvCache::sequence_cells(SequenceId sequence) const {
  return static_cast<int32_t>(full().entries(sequence).size());
}

}  // namespace sinter
