#include "memory/kv_cache.h"

#include <algorithm>
#include <array>

namespace sinter {

size_t KvCache::bytes_for(const std::vector<KvLayerShape>& layers, int32_t cells, DType type) {
  size_t total = 0;
  for (const auto& layer : layers) {
    total += (row_bytes(type, layer.k_row) + row_bytes(type, layer.v_row)) * static_cast<size_t>(cells);
  }
  return total;
}

size_t KvCache::bookkeeping_bytes_for(int32_t cells) {
  return (sizeof(Cell) + sizeof(int32_t) + sizeof(Entry) + sizeof(int32_t)) *
         static_cast<size_t>(std::max(cells, 0));
}

Result<std::unique_ptr<KvCache>> KvCache::create(const std::vector<KvLayerShape>& layers, int32_t cells,
                                                 DType type, Backend* backend) {
  if (cells <= 0) return make_error(ErrorCode::kInvalidArgument, "KV cache needs at least one cell");
  if (cells > kMaxCacheCells) {
    return make_error(ErrorCode::kInvalidArgument, "a KV cache holds at most ", kMaxCacheCells,
                      " cells, not ", cells);
  }
  if (type != DType::F16 && type != DType::F32 && type != DType::BF16) {
    return make_error(ErrorCode::kInvalidArgument, "KV cache type must be f16, bf16 or f32, not ",
                      dtype_name(type));
  }
  for (size_t il = 0; il < layers.size(); ++il) {
    const KvLayerShape& layer = layers[il];
    if (layer.heads <= 0 || layer.k_row % layer.heads != 0 || layer.v_row % layer.heads != 0) {
      return make_error(ErrorCode::kInvalidArgument, "KV cache layer ", il, ": rows of ", layer.k_row,
                        " and ", layer.v_row, " values do not split into ", layer.heads, " heads");
    }
  }
  auto cache = std::make_unique<KvCache>();
  cache->type_ = type;
  cache->cell_count_ = cells;
  const size_t total = bytes_for(layers, cells, type);
  cache->buffer_bytes_ = total;
  if (backend != nullptr) {
    auto cell_records = ZeroedArray<Cell>::allocate(static_cast<size_t>(cells));
    if (!cell_records) return cell_records.error().with_context("KV cache cells");
    cache->cells_ = std::move(cell_records).value();
    auto deltas = ZeroedArray<int32_t>::allocate(static_cast<size_t>(cells));
    if (!deltas) return deltas.error().with_context("KV cache cells");
    cache->deltas_ = std::move(deltas).value();
    // A kCache buffer: zero, so that an unwritten cell never reads as garbage (NaN), and
    // committed only where tokens are stored (host backends: on huge pages where the system
    // offers them, as attention streams each layer's keys and values once per token).
    auto buffer = backend->allocate(BufferUsage::kCache, total);
    if (!buffer) return buffer.error().with_context("KV cache");
    cache->buffer_ = std::move(buffer).value();
  }
  size_t offset = 0;
  for (size_t il = 0; il < layers.size(); ++il) {
    const KvLayerShape& layer = layers[il];
    // Each head's rows of all cells together: [head_dim, cells, heads].
    cache->keys_.push_back(make_persistent("cache_k-" + std::to_string(il), type,
                                           {layer.k_row / layer.heads, cells, layer.heads, 1}, nullptr));
    cache->values_.push_back(make_persistent("cache_v-" + std::to_string(il), type,
                                             {layer.v_row / layer.heads, cells, layer.heads, 1}, nullptr));
    const size_t k_bytes = row_bytes(type, layer.k_row) * static_cast<size_t>(cells);
    if (cache->buffer_) {
      bind_tensor(cache->keys_.back(), *cache->buffer_, offset);
      bind_tensor(cache->values_.back(), *cache->buffer_, offset + k_bytes);
    }
    offset += k_bytes + row_bytes(type, layer.v_row) * static_cast<size_t>(cells);
  }
  return cache;
}

Status KvCache::move_to(Backend& backend) {
  if (!buffer_) return make_error(ErrorCode::kInternal, "move_to() on a KV cache created without memory");
  auto moved = backend.allocate(BufferUsage::kCache, buffer_->size());
  if (!moved) return moved.error().with_context("KV cache");
  std::unique_ptr<Buffer> target = std::move(moved).value();
  // Each head plane's rows of the cells that were ever used, through a host copy: the rest of
  // the new buffer stays zero and uncommitted.
  std::vector<uint8_t> staging;
  for (std::vector<Tensor>* tensors : {&keys_, &values_}) {
    for (Tensor& t : *tensors) {
      const size_t offset = tensor_offset(t);
      const size_t used = t.row_bytes() * static_cast<size_t>(high_water_);
      staging.resize(used);
      for (int64_t head = 0; head < t.ne[2]; ++head) {
        const size_t plane = offset + static_cast<size_t>(head) * t.nb[2];
        buffer_->get(plane, staging.data(), used);
        target->set(plane, staging.data(), used);
      }
      bind_tensor(t, *target, offset);
    }
  }
  buffer_ = std::move(target);
  return ok_status();
}

std::pair<KvCache::EntryList::iterator, KvCache::EntryList::iterator> KvCache::range(SequenceId sequence,
                                                                                     Position p0,
                                                                                     Position p1) {
  EntryList& list = by_sequence_[static_cast<size_t>(sequence)];
  const auto first = std::lower_bound(list.begin(), list.end(), Entry{p0, 0});
  const auto last = std::lower_bound(first, list.end(), Entry{p1, 0});
  return {first, last};
}

void KvCache::insert(SequenceId sequence, Entry entry) {
  EntryList& list = by_sequence_[static_cast<size_t>(sequence)];
  // Room for every cell at a sequence's first entry (8 bytes a cell), so that generation never
  // grows the list.
  if (list.capacity() == 0) list.reserve(cells_.size());
  if (list.empty() || list.back().position < entry.position) {
    list.push_back(entry);  // the usual case: positions grow
  } else {
    list.insert(std::lower_bound(list.begin(), list.end(), entry), entry);
  }
}

Result<std::vector<int32_t>> KvCache::place(std::span<const CacheToken> tokens) {
  std::vector<int32_t> slots;
  SINTER_TRY(place(tokens, &slots));
  return slots;
}

Status KvCache::place(std::span<const CacheToken> tokens, std::vector<int32_t>* slots) {
  if (cells_.size() == 0)
    return make_error(ErrorCode::kInternal, "place() on a KV cache created without memory");
  for (const auto& t : tokens) {
    if (t.sequence < 0 || t.sequence >= kMaxSequences) {
      return make_error(ErrorCode::kInvalidArgument, "sequence id ", t.sequence, " outside 0..",
                        kMaxSequences - 1);
    }
    if (t.position < 0) return make_error(ErrorCode::kInvalidArgument, "negative position ", t.position);
  }
  if (static_cast<int32_t>(tokens.size()) > free_cells()) {
    return make_error(ErrorCode::kContextFull, "the context holds ", cell_count(), " tokens; ", used_,
                      " are in use and the batch needs ", tokens.size(), " more");
  }
  // Reject a (sequence, position) that is already cached or repeated in the batch.
  std::vector<std::pair<SequenceId, Position>>& batch = placing_;
  batch.clear();
  for (const auto& t : tokens) {
    const EntryList& list = by_sequence_[static_cast<size_t>(t.sequence)];
    if (std::binary_search(list.begin(), list.end(), Entry{t.position, 0})) {
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
  slots->clear();
  for (const auto& t : tokens) {
    const int32_t c = take_free_cell();  // one exists: free_cells() was checked above
    cells_[static_cast<size_t>(c)].position = t.position;
    cells_[static_cast<size_t>(c)].sequences = bit(t.sequence);
    insert(t.sequence, Entry{t.position, c});
    slots->push_back(c);
    ++used_;
  }
  return ok_status();
}

int32_t KvCache::take_free_cell() {
  while (first_free_ < cell_count_ && cells_[static_cast<size_t>(first_free_)].sequences != 0) ++first_free_;
  if (first_free_ == cell_count_) return -1;
  const int32_t cell = first_free_++;  // the caller marks it used at once
  high_water_ = std::max(high_water_, cell + 1);
  return cell;
}

void KvCache::fill_attention_index(std::span<const CacheToken> tokens, bool causal, int32_t window,
                                   AttentionIndex* index) const {
  index->cells.clear();
  index->cells.reserve(cells_.size());  // one sequence's entries: never grown by generation
  index->begin.resize(tokens.size());
  index->end.resize(tokens.size());
  // Each sequence's entries once, concatenated; a token's visible cells are a range of them.
  std::array<int32_t, kMaxSequences> start;
  start.fill(-1);
  for (const auto& t : tokens) {
    if (start[static_cast<size_t>(t.sequence)] >= 0) continue;
    start[static_cast<size_t>(t.sequence)] = static_cast<int32_t>(index->cells.size());
    for (const Entry& e : by_sequence_[static_cast<size_t>(t.sequence)]) index->cells.push_back(e.cell);
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    const EntryList& list = by_sequence_[static_cast<size_t>(tokens[i].sequence)];
    const Position p = tokens[i].position;
    auto first = list.begin();
    auto last = list.end();
    if (causal) last = std::upper_bound(first, last, Entry{p, 0});
    if (window > 0) first = std::upper_bound(first, last, Entry{p - window, 0});
    const int32_t base = start[static_cast<size_t>(tokens[i].sequence)];
    index->begin[i] = base + static_cast<int32_t>(first - list.begin());
    index->end[i] = base + static_cast<int32_t>(last - list.begin());
  }
}

void KvCache::release(int32_t cell) {
  cells_[static_cast<size_t>(cell)] = Cell{};
  deltas_[static_cast<size_t>(cell)] = 0;
  --used_;
  first_free_ = std::min(first_free_, cell);
}

void KvCache::release_if_unused(int32_t cell) {
  if (cells_[static_cast<size_t>(cell)].sequences == 0) release(cell);
}

void KvCache::remove(SequenceId sequence, Position p0, Position p1) {
  if (p1 < 0) p1 = INT32_MAX;
  auto [first, last] = range(sequence, p0, p1);
  for (auto it = first; it != last; ++it) {
    cells_[static_cast<size_t>(it->cell)].sequences &= ~bit(sequence);
    release_if_unused(it->cell);
  }
  by_sequence_[static_cast<size_t>(sequence)].erase(first, last);
}

void KvCache::copy(SequenceId src, SequenceId dst, Position p0, Position p1) {
  if (src == dst) return;
  if (p1 < 0) p1 = INT32_MAX;
  auto [first, last] = range(src, p0, p1);
  const EntryList shared(first, last);
  for (const Entry& e : shared) {
    const EntryList& target = by_sequence_[static_cast<size_t>(dst)];
    if (std::binary_search(target.begin(), target.end(), e)) continue;  // dst has its own cell there
    cells_[static_cast<size_t>(e.cell)].sequences |= bit(dst);
    insert(dst, e);
  }
}

void KvCache::shift(SequenceId sequence, Position p0, Position p1, Position delta) {
  if (delta == 0) return;
  if (p1 < 0) p1 = INT32_MAX;
  auto [first, last] = range(sequence, p0, p1);
  const EntryList moving(first, last);  // decided before any cell moves or is detached
  by_sequence_[static_cast<size_t>(sequence)].erase(first, last);
  for (Entry e : moving) {
    // A cell shared with other sequences moves for this one only: give it its own copy.
    if (cells_[static_cast<size_t>(e.cell)].sequences != bit(sequence)) {
      const int32_t own = detach(e.cell, sequence);
      if (own < 0) {  // no free cell: this position stays where it is
        insert(sequence, e);
        continue;
      }
      e.cell = own;
    }
    Cell& cell = cells_[static_cast<size_t>(e.cell)];
    cell.position += delta;
    deltas_[static_cast<size_t>(e.cell)] += delta;
    shift_pending_ = true;
    if (cell.position < 0) {  // shifted before the start: the token is gone
      release(e.cell);
      continue;
    }
    insert(sequence, Entry{cell.position, e.cell});
  }
}

int32_t KvCache::detach(int32_t shared, SequenceId sequence) {
  const int32_t own = take_free_cell();
  if (own < 0) return -1;
  const auto c = static_cast<size_t>(own);
  for (size_t il = 0; il < keys_.size(); ++il) {
    for (Tensor* t : {&keys_[il], &values_[il]}) {
      for (int64_t head = 0; head < t->ne[2]; ++head) {
        const size_t plane = static_cast<size_t>(head) * t->nb[2];
        tensor_copy_within(*t, plane + static_cast<size_t>(own) * t->nb[1],
                           plane + static_cast<size_t>(shared) * t->nb[1], t->row_bytes());
      }
    }
  }
  cells_[c].position = cells_[static_cast<size_t>(shared)].position;
  cells_[c].sequences = bit(sequence);
  deltas_[c] = deltas_[static_cast<size_t>(shared)];
  cells_[static_cast<size_t>(shared)].sequences &= ~bit(sequence);
  ++used_;
  return own;
}

// Cells past the high-water mark were never used: their deltas are 0 and their memory stays
// untouched.
void KvCache::clear_pending_shift() {
  std::fill(deltas_.data(), deltas_.data() + high_water_, 0);
  shift_pending_ = false;
}

void KvCache::clear() {
  std::fill(cells_.data(), cells_.data() + high_water_, Cell{});
  for (auto& list : by_sequence_) list.clear();
  clear_pending_shift();
  used_ = 0;
  first_free_ = 0;
}

Position KvCache::min_position(SequenceId sequence) const {
  const EntryList& list = by_sequence_[static_cast<size_t>(sequence)];
  return list.empty() ? -1 : list.front().position;
}

Position KvCache::max_position(SequenceId sequence) const {
  const EntryList& list = by_sequence_[static_cast<size_t>(sequence)];
  return list.empty() ? -1 : list.back().position;
}

int32_t KvCache::sequence_cells(SequenceId sequence) const {
  return static_cast<int32_t>(by_sequence_[static_cast<size_t>(sequence)].size());
}

}  // namespace sinter
