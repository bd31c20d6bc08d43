#include "memory/hybrid_memory.h"

namespace sinter {

Status HybridMemory::place(std::span<const CacheToken> tokens) {
  SINTER_TRY(recurrent_->place(tokens));
  if (Status placed = kv_->place(tokens); !placed) {
    recurrent_->unplace(tokens);
    return placed;
  }
  return ok_status();
}

void HybridMemory::unplace(std::span<const CacheToken> tokens) {
  kv_->unplace(tokens);
  recurrent_->unplace(tokens);
  // The state's sequences start again: so do their cells.
  for (const CacheToken& t : tokens) kv_->remove(t.sequence, recurrent_->max_position(t.sequence) + 1, -1);
}

void HybridMemory::remove(SequenceId sequence, Position p0, Position p1) {
  recurrent_->remove(sequence, p0, p1);
  // The cells keep exactly what the state has seen: up to where it went back (a checkpoint), or
  // nothing when it starts again.
  kv_->remove(sequence, recurrent_->max_position(sequence) + 1, -1);
}

void HybridMemory::copy(SequenceId src, SequenceId dst, Position p0, Position p1) {
  recurrent_->copy(src, dst, p0, p1);
  kv_->remove(dst, 0, -1);
  // The cells up to where the state was copied (none when it could not be).
  const Position copied = recurrent_->max_position(dst) + 1;
  if (copied > 0) kv_->copy(src, dst, 0, copied);
}

Position HybridMemory::resumable_prefix(SequenceId sequence, Position wanted) const {
  // The state's points from the latest down, until the cache holds what a token there sees.
  Position p = recurrent_->resumable_prefix(sequence, wanted);
  while (p > 0 && kv_->resumable_prefix(sequence, p) != p) p = recurrent_->resumable_prefix(sequence, p - 1);
  return p;
}

void HybridMemory::clear() {
  kv_->clear();
  recurrent_->clear();
}

Status HybridMemory::move_to(Backend& backend) {
  SINTER_TRY(kv_->move_to(backend));
  return recurrent_->move_to(backend);
}

}  // namespace sinter
