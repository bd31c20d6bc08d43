#include "memory/kv_pool.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <tuple>

namespace sinter {

size_t KvPool::bytes_for(const std::vector<KvLayerShape>& layers, int32_t cells, DType type) {
  size_t total = 0;
  for (const auto& layer : layers) {
    total += (row_bytes(type, layer.k_row) + row_bytes(type, layer.v_row)) * static_cast<size_t>(cells);
  }
  return total;
}

size_t KvPool::bookkeeping_bytes_for(int32_t cells) {
  return (sizeof(Cell) + sizeof(int32_t) + sizeof(Entry) + sizeof(int32_t)) *
         static_cast<size_t>(std::max(cells, 0));
}

Result<std::unique_ptr<KvPool>> KvPool::create(const std::vector<KvLayerShape>& layers,
                                               const std::vector<int>& layer_ids, int32_t cells,
                                               int32_t window, DType type, Backend* backend,
                                               WindowKind window_kind) {
  auto pool = std::make_unique<KvPool>();
  pool->type_ = type;
  pool->window_ = window;
  pool->window_kind_ = window_kind;
  pool->cell_count_ = cells;
  const size_t total = bytes_for(layers, cells, type);
  pool->buffer_bytes_ = total;
  if (backend != nullptr) {
    auto cell_records = ZeroedArray<Cell>::allocate(static_cast<size_t>(cells));
    if (!cell_records) return cell_records.error().with_context("KV cache cells");
    pool->cells_ = std::move(cell_records).value();
    auto deltas = ZeroedArray<int32_t>::allocate(static_cast<size_t>(cells));
    if (!deltas) return deltas.error().with_context("KV cache cells");
    pool->deltas_ = std::move(deltas).value();
    // A kCache buffer: zero, so that an unwritten cell never reads as garbage (NaN), and
    // committed only where tokens are stored (host backends: on huge pages where the system
    // offers them, as attention streams each layer's keys and values once per token). A pool
    // without layers (the positions of a model whose every layer has a window) has none.
    if (total > 0) {
      auto buffer = backend->allocate(BufferUsage::kCache, total);
      if (!buffer) return buffer.error().with_context("KV cache");
      pool->buffer_ = std::move(buffer).value();
    }
  }
  pool->keys_.reserve(layers.size());  // graphs hold pointers to these tensors
  pool->values_.reserve(layers.size());
  size_t offset = 0;
  for (size_t il = 0; il < layers.size(); ++il) {
    const KvLayerShape& layer = layers[il];
    const std::string id = std::to_string(layer_ids[il]);
    // Each head's rows of all cells together: [head_dim, cells, heads].
    pool->keys_.push_back(
        make_persistent("cache_k-" + id, type, {layer.k_row / layer.heads, cells, layer.heads, 1}, nullptr));
    pool->values_.push_back(
        make_persistent("cache_v-" + id, type, {layer.v_row / layer.heads, cells, layer.heads, 1}, nullptr));
    const size_t k_bytes = row_bytes(type, layer.k_row) * static_cast<size_t>(cells);
    if (pool->buffer_) {
      bind_tensor(pool->keys_.back(), *pool->buffer_, offset);
      bind_tensor(pool->values_.back(), *pool->buffer_, offset + k_bytes);
    }
    offset += k_bytes + row_bytes(type, layer.v_row) * static_cast<size_t>(cells);
  }
  return pool;
}

Result<std::unique_ptr<Buffer>> KvPool::allocate_on(Backend& backend) const {
  if (!buffer_) return std::unique_ptr<Buffer>();
  auto moved = backend.allocate(BufferUsage::kCache, buffer_->size());
  if (!moved) return moved.error().with_context("KV cache");
  return std::move(moved).value();
}

void KvPool::move_into(std::unique_ptr<Buffer> target) {
  if (!buffer_ || !target) return;
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
}

std::pair<KvPool::EntryList::iterator, KvPool::EntryList::iterator> KvPool::range(SequenceId sequence,
                                                                                  Position p0, Position p1) {
  EntryList& list = by_sequence_[static_cast<size_t>(sequence)];
  const auto first = std::lower_bound(list.begin(), list.end(), Entry{p0, 0});
  const auto last = std::lower_bound(first, list.end(), Entry{p1, 0});
  return {first, last};
}

void KvPool::insert(SequenceId sequence, Entry entry) {
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

bool KvPool::contains(SequenceId sequence, Position position) const {
  const EntryList& list = entries(sequence);
  return std::binary_search(list.begin(), list.end(), Entry{position, 0});
}

void KvPool::place(std::span<const CacheToken> tokens) {
  placed_.clear();
  for (const auto& t : tokens) {
    const int32_t c = take_free_cell();  // one exists: the caller checked free_cells()
    cells_[static_cast<size_t>(c)].position = t.position;
    cells_[static_cast<size_t>(c)].sequences = bit(t.sequence);
    insert(t.sequence, Entry{t.position, c});
    placed_.push_back(c);
    ++used_;
  }
}

int32_t KvPool::take_free_cell() {
  while (first_free_ < cell_count_ && cells_[static_cast<size_t>(first_free_)].sequences != 0) ++first_free_;
  if (first_free_ == cell_count_) return -1;
  const int32_t cell = first_free_++;  // the caller marks it used at once
  high_water_ = std::max(high_water_, cell + 1);
  return cell;
}

int32_t KvPool::cells_freed_by(const PruneBounds& bounds) const {
  int32_t freed = 0;
  for (SequenceId s = 0; s < kMaxSequences; ++s) {
    const Position bound = bounds[static_cast<size_t>(s)];
    if (bound < 0) continue;
    for (const Entry& e : entries(s)) {
      if (e.position > bound) break;
      const uint64_t users = cells_[static_cast<size_t>(e.cell)].sequences;
      // Counted once, from its lowest user; freed when every user drops it.
      if (std::countr_zero(users) != s) continue;
      bool dropped_by_all = true;
      for (uint64_t rest = users; rest != 0; rest &= rest - 1) {
        dropped_by_all = dropped_by_all && bounds[static_cast<size_t>(std::countr_zero(rest))] >= e.position;
      }
      freed += dropped_by_all ? 1 : 0;
    }
  }
  return freed;
}

void KvPool::prune(const PruneBounds& bounds) {
  for (SequenceId s = 0; s < kMaxSequences; ++s) {
    const Position bound = bounds[static_cast<size_t>(s)];
    if (bound >= 0) remove(s, 0, bound + 1);
  }
}

void KvPool::fill_attention_index(std::span<const CacheToken> tokens, bool causal, int32_t window,
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
    for (const Entry& e : entries(t.sequence)) index->cells.push_back(e.cell);
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    const EntryList& list = entries(tokens[i].sequence);
    const Position p = tokens[i].position;
    auto first = list.begin();
    auto last = list.end();
    if (causal) last = std::upper_bound(first, last, Entry{p, 0});
    if (window > 0) std::tie(first, last) = within_window(first, last, p, window);
    const int32_t base = start[static_cast<size_t>(tokens[i].sequence)];
    index->begin[i] = base + static_cast<int32_t>(first - list.begin());
    index->end[i] = base + static_cast<int32_t>(last - list.begin());
  }
}

std::pair<KvPool::EntryList::const_iterator, KvPool::EntryList::const_iterator> KvPool::within_window(
    EntryList::const_iterator first, EntryList::const_iterator last, Position p, int32_t window) const {
  if (window_kind_ == WindowKind::kTrailing)
    return {std::upper_bound(first, last, Entry{p - window, 0}), last};
  // Symmetric: |p − q| ≤ W/2 (llama.cpp's is_masked_swa), bounds computed without overflow.
  const int64_t half = window / 2;
  const auto clamp = [](int64_t q) {
    return static_cast<Position>(std::clamp<int64_t>(q, INT32_MIN, INT32_MAX));
  };
  first = std::lower_bound(first, last, Entry{clamp(p - half), 0});
  return {first, std::upper_bound(first, last, Entry{clamp(p + half), 0})};
}

void KvPool::positions_of(std::span<const int32_t> cells, int32_t* out) const {
  for (size_t i = 0; i < cells.size(); ++i) out[i] = cells_[static_cast<size_t>(cells[i])].position;
}

void KvPool::release(int32_t cell) {
  cells_[static_cast<size_t>(cell)] = Cell{};
  deltas_[static_cast<size_t>(cell)] = 0;
  --used_;
  first_free_ = std::min(first_free_, cell);
}

void KvPool::release_if_unused(int32_t cell) {
  if (cells_[static_cast<size_t>(cell)].sequences == 0) release(cell);
}

void KvPool::remove(SequenceId sequence, Position p0, Position p1) {
  if (p1 < 0) p1 = INT32_MAX;
  auto [first, last] = range(sequence, p0, p1);
  for (auto it = first; it != last; ++it) {
    cells_[static_cast<size_t>(it->cell)].sequences &= ~bit(sequence);
    release_if_unused(it->cell);
  }
  by_sequence_[static_cast<size_t>(sequence)].erase(first, last);
}

void KvPool::copy(SequenceId src, SequenceId dst, Position p0, Position p1) {
  if (src == dst) return;
  if (p1 < 0) p1 = INT32_MAX;
  auto [first, last] = range(src, p0, p1);
  const EntryList shared(first, last);
  for (const Entry& e : shared) {
    if (contains(dst, e.position)) continue;  // dst has its own cell there
    cells_[static_cast<size_t>(e.cell)].sequences |= bit(dst);
    insert(dst, e);
  }
}

int32_t KvPool::shared_positions(SequenceId sequence, Position p0, Position p1,
                                 std::vector<Position>* out) const {
  if (p1 < 0) p1 = INT32_MAX;
  const EntryList& list = entries(sequence);
  int32_t count = 0;
  for (auto it = std::lower_bound(list.begin(), list.end(), Entry{p0, 0});
       it != list.end() && it->position < p1; ++it) {
    if (cells_[static_cast<size_t>(it->cell)].sequences == bit(sequence)) continue;
    if (out != nullptr) out->push_back(it->position);
    ++count;
  }
  return count;
}

void KvPool::shift(SequenceId sequence, Position p0, Position p1, Position delta,
                   std::span<const Position> stay) {
  if (delta == 0) return;
  if (p1 < 0) p1 = INT32_MAX;
  auto [first, last] = range(sequence, p0, p1);
  const EntryList moving(first, last);  // decided before any cell moves or is detached
  by_sequence_[static_cast<size_t>(sequence)].erase(first, last);
  for (Entry e : moving) {
    if (std::binary_search(stay.begin(), stay.end(), e.position)) {
      insert(sequence, e);
      continue;
    }
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

int32_t KvPool::detach(int32_t shared, SequenceId sequence) {
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
void KvPool::clear_pending_shift() {
  std::fill(deltas_.data(), deltas_.data() + high_water_, 0);
  shift_pending_ = false;
}

void KvPool::clear() {
  std::fill(cells_.data(), cells_.data() + high_water_, Cell{});
  for (auto& list : by_sequence_) list.clear();
  clear_pending_shift();
  used_ = 0;
  first_free_ = 0;
}

}  // namespace sinter
