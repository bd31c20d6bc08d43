// A persistent thread pool for compute: workers live as long as the pool, a parallel region
// costs no thread creation, and threads inside a region meet at a barrier that spins briefly
// (no system call when the threads arrive close together, the common case between two ops) and
// then sleeps on a futex, so that a preempted thread on a loaded machine costs a wake-up rather
// than a spinning core.
//
//   pool.run([&](const ThreadContext& ctx) {
//     for (op : ops) { do_share(op, ctx.index, ctx.count); ctx.barrier(); }
//   });
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace sinter {

class SpinBarrier {
 public:
  explicit SpinBarrier(int count) : count_(count) {}
  void arrive_and_wait();

 private:
  const int count_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<uint32_t> generation_{0};
  std::atomic<int> sleepers_{0};
};

struct ThreadContext {
  int index = 0;  // 0 is the calling thread
  int count = 1;
  SpinBarrier* shared_barrier = nullptr;
  void barrier() const {
    if (count > 1) shared_barrier->arrive_and_wait();
  }
  // The half-open share [begin, end) of `total` items that this thread owns.
  int64_t share_begin(int64_t total) const { return total * index / count; }
  int64_t share_end(int64_t total) const { return total * (index + 1) / count; }
};

class ThreadPool {
 public:
  // Including the calling thread; clamped to 1..kMaxThreads (callers check their count against
  // max_thread_count() first, so the clamp is only a guard).
  explicit ThreadPool(int thread_count);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return thread_count_; }

  // Runs fn(ctx) on every thread of the pool, the caller included, and returns when all are
  // done. Not reentrant: one region at a time per pool.
  template <class Fn>
  void run(Fn&& fn) {
    using Callable = std::remove_reference_t<Fn>;
    run_erased(const_cast<void*>(static_cast<const void*>(&fn)),
               [](void* callable, const ThreadContext& ctx) { (*static_cast<Callable*>(callable))(ctx); });
  }

 private:
  using Trampoline = void (*)(void*, const ThreadContext&);
  void run_erased(void* callable, Trampoline trampoline);
  void worker_loop(int index);

  const int thread_count_;
  SpinBarrier barrier_;
  std::vector<std::thread> workers_;
  void* callable_ = nullptr;
  Trampoline trampoline_ = nullptr;
  alignas(64) std::atomic<uint32_t> generation_{0};  // bumped to start a region
  alignas(64) std::atomic<int> finished_{0};
  std::atomic<int> sleeping_{0};
  std::atomic<bool> stopping_{false};
};

// Threads a compute pool may have: at most 4 per hardware thread (more only adds contention at
// the barriers; a few extra help when other processes share the cores), never more than
// kMaxThreads. A larger request is a mistake (`-t 100000`) and is refused where it is made.
constexpr int kMaxThreads = 1024;
int max_thread_count();
int default_thread_count();  // the hardware threads, at most 64

}  // namespace sinter
