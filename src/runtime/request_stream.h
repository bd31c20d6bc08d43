// The channel between a client of the scheduler (an HTTP handler, a test) and the scheduler's
// loop: the loop pushes events (text pieces, then one final event), the client pops them and may
// cancel at any time. Thread-safe.
//
// A request for n completions of one prompt (SchedulerRequest::n, OpenAI's `n`) has one stream
// for all its choices: each event names its `choice` (0..n-1); the events of one choice come
// in order, those of different choices interleave, and each choice ends with its own final
// event (kDone or kError). The request is over after n final events; cancel() stops every
// choice.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/token.h"
#include "runtime/sequence.h"

namespace sinter {

// Timings and counts of a finished request, as Ollama reports them (nanoseconds).
struct RequestStats {
  int32_t prompt_tokens = 0;         // prompt tokens after truncation
  int32_t prompt_tokens_reused = 0;  // of those, taken from the prefix cache
  int32_t generated_tokens = 0;
  int64_t queue_ns = 0;       // submitted -> admitted
  int64_t prompt_ns = 0;      // admitted -> first token sampled
  int64_t generation_ns = 0;  // first token -> last token
  int64_t total_ns = 0;       // submitted -> finished
  StopReason stop_reason = StopReason::kNone;
  int32_t context_shifts = 0;
  uint64_t seed = 0;
};

struct RequestEvent {
  enum class Kind { kText, kDone, kError };
  Kind kind = Kind::kText;
  std::string text;             // kText: a piece; kError: the message
  std::vector<TokenId> tokens;  // kText: the tokens that produced it (may be empty when text was held back);
                                // kDone: every generated token of the choice
  RequestStats stats;           // kDone
  ErrorCode error_code = ErrorCode::kInternal;
  int32_t choice = 0;  // which of the request's n completions (0 when n = 1)
  // kText, with GenerationOptions::logprobs: one entry per generated token whose bytes this
  // piece completes, in order (see runtime/token_logprobs.h). A kText event may carry entries
  // and no text (a token that renders as nothing). Concatenated over a choice's kText events
  // they are its reported tokens: all generated tokens, less those wholly inside a stop string.
  std::vector<TokenLogprob> logprobs;
};

class RequestStream {
 public:
  explicit RequestStream(int32_t choices = 1) : choices_(choices) {}
  // How many choices (final events) the request has.
  int32_t choices() const { return choices_; }

  void push(RequestEvent event);
  // Waits up to `timeout` for the next event; nullopt on timeout.
  std::optional<RequestEvent> pop(std::chrono::milliseconds timeout);
  // Collects everything until every choice's final event (for non-streaming callers).
  std::vector<RequestEvent> drain();

  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  int32_t choices_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<RequestEvent> events_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace sinter
