// Continuous batching: up to `parallel` sequences share each forward pass. New requests join a
// running batch at the next pass; long prompts are prefilled in chunks interleaved with the
// other sequences' generation steps (which go first, so generation never stalls behind a
// prompt); each sequence keeps its own sampler, seed, stop strings and limits; a cancelled
// request frees its sequence at once; a bounded queue refuses work beyond it (kBusy).
//
// A request's tokens do not depend on what else runs with it: the forward pass is batch
// invariant and each sequence samples from its own logits with its own generator.
//
// Prompt prefixes already in the cache are reused: a new request takes the idle slot whose
// cached tokens share the longest prefix with its prompt, or shares (KV copy) the cells of an
// active sequence with a longer common prefix, and only the rest of the prompt is computed. A
// prefix is reused only as far as the cache pools of sliding-window layers still hold what its
// next token sees (KvCache::resumable_prefix); they drop older cells as sequences advance.
//
// Several completions of one prompt (SchedulerRequest::n > 1, OpenAI's `n`): the request takes
// n slots at once. Choice 0 (the leader) computes the prompt like any request; when the logits
// of its last prompt token come out, the other choices share the prompt's cells (KV copy, no
// recomputation), sample their first tokens from those same logits, and from then on generate
// in the same passes as the leader. Choice i samples with its own generator seeded by
// choice_seed(seed, i) (sample/random.h): choice 0 uses the seed itself, so it equals a single
// request with that seed; without a seed one random seed is drawn for the request. All choices
// report on one RequestStream (events carry the choice index); cancelling it stops them all.
//
// Fairness across clients: a request names its client (SchedulerRequest::client, the server
// gives the peer's address). The next request admitted is the oldest of those whose client has
// the fewest sequences running, and among clients with as many, the one admitted least recently
// (round robin): a client that floods the queue with costly requests delays its own, not another
// client's (64 requests from one address left a plain request from another 27 s behind them).
// Requests of one client keep their order.
//
// Preemption: when the next request to admit (n = 1) finds no free slot while another client
// runs at least two sequences more than its own client, that client's newest sequence is
// suspended (SequenceState::suspend: sampler, text and limits kept) and queued first among its
// client's requests; the slot goes to the waiting request. Resumed, it computes its prompt and
// what it had generated again (only what its old cells no longer hold) and goes on exactly as
// it would have: the pass is batch invariant, so greedy and seeded outputs do not change. A
// plain request beside a flood of long generations from one address waits for no one of them.
//
// Sampling under a grammar runs on a thread of its own (its step may take up to its time budget,
// a second): the passes of the other sequences go on without that sequence until its token is
// sampled, so one costly grammar does not slow every other request down to its pace.
//
// Accounting for n > 1: the request is ONE entry of the queue (max_queue and metrics.queued count
// requests) and, once it is the next to admit, waits until n slots are free (requests behind it
// do not overtake it while it waits); while running it holds n slots (metrics.active counts
// sequences). requests_finished counts requests (once, when the last choice ends); prompt_tokens,
// prompt_tokens_reused and generated_tokens count every choice, the forked choices reporting
// their whole prompt as reused, so prompt_tokens - prompt_tokens_reused is what was computed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/context.h"
#include "runtime/request_stream.h"
#include "runtime/sequence.h"
#include "tokenizer/tokenizer.h"

namespace sinter {

struct SchedulerOptions {
  int32_t parallel = 4;         // sequences served at once (1..64)
  int32_t n_ctx = 0;            // total cache cells (0: parallel x the model's context, capped)
  int32_t n_batch = 512;        // most tokens in one forward pass
  int32_t prefill_chunk = 256;  // most prompt tokens one sequence adds to a pass
  size_t max_queue = 64;        // waiting requests beyond the running ones
  DType kv_type = DType::F16;
  size_t state_checkpoint_bytes = 0;  // recurrent state checkpoints (ContextOptions; 0: default)
};

struct SchedulerRequest {
  std::vector<TokenId> prompt;
  bool prompt_has_bos = true;
  GenerationOptions options;
  int32_t n = 1;       // completions of the prompt (1..parallel), each with its own seed stream
  std::string client;  // who asks (an address; empty: one anonymous client), for fair admission
};

// Counters for /metrics (monotonic unless noted).
struct SchedulerMetrics {
  int64_t requests_finished = 0;
  int64_t prompt_tokens = 0;
  int64_t prompt_tokens_reused = 0;
  int64_t generated_tokens = 0;
  int64_t prefix_cache_hits = 0;
  int64_t forked_sequences = 0;  // choices 1..n-1 of n > 1 requests, started on a shared prompt
  int64_t forward_passes = 0;
  int64_t preemptions = 0;       // sequences suspended to give their slot to another client
  int32_t active = 0;            // current
  int32_t queued = 0;            // current
  int32_t cache_cells_used = 0;  // current
  int32_t cache_cells_total = 0;
  uint64_t state_bytes = 0;  // current: the recurrent layers' state and its checkpoints (0 without)
  std::vector<double> time_to_first_token_seconds;  // since the last read
  std::vector<double> inter_token_seconds;          // since the last read
};

class Scheduler {
 public:
  static Result<std::unique_ptr<Scheduler>> create(std::shared_ptr<const LoadedModel> model,
                                                   std::shared_ptr<const Tokenizer> tokenizer,
                                                   const SchedulerOptions& options);
  ~Scheduler();

  // Queues a request; its events arrive on the returned stream (one stream for all n choices).
  // kBusy when the queue is full, kInvalidArgument / kContextFull for requests that can never
  // run (n outside 1..parallel among them).
  Result<std::shared_ptr<RequestStream>> submit(SchedulerRequest request);

  // A snapshot; the latency samples are handed over (and cleared) by each call.
  SchedulerMetrics take_metrics();
  int32_t context_per_sequence() const { return n_ctx_per_sequence_; }
  int32_t parallel() const { return options_.parallel; }

 private:
  struct Pending;
  struct Slot;
  Scheduler() = default;
  void loop();
  // Returns whether anything changed (a request admitted, ended or preempted).
  bool admit();
  // With mutex_ held: suspends a sequence of a client that runs at least two more than
  // `client` (see above) and queues it again; false when there is none.
  bool preempt_for(const std::string& client);
  // Sequences of `client` running now.
  std::ptrdiff_t running_of(const std::string& client) const;
  // With mutex_ held: the index in queue_ of the request to admit next (fairness above).
  size_t next_waiting() const;
  // Records an admission of `client`'s request (and forgets idle clients beyond a bound).
  void note_admitted(const std::string& client);
  static constexpr size_t kRememberedClients = 4096;
  bool step();
  void finish(Slot& slot, std::optional<Error> error);
  // What one pass produced beyond the streamed text: latencies, and the slots to finish.
  struct StepLog {
    std::vector<double> ttft, inter_token;
    std::vector<Slot*> completed;
  };
  // Hands one position's logits to a slot: samples (on its own thread under a grammar), then
  // after_sampling.
  void deliver(Slot& slot, std::span<const float> logits, StepLog& log);
  // Records timings and streams the text of a sampled token (or ends the slot with the error).
  void after_sampling(Slot& slot, Result<std::string> text, StepLog& log);
  // Takes the tokens that sampling threads have finished; true when there was one.
  bool collect_samples(StepLog& log);
  // Counts a step in the metrics (`passed`: it ran a forward pass) and ends the completed slots.
  void publish(StepLog& log, bool passed);
  // Starts the choices waiting on `leader` (n > 1) on its computed prompt and its logits.
  void fork_followers(Slot& leader, std::span<const float> logits, StepLog& log);

  std::shared_ptr<const LoadedModel> model_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  SchedulerOptions options_;
  int32_t n_ctx_per_sequence_ = 0;
  std::unique_ptr<Context> context_;
  std::vector<std::unique_ptr<Slot>> slots_;

  std::mutex mutex_;  // guards queue_, stopping_, metrics_
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Pending>> queue_;
  // When each client's last request was admitted (a count of admissions); the scheduler thread's.
  std::unordered_map<std::string, uint64_t> last_admitted_;
  uint64_t admissions_ = 0;
  bool stopping_ = false;
  SchedulerMetrics metrics_;
  std::thread thread_;
};

}  // namespace sinter
