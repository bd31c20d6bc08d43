// Memory that requests use beyond what was planned at load time (their bodies, parsed JSON,
// rendered templates, collected outputs): one MemoryPool per server, one MemoryAccount per
// request drawn from it.
//
// An account takes bytes from its pool in grains (1 MiB), so the shared counter is touched
// rarely. A part of the pool is kept for small requests (an account that holds at most
// kSmallAccount bytes): a flood of large ones cannot keep a plain request out. A charge that would pass the
// request's own limit is kTooLarge (the request can never fit: 413), one that the pool cannot cover now is
// kBusy (the server is full: 503 with Retry-After); in both cases the caller allocates nothing. Everything an
// account took goes back to its pool when the account ends, so a request's memory is released with it.
//
// Code that has no account at hand (a template render, a JSON parse deep in a layer) charges
// the account of the request running on its thread: MemoryAccount::Scope makes an account the
// current one, charge_current_account() charges it (and nothing when there is none).
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include "sinter/result.h"

namespace sinter {

class MemoryPool {
 public:
  // `reserve` (at most `capacity`) is what only small accounts may take.
  explicit MemoryPool(size_t capacity, size_t reserve = 0)
      : capacity_(capacity), reserve_(reserve < capacity ? reserve : capacity) {}
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // Takes `bytes` if the pool has them (counting the reserve only when `small`); false (and
  // nothing taken) otherwise.
  bool try_take(size_t bytes, bool small = false);
  void give_back(size_t bytes);

  size_t capacity() const { return capacity_; }
  // What a large account may ever take: the capacity less the reserve.
  size_t general_capacity() const { return capacity_ - reserve_; }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  // The most that was ever taken at once.
  size_t peak() const { return peak_.load(std::memory_order_relaxed); }
  // Charges refused because the pool was full (kBusy), since the start.
  size_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  size_t capacity_;
  size_t reserve_;
  std::atomic<size_t> used_{0};
  std::atomic<size_t> peak_{0};
  std::atomic<size_t> refusals_{0};
};

class MemoryAccount {
 public:
  static constexpr size_t kGrain = size_t{1} << 20;
  // An account holding at most this much may use its pool's reserve.
  static constexpr size_t kSmallAccount = size_t{4} << 20;

  // `pool` may be null: the account then only enforces `limit`. `what` names the owner in errors
  // ("the request").
  MemoryAccount(MemoryPool* pool, size_t limit, std::string what = "the request");
  ~MemoryAccount();
  MemoryAccount(const MemoryAccount&) = delete;
  MemoryAccount& operator=(const MemoryAccount&) = delete;

  // Thread-safe. kTooLarge past the limit, kBusy when the pool is full; nothing charged then.
  Status charge(size_t bytes);
  // Returns bytes charged earlier (a value that was freed); the grains stay taken.
  void credit(size_t bytes);

  size_t charged() const;
  // The most charged at once.
  size_t peak() const;
  size_t limit() const { return limit_; }

  // The account of the request running on this thread, or null.
  static MemoryAccount* current();

  // Makes `account` the current one on this thread for the scope's life (null: none).
  class Scope {
   public:
    explicit Scope(MemoryAccount* account);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    MemoryAccount* previous_;
  };

 private:
  MemoryPool* pool_;
  size_t limit_;
  std::string what_;
  mutable std::mutex mutex_;
  size_t charged_ = 0;
  size_t peak_ = 0;
  size_t taken_ = 0;  // from the pool, in grains
};

// Charges the current account, if any (see MemoryAccount::charge).
Status charge_current_account(size_t bytes);

}  // namespace sinter
