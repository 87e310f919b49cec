// sy::parallel_for (sdk/include/switchyard/parallel.hpp) over the host's intra-op pool
// (SY_HostApi.parallel_for, SDK 1.1): every task once, slots private within a call,
// exceptions, concurrent and nested callers, the serial paths, a 1.0 host with no pool,
// and the host's chunking. Run under TSan too (the tsan preset).
#include "loader/host_api.hpp"
#include "util/intra_op_pool.hpp"

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
#include <tuple>
#include <vector>

namespace {

// A host pool of 4 threads whatever the machine, handed to the SDK helpers as a plugin
// gets it at init.
constexpr int kThreads = 4;
const std::shared_ptr<SY_HostApi> kHost = [] {
  switchyard::threads::configure_intra_op_pool(kThreads);
  auto api = switchyard::loader::make_host_api("test");
  sy::host_api() = api.get();
  return api;
}();

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

TEST(Parallel, ReadsTheThreadCountFromTheHost) {
  ASSERT_TRUE(kHost);
  EXPECT_EQ(sy::intra_op_threads(), kThreads);
  EXPECT_EQ(kHost->num_threads(kHost->host_context), kThreads);
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
      if (slot < 0 || slot >= kThreads) {
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

// The exception reaches the caller; chunks not started yet are skipped, none runs twice.
TEST(Parallel, AnExceptionReachesTheCallerAndNoTaskRunsTwice) {
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
    int twice = 0;
    for (const auto& r : runs) twice += r.load() > 1;
    EXPECT_EQ(twice, 0) << max_threads << " threads";
    EXPECT_EQ(runs[137].load(), 1);
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
    EXPECT_GE(ran.load(), 4);
    EXPECT_LE(ran.load(), 500);
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

// A named body (an lvalue, so F deduces to a reference type) and a const one compile and
// run like a temporary lambda.
TEST(Parallel, ANamedOrConstBodyIsTakenByReference) {
  std::atomic<int64_t> sum{0};
  auto body = [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) sum += i;
  };
  sy::parallel_for(int64_t{0}, int64_t{1000}, int64_t{10}, body);
  const auto& same = body;
  sy::parallel_for(int64_t{0}, int64_t{1000}, int64_t{10}, same);
  EXPECT_EQ(sum.load(), 2 * 999 * 1000 / 2);
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

// A 1.0 host has no pool: every loop runs on the calling thread, in order.
TEST(Parallel, WithoutAHostPoolEverythingRunsOnTheCaller) {
  SY_HostApi old = *kHost;
  old.struct_size = offsetof(SY_HostApi, num_threads);  // what a 1.0 host fills
  sy::host_api() = &old;
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int64_t> order;
  bool elsewhere = false;
  EXPECT_EQ(sy::intra_op_threads(), 1);
  sy::parallel_for(int64_t{0}, int64_t{100}, int64_t{1}, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) order.push_back(t);
    elsewhere |= std::this_thread::get_id() != caller;
  });
  sy::host_api() = kHost.get();
  ASSERT_EQ(order.size(), 100u);
  for (int64_t t = 0; t < 100; ++t) EXPECT_EQ(order[static_cast<size_t>(t)], t);
  EXPECT_FALSE(elsewhere);
}

// The host cuts a loop the same way every time: chunks of at least `grain` items, at most
// four per thread, covering the range once.
TEST(Parallel, TheHostChunksDeterministically) {
  auto chunks_of = [](int64_t begin, int64_t end, int64_t grain) {
    std::mutex m;
    std::set<std::pair<int64_t, int64_t>> seen;
    struct Ctx {
      std::mutex* m;
      std::set<std::pair<int64_t, int64_t>>* seen;
    } ctx{&m, &seen};
    switchyard::threads::intra_op_parallel_for(
        begin, end, grain,
        [](void* c, int64_t b, int64_t e, int32_t) {
          auto* x = static_cast<Ctx*>(c);
          std::lock_guard<std::mutex> lock(*x->m);
          x->seen->insert({b, e});
        },
        &ctx);
    return seen;
  };
  for (auto [begin, end, grain] :
       {std::tuple<int64_t, int64_t, int64_t>{0, 1000, 7}, {5, 100005, 1}, {-50, 50, 30}, {0, 10, 10}, {0, 3, 100}}) {
    const auto a = chunks_of(begin, end, grain), b = chunks_of(begin, end, grain);
    EXPECT_EQ(a, b) << begin << ".." << end << " grain " << grain;
    int64_t next = begin;
    for (const auto& [lo, hi] : a) {
      EXPECT_EQ(lo, next);
      EXPECT_GE(hi - lo, std::min(grain, end - begin));
      next = hi;
    }
    EXPECT_EQ(next, end);
    EXPECT_LE(static_cast<int64_t>(a.size()), 4 * kThreads);
  }
}

}  // namespace
