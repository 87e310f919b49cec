// linalg plugin: the parts of the recurrent kernels (ops_rnn.cpp) that are not the kernel:
// the cells' gate layouts, the plans a kernel instance keeps per input shape, per-thread
// scratch and oneDNN memory handles, and the waits and gate of its threaded runs.
//
// Threads. A primitive's threads meet at every step, so below about 1M multiply-adds a
// step (kTeamStepWork: a text model's sizes) each runs on one thread, and the host's
// threads go to independent work instead: a bidirectional layer's two directions run at
// once, and a unidirectional stack runs as a wavefront (the sequence in chunks, layer l's
// chunk k as soon as layer l - 1's chunk k is done, so the layers overlap; chunks hand
// their final states on). That work goes to the calling thread's OpenMP team (on_team),
// each piece claimed by the first thread free to take it, so where the team's worker does
// not come the caller runs it all. Not to the host's pool: right after the plugins' other
// parallel regions the team's worker still spins on a core, and a pool thread beside it
// made three busy threads on two cores (gru_stateful at batch 8: 0.67 ms on the pool,
// 0.37-0.55 on the team, 0.63 on one thread). On a busy machine the worker may come whole
// scheduler ticks late and the caller waits for it; an instance that sees that runs alone
// for a while (PoolGate). Wider steps run each primitive on the whole OpenMP team.
#pragma once

#include "linalg.hpp"

#include "common/onednn_engine.hpp"
#include "common/openmp_threads.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sy_linalg::rnn {

using dnnl::memory;
constexpr auto kF32 = memory::data_type::f32;

enum class Cell { Lstm, Gru, RnnTanh, RnnRelu };

struct CellType {
  Cell cell;
  int64_t gates;       // PyTorch's: 4 (i, f, g, o), 3 (r, z, n), 1
  int64_t states;      // hx tensors: h0 and c0, or h0
  int64_t bias_gates;  // oneDNN's bias rows: the GRU's fourth is b_hn
  int64_t perm[4];     // oneDNN gate g is PyTorch gate perm[g]
};

inline const CellType kLstm{Cell::Lstm, 4, 2, 4, {0, 1, 2, 3}};
inline const CellType kGru{Cell::Gru, 3, 1, 4, {1, 0, 2, 0}};  // oneDNN u, r, o = PyTorch z, r, n
inline const CellType kRnnTanh{Cell::RnnTanh, 1, 1, 1, {0, 0, 0, 0}};
inline const CellType kRnnRelu{Cell::RnnRelu, 1, 1, 1, {0, 0, 0, 0}};

// OpenMP team of an exact size for the calling thread, put back when the guard goes.
struct Team : sy_omp::Threads {
  explicit Team(int n) : sy_omp::Threads(sy_omp::Exactly{n}) {}
};

// A per-thread float buffer that a run borrows, kept between runs; should a second run
// start on the thread while the first holds it (the host's pool may hand a caller waiting
// in parallel_for another node's task), that one gets a buffer of its own.
class Scratch {
 public:
  explicit Scratch(size_t floats) {
    if (!slot().busy) {
      owned_ = &slot();
      owned_->busy = true;
      buf_ = &owned_->buf;
    } else {
      buf_ = &local_;
    }
    if (buf_->size() < floats) buf_->resize(floats);
  }
  ~Scratch() {
    if (owned_ != nullptr) owned_->busy = false;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  float* data() { return buf_->data(); }

 private:
  struct Slot {
    std::vector<float> buf;
    bool busy = false;
  };
  static Slot& slot() {
    thread_local Slot s;
    return s;
  }
  Slot* owned_ = nullptr;
  std::vector<float>* buf_ = nullptr;
  std::vector<float> local_;
};

// One weight tensor of the node: a constant [G * H, K] matrix (or a [G * H] bias).
struct Weight {
  const float* data = nullptr;
  int64_t rs = 0, cs = 0;  // element strides of rows and columns
};

Weight weight_of(const DLTensor& t);

// The prepared weights of one layer and direction, in the layout a primitive asked for.
struct Packed {
  memory::desc layer_md, iter_md;
  memory layer, iter, bias;
  std::vector<std::shared_ptr<void>> owners;  // what keeps the memories' storage
};

// One layer and direction at one input shape signature.
struct Step {
  dnnl::primitive prim;
  memory layer, iter, bias;  // constants (shared with Packed where the layout matched)
  memory::desc src_layer, dst_layer, src_iter, dst_iter, dst_iter_c, scratch;
  int64_t dst_offset = 0;  // elements from the destination's base: the direction's columns
  uint64_t id = 0;         // names this step's per-thread memory handles
  std::vector<std::shared_ptr<void>> owners;
};

struct Plan {
  std::vector<Step> steps;     // layer * directions + direction
  bool compact_input = false;  // the input copied to a dense [T, B, I] first
  int threads = 1;             // OpenMP team per primitive
  bool parallel_dirs = false;  // the two directions at once, one thread each
  // A unidirectional stack's wavefront (chunks > 1): steps are per layer a chunk of
  // `chunk` steps and the last chunk, run on `wave_threads` threads.
  int64_t chunk = 0, chunks = 1;
  int wave_threads = 1;
};

extern std::atomic<uint64_t> next_step_id;  // names each Step

// A step's multiply-adds from which a primitive runs on the whole OpenMP team: its threads
// meet once per step (about 1M multiply-adds, some 30 us on one core). Below it each
// primitive runs on one thread, and a bidirectional layer's two directions run at once.
constexpr double kTeamStepWork = 16 * sy_omp::kSerialWork;

// The wavefront of a unidirectional stack: a primitive call's overhead in multiply-adds
// (what sizes its chunks), at most this many chunks, and of layers.
constexpr double kChunkOverheadWork = 32768;
constexpr int64_t kMaxChunks = 16;
constexpr size_t kMaxWaveLayers = 16;
constexpr int64_t kSpins = 100000;  // pause instructions before a wait yields: about 2-4 ms

// Waits until `done` reaches `want`; false if another thread failed meanwhile. Spins
// (the other thread's piece is usually about to finish, and a thread that sleeps on a
// busy machine wakes whole scheduler ticks later), yielding the core only after a while.
bool wait_for(const std::atomic<int64_t>& done, int64_t want, const std::atomic<bool>& failed);

// Runs piece(thread) on `n` threads of the calling thread's OpenMP team, each on a team of
// one inside. The team's workers are the threads that spin on the cores right after the
// plugins' other parallel regions, so the pieces go to them rather than to a third thread
// that would share a core with a spinning one. The first exception is rethrown here.
template <class Piece>
void on_team(int n, Piece&& piece) {
  std::exception_ptr error;
  std::atomic<bool> caught{false};
#pragma omp parallel num_threads(n)
  {
    try {
      Team one(1);
      piece(omp_get_thread_num());
    } catch (...) {
      if (!caught.exchange(true)) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

int64_t wall_ns();

// Whether a kernel instance's runs hand their independent pieces (directions, layers of
// a wavefront) to the OpenMP team (on_team). A shared run that took longer than its pieces
// one after the other (what the caller alone would have taken) waited for a thread that
// got no core: on a busy machine the team's worker may wake (if only to find nothing left
// to claim) whole scheduler ticks later, and the caller waits for it at the team's end. Then the next 16 runs go alone, 32 after a second such run
// in a row, up to 256; a pooled run that gains resets that. The pieces are the same
// primitives either way, so the results are too.
class PoolGate {
 public:
  bool pooled() {
    if (solo_.load(std::memory_order_relaxed) <= 0) return true;
    solo_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  // `wall`: the pooled run; `alone`: its pieces' times added up.
  void report(int64_t wall, int64_t alone) {
    if (wall <= alone + kSlackNs) {
      misses_.store(0, std::memory_order_relaxed);
      return;
    }
    const int misses = std::min(misses_.fetch_add(1, std::memory_order_relaxed), 4);
    solo_.store(int64_t{16} << misses, std::memory_order_relaxed);
  }

 private:
  static constexpr int64_t kSlackNs = 200000;  // the pool's own hand-over and the waits' ends
  std::atomic<int64_t> solo_{0};
  std::atomic<int> misses_{0};
};

std::string number(double v);

// Memory handles for one step's run-time arguments, kept per thread (making them per
// call allocated several times); rebound to each call's pointers.
struct Handles {
  uint64_t id = 0;
  memory src_layer, src_iter, src_iter_c, dst_layer, dst_iter, dst_iter_c;
};

Handles& thread_handles(const Step& s, bool lstm);

// Executes with up to 10 arguments (an absent memory is skipped) through the C entry
// point, as sy_onednn::execute does.
void execute(const dnnl::primitive& prim, std::initializer_list<std::pair<int, const memory*>> args);

}  // namespace sy_linalg::rnn
