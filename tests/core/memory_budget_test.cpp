#include "core/memory_budget.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace sinter {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(MemoryBudget, AnAccountStopsAtItsLimitWithTooLarge) {
  MemoryAccount account(nullptr, 10 * kMiB);
  ASSERT_TRUE(account.charge(6 * kMiB));
  ASSERT_TRUE(account.charge(4 * kMiB));
  const Status over = account.charge(1);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code(), ErrorCode::kTooLarge);
  EXPECT_NE(over.error().message().find("the request needs more than"), std::string::npos)
      << over.error().message();
  EXPECT_EQ(account.charged(), 10 * kMiB);  // the refused charge left nothing behind
  account.credit(4 * kMiB);
  EXPECT_TRUE(account.charge(3 * kMiB));
  EXPECT_EQ(account.peak(), 10 * kMiB);
}

TEST(MemoryBudget, AccountsShareTheirPoolAndGiveBackAtTheEnd) {
  MemoryPool pool(8 * kMiB);
  {
    MemoryAccount first(&pool, 6 * kMiB);
    ASSERT_TRUE(first.charge(5 * kMiB + 1));  // whole grains: 6 MiB taken
    EXPECT_EQ(pool.used(), 6 * kMiB);
    MemoryAccount second(&pool, 6 * kMiB);
    ASSERT_TRUE(second.charge(2 * kMiB));
    const Status full = second.charge(1);  // a third grain does not fit: busy, not too large
    ASSERT_FALSE(full);
    EXPECT_EQ(full.error().code(), ErrorCode::kBusy);
    EXPECT_EQ(second.charged(), 2 * kMiB);
    EXPECT_EQ(pool.refusals(), 1u);
  }
  EXPECT_EQ(pool.used(), 0u);
  EXPECT_EQ(pool.peak(), 8 * kMiB);
  // An account as large as the pool is refused as too large, never as busy, when alone.
  MemoryAccount whole(&pool, pool.capacity() - 1000);
  ASSERT_TRUE(whole.charge(pool.capacity() - 1000));
  EXPECT_EQ(whole.charge(1).error().code(), ErrorCode::kTooLarge);
}

TEST(MemoryBudget, TheCurrentAccountIsPerThreadAndScoped) {
  MemoryAccount account(nullptr, kMiB);
  EXPECT_EQ(MemoryAccount::current(), nullptr);
  EXPECT_TRUE(charge_current_account(100 * kMiB));  // no account: nothing to enforce
  {
    const MemoryAccount::Scope scope(&account);
    EXPECT_EQ(MemoryAccount::current(), &account);
    EXPECT_TRUE(charge_current_account(1000));
    std::thread other([] { EXPECT_EQ(MemoryAccount::current(), nullptr); });
    other.join();
    EXPECT_FALSE(charge_current_account(kMiB));
  }
  EXPECT_EQ(MemoryAccount::current(), nullptr);
  EXPECT_EQ(account.charged(), 1000u);
}

// A part of the pool is kept for small accounts: large ones cannot take it, so a plain request
// gets in while large ones fill the rest.
TEST(MemoryBudget, TheReserveKeepsRoomForSmallRequests) {
  MemoryPool pool(64 * kMiB, 8 * kMiB);
  EXPECT_EQ(pool.general_capacity(), 56 * kMiB);
  MemoryAccount large(&pool, 64 * kMiB);
  ASSERT_TRUE(large.charge(56 * kMiB));
  EXPECT_EQ(large.charge(1).error().code(), ErrorCode::kBusy);
  MemoryAccount small(&pool, 64 * kMiB);
  ASSERT_TRUE(small.charge(3 * kMiB));  // within kSmallAccount: from the reserve
  ASSERT_TRUE(small.charge(kMiB));
  EXPECT_EQ(small.charge(kMiB).error().code(), ErrorCode::kBusy);  // no longer small
  EXPECT_EQ(pool.used(), 60 * kMiB);
}

// Many threads charging one pool never take more than it has.
TEST(MemoryBudget, ConcurrentChargesStayWithinThePool) {
  MemoryPool pool(16 * kMiB);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool] {
      for (int round = 0; round < 200; ++round) {
        MemoryAccount account(&pool, 64 * kMiB);
        for (int i = 0; i < 8; ++i) {
          if (!account.charge(kMiB / 2)) break;
        }
        EXPECT_LE(pool.used(), pool.capacity());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(pool.used(), 0u);
  EXPECT_LE(pool.peak(), pool.capacity());
}

}  // namespace
}  // namespace sinter
