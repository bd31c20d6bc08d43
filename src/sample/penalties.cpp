#include "sample/penalties.h"

namespace sinter {

TokenWindow::TokenWindow(int32_t vocab_size, int32_t last_n) : last_n_(last_n) {
  if (last_n_ == 0) return;
  counts_.assign(static_cast<size_t>(vocab_size), 0);
  distinct_index_.assign(static_cast<size_t>(vocab_size), -1);
  // Room for a typical window up front; a longer one (or the whole history) grows as needed,
  // and a bounded one stops growing once it is full.
  constexpr int32_t kReserved = 4096;
  const auto reserved = static_cast<size_t>(last_n_ > 0 && last_n_ < kReserved ? last_n_ : kReserved);
  tokens_.reserve(reserved);
  distinct_.reserve(reserved);
}

void TokenWindow::add(TokenId token) {
  if (counts_[static_cast<size_t>(token)]++ > 0) return;
  distinct_index_[static_cast<size_t>(token)] = static_cast<int32_t>(distinct_.size());
  distinct_.push_back(token);
}

void TokenWindow::remove(TokenId token) {
  if (--counts_[static_cast<size_t>(token)] > 0) return;
  // Swap-remove from the distinct list.
  const int32_t index = distinct_index_[static_cast<size_t>(token)];
  const TokenId moved = distinct_.back();
  distinct_[static_cast<size_t>(index)] = moved;
  distinct_index_[static_cast<size_t>(moved)] = index;
  distinct_.pop_back();
  distinct_index_[static_cast<size_t>(token)] = -1;
}

void TokenWindow::push(TokenId token) {
  if (last_n_ == 0) return;
  if (last_n_ > 0 && tokens_.size() == static_cast<size_t>(last_n_)) {
    // Full ring: the newest token replaces the oldest.
    remove(tokens_[oldest_]);
    tokens_[oldest_] = token;
    oldest_ = (oldest_ + 1) % tokens_.size();
  } else {
    tokens_.push_back(token);
  }
  add(token);
}

void TokenWindow::clear() {
  for (TokenId token : distinct_) {
    counts_[static_cast<size_t>(token)] = 0;
    distinct_index_[static_cast<size_t>(token)] = -1;
  }
  distinct_.clear();
  tokens_.clear();
  oldest_ = 0;
}

namespace {

void penalize(float& logit, int32_t occurrences, const PenaltyOptions& options) {
  logit = logit <= 0.0f ? logit * options.repeat : logit / options.repeat;
  logit -= static_cast<float>(occurrences) * options.frequency + options.presence;
}

}  // namespace

void apply_penalties(CandidateSet& set, const TokenWindow& window, const PenaltyOptions& options) {
  if (!options.active() || window.size() == 0) return;
  if (set.in_id_order) {
    for (TokenId token : window.distinct_tokens()) {
      penalize(set.entries[static_cast<size_t>(token)].logit, window.count(token), options);
    }
  } else {
    for (Candidate& c : set.entries) {
      const int32_t occurrences = window.count(c.id);
      if (occurrences > 0) penalize(c.logit, occurrences, options);
    }
  }
  set.sorted_count = 0;  // the logits moved, so the ranking may have changed
}

}  // namespace sinter
