// An out-of-tree plugin with one kernel: oot::square, y = x * x on fp32 (contiguous), in
// chunks on the SDK's worker pool (so the installed parallel.hpp is built and run too).
#include <switchyard/parallel.hpp>
#include <switchyard/plugin.hpp>

#include <algorithm>

namespace {

class Square {
 public:
  static void supports(const sy::Node& node) {
    if (!sy::is_contiguous(node.input(0))) throw sy::Unsupported("input is not contiguous");
  }

  explicit Square(const sy::Node&) {}

  void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, sy::shape_of(infer.input(0))); }

  void run(sy::Run& run) {
    const float* x = sy::data<float>(run.input(0));
    float* y = sy::data<float>(run.output(0));
    const int64_t n = sy::numel(run.input(0)), chunk = 4;
    sy::parallel_for((n + chunk - 1) / chunk, sy::intra_op_threads(), [&](int64_t t, int) {
      for (int64_t i = t * chunk; i < std::min(n, (t + 1) * chunk); ++i) y[i] = x[i] * x[i];
    });
  }
};

}  // namespace

SY_PLUGIN("oot", "1.0.0", "out-of-tree tests", sy::kernel<Square>("oot::square", "elementwise", {sy::kFloat32}))
