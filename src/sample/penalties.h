// Repetition, frequency and presence penalties over a window of recent tokens (llama.cpp's
// semantics), and the window itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sample/candidates.h"

namespace sinter {

// How many times each token occurs among the last `last_n` accepted tokens.
// last_n > 0: a sliding window (a ring buffer); -1: every token since the last clear();
// 0: nothing is kept. Pushing is O(1); the memory is one count per vocabulary token plus the
// window.
class TokenWindow {
 public:
  TokenWindow(int32_t vocab_size, int32_t last_n);

  // `token` must be in [0, vocab_size).
  void push(TokenId token);
  void clear();

  int32_t count(TokenId token) const { return counts_.empty() ? 0 : counts_[static_cast<size_t>(token)]; }
  size_t size() const { return tokens_.size(); }
  // Each token of the window once, in no particular (but deterministic) order.
  std::span<const TokenId> distinct_tokens() const { return distinct_; }

 private:
  void add(TokenId token);
  void remove(TokenId token);

  int32_t last_n_;
  std::vector<int32_t> counts_;          // [vocab_size], or empty when last_n == 0
  std::vector<TokenId> tokens_;          // the window; a ring once it holds last_n tokens
  size_t oldest_ = 0;                    // index of the oldest token once the ring is full
  std::vector<TokenId> distinct_;        // tokens with count > 0
  std::vector<int32_t> distinct_index_;  // [vocab_size]: where a token sits in distinct_
};

struct PenaltyOptions {
  float repeat = 1.0f;     // > 0; 1 disables
  float frequency = 0.0f;  // subtracted once per occurrence; 0 disables
  float presence = 0.0f;   // subtracted once if the token occurs at all; 0 disables

  bool active() const { return repeat != 1.0f || frequency != 0.0f || presence != 0.0f; }
};

// For every candidate that occurs c > 0 times in the window:
//   logit = logit <= 0 ? logit * repeat : logit / repeat;
//   logit -= c * frequency + presence;
// Candidates that do not occur are untouched. O(window) when the set is the whole vocabulary in
// id order, O(n) otherwise.
void apply_penalties(CandidateSet& set, const TokenWindow& window, const PenaltyOptions& options);

}  // namespace sinter
