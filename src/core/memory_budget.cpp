#include "core/memory_budget.h"

#include <algorithm>

#include "core/memory_info.h"

namespace sinter {
namespace {

thread_local MemoryAccount* current_account = nullptr;

}  // namespace

bool MemoryPool::try_take(size_t bytes, bool small) {
  const size_t limit = small ? capacity_ : capacity_ - reserve_;
  size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit || used > limit - bytes) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  size_t peak = peak_.load(std::memory_order_relaxed);
  while (used + bytes > peak && !peak_.compare_exchange_weak(peak, used + bytes, std::memory_order_relaxed)) {
  }
  return true;
}

void MemoryPool::give_back(size_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

MemoryAccount::MemoryAccount(MemoryPool* pool, size_t limit, std::string what)
    : pool_(pool), limit_(limit), what_(std::move(what)) {}

MemoryAccount::~MemoryAccount() {
  if (pool_ != nullptr && taken_ > 0) pool_->give_back(taken_);
}

Status MemoryAccount::charge(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes > limit_ || charged_ > limit_ - bytes) {
    return make_error(ErrorCode::kTooLarge, what_, " needs more than ", format_bytes(limit_),
                      " of memory to process (the server's limit per request)");
  }
  const size_t wanted = charged_ + bytes;
  if (pool_ != nullptr && wanted > taken_) {
    // Whole grains, but never past the limit: an account whose limit is the pool's capacity
    // alone never finds the pool full.
    const size_t rounded = std::min((wanted + kGrain - 1) / kGrain * kGrain, limit_);
    if (!pool_->try_take(rounded - taken_, rounded <= kSmallAccount)) {
      return make_error(ErrorCode::kBusy, "the server has no memory left for requests now (",
                        format_bytes(pool_->capacity()), " in use by the requests being served); try again");
    }
    taken_ = rounded;
  }
  charged_ = wanted;
  if (charged_ > peak_) peak_ = charged_;
  return ok_status();
}

void MemoryAccount::credit(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  charged_ -= bytes < charged_ ? bytes : charged_;
}

size_t MemoryAccount::charged() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return charged_;
}

size_t MemoryAccount::peak() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_;
}

MemoryAccount* MemoryAccount::current() { return current_account; }

MemoryAccount::Scope::Scope(MemoryAccount* account) : previous_(current_account) {
  current_account = account;
}

MemoryAccount::Scope::~Scope() { current_account = previous_; }

Status charge_current_account(size_t bytes) {
  MemoryAccount* account = MemoryAccount::current();
  return account == nullptr ? ok_status() : account->charge(bytes);
}

}  // namespace sinter
