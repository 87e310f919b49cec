// A plugin that breaks the rules on purpose, one kernel per way of misbehaving, so the
// executor tests can check that each is caught and reported with node, op and plugin.
#include <switchyard/plugin.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

namespace {

// Host-allocated output shaped like input 0.
struct LikeInput {
  explicit LikeInput(const sy::Node&) {}
  void infer(sy::Infer& io) { io.set_output(0, sy::kFloat32, sy::shape_of(io.input(0))); }
};

struct ReturnsError : LikeInput {
  using LikeInput::LikeInput;
  void run(sy::Run&) { throw sy::Error("deliberate failure from bad::error", SY_ERROR_INVALID_ARGUMENT); }
};

struct Throws : LikeInput {
  using LikeInput::LikeInput;
  void run(sy::Run&) { throw std::runtime_error("boom: an exception thrown inside a kernel"); }
};

// Writes NaN into its output (for --check-finite).
struct MakesNan : LikeInput {
  using LikeInput::LikeInput;
  void run(sy::Run& io) {
    float* out = sy::data<float>(io.output(0));
    for (int64_t i = 0, n = sy::numel(io.output(0)); i < n; ++i) out[i] = 1.0f;
    if (sy::numel(io.output(0)) > 0) out[0] = std::numeric_limits<float>::quiet_NaN();
  }
};

// Rewrites the shape of the host-allocated output it was given.
struct TampersShape : LikeInput {
  using LikeInput::LikeInput;
  void run(sy::Run& io) {
    DLTensor& out = io.output(0);
    for (int64_t i = 0, n = sy::numel(out); i < n; ++i) sy::data<float>(out)[i] = 0.0f;
    out.shape[0] += 1;
  }
};

// Produces its own output, of a different shape or dtype than its infer() promised.
struct ProducedOutput {
  std::vector<int64_t> shape;
  DLManagedTensor managed{};
  std::vector<float> data;
};
void delete_produced(DLManagedTensor* m) { delete static_cast<ProducedOutput*>(m->manager_ctx); }

DLManagedTensor* produce(std::vector<int64_t> shape, DLDataType dtype) {
  auto* p = new ProducedOutput{std::move(shape), {}, {}};
  int64_t n = 1;
  for (int64_t d : p->shape) n *= d;
  p->data.assign(static_cast<size_t>(n) + 1, 0.0f);
  p->managed.dl_tensor.data = p->data.data();
  p->managed.dl_tensor.device = DLDevice{kDLCPU, 0};
  p->managed.dl_tensor.ndim = static_cast<int32_t>(p->shape.size());
  p->managed.dl_tensor.dtype = dtype;
  p->managed.dl_tensor.shape = p->shape.data();
  p->managed.manager_ctx = p;
  p->managed.deleter = &delete_produced;
  return &p->managed;
}

// Claims (in supports) to accept anything, then refuses at creation.
struct Liar {
  static void supports(const sy::Node&) {}
  explicit Liar(const sy::Node& node) {
    throw sy::Error(std::string("bad::liar cannot really run '") + node.name + "'");
  }
  void run(sy::Run&) {}
};

// Kernel-allocated outputs that break the promise their infer() made.
struct Promises {
  static constexpr SY_OutputMode output_mode = SY_OUTPUT_KERNEL_ALLOCATED;
  explicit Promises(const sy::Node&) {}
  void infer(sy::Infer& io) { io.set_output(0, sy::kFloat32, sy::shape_of(io.input(0))); }
};

struct WrongShape : Promises {
  using Promises::Promises;
  void run(sy::Run& io) {
    std::vector<int64_t> shape = sy::shape_of(io.input(0));
    shape.push_back(2);  // one dimension too many
    io.produce(0, produce(shape, sy::kFloat32));
  }
};

struct WrongDtype : Promises {
  using Promises::Promises;
  void run(sy::Run& io) { io.produce(0, produce(sy::shape_of(io.input(0)), sy::kInt32)); }
};

// Out of memory, as a library would report it: a status, a C++ bad_alloc, or at creation.
struct ReportsOom : LikeInput {
  using LikeInput::LikeInput;
  void run(sy::Run&) { throw sy::Error("could not allocate 1048576 bytes of scratch", SY_ERROR_OUT_OF_MEMORY); }
};

struct ThrowsBadAlloc : LikeInput {
  using LikeInput::LikeInput;
  void run(sy::Run&) { throw std::bad_alloc(); }
};

struct OomAtCreate : LikeInput {
  explicit OomAtCreate(const sy::Node& node) : LikeInput(node) {
    throw sy::Error("no room to prepack 4096 bytes of weights", SY_ERROR_OUT_OF_MEMORY);
  }
  void run(sy::Run&) {}
};

}  // namespace

SY_PLUGIN("misbehaving", "0.0.1", "switchyard tests", sy::kernel<ReturnsError>("bad::error", "test", {sy::kFloat32}),
          sy::kernel<Throws>("bad::throw", "test", {sy::kFloat32}),
          sy::kernel<MakesNan>("bad::nan", "test", {sy::kFloat32}),
          sy::kernel<TampersShape>("bad::tamper_shape", "test", {sy::kFloat32}),
          sy::kernel<Liar>("bad::liar", "test", {sy::kFloat32}),
          sy::kernel<WrongShape>("bad::wrong_shape", "test", {sy::kFloat32}),
          sy::kernel<WrongDtype>("bad::wrong_dtype", "test", {sy::kFloat32}),
          sy::kernel<ReportsOom>("bad::oom", "test", {sy::kFloat32}),
          sy::kernel<ThrowsBadAlloc>("bad::bad_alloc", "test", {sy::kFloat32}),
          sy::kernel<OomAtCreate>("bad::oom_create", "test", {sy::kFloat32}))
