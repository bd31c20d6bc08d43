#include "core/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SINTER_CPU_RELAX() _mm_pause()
#else
#define SINTER_CPU_RELAX() std::this_thread::yield()
#endif

namespace sinter {
namespace {
// An idle worker spins this many times (about a millisecond) before it sleeps: long enough to
// cover the gap between two forward passes, short enough not to burn a core while idle.
constexpr int kIdleSpins = 1 << 16;
// A thread at a barrier spins this many times (tens of microseconds: longer than the usual
// imbalance between threads) before it sleeps.
constexpr int kBarrierSpins = 1 << 12;
}  // namespace

void SpinBarrier::arrive_and_wait() {
  const uint32_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == count_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    // seq_cst with the sleepers_ check: a thread about to sleep either sees the new
    // generation or is counted and woken.
    generation_.fetch_add(1);
    if (sleepers_.load() > 0) generation_.notify_all();
    return;
  }
  for (int spins = 0; spins < kBarrierSpins; ++spins) {
    if (generation_.load(std::memory_order_acquire) != generation) return;
    SINTER_CPU_RELAX();
  }
  sleepers_.fetch_add(1);
  while (generation_.load() == generation) generation_.wait(generation);
  sleepers_.fetch_sub(1);
}

ThreadPool::ThreadPool(int thread_count)
    : thread_count_(std::clamp(thread_count, 1, kMaxThreads)), barrier_(thread_count_) {
  for (int i = 1; i < thread_count_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stopping_.store(true);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_erased(void* callable, Trampoline trampoline) {
  if (thread_count_ == 1) {
    trampoline(callable, ThreadContext{0, 1, &barrier_});
    return;
  }
  callable_ = callable;
  trampoline_ = trampoline;
  finished_.store(0, std::memory_order_relaxed);
  // seq_cst on both sides: a worker that is about to sleep either sees the new generation or
  // is counted in sleeping_ here and woken.
  generation_.fetch_add(1);
  if (sleeping_.load() > 0) generation_.notify_all();
  trampoline(callable, ThreadContext{0, thread_count_, &barrier_});
  for (int spins = 0; finished_.load(std::memory_order_acquire) != thread_count_ - 1; ++spins) {
    if (spins < kBarrierSpins) {
      SINTER_CPU_RELAX();
    } else {
      std::this_thread::yield();  // a worker was preempted: let it run
    }
  }
}

void ThreadPool::worker_loop(int index) {
  uint32_t seen = 0;
  for (;;) {
    int spins = 0;
    uint32_t current;
    while ((current = generation_.load(std::memory_order_acquire)) == seen) {
      if (++spins < kIdleSpins) {
        SINTER_CPU_RELAX();
        continue;
      }
      sleeping_.fetch_add(1);
      generation_.wait(seen);
      sleeping_.fetch_sub(1);
      spins = 0;
    }
    seen = current;
    if (stopping_.load(std::memory_order_acquire)) return;
    trampoline_(callable_, ThreadContext{index, thread_count_, &barrier_});
    finished_.fetch_add(1, std::memory_order_release);
  }
}

int max_thread_count() {
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::min<unsigned>(4 * hardware, kMaxThreads));
}

int default_thread_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min(n, 64u));
}

}  // namespace sinter
