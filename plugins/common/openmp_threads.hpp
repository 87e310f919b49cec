// For plugins whose libraries run on OpenMP (oneDNN, ATen): the calling thread's OpenMP
// team follows the host's thread budget (SY_HostApi.num_threads), or is 1 for work too
// small to be worth a hand-over. OpenMP's count is per calling thread, so it is matched
// per kernel call; the guard puts the previous count back when it goes.
//
// Plugin-side code: it includes SDK headers and omp.h only, never host headers.
#pragma once

#include <switchyard/parallel.hpp>

#include <omp.h>

namespace sy_omp {

// Below this many multiply-adds (or element reads) a kernel runs on the calling thread:
// about 20 microseconds of work, less than waking a second thread costs on this machine.
constexpr double kSerialWork = 65536;

// Passed to Threads for a team of an exact size rather than one sized by the work.
struct Exactly {
  int threads;
};

class Threads {
 public:
  // `work`: the call's multiply-adds or element reads (a negative value: always parallel).
  explicit Threads(double work = -1) : Threads(Exactly{work >= 0 && work < kSerialWork ? 1 : sy::intra_op_threads()}) {}
  // A team of exactly `e.threads` for the calling thread, put back when the guard goes.
  explicit Threads(Exactly e) {
    const int want = e.threads;
    const int have = omp_get_max_threads();
    if (have == want) return;
    saved_ = have;
    omp_set_num_threads(want);
  }
  ~Threads() {
    if (saved_ > 0) omp_set_num_threads(saved_);
  }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  int saved_ = 0;
};

}  // namespace sy_omp
