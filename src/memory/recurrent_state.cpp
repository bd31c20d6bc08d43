#include "memory/recurrent_state.h"

#include <algorithm>

#include "backend/buffer.h"

namespace sinter {
namespace {

constexpr size_t kFloat = sizeof(float);

}  // namespace

size_t RecurrentState::sequence_bytes_for(const std::vector<RecurrentLayerShape>& layers) {
  size_t bytes = 0;
  for (const RecurrentLayerShape& layer : layers) {
    for (const RecurrentStateShape& state : layer.states)
      bytes += static_cast<size_t>(state.elements()) * kFloat;
  }
  return bytes;
}

size_t RecurrentState::bytes_for(const RecurrentStateOptions& options) {
  return sequence_bytes_for(options.layers) * static_cast<size_t>(std::max<int64_t>(planes_for(options), 0));
}

Result<std::unique_ptr<RecurrentState>> RecurrentState::create(const RecurrentStateOptions& options,
                                                               Backend* backend) {
  if (options.n_seq_max < 1 || options.n_seq_max > kMaxSequences) {
    return make_error(ErrorCode::kInvalidArgument, "state slots must be between 1 and ", kMaxSequences,
                      ", got ", options.n_seq_max);
  }
  if (options.rollback_tokens < 0 || options.rollback_tokens > kMaxRollbackTokens) {
    return make_error(ErrorCode::kInvalidArgument, "the tokens a state can roll back must be between 0 and ",
                      kMaxRollbackTokens, ", got ", options.rollback_tokens);
  }
  if (options.checkpoint_interval < 1) {
    return make_error(ErrorCode::kInvalidArgument, "the checkpoint interval must be positive, got ",
                      options.checkpoint_interval);
  }
  for (const RecurrentLayerShape& layer : options.layers) {
    for (const RecurrentStateShape& state : layer.states) {
      if (state.ne[0] < 1 || state.ne[1] < 1 || state.ne[2] < 1)
        return make_error(ErrorCode::kInvalidArgument, "a recurrent state has an empty dimension");
    }
  }
  auto memory = std::unique_ptr<RecurrentState>(new RecurrentState());
  memory->options_ = options;
  memory->slot_bytes_ = sequence_bytes_for(options.layers);
  memory->slot_of_.fill(-1);
  memory->ring_from_.fill(kNoRing);
  memory->slot_used_.assign(static_cast<size_t>(options.n_seq_max), false);
  const size_t total = bytes_for(options);
  if (backend != nullptr && total > 0) {
    // A kCache buffer starts zeroed: an unused slot reads as an empty state.
    SINTER_ASSIGN(memory->buffer_, backend->allocate(BufferUsage::kCache, total));
  }
  // Tensor by tensor, each with its planes of all slots together ([ne..., planes]: the slots,
  // then the rings): graphs hold pointers to these tensors.
  const int64_t planes = planes_for(options);
  memory->states_.resize(options.layers.size());
  size_t offset = 0;
  for (size_t il = 0; il < options.layers.size(); ++il) {
    std::vector<Tensor>& layer = memory->states_[il];
    layer.reserve(options.layers[il].states.size());
    for (size_t is = 0; is < options.layers[il].states.size(); ++is) {
      const RecurrentStateShape& shape = options.layers[il].states[is];
      layer.push_back(make_persistent("state-" + std::to_string(il) + "-" + std::to_string(is), DType::F32,
                                      {shape.ne[0], shape.ne[1], shape.ne[2], planes}, nullptr));
      if (memory->buffer_) bind_tensor(layer.back(), *memory->buffer_, offset);
      offset += static_cast<size_t>(shape.elements()) * kFloat * static_cast<size_t>(planes);
    }
  }
  return memory;
}

RecurrentState::~RecurrentState() = default;

size_t RecurrentState::bytes() const { return bytes_for(options_) + checkpoint_bytes_used_; }

int32_t RecurrentState::used_cells() const {
  int64_t used = 0;
  for (SequenceId s = 0; s < kMaxSequences; ++s) used += next_[static_cast<size_t>(s)];
  return static_cast<int32_t>(std::min<int64_t>(used, kUnboundedCells));
}

Position RecurrentState::max_position(SequenceId sequence) const {
  return next_[static_cast<size_t>(sequence)] - 1;
}

// --- slots ------------------------------------------------------------------------------------

void RecurrentState::zero_slot(int32_t slot) {
  if (!buffer_) return;
  std::vector<uint8_t> zeros;
  for (std::vector<Tensor>& layer : states_) {
    for (Tensor& t : layer) {
      const size_t plane = static_cast<size_t>(t.ne[0] * t.ne[1] * t.ne[2]) * kFloat;
      zeros.assign(plane, 0);
      tensor_set(t, zeros.data(), static_cast<size_t>(slot) * plane, plane);
    }
  }
}

int32_t RecurrentState::ring_plane(int32_t slot, Position position) const {
  const int32_t size = ring_size(options_);
  return options_.n_seq_max + slot * size + position % size;
}

bool RecurrentState::in_ring(SequenceId sequence, Position position) const {
  const auto i = static_cast<size_t>(sequence);
  return slot_of_[i] >= 0 && ring_from_[i] <= position && position < next_[i];
}

// Copies every state tensor's plane `from` to plane `to` (a slot's or a ring's).
void RecurrentState::copy_slot(int32_t from, int32_t to) {
  if (!buffer_ || from == to) return;
  for (std::vector<Tensor>& layer : states_) {
    for (Tensor& t : layer) {
      const size_t plane = static_cast<size_t>(t.ne[0] * t.ne[1] * t.ne[2]) * kFloat;
      tensor_copy_within(t, static_cast<size_t>(to) * plane, static_cast<size_t>(from) * plane, plane);
    }
  }
}

void RecurrentState::save(int32_t slot, std::vector<uint8_t>& bytes) const {
  bytes.resize(slot_bytes_);
  size_t at = 0;
  for (const std::vector<Tensor>& layer : states_) {
    for (const Tensor& t : layer) {
      const size_t plane = static_cast<size_t>(t.ne[0] * t.ne[1] * t.ne[2]) * kFloat;
      if (buffer_) tensor_get(t, bytes.data() + at, static_cast<size_t>(slot) * plane, plane);
      at += plane;
    }
  }
}

void RecurrentState::load(int32_t slot, const std::vector<uint8_t>& bytes) {
  size_t at = 0;
  for (std::vector<Tensor>& layer : states_) {
    for (Tensor& t : layer) {
      const size_t plane = static_cast<size_t>(t.ne[0] * t.ne[1] * t.ne[2]) * kFloat;
      if (buffer_) tensor_set(t, bytes.data() + at, static_cast<size_t>(slot) * plane, plane);
      at += plane;
    }
  }
}

int32_t RecurrentState::take_slot(SequenceId sequence) {
  int32_t& slot = slot_of_[static_cast<size_t>(sequence)];
  if (slot >= 0) return slot;
  const auto free = std::find(slot_used_.begin(), slot_used_.end(), false);
  if (free == slot_used_.end()) return -1;
  slot = static_cast<int32_t>(free - slot_used_.begin());
  *free = true;
  zero_slot(slot);
  return slot;
}

void RecurrentState::release_slot(SequenceId sequence) {
  int32_t& slot = slot_of_[static_cast<size_t>(sequence)];
  if (slot >= 0) slot_used_[static_cast<size_t>(slot)] = false;
  slot = -1;
  next_[static_cast<size_t>(sequence)] = 0;
  last_checkpoint_[static_cast<size_t>(sequence)] = 0;
  ring_from_[static_cast<size_t>(sequence)] = kNoRing;
}

// --- the batch ----------------------------------------------------------------------------------

Status RecurrentState::place(std::span<const CacheToken> tokens) {
  // Each sequence's tokens continue exactly where its state is, in order: a state cannot skip.
  std::array<Position, kMaxSequences> expected = next_;
  for (const CacheToken& token : tokens) {
    if (token.sequence < 0 || token.sequence >= kMaxSequences) {
      return make_error(ErrorCode::kInvalidArgument, "sequence id ", token.sequence, " outside 0..",
                        kMaxSequences - 1);
    }
    Position& next = expected[static_cast<size_t>(token.sequence)];
    if (token.position != next) {
      return make_error(ErrorCode::kInvalidArgument, "the recurrent state of sequence ", token.sequence,
                        " is at position ", next, "; a token at position ", token.position,
                        " cannot follow it (a state goes on token by token)");
    }
    ++next;
  }
  int32_t wanted = 0;
  for (SequenceId s = 0; s < kMaxSequences; ++s) {
    const auto i = static_cast<size_t>(s);
    if (expected[i] != next_[i] && slot_of_[i] < 0) ++wanted;
  }
  const auto free = static_cast<int32_t>(std::count(slot_used_.begin(), slot_used_.end(), false));
  if (wanted > free) {
    return make_error(ErrorCode::kContextFull, "the recurrent state has ", options_.n_seq_max,
                      " sequence slots and all are in use");
  }
  before_place_.clear();
  const int32_t ring = ring_size(options_);
  for (SequenceId s = 0; s < kMaxSequences; ++s) {
    const auto i = static_cast<size_t>(s);
    if (expected[i] == next_[i]) continue;
    before_place_.emplace_back(s, next_[i]);
    take_slot(s);
    if (ring > 0) {
      // The pass's last K + 1 tokens leave their states in the ring (positions up to expected);
      // the ring's earlier positions stay while the pass overwrites none of them.
      const Position kept_before = ring_from_[i] <= next_[i] ? ring_from_[i] : next_[i] + 1;
      ring_from_[i] = std::max(expected[i] - ring + 1, kept_before);
    }
    next_[i] = expected[i];
  }
  placed_slots_.resize(tokens.size());
  for (size_t t = 0; t < tokens.size(); ++t)
    placed_slots_[t] = slot_of_[static_cast<size_t>(tokens[t].sequence)];
  placed_snapshots_.clear();
  if (ring > 0) {
    // Token at position p leaves the state at p + 1 (or none if it is not among its sequence's
    // last K + 1 of the pass).
    placed_snapshots_.resize(tokens.size());
    for (size_t t = 0; t < tokens.size(); ++t) {
      const auto i = static_cast<size_t>(tokens[t].sequence);
      const Position after = tokens[t].position + 1;
      placed_snapshots_[t] = after > next_[i] - ring ? ring_plane(slot_of_[i], after) : -1;
    }
  }
  return ok_status();
}

void RecurrentState::unplace(std::span<const CacheToken> tokens) {
  (void)tokens;
  // How far the failed pass carried each state is unknown: those sequences start again.
  for (const auto& [sequence, next] : before_place_) {
    (void)next;
    drop_checkpoints(sequence, -1);
    release_slot(sequence);
  }
  before_place_.clear();
}

void RecurrentState::passed() {
  for (const auto& [sequence, before] : before_place_) {
    const auto i = static_cast<size_t>(sequence);
    (void)before;
    if (next_[i] - last_checkpoint_[i] >= options_.checkpoint_interval) add_checkpoint(sequence);
  }
  before_place_.clear();
}

// --- checkpoints --------------------------------------------------------------------------------

const RecurrentState::Checkpoint* RecurrentState::find_checkpoint(SequenceId sequence,
                                                                  Position position) const {
  for (const Checkpoint& c : checkpoints_) {
    if (c.sequence == sequence && c.position == position) return &c;
  }
  return nullptr;
}

void RecurrentState::drop_checkpoints(SequenceId sequence, Position after) {
  const auto gone = std::remove_if(checkpoints_.begin(), checkpoints_.end(), [&](const Checkpoint& c) {
    return c.sequence == sequence && c.position > after;
  });
  for (auto it = gone; it != checkpoints_.end(); ++it) checkpoint_bytes_used_ -= it->bytes.size();
  checkpoints_.erase(gone, checkpoints_.end());
}

void RecurrentState::add_checkpoint(SequenceId sequence) {
  const auto i = static_cast<size_t>(sequence);
  const int32_t slot = slot_of_[i];
  if (slot < 0 || next_[i] == 0 || slot_bytes_ == 0 || slot_bytes_ > options_.checkpoint_bytes) return;
  last_checkpoint_[i] = next_[i];
  if (find_checkpoint(sequence, next_[i]) != nullptr) return;
  // Room first: the oldest checkpoints go.
  while (checkpoint_bytes_used_ + slot_bytes_ > options_.checkpoint_bytes && !checkpoints_.empty()) {
    const auto oldest =
        std::min_element(checkpoints_.begin(), checkpoints_.end(),
                         [](const Checkpoint& a, const Checkpoint& b) { return a.taken < b.taken; });
    checkpoint_bytes_used_ -= oldest->bytes.size();
    checkpoints_.erase(oldest);
  }
  Checkpoint c;
  c.sequence = sequence;
  c.position = next_[i];
  c.taken = ++checkpoints_taken_;
  save(slot, c.bytes);
  checkpoint_bytes_used_ += c.bytes.size();
  checkpoints_.push_back(std::move(c));
}

void RecurrentState::checkpoint(SequenceId sequence) {
  if (sequence < 0 || sequence >= kMaxSequences) return;
  add_checkpoint(sequence);
}

// --- sequence edits -----------------------------------------------------------------------------

Position RecurrentState::resumable_prefix(SequenceId sequence, Position wanted) const {
  if (sequence < 0 || sequence >= kMaxSequences || wanted <= 0) return 0;
  const Position present = next_[static_cast<size_t>(sequence)];
  if (wanted >= present) return present;
  if (in_ring(sequence, wanted)) return wanted;
  Position best = 0;
  for (const Checkpoint& c : checkpoints_) {
    if (c.sequence == sequence && c.position <= wanted) best = std::max(best, c.position);
  }
  return best;
}

void RecurrentState::remove(SequenceId sequence, Position p0, Position p1) {
  if (sequence < 0 || sequence >= kMaxSequences) return;
  const auto i = static_cast<size_t>(sequence);
  const Position present = next_[i];
  if (p0 < 0) p0 = 0;
  if (p0 >= present) return;  // nothing held there
  if (p1 >= 0 && p1 < present) {
    // A range in the middle: a state cannot forget some tokens and keep later ones.
    drop_checkpoints(sequence, -1);
    release_slot(sequence);
    return;
  }
  drop_checkpoints(sequence, p0);
  if (p0 == 0) {
    drop_checkpoints(sequence, -1);
    release_slot(sequence);
    return;
  }
  if (in_ring(sequence, p0)) {
    // A few tokens back (rejected drafts): the ring's state there; the ring keeps what is before.
    copy_slot(ring_plane(slot_of_[i], p0), slot_of_[i]);
    next_[i] = p0;
    last_checkpoint_[i] = std::min(last_checkpoint_[i], p0);
    return;
  }
  if (const Checkpoint* c = find_checkpoint(sequence, p0); c != nullptr && slot_of_[i] >= 0) {
    load(slot_of_[i], c->bytes);
    next_[i] = p0;
    last_checkpoint_[i] = p0;
    ring_from_[i] = kNoRing;
    return;
  }
  // No point to go back to: the sequence starts again.
  drop_checkpoints(sequence, -1);
  release_slot(sequence);
}

void RecurrentState::copy(SequenceId src, SequenceId dst, Position p0, Position p1) {
  if (src < 0 || src >= kMaxSequences || dst < 0 || dst >= kMaxSequences || src == dst) return;
  drop_checkpoints(dst, -1);
  release_slot(dst);
  const auto s = static_cast<size_t>(src);
  const auto d = static_cast<size_t>(dst);
  if (p0 != 0 || p1 == 0) return;
  if (p1 < 0) p1 = next_[s];
  const bool ring = p1 != next_[s] && in_ring(src, p1);
  const Checkpoint* c = p1 == next_[s] || ring ? nullptr : find_checkpoint(src, p1);
  if (slot_of_[s] < 0 || (p1 != next_[s] && !ring && c == nullptr))
    return;  // no such point: dst starts empty
  const int32_t slot = take_slot(dst);
  if (slot < 0) return;
  if (c != nullptr) {
    load(slot, c->bytes);
  } else {
    copy_slot(ring ? ring_plane(slot_of_[s], p1) : slot_of_[s], slot);
  }
  next_[d] = p1;
  last_checkpoint_[d] = p1;
}

void RecurrentState::clear() {
  checkpoints_.clear();
  checkpoint_bytes_used_ = 0;
  for (SequenceId s = 0; s < kMaxSequences; ++s) release_slot(s);
  before_place_.clear();
}

Status RecurrentState::move_to(Backend& backend) {
  if (!buffer_) return ok_status();
  SINTER_ASSIGN(std::unique_ptr<Buffer> target, backend.allocate(BufferUsage::kCache, buffer_->size()));
  std::vector<uint8_t> staging(buffer_->size());
  buffer_->get(0, staging.data(), staging.size());
  target->set(0, staging.data(), staging.size());
  for (std::vector<Tensor>& layer : states_) {
    for (Tensor& t : layer) bind_tensor(t, *target, tensor_offset(t));
  }
  buffer_ = std::move(target);
  return ok_status();
}

}  // namespace sinter
