#include "runtime/scheduler.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <limits>
#include <system_error>

#include "core/log.h"
#include "runtime/embedding.h"
#include "sample/random.h"

namespace sinter {
namespace {

using Clock = std::chrono::steady_clock;

int64_t nanoseconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
}

int32_t common_prefix(const std::vector<TokenId>& a, const std::vector<TokenId>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int32_t>(i);
}

constexpr int32_t kMaxDefaultContext = 4096;

RequestEvent make_event(RequestEvent::Kind kind, std::string text, int32_t choice,
                        ErrorCode code = ErrorCode::kInternal) {
  RequestEvent event;
  event.kind = kind;
  event.text = std::move(text);
  event.error_code = code;
  event.choice = choice;
  return event;
}

}  // namespace

struct Scheduler::Pending {
  std::vector<SequenceState> choices;  // one per completion asked for (n)
  std::shared_ptr<RequestStream> stream;
  Clock::time_point submitted;
  std::string client;
  // A preempted request (suspended, n = 1): what its slot had recorded, restored when it
  // runs again.
  struct Preempted {
    Clock::time_point admitted, first_token, last_token;
    int32_t reused = 0;
  };
  std::optional<Preempted> preempted;
};

struct Scheduler::Slot {
  SequenceId id = 0;
  std::vector<TokenId> cached;  // tokens in the cache for this sequence, position i = cached[i]
  std::optional<SequenceState> state;
  std::shared_ptr<RequestStream> stream;
  std::string client;  // of the request it runs
  Clock::time_point submitted, admitted, first_token, last_token;
  int32_t reused = 0;
  int32_t choice = 0;            // index of this completion in its request (n > 1)
  Slot* leader = nullptr;        // set while waiting for the leader's prompt (n > 1)
  std::vector<Slot*> followers;  // choices waiting for this slot's prompt (n > 1)
  // Sampling on its own thread (a grammar may take longer than a pass): the logits it samples
  // from, and its result once done (guarded by the scheduler's mutex_). The scheduler thread
  // leaves `state` alone while `sampling`.
  bool sampling = false;
  std::vector<float> sample_logits;
  std::optional<Result<std::string>> sample_result;
  std::future<void> sampler;
  bool active() const { return state.has_value(); }
  bool waiting() const { return leader != nullptr; }
};

Result<std::unique_ptr<Scheduler>> Scheduler::create(std::shared_ptr<const LoadedModel> model,
                                                     std::shared_ptr<const Tokenizer> tokenizer,
                                                     const SchedulerOptions& options) {
  if (options.parallel < 1 || options.parallel > kMaxSequences) {
    return make_error(ErrorCode::kInvalidArgument, "parallel must be between 1 and ", kMaxSequences, ", got ",
                      options.parallel);
  }
  if (options.n_batch < 1 || options.prefill_chunk < 1) {
    return make_error(ErrorCode::kInvalidArgument, "batch size and prefill chunk must be positive");
  }
  SINTER_TRY(check_generative(model->model().shape()));
  auto scheduler = std::unique_ptr<Scheduler>(new Scheduler());
  scheduler->options_ = options;
  const int32_t per_sequence_default = std::min(model->model().shape().n_ctx_train, kMaxDefaultContext);
  const int32_t n_ctx = options.n_ctx > 0 ? options.n_ctx : per_sequence_default * options.parallel;
  scheduler->n_ctx_per_sequence_ = n_ctx / options.parallel;
  if (scheduler->n_ctx_per_sequence_ < 2) {
    return make_error(ErrorCode::kInvalidArgument, "a context of ", n_ctx, " cells is too small for ",
                      options.parallel, " parallel sequences");
  }
  ContextOptions context_options;
  context_options.n_ctx = n_ctx;
  context_options.n_batch = options.n_batch;
  context_options.n_seq_max = options.parallel;
  context_options.kv_type = options.kv_type;
  context_options.state_checkpoint_bytes = options.state_checkpoint_bytes;
  SINTER_ASSIGN(scheduler->context_, Context::create(model, context_options));
  // A memory without attention layers holds sequences of any length: nothing to shift or stop.
  if (scheduler->context_->memory().kv() == nullptr)
    scheduler->n_ctx_per_sequence_ = SequenceMemory::kUnboundedCells / options.parallel;
  scheduler->model_ = std::move(model);
  scheduler->tokenizer_ = std::move(tokenizer);
  for (int32_t i = 0; i < options.parallel; ++i) {
    scheduler->slots_.push_back(std::make_unique<Slot>());
    scheduler->slots_.back()->id = i;
  }
  scheduler->metrics_.cache_cells_total = scheduler->context_->memory().kv() != nullptr ? n_ctx : 0;
  scheduler->thread_ = std::thread([s = scheduler.get()] { s->loop(); });
  return scheduler;
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<std::shared_ptr<RequestStream>> Scheduler::submit(SchedulerRequest request) {
  if (request.n < 1 || request.n > options_.parallel) {
    return make_error(ErrorCode::kInvalidArgument, "n must be between 1 and ", options_.parallel,
                      " (the sequences this server runs at once), got ", request.n);
  }
  std::vector<SequenceState> choices;
  GenerationOptions options = request.options;
  // A single request keeps its options as given (an unset seed is drawn by its sampler); the
  // choices of n > 1 share one seed, drawn here when none was given.
  const uint64_t seed =
      options.sampling.seed.has_value() || request.n == 1 ? options.sampling.seed.value_or(0) : random_seed();
  for (int32_t i = 0; i < request.n; ++i) {
    if (request.n > 1) options.sampling.seed = choice_seed(seed, i);
    SINTER_ASSIGN(SequenceState state, SequenceState::create(0, request.prompt, request.prompt_has_bos,
                                                             options, *tokenizer_, n_ctx_per_sequence_));
    choices.push_back(std::move(state));
  }
  auto pending =
      std::make_unique<Pending>(Pending{std::move(choices), std::make_shared<RequestStream>(request.n),
                                        Clock::now(), std::move(request.client), std::nullopt});
  auto stream = pending->stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= options_.max_queue) {
      return make_error(ErrorCode::kBusy, "the server is busy: ", queue_.size(), " requests are waiting");
    }
    queue_.push_back(std::move(pending));
    metrics_.queued = static_cast<int32_t>(queue_.size());
  }
  wake_.notify_all();
  return stream;
}

SchedulerMetrics Scheduler::take_metrics() {
  std::lock_guard<std::mutex> lock(mutex_);
  SchedulerMetrics snapshot = metrics_;
  metrics_.time_to_first_token_seconds.clear();
  metrics_.inter_token_seconds.clear();
  return snapshot;
}

void Scheduler::loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto idle = [&] {
        return std::none_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->active(); });
      };
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || !idle(); });
      if (stopping_) break;
    }
    // An allocation that fails inside a pass (a huge request's vectors, a machine out of memory)
    // ends the requests of that pass with an error; the scheduler and the server go on.
    bool progressed = false;
    try {
      progressed = admit();
      progressed = step() || progressed;
    } catch (const std::exception& e) {
      progressed = true;
      const Error error(ErrorCode::kInternal, concat("the pass failed: ", e.what()));
      log_warn("scheduler", error.message());
      for (auto& slot : slots_) {
        if (slot->active() && !slot->sampling) finish(*slot, error);
      }
    }
    if (!progressed) {
      // Every running sequence is sampling on its own thread (and the queue waits for their
      // slots): wait for one of them to finish, or for a new request.
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(50), [&] {
        return stopping_ || std::any_of(slots_.begin(), slots_.end(),
                                        [](const auto& s) { return s->sample_result.has_value(); });
      });
    }
  }
  // Shutting down: let the samplers still running end (a grammar's step is bounded in time),
  // then tell every waiting and running request.
  for (auto& slot : slots_) {
    if (slot->sampler.valid()) slot->sampler.wait();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& pending : queue_) {
    for (int32_t choice = 0; choice < pending->stream->choices(); ++choice) {
      pending->stream->push(make_event(RequestEvent::Kind::kError, "the server is shutting down", choice,
                                       ErrorCode::kCancelled));
    }
  }
  for (auto& slot : slots_) {
    if (slot->active()) {
      slot->stream->push(make_event(RequestEvent::Kind::kError, "the server is shutting down", slot->choice,
                                    ErrorCode::kCancelled));
    }
  }
}

std::ptrdiff_t Scheduler::running_of(const std::string& client) const {
  return std::count_if(slots_.begin(), slots_.end(),
                       [&](const auto& slot) { return slot->active() && slot->client == client; });
}

size_t Scheduler::next_waiting() const {
  // Lowest (sequences running, last admission) first; the queue's order breaks ties.
  size_t best = 0;
  std::pair<std::ptrdiff_t, uint64_t> best_key{std::numeric_limits<std::ptrdiff_t>::max(), 0};
  for (size_t i = 0; i < queue_.size(); ++i) {
    const Pending& pending = *queue_[i];
    if (pending.stream->cancelled()) return i;  // taken out at once
    const auto last = last_admitted_.find(pending.client);
    const std::pair<std::ptrdiff_t, uint64_t> key{running_of(pending.client),
                                                  last == last_admitted_.end() ? 0 : last->second};
    if (key < best_key) {
      best = i;
      best_key = key;
    }
  }
  return best;
}

void Scheduler::note_admitted(const std::string& client) {
  last_admitted_[client] = ++admissions_;
  if (last_admitted_.size() <= kRememberedClients) return;
  // Forget the clients with nothing waiting or running (their turn comes first again).
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(last_admitted_, [&](const auto& entry) {
    const auto same = [&](const auto& item) { return item->client == entry.first; };
    return std::none_of(queue_.begin(), queue_.end(), same) &&
           std::none_of(slots_.begin(), slots_.end(),
                        [&](const auto& slot) { return slot->active() && same(slot); });
  });
}

bool Scheduler::preempt_for(const std::string& client) {
  const std::ptrdiff_t waiting_has = running_of(client);
  Slot* victim = nullptr;
  std::ptrdiff_t victim_has = 0;
  for (auto& slot : slots_) {
    // A single completion between passes, never shifted: its cells can be given up and
    // computed again (runtime/sequence.h, suspend()).
    if (!slot->active() || slot->sampling || slot->waiting() || !slot->followers.empty() ||
        slot->stream->choices() != 1 || !slot->state->suspendable()) {
      continue;
    }
    const std::ptrdiff_t has = running_of(slot->client);
    // Only from a client that would still run more than the waiting one: no back and forth.
    if (has < waiting_has + 2) continue;
    // The client running the most gives up its newest sequence (the least work to redo).
    if (victim == nullptr || has > victim_has || (has == victim_has && slot->admitted > victim->admitted)) {
      victim = slot.get();
      victim_has = has;
    }
  }
  if (victim == nullptr) return false;
  victim->state->suspend();
  auto pending = std::make_unique<Pending>();
  pending->choices.push_back(std::move(*victim->state));
  pending->stream = std::move(victim->stream);
  pending->submitted = victim->submitted;
  pending->client = victim->client;
  pending->preempted =
      Pending::Preempted{victim->admitted, victim->first_token, victim->last_token, victim->reused};
  // Its cells stay (victim->cached says what they hold) until the slot is taken: resumed there
  // before that, it computes nothing again.
  victim->state.reset();
  // First among its client's waiting requests (the queue's order breaks ties between them).
  queue_.push_front(std::move(pending));
  metrics_.queued = static_cast<int32_t>(queue_.size());
  --metrics_.active;
  ++metrics_.preemptions;
  return true;
}

// Moves queued requests into free slots, reusing the longest cached prompt prefix. A request
// with n choices, once it is the next to admit, waits until n slots are free.
bool Scheduler::admit() {
  SequenceMemory& cache = context_->memory();
  bool admitted = false;
  for (;;) {
    std::unique_ptr<Pending> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (queue_.empty()) return admitted;
      const auto free = static_cast<size_t>(
          std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return !s->active(); }));
      const auto next = queue_.begin() + static_cast<std::ptrdiff_t>(next_waiting());
      if (!(*next)->stream->cancelled() && free < (*next)->choices.size()) {
        if ((*next)->choices.size() != 1 || !preempt_for((*next)->client)) return admitted;
        admitted = true;
        continue;  // the queue changed: choose again
      }
      pending = std::move(*next);
      queue_.erase(next);
      metrics_.queued = static_cast<int32_t>(queue_.size());
    }
    admitted = true;
    const auto now = Clock::now();
    if (pending->stream->cancelled()) {  // gone before it started: report it and move on
      for (int32_t choice = 0; choice < static_cast<int32_t>(pending->choices.size()); ++choice) {
        RequestEvent done = make_event(RequestEvent::Kind::kDone, {}, choice);
        done.stats.stop_reason = StopReason::kCancelled;
        done.stats.prompt_tokens = pending->choices[static_cast<size_t>(choice)].prompt_token_count();
        done.stats.total_ns = nanoseconds(pending->submitted, now);
        pending->stream->push(std::move(done));
      }
      continue;
    }
    // What the cache must hold before the first sampling: the prompt, or for a preempted
    // request its prompt and what it generated.
    const std::vector<TokenId> prompt = pending->choices.front().fill_tokens();
    // A slot's reusable prefix: the common prefix, less the last prompt token (its logits choose
    // the first new token), cut to where the slot's cells let a sequence resume exactly (the
    // pools of sliding-window layers drop old cells). Slots compare by it, then by the common
    // prefix (which alone decides when no layer has a window).
    const int32_t limit = static_cast<int32_t>(prompt.size()) - 1;
    struct Reuse {
      int32_t usable = -1;
      int32_t common = -1;
      bool operator>(const Reuse& other) const {
        return usable != other.usable ? usable > other.usable : common > other.common;
      }
    };
    const auto reuse_of = [&](const Slot& slot) {
      const int32_t common = common_prefix(slot.cached, prompt);
      return Reuse{cache.resumable_prefix(slot.id, std::min(common, limit)), common};
    };
    Slot* target = nullptr;
    Reuse target_reuse;
    for (auto& slot : slots_) {
      if (slot->active()) continue;
      if (const Reuse reuse = reuse_of(*slot); reuse > target_reuse) {
        target = slot.get();
        target_reuse = reuse;
      }
    }
    Slot* donor = nullptr;
    Reuse donor_reuse = target_reuse;
    for (auto& slot : slots_) {
      if (!slot->active()) continue;
      if (const Reuse reuse = reuse_of(*slot); reuse > donor_reuse) {
        donor = slot.get();
        donor_reuse = reuse;
      }
    }
    int32_t reused = 0;
    if (donor != nullptr) {
      reused = donor_reuse.usable;
      cache.remove(target->id, 0, -1);
      cache.copy(donor->id, target->id, 0, reused);
    } else {
      reused = target_reuse.usable;
      cache.remove(target->id, reused, -1);
    }
    target->cached.assign(prompt.begin(), prompt.begin() + reused);
    const auto start = [&](Slot& slot, SequenceState state, int32_t choice) {
      state.rebind(slot.id);
      slot.state.emplace(std::move(state));
      slot.stream = pending->stream;
      slot.submitted = pending->submitted;
      slot.client = pending->client;
      slot.admitted = now;
      slot.choice = choice;
    };
    note_admitted(pending->client);
    SequenceState leader_state = std::move(pending->choices.front());
    leader_state.skip_prompt(reused);
    start(*target, std::move(leader_state), 0);
    target->reused = reused;
    if (pending->preempted) {  // it goes on: its timings and its prompt's reuse stay as they were
      target->admitted = pending->preempted->admitted;
      target->first_token = pending->preempted->first_token;
      target->last_token = pending->preempted->last_token;
      target->reused = pending->preempted->reused;
      std::lock_guard<std::mutex> lock(mutex_);
      ++metrics_.active;
      continue;
    }
    // The other choices wait in free slots (those with the least cached, to keep the most
    // reusable prefixes) until the leader's prompt is in the cache.
    for (size_t i = 1; i < pending->choices.size(); ++i) {
      Slot* follower = nullptr;
      for (auto& slot : slots_) {
        if (!slot->active() && (follower == nullptr || slot->cached.size() < follower->cached.size())) {
          follower = slot.get();
        }
      }
      cache.remove(follower->id, 0, -1);
      follower->cached.clear();
      start(*follower, std::move(pending->choices[i]), static_cast<int32_t>(i));
      follower->reused = 0;  // the whole prompt, once forked
      follower->leader = target;
      target->followers.push_back(follower);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (reused > 0) ++metrics_.prefix_cache_hits;
    metrics_.prompt_tokens_reused += reused;
    metrics_.active += static_cast<int32_t>(pending->choices.size());
  }
}

void Scheduler::finish(Slot& slot, std::optional<Error> error) {
  SequenceState& state = *slot.state;
  const auto now = Clock::now();
  // A choice still waiting for its leader's prompt leaves the leader's list; a leader that ends
  // before its prompt was shared ends its waiting choices the same way (error or cancelled).
  if (slot.waiting()) {
    auto& siblings = slot.leader->followers;
    siblings.erase(std::remove(siblings.begin(), siblings.end(), &slot), siblings.end());
    slot.leader = nullptr;
  }
  while (!slot.followers.empty()) {
    Slot* follower = slot.followers.back();
    slot.followers.pop_back();
    follower->leader = nullptr;
    finish(*follower, error);
  }
  if (!error && !state.finished()) state.cancel();
  const std::string tail = error ? std::string() : state.finish_text();
  RequestEvent tail_event = make_event(RequestEvent::Kind::kText, tail, slot.choice);
  if (!error) state.take_logprobs(tail_event.logprobs);
  // The request ends with its last running choice.
  const bool last_choice = std::none_of(slots_.begin(), slots_.end(), [&](const auto& other) {
    return other.get() != &slot && other->active() && other->stream == slot.stream;
  });
  // Counted before the client hears of the end, so that what it reads next is up to date.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (last_choice) ++metrics_.requests_finished;
    metrics_.prompt_tokens += state.prompt_token_count();
    metrics_.generated_tokens += static_cast<int64_t>(state.generated().size());
    --metrics_.active;
  }
  if (!tail_event.text.empty() || !tail_event.logprobs.empty()) slot.stream->push(std::move(tail_event));
  if (error) {
    slot.stream->push(make_event(RequestEvent::Kind::kError, error->message(), slot.choice, error->code()));
  } else {
    RequestEvent done = make_event(RequestEvent::Kind::kDone, {}, slot.choice);
    RequestStats& stats = done.stats;
    stats.prompt_tokens = state.prompt_token_count();
    stats.prompt_tokens_reused = slot.reused;
    stats.generated_tokens = static_cast<int32_t>(state.generated().size());
    stats.queue_ns = nanoseconds(slot.submitted, slot.admitted);
    const auto first = stats.generated_tokens > 0 ? slot.first_token : now;
    stats.prompt_ns = nanoseconds(slot.admitted, first);
    stats.generation_ns = stats.generated_tokens > 0 ? nanoseconds(slot.first_token, slot.last_token) : 0;
    stats.total_ns = nanoseconds(slot.submitted, now);
    stats.stop_reason = state.stop_reason();
    stats.context_shifts = state.context_shifts();
    stats.seed = state.seed();
    done.tokens = state.generated();
    slot.stream->push(std::move(done));
  }
  // A shifted sequence's cells no longer follow its token list: do not offer them for reuse.
  if (error || state.context_shifts() > 0) {
    context_->memory().remove(slot.id, 0, -1);
    slot.cached.clear();
  }
  slot.state.reset();
  slot.stream.reset();
}

void Scheduler::deliver(Slot& slot, std::span<const float> logits, StepLog& log) {
  SequenceState& state = *slot.state;
  if (!state.grammar_constrains() || slot.stream->choices() != 1) {
    after_sampling(slot, state.accept_logits(logits), log);
    return;
  }
  // A grammar's step may take longer than a pass (its budget allows up to a second): it runs on
  // its own thread, and the other sequences' passes go on without this one until it is done.
  slot.sample_logits.assign(logits.begin(), logits.end());
  const auto sample = [this, &slot] {
    std::optional<Result<std::string>> text;
    try {
      text.emplace(slot.state->accept_logits(slot.sample_logits));
    } catch (const std::exception& e) {
      text.emplace(make_error(ErrorCode::kInternal, "sampling failed: ", e.what()));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    slot.sample_result = std::move(text);
    wake_.notify_all();
  };
  try {
    slot.sampler = std::async(std::launch::async, sample);
  } catch (const std::system_error&) {  // no thread to be had: sample here, as without a grammar
    after_sampling(slot, state.accept_logits(logits), log);
    return;
  }
  slot.sampling = true;
}

bool Scheduler::collect_samples(StepLog& log) {
  bool collected = false;
  for (auto& slot : slots_) {
    if (!slot->sampling) continue;
    std::optional<Result<std::string>> text;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!slot->sample_result) continue;
      text = std::move(slot->sample_result);
      slot->sample_result.reset();
    }
    slot->sampler.get();
    slot->sampling = false;
    after_sampling(*slot, std::move(*text), log);
    collected = true;
  }
  return collected;
}

void Scheduler::after_sampling(Slot& slot, Result<std::string> text, StepLog& log) {
  SequenceState& state = *slot.state;
  if (!text) {
    finish(slot, text.error());
    return;
  }
  const auto now = Clock::now();
  const size_t generated = state.generated().size();
  if (generated == 1) {
    // The prompt is in: a point a later request sharing it can resume at (a recurrent state
    // keeps a checkpoint; cached cells are kept anyway).
    context_->memory().checkpoint(slot.id);
    slot.first_token = now;
    log.ttft.push_back(std::chrono::duration<double>(now - slot.submitted).count());
  } else if (generated > 1) {
    log.inter_token.push_back(std::chrono::duration<double>(now - slot.last_token).count());
  }
  slot.last_token = now;
  RequestEvent event = make_event(RequestEvent::Kind::kText, std::move(*text), slot.choice);
  state.take_logprobs(event.logprobs);
  if (!event.text.empty() || !event.logprobs.empty()) {
    if (!state.generated().empty()) event.tokens = {state.generated().back()};
    slot.stream->push(std::move(event));
  }
  if (state.finished() && (log.completed.empty() || log.completed.back() != &slot))
    log.completed.push_back(&slot);
}

void Scheduler::fork_followers(Slot& leader, std::span<const float> logits, StepLog& log) {
  SequenceMemory& cache = context_->memory();
  const auto prompt_length = static_cast<Position>(leader.cached.size());
  std::vector<Slot*> followers;
  followers.swap(leader.followers);
  for (Slot* follower : followers) {
    follower->leader = nullptr;
    cache.remove(follower->id, 0, -1);
    cache.copy(leader.id, follower->id, 0, prompt_length);
    follower->cached = leader.cached;
    follower->reused = follower->state->prompt_token_count();
    follower->state->adopt_computed_prompt();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      metrics_.prompt_tokens_reused += follower->reused;
      ++metrics_.forked_sequences;
    }
    deliver(*follower, logits, log);
  }
}

void Scheduler::publish(StepLog& log, bool passed) {
  SequenceMemory& cache = context_->memory();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (passed) {
      ++metrics_.forward_passes;
      metrics_.cache_cells_used = cache.kv() != nullptr ? cache.kv()->used_cells() : 0;
      metrics_.state_bytes = cache.recurrent() != nullptr ? cache.recurrent()->bytes() : 0;
    }
    metrics_.time_to_first_token_seconds.insert(metrics_.time_to_first_token_seconds.end(), log.ttft.begin(),
                                                log.ttft.end());
    metrics_.inter_token_seconds.insert(metrics_.inter_token_seconds.end(), log.inter_token.begin(),
                                        log.inter_token.end());
  }
  // Only now do their clients hear of the end: what they read from the metrics next includes
  // the latencies of their last tokens (finish counts the rest before telling them).
  for (Slot* slot : log.completed) {
    if (slot->active()) finish(*slot, std::nullopt);
  }
}

// One forward pass over every active sequence that is not sampling. Returns false when there
// was nothing to do.
bool Scheduler::step() {
  SequenceMemory& cache = context_->memory();
  StepLog log;
  const bool sampled = collect_samples(log);
  for (auto& slot : slots_) {
    if (slot->active() && !slot->sampling && slot->stream->cancelled()) finish(*slot, std::nullopt);
  }
  std::vector<BatchEntry> batch;
  std::vector<std::pair<Slot*, size_t>> scheduled;  // slot, entries it added
  const auto add = [&](Slot& slot, int32_t max_tokens) {
    SequenceState& state = *slot.state;
    const int32_t shifts = state.context_shifts();
    state.make_room(cache);
    if (state.context_shifts() != shifts) slot.cached.clear();
    if (state.finished()) {
      finish(slot, std::nullopt);
      return 0;
    }
    const size_t before = batch.size();
    const int32_t n = state.schedule(max_tokens, batch);
    if (n > 0) scheduled.emplace_back(&slot, before);
    return n;
  };
  // Generation steps first (one token each), then prompt chunks in the room that is left.
  // Choices waiting for their leader's prompt and sequences still sampling are not scheduled;
  // a finished one (its end reported by publish) neither.
  const auto runnable = [](const Slot& slot) {
    return slot.active() && !slot.waiting() && !slot.sampling && !slot.state->finished();
  };
  for (auto& slot : slots_) {
    if (runnable(*slot) && !slot->state->prefilling()) add(*slot, 1);
  }
  int32_t budget = options_.n_batch - static_cast<int32_t>(batch.size());
  for (auto& slot : slots_) {
    if (budget <= 0) break;
    if (runnable(*slot) && slot->state->prefilling())
      budget -= add(*slot, std::min(budget, options_.prefill_chunk));
  }
  if (batch.empty()) {
    publish(log, false);
    return sampled;
  }

  if (auto status = context_->decode(batch); !status) {
    log_warn("scheduler", "forward pass failed: ", status.error().message());
    for (auto& [slot, first] : scheduled) {
      if (slot->active()) finish(*slot, status.error());
      context_->memory().remove(slot->id, 0, -1);
      slot->cached.clear();
    }
    publish(log, false);
    return true;
  }
  // Entries with logits come out in batch order.
  int32_t output = 0;
  for (size_t e = 0, s = 0; e < batch.size(); ++e) {
    while (s + 1 < scheduled.size() && scheduled[s + 1].second <= e) ++s;
    Slot& slot = *scheduled[s].first;
    if (batch[e].position == static_cast<Position>(slot.cached.size())) {
      slot.cached.push_back(batch[e].token);
    }
    if (!batch[e].want_logits) continue;
    const auto logits = context_->logits(output++);
    if (!slot.active()) continue;
    // The leader's prompt is complete: its waiting choices start from the same logits.
    if (!slot.followers.empty()) fork_followers(slot, logits, log);
    deliver(slot, logits, log);
  }
  publish(log, true);
  return true;
}

}  // namespace sinter
