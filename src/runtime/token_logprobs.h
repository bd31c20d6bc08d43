// Per-token log-probabilities of a generation (OpenAI `logprobs`/`top_logprobs`, Ollama
// `logprobs`/`top_logprobs`), and how they are lined up with the streamed text.
//
// Distribution: the model's own, i.e. the log-softmax of the raw logits at that position
// (temperature 1, before logit bias, penalties, truncation and temperature; see
// sample/logprobs.h), as OpenAI and llama.cpp's server report it. The sampled token's entry is
// always there, whether or not it is among the top alternatives.
//
// Alignment with the text (LogprobQueue): one entry per generated token, in order, never
// repeated. An entry is handed out together with the text piece that releases the last byte of
// its token: the streaming detokenizer holds back incomplete UTF-8 and the stop matcher holds
// back a possible stop-string start, and the entry waits with those bytes. When a stop string
// ends the text, tokens that contributed at least one byte before it are reported (the last one
// may straddle the stop string; its `piece` is still all of its bytes) and the tokens lying
// wholly inside the stop string are not. Tokens that give no bytes (a control token with
// render_special off) are reported in order, possibly with an empty text piece. The
// end-of-generation token that stops a sequence is not reported (nor counted in `tokens`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/token.h"

namespace sinter {

constexpr int32_t kMaxTopLogprobs = 20;  // the most alternatives a request may ask for

struct TopLogprob {
  TokenId token = kNoToken;
  std::string piece;     // the token's bytes (may be part of a UTF-8 character)
  float logprob = 0.0f;  // natural log; -inf when the model gives the token no chance
};

struct TokenLogprob {
  TokenId token = kNoToken;     // the generated token
  std::string piece;            // its bytes, as the detokenizer renders it (may be partial UTF-8)
  float logprob = 0.0f;         // natural log of its probability under the model
  std::vector<TopLogprob> top;  // the top_logprobs most likely tokens, most likely first
};

// Holds entries until the text that contains their bytes has been released.
class LogprobQueue {
 public:
  // A new generated token; its piece.size() bytes follow those of the earlier tokens.
  void push(TokenLogprob entry);
  // `bytes` more bytes of text were released: entries whose bytes are all out become ready.
  void release(size_t bytes);
  // `bytes` more bytes were released and then a stop string cut the text: entries with a byte
  // before the cut (or none at all, sitting before it) become ready, the rest are dropped.
  void cut(size_t bytes);
  // Everything left becomes ready (the end, no stop string).
  void release_all();
  // Appends the ready entries to `out`, in order, and forgets them.
  void take(std::vector<TokenLogprob>& out);
  bool has_ready() const { return !ready_.empty(); }

 private:
  struct Pending {
    TokenLogprob entry;
    uint64_t start, end;  // byte range of the token in the generated text
  };
  // Not yet released: pending_[head_, size). A vector, not a deque: nothing is allocated for
  // a sequence that never asks for log-probabilities.
  std::vector<Pending> pending_;
  size_t head_ = 0;
  std::vector<TokenLogprob> ready_;
  uint64_t bytes_pushed_ = 0;
  uint64_t bytes_released_ = 0;
};

}  // namespace sinter
