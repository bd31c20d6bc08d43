// One sequence being generated: its prompt, sampler chain, streaming detokenizer, stop strings,
// limits and context policy. The engine (one sequence) and the scheduler (many in one batch)
// drive it the same way:
//
//   while (!seq.finished()) {
//     SINTER_TRY(seq.make_room(cache));          // shift or stop when the context is full
//     seq.schedule(max_tokens, batch);            // prompt chunk or the last sampled token
//     ... decode the batch ...
//     if (seq.wants_logits()) text += seq.accept_logits(logits);
//   }
#pragma once

#include <span>
#include <string>
#include <vector>

#include "memory/sequence_memory.h"
#include "runtime/context.h"
#include "runtime/stop_strings.h"
#include "runtime/token_logprobs.h"
#include "sample/logprobs.h"
#include "sample/sampler_chain.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

enum class OverflowPolicy {
  kError,  // a prompt longer than the context is an error; generation stops when it is full
  kShift,  // drop the oldest tokens after the kept prefix and re-rotate the cached keys
};

enum class StopReason { kNone, kMaxTokens, kEndOfGeneration, kStopString, kContextFull, kCancelled };
const char* stop_reason_name(StopReason reason);

struct GenerationOptions {
  int32_t max_tokens = 128;  // tokens to generate; must be positive
  SamplerOptions sampling;
  OverflowPolicy overflow = OverflowPolicy::kError;
  int32_t keep = 0;  // prompt tokens (after BOS) that a shift never drops
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool render_special = false;  // show special tokens in the text
  // Per generated token, its log-probability under the model and the top_logprobs (0..20) most
  // likely alternatives (runtime/token_logprobs.h says which distribution and how entries line
  // up with the text). top_logprobs is read only when logprobs is on. Off: nothing is computed.
  bool logprobs = false;
  int32_t top_logprobs = 0;
  // A GBNF grammar (llama.cpp syntax) the generated text must follow; empty: none. Compiled once
  // per sequence; a bad grammar is an error of SequenceState::create.
  std::string grammar;
  // With trigger words the grammar is lazy, off until the generated text contains one of them
  // (tool calls: sample/grammar/grammar_trigger.h).
  GrammarTriggers grammar_triggers;
  // What the grammar may cost per token (parses alive, work, time: sample/grammar/grammar_budget.h).
  // Past a limit, accept_logits is an error and the sequence ends with it.
  GrammarLimits grammar_limits;
};

class SequenceState {
 public:
  // `n_ctx` is how many cache cells this sequence may use.
  static Result<SequenceState> create(SequenceId id, std::vector<TokenId> prompt, bool prompt_has_bos,
                                      const GenerationOptions& options, const Tokenizer& tokenizer,
                                      int32_t n_ctx);

  SequenceId id() const { return id_; }
  bool finished() const { return stop_ != StopReason::kNone; }
  StopReason stop_reason() const { return stop_; }

  // Makes room for the next scheduled tokens: shifts the context (kShift) or finishes the
  // sequence with kContextFull (kError).
  void make_room(SequenceMemory& memory);
  // Appends up to `max_tokens` tokens to decode now: a chunk of the prompt, or the token
  // sampled last. Returns how many.
  int32_t schedule(int32_t max_tokens, std::vector<BatchEntry>& batch);
  // True when the entries scheduled last end with the position whose logits pick a token.
  bool wants_logits() const { return wants_logits_; }
  // Samples from the logits of the last scheduled entry; returns the text that can be shown.
  Result<std::string> accept_logits(std::span<const float> logits);
  // With options.logprobs: appends to `out` the log-probability entries of the tokens whose
  // bytes the text returned so far (by accept_logits and finish_text) has completed. Call it
  // after each of those; entries come out once each, in generation order.
  void take_logprobs(std::vector<TokenLogprob>& out) { logprobs_.take(out); }
  // Marks the first `count` tokens to fill (fill_tokens()) as already in the cache (a reused
  // prefix). At least the last one is always computed, since its logits pick the next token.
  void skip_prompt(int32_t count);
  // True while tokens that must be in the cache before the next sampling are still to be
  // scheduled: the prompt, or after suspend() the prompt and the tokens generated so far.
  bool prefilling() const { return prompt_cursor_ < fill_count(); }
  // The tokens the cache must hold before the next sampling (the prompt, unless suspended).
  std::vector<TokenId> fill_tokens() const;
  // Whether suspend() may be called: running, never shifted (the cache then holds exactly
  // fill_tokens()' tokens), and not waiting for logits.
  bool suspendable() const { return !finished() && shifts_ == 0 && !wants_logits_; }
  // Gives up the sequence's cells (the scheduler hands its slot to another request): the
  // sampler, stop strings and text so far stay, and the next schedule() starts again from the
  // first token, re-computing the prompt and the tokens generated so far without sampling, so
  // the sequence goes on as if nothing had happened. Requires suspendable().
  void suspend();
  // Whether a grammar constrains the next sampling (a lazy one once triggered): sampling may
  // then cost more than a pass.
  bool grammar_constrains() const { return sampler_.grammar_active(); }
  // The whole prompt is already in this sequence's cells (forked from a sequence that computed
  // it, n > 1): nothing is scheduled for it, and the next accept_logits takes the logits of the
  // last prompt token.
  void adopt_computed_prompt();
  const std::vector<TokenId>& prompt() const { return prompt_; }
  // Moves the (not yet started) sequence to another sequence id of the cache.
  void rebind(SequenceId id) { id_ = id; }
  // Stops the sequence (client gone, caller asked).
  void cancel() {
    if (!finished()) stop_ = StopReason::kCancelled;
  }
  // Text still held back (incomplete UTF-8 or a possible stop-string start) once finished.
  std::string finish_text();

  const std::vector<TokenId>& generated() const { return generated_; }
  int32_t prompt_token_count() const { return static_cast<int32_t>(prompt_.size()); }
  int32_t prompt_tokens_done() const { return prompt_cursor_; }
  int32_t context_shifts() const { return shifts_; }
  int32_t tokens_in_cache() const { return n_past_; }
  uint64_t seed() const { return sampler_.seed(); }

 private:
  SequenceState(SequenceId id, std::vector<TokenId> prompt, int32_t kept, const GenerationOptions& options,
                const Tokenizer& tokenizer, int32_t n_ctx, SamplerChain sampler);

  SequenceId id_;
  std::vector<TokenId> prompt_;
  int32_t kept_;  // leading tokens a shift never drops
  GenerationOptions options_;
  const Tokenizer* tokenizer_;
  int32_t n_ctx_;
  SamplerChain sampler_;
  StreamingDetokenizer detokenizer_;
  StopMatcher stops_;
  std::vector<TokenId> generated_;
  LogprobQueue logprobs_;
  std::vector<LogprobValue> top_scratch_;  // the alternatives of one position (logprobs only)
  int32_t fill_count() const { return prompt_token_count() + replayed_; }
  TokenId fill_token(int32_t i) const {
    return i < prompt_token_count() ? prompt_[static_cast<size_t>(i)]
                                    : generated_[static_cast<size_t>(i - prompt_token_count())];
  }

  int32_t replayed_ = 0;       // generated tokens re-computed after a suspension
  int32_t prompt_cursor_ = 0;  // tokens to fill already scheduled (fill_token order)
  int32_t n_past_ = 0;         // tokens of this sequence in the cache
  bool wants_logits_ = false;
  bool pending_token_ = false;  // the last sampled token still needs decoding
  int32_t shifts_ = 0;
  StopReason stop_ = StopReason::kNone;
};

}  // namespace sinter
