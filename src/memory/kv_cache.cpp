#include "memory/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace sinter {

size_t KvCache::bytes_for(const std::vector<KvLayerShape>& layers, int32_t cells, DType type) {
  size_t total = 0;
  for (const auto& layer : layers) {
    total += (row_bytes(type, layer.k_row) + row_bytes(type, layer.v_row)) * static_cast<size_t>(cells);
  }
  return total;
}

Result<std::unique_ptr<KvCache>> KvCache::create(const std::vector<KvLayerShape>& layers, int32_t cells, DType type,
                                                 bool allocate) {
  if (cells <= 0) return make_error(ErrorCode::kInvalidArgument, "KV cache needs at least one cell");
  if (type != DType::F16 && type != DType::F32 && type != DType::BF16) {
    return make_error(ErrorCode::kInvalidArgument, "KV cache type must be f16, bf16 or f32, not ", dtype_name(type));
  }
  auto cache = std::make_unique<KvCache>();
  cache->type_ = type;
  cache->cells_.resize(static_cast<size_t>(cells));
  cache->deltas_.assign(static_cast<size_t>(cells), 0);
  const size_t total = bytes_for(layers, cells, type);
  cache->buffer_bytes_ = total;
  if (allocate) {
    cache->buffer_.reset(new (std::nothrow) uint8_t[total == 0 ? 1 : total]);
    if (!cache->buffer_) {
      return make_error(ErrorCode::kInvalidArgument, "cannot allocate ", total, " bytes for the KV cache");
    }
    std::memset(cache->buffer_.get(), 0, total);  // never read unwritten cells as garbage (NaN)
  }
  uint8_t* p = cache->buffer_.get();
  for (size_t il = 0; il < layers.size(); ++il) {
    cache->keys_.push_back(make_persistent("cache_k-" + std::to_string(il), type, {layers[il].k_row, cells, 1, 1}, p));
    cache->values_.push_back(make_persistent("cache_v-" + std::to_string(il), type, {layers[il].v_row, cells, 1, 1},
                                             p == nullptr ? nullptr : p + row_bytes(type, layers[il].k_row) * static_cast<size_t>(cells)));
    if (p != nullptr) p += (row_bytes(type, layers[il].k_row) + row_bytes(type, layers[il].v_row)) * static_cast<size_t>(cells);
  }
  return cache;
}

Result<std::vector<int32_t>> KvCache::place(std::span<const CacheToken> tokens) {
  for (const auto& t : tokens) {
    if (t.sequence < 0 || t.sequence >= kMaxSequences) {
      return make_error(ErrorCode::kInvalidArgument, "sequence id ", t.sequence, " outside 0..", kMaxSequences - 1);
    }
    if (t.position < 0) return make_error(ErrorCode::kInvalidArgument, "negative position ", t.position);
  }
  if (static_cast<int32_t>(tokens.size()) > free_cells()) {
    return make_error(ErrorCode::kContextFull, "the context holds ", cell_count(), " tokens; ", used_,
                      " are in use and the batch needs ", tokens.size(), " more");
  }
  // Reject a (sequence, position) that is already cached or repeated in the batch.
  std::map<std::pair<SequenceId, Position>, int> seen;
  for (const auto& t : tokens) {
    if (seen[{t.sequence, t.position}]++ > 0) {
      return make_error(ErrorCode::kInvalidArgument, "position ", t.position, " of sequence ", t.sequence,
                        " appears twice in the batch");
    }
  }
  for (const auto& cell : cells_) {
    if (cell.position >= 0) {
      for (const auto& t : tokens) {
        if ((cell.sequences & bit(t.sequence)) && cell.position == t.position) {
          return make_error(ErrorCode::kInvalidArgument, "position ", t.position, " of sequence ", t.sequence,
                            " is already in the cache");
        }
      }
    }
  }
  std::vector<int32_t> slots;
  slots.reserve(tokens.size());
  const auto n = static_cast<int32_t>(cells_.size());
  int32_t c = search_start_;
  for (const auto& t : tokens) {
    while (cells_[static_cast<size_t>(c)].sequences != 0) c = (c + 1) % n;
    cells_[static_cast<size_t>(c)].position = t.position;
    cells_[static_cast<size_t>(c)].sequences = bit(t.sequence);
    slots.push_back(c);
    ++used_;
    c = (c + 1) % n;
  }
  search_start_ = c;
  return slots;
}

void KvCache::fill_attention_index(std::span<const CacheToken> tokens, bool causal, int32_t window,
                                   AttentionIndex* index) const {
  index->cells.clear();
  index->begin.resize(tokens.size());
  index->end.resize(tokens.size());
  // One sorted list of (position, cell) per sequence in the batch, concatenated.
  std::map<SequenceId, std::pair<int32_t, int32_t>> lists;  // sequence -> [start, end) in cells
  std::vector<Position> positions;                         // parallel to index->cells
  for (const auto& t : tokens) {
    if (lists.count(t.sequence) != 0) continue;
    std::vector<std::pair<Position, int32_t>> entries;
    for (size_t c = 0; c < cells_.size(); ++c) {
      if (cells_[c].sequences & bit(t.sequence)) entries.emplace_back(cells_[c].position, static_cast<int32_t>(c));
    }
    std::sort(entries.begin(), entries.end());
    const auto start = static_cast<int32_t>(index->cells.size());
    for (const auto& [position, cell] : entries) {
      index->cells.push_back(cell);
      positions.push_back(position);
    }
    lists[t.sequence] = {start, static_cast<int32_t>(index->cells.size())};
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto [start, stop] = lists[tokens[i].sequence];
    const Position p = tokens[i].position;
    auto first = positions.begin() + start;
    auto last = positions.begin() + stop;
    if (causal) last = std::upper_bound(first, last, p);
    if (window > 0) first = std::upper_bound(first, last, p - window);
    index->begin[i] = static_cast<int32_t>(first - positions.begin());
    index->end[i] = static_cast<int32_t>(last - positions.begin());
  }
}

void KvCache::release_if_unused(Cell& cell) {
  if (cell.sequences == 0 && cell.position >= 0) {
    cell.position = -1;
    --used_;
  }
}

void KvCache::remove(SequenceId sequence, Position p0, Position p1) {
  if (p1 < 0) p1 = INT32_MAX;
  for (size_t c = 0; c < cells_.size(); ++c) {
    Cell& cell = cells_[c];
    if ((cell.sequences & bit(sequence)) && cell.position >= p0 && cell.position < p1) {
      cell.sequences &= ~bit(sequence);
      release_if_unused(cell);
      if (cell.position < 0) deltas_[c] = 0;
    }
  }
}

void KvCache::copy(SequenceId src, SequenceId dst, Position p0, Position p1) {
  if (src == dst) return;
  if (p1 < 0) p1 = INT32_MAX;
  for (auto& cell : cells_) {
    if ((cell.sequences & bit(src)) && cell.position >= p0 && cell.position < p1) cell.sequences |= bit(dst);
  }
}

void KvCache::shift(SequenceId sequence, Position p0, Position p1, Position delta) {
  if (delta == 0) return;
  if (p1 < 0) p1 = INT32_MAX;
  std::vector<int32_t> moving;  // decided before any cell moves or is detached
  for (size_t c = 0; c < cells_.size(); ++c) {
    const Cell& cell = cells_[c];
    if ((cell.sequences & bit(sequence)) && cell.position >= p0 && cell.position < p1) {
      moving.push_back(static_cast<int32_t>(c));
    }
  }
  for (int32_t c : moving) {
    // A cell shared with other sequences moves for this one only: give it its own copy.
    if (cells_[static_cast<size_t>(c)].sequences != bit(sequence)) {
      c = detach(c, sequence);
      if (c < 0) continue;  // no free cell: this position stays where it is
    }
    Cell& cell = cells_[static_cast<size_t>(c)];
    cell.position += delta;
    deltas_[static_cast<size_t>(c)] += delta;
    shift_pending_ = true;
    if (cell.position < 0) {  // shifted before the start: the token is gone
      cell = Cell{};
      --used_;
      deltas_[static_cast<size_t>(c)] = 0;
    }
  }
}

int32_t KvCache::detach(int32_t shared, SequenceId sequence) {
  for (size_t c = 0; c < cells_.size(); ++c) {
    if (cells_[c].sequences != 0) continue;
    for (size_t il = 0; il < keys_.size(); ++il) {
      std::memcpy(keys_[il].row(static_cast<int64_t>(c)), keys_[il].row(shared), keys_[il].row_bytes());
      std::memcpy(values_[il].row(static_cast<int64_t>(c)), values_[il].row(shared), values_[il].row_bytes());
    }
    cells_[c].position = cells_[static_cast<size_t>(shared)].position;
    cells_[c].sequences = bit(sequence);
    deltas_[c] = deltas_[static_cast<size_t>(shared)];
    cells_[static_cast<size_t>(shared)].sequences &= ~bit(sequence);
    ++used_;
    return static_cast<int32_t>(c);
  }
  return -1;
}

void KvCache::clear_pending_shift() {
  std::fill(deltas_.begin(), deltas_.end(), 0);
  shift_pending_ = false;
}

void KvCache::clear() {
  for (auto& cell : cells_) cell = Cell{};
  clear_pending_shift();
  used_ = 0;
  search_start_ = 0;
}

Position KvCache::min_position(SequenceId sequence) const {
  Position result = -1;
  for (const auto& cell : cells_) {
    if ((cell.sequences & bit(sequence)) && (result < 0 || cell.position < result)) result = cell.position;
  }
  return result;
}

Position KvCache::max_position(SequenceId sequence) const {
  Position result = -1;
  for (const auto& cell : cells_) {
    if ((cell.sequences & bit(sequence)) && cell.position > result) result = cell.position;
  }
  return result;
}

int32_t KvCache::sequence_cells(SequenceId sequence) const {
  int32_t count = 0;
  for (const auto& cell : cells_) count += (cell.sequences & bit(sequence)) ? 1 : 0;
  return count;
}

}  // namespace sinter
