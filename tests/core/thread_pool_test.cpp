#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace sinter {
namespace {

TEST(ThreadPool, EveryThreadRunsOncePerRegion) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int region = 0; region < 50; ++region) {
      std::vector<std::atomic<int>> hits(threads);
      pool.run([&](const ThreadContext& ctx) {
        EXPECT_EQ(ctx.count, threads);
        hits[ctx.index].fetch_add(1);
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
  }
}

TEST(ThreadPool, BarrierOrdersPhases) {
  ThreadPool pool(3);
  std::vector<int> values(300, 0);
  pool.run([&](const ThreadContext& ctx) {
    for (int phase = 1; phase <= 20; ++phase) {
      for (int64_t i = ctx.share_begin(300); i < ctx.share_end(300); ++i) values[i] += 1;
      ctx.barrier();
      // After the barrier every element of every share has reached this phase.
      for (int v : values) ASSERT_EQ(v, phase);
      ctx.barrier();
    }
  });
}

TEST(ThreadPool, SharesCoverRangeExactly) {
  for (int count = 1; count <= 7; ++count) {
    for (int64_t total : {0, 1, 5, 100}) {
      int64_t covered = 0;
      int64_t previous_end = 0;
      for (int index = 0; index < count; ++index) {
        ThreadContext ctx{index, count, nullptr};
        EXPECT_EQ(ctx.share_begin(total), previous_end);
        covered += ctx.share_end(total) - ctx.share_begin(total);
        previous_end = ctx.share_end(total);
      }
      EXPECT_EQ(covered, total);
    }
  }
}

}  // namespace
}  // namespace sinter
