// sy::parallel_for (sdk/include/switchyard/parallel.hpp): every task once, slots private to
// one thread at a time, exceptions, concurrent and nested callers, the serial paths.
// Run under TSan too (the tsan preset), where the hand-overs inside the pool are checked.
#include <switchyard/parallel.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

// A pool of 3 workers whatever the machine (the value is read once, on first use).
constexpr int kThreads = 4;
const bool kThreadsSet = [] { return setenv("SWITCHYARD_INTRA_OP_THREADS", "4", 1) == 0; }();

// Marks a slot busy for the duration of a task and counts any overlap on it.
class SlotGuard {
 public:
  SlotGuard(std::vector<std::atomic<int>>& busy, std::atomic<int>& collisions, int slot)
      : busy_(busy[static_cast<size_t>(slot)]) {
    if (busy_.exchange(1) != 0) ++collisions;
  }
  ~SlotGuard() { busy_.store(0); }

 private:
  std::atomic<int>& busy_;
};

TEST(Parallel, ReadsTheThreadCountFromTheEnvironment) {
  ASSERT_TRUE(kThreadsSet);
  EXPECT_EQ(sy::intra_op_threads(), kThreads);
}

TEST(Parallel, EveryTaskRunsExactlyOnce) {
  for (int64_t tasks : {1, 2, 3, 4, 5, 7, 64, 1000, 100000}) {
    for (int max_threads : {2, 3, kThreads, 64}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
      sy::parallel_for(tasks, max_threads, [&](int64_t t, int) { ++runs[static_cast<size_t>(t)]; });
      int64_t wrong = 0;
      for (const auto& r : runs) wrong += r.load() != 1;
      EXPECT_EQ(wrong, 0) << tasks << " tasks on " << max_threads << " threads";
    }
  }
}

TEST(Parallel, SlotsAreInRangeAndNeverSharedAtOnce) {
  for (int max_threads : {2, 3, kThreads}) {
    std::vector<std::atomic<int>> busy(kThreads);
    std::atomic<int> collisions{0}, out_of_range{0};
    std::atomic<int64_t> sum{0};
    sy::parallel_for(20000, max_threads, [&](int64_t t, int slot) {
      if (slot < 0 || slot >= max_threads) {
        ++out_of_range;
        return;
      }
      SlotGuard guard(busy, collisions, slot);
      int64_t local = 0;  // some work while the slot is held
      for (int64_t i = 0; i < 200; ++i) local += (t * i) % 7;
      sum += local;
    });
    EXPECT_EQ(out_of_range.load(), 0) << max_threads;
    EXPECT_EQ(collisions.load(), 0) << max_threads;
    EXPECT_GT(sum.load(), 0);
  }
}

// kThreads tasks that each wait until all kThreads have started: passes only if the call
// really runs them on kThreads threads at once, and then their slots must all differ.
TEST(Parallel, RunsOnMaxThreadsAtOnceWithDistinctSlots) {
  std::mutex m;
  std::condition_variable all_in;
  int arrived = 0;
  bool timed_out = false;
  std::set<int> slots;
  std::set<std::thread::id> ids;
  sy::parallel_for(kThreads, kThreads, [&](int64_t, int slot) {
    std::unique_lock<std::mutex> lock(m);
    slots.insert(slot);
    ids.insert(std::this_thread::get_id());
    if (++arrived == kThreads) all_in.notify_all();
    // A bound only so that a broken pool fails instead of hanging the test.
    if (!all_in.wait_for(lock, std::chrono::minutes(2), [&] { return arrived == kThreads || timed_out; }))
      timed_out = true;  // and the tasks after it do not wait again
  });
  EXPECT_FALSE(timed_out) << "only " << arrived << " of " << kThreads << " tasks ran at once";
  EXPECT_EQ(slots, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads));
}

// Workers wait until the caller has run a task of its own (it must: it drains its job
// too); slot 0 is the caller's alone.
TEST(Parallel, TheCallerRunsTasksToo) {
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex m;
  std::condition_variable caller_ran;
  int by_caller = 0, slot0_elsewhere = 0;
  bool timed_out = false;
  sy::parallel_for(10000, kThreads, [&](int64_t, int slot) {
    std::unique_lock<std::mutex> lock(m);
    if (std::this_thread::get_id() == caller) {
      ++by_caller;
      slot0_elsewhere += slot != 0;
      caller_ran.notify_all();
    } else {
      slot0_elsewhere += slot == 0;
      if (!caller_ran.wait_for(lock, std::chrono::minutes(2), [&] { return by_caller > 0 || timed_out; }))
        timed_out = true;
    }
  });
  EXPECT_FALSE(timed_out);
  EXPECT_GT(by_caller, 0);
  EXPECT_EQ(slot0_elsewhere, 0) << "slot 0 is the caller's";
}

TEST(Parallel, AnExceptionReachesTheCallerAndTheOtherTasksStillRun) {
  for (int max_threads : {1, 2, kThreads}) {
    std::vector<std::atomic<int>> runs(1000);
    try {
      sy::parallel_for(1000, max_threads, [&](int64_t t, int) {
        ++runs[static_cast<size_t>(t)];
        if (t == 137) throw std::out_of_range("task 137");
      });
      ADD_FAILURE() << "no exception on " << max_threads << " threads";
    } catch (const std::out_of_range& e) {
      EXPECT_EQ(std::string(e.what()), "task 137");
    }
    int wrong = 0;
    for (const auto& r : runs) wrong += r.load() != 1;
    EXPECT_EQ(wrong, 0) << max_threads << " threads";
  }
}

TEST(Parallel, OfSeveralExceptionsOneIsRethrown) {
  for (int max_threads : {1, kThreads}) {
    std::atomic<int> ran{0};
    try {
      sy::parallel_for(500, max_threads, [&](int64_t t, int) {
        ++ran;
        if (t % 50 == 3) throw std::runtime_error("task " + std::to_string(t));
      });
      ADD_FAILURE() << "no exception on " << max_threads << " threads";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      const int t = std::stoi(what.substr(5));
      EXPECT_EQ(t % 50, 3) << what;
      if (max_threads == 1) EXPECT_EQ(t, 3) << "in order on one thread: the first is task 3";
    }
    EXPECT_EQ(ran.load(), 500);
  }
}

// 8 host threads call parallel_for at once, over and over, each checking its results and
// that its slots are not shared inside its own call.
TEST(Parallel, ConcurrentCallersAllCompleteWithCorrectResults) {
  constexpr int kCallers = 8, kRounds = 20;
  constexpr int64_t kTasks = 3000;
  std::atomic<int> bad_results{0}, collisions{0}, rounds_done{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < kRounds; ++round) {
        std::vector<int64_t> out(kTasks, -1);
        std::vector<std::atomic<int>> busy(kThreads);
        sy::parallel_for(kTasks, 1 + (c + round) % kThreads, [&](int64_t t, int slot) {
          SlotGuard guard(busy, collisions, slot);
          out[static_cast<size_t>(t)] = t * t + c * 1000003 + round;
        });
        for (int64_t t = 0; t < kTasks; ++t)
          if (out[static_cast<size_t>(t)] != t * t + c * 1000003 + round) ++bad_results;
        ++rounds_done;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(rounds_done.load(), kCallers * kRounds);
  EXPECT_EQ(bad_results.load(), 0);
  EXPECT_EQ(collisions.load(), 0);
}

TEST(Parallel, NestedCallsComplete) {
  constexpr int64_t kOuter = 16, kInner = 500;
  std::vector<std::atomic<int>> runs(kOuter * kInner);
  sy::parallel_for(kOuter, kThreads, [&](int64_t o, int) {
    sy::parallel_for(kInner, kThreads, [&](int64_t i, int) { ++runs[static_cast<size_t>(o * kInner + i)]; });
  });
  int wrong = 0;
  for (const auto& r : runs) wrong += r.load() != 1;
  EXPECT_EQ(wrong, 0);
}

TEST(Parallel, NoTasksRunsNothing) {
  int calls = 0;
  for (int64_t tasks : {0, -1, -1000}) {
    sy::parallel_for(tasks, kThreads, [&](int64_t, int) { ++calls; });
    sy::parallel_for(tasks, 1, [&](int64_t, int) { ++calls; });
  }
  EXPECT_EQ(calls, 0);
}

TEST(Parallel, OneThreadOrFewerRunsInOrderOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  for (int max_threads : {1, 0, -4}) {
    std::vector<int64_t> order;
    bool elsewhere = false, nonzero_slot = false;
    sy::parallel_for(50, max_threads, [&](int64_t t, int slot) {
      order.push_back(t);  // unsynchronised on purpose: TSan reports it if another thread runs it
      elsewhere |= std::this_thread::get_id() != caller;
      nonzero_slot |= slot != 0;
    });
    ASSERT_EQ(order.size(), 50u) << max_threads;
    for (int64_t t = 0; t < 50; ++t) EXPECT_EQ(order[static_cast<size_t>(t)], t) << max_threads;
    EXPECT_FALSE(elsewhere) << max_threads;
    EXPECT_FALSE(nonzero_slot) << max_threads;
  }
}

TEST(Parallel, OneTaskRunsOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  int slot_seen = -1;
  sy::parallel_for(1, kThreads, [&](int64_t, int slot) { ran_on = std::this_thread::get_id(), slot_seen = slot; });
  EXPECT_EQ(ran_on, caller);
  EXPECT_EQ(slot_seen, 0);
}

TEST(Parallel, AConstBodyAndAnRvalueBodyWork) {
  std::vector<std::atomic<int>> runs(100);
  const auto body = [&](int64_t t, int) { ++runs[static_cast<size_t>(t)]; };
  sy::parallel_for(100, kThreads, body);
  sy::parallel_for(100, kThreads, [&](int64_t t, int) { ++runs[static_cast<size_t>(t)]; });
  int wrong = 0;
  for (const auto& r : runs) wrong += r.load() != 2;
  EXPECT_EQ(wrong, 0);
}

}  // namespace
