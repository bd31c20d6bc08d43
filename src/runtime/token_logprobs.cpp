#include "runtime/token_logprobs.h"

#include <iterator>

namespace sinter {

void LogprobQueue::push(TokenLogprob entry) {
  const uint64_t start = bytes_pushed_;
  bytes_pushed_ += entry.piece.size();
  pending_.push_back({std::move(entry), start, bytes_pushed_});
}

void LogprobQueue::release(size_t bytes) {
  bytes_released_ += bytes;
  while (head_ < pending_.size() && pending_[head_].end <= bytes_released_) {
    ready_.push_back(std::move(pending_[head_++].entry));
  }
  if (head_ == pending_.size()) {
    pending_.clear();
    head_ = 0;
  }
}

void LogprobQueue::cut(size_t bytes) {
  bytes_released_ += bytes;
  for (; head_ < pending_.size(); ++head_) {
    const Pending& next = pending_[head_];
    if (next.start >= bytes_released_ && next.end > bytes_released_) break;  // wholly in the stop string
    ready_.push_back(std::move(pending_[head_].entry));
  }
  pending_.clear();
  head_ = 0;
  bytes_released_ = bytes_pushed_;
}

void LogprobQueue::release_all() {
  for (; head_ < pending_.size(); ++head_) ready_.push_back(std::move(pending_[head_].entry));
  pending_.clear();
  head_ = 0;
  bytes_released_ = bytes_pushed_;
}

void LogprobQueue::take(std::vector<TokenLogprob>& out) {
  out.insert(out.end(), std::make_move_iterator(ready_.begin()), std::make_move_iterator(ready_.end()));
  ready_.clear();
}

}  // namespace sinter
