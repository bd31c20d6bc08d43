#include "sample/penalties.h"

namespace sinter {

TokenWindow::TokenWindow(int32_t vocab_size, int32_t last_n) : last_n_(last_n) {
  if (last_n_ == 0) return;
  counts_.assign(static_cast<size_t>(vocab_size), 0);
  // Room for a typical window up front; a longer one (or the whole history) grows as needed,
  // and a bounded one stops growing once it is full.
  constexpr int32_t kReserved = 4096;
  tokens_.reserve(static_cast<size_t>(last_n_ > 0 && last_n_ < kReserved ? last_n_ : kReserved));
}

void TokenWindow::push(TokenId token) {
  if (last_n_ == 0) return;
  ++counts_[static_cast<size_t>(token)];
  if (last_n_ < 0 || tokens_.size() < static_cast<size_t>(last_n_)) {
    tokens_.push_back(token);
    return;
  }
  // Full ring: the newest token replaces the oldest.
  --counts_[static_cast<size_t>(tokens_[oldest_])];
  tokens_[oldest_] = token;
  oldest_ = (oldest_ + 1) % tokens_.size();
}

void TokenWindow::clear() {
  for (TokenId token : tokens_) counts_[static_cast<size_t>(token)] = 0;
  tokens_.clear();
  oldest_ = 0;
}

void apply_penalties(CandidateSet& set, const TokenWindow& window, const PenaltyOptions& options) {
  if (!options.active() || window.size() == 0) return;
  for (Candidate& c : set.entries) {
    const int32_t occurrences = window.count(c.id);
    if (occurrences == 0) continue;
    c.logit = c.logit <= 0.0f ? c.logit * options.repeat : c.logit / options.repeat;
    c.logit -= static_cast<float>(occurrences) * options.frequency + options.presence;
  }
  set.sorted_count = 0;  // the logits moved, so the ranking may have changed
}

}  // namespace sinter
