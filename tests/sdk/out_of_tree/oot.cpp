// An out-of-tree plugin with one kernel: oot::square, y = x * x on fp32 (contiguous).
#include <switchyard/plugin.hpp>

namespace {

class Square {
 public:
  static void supports(const sy::Node& node) {
    if (!sy::is_contiguous(node.input(0))) throw sy::Unsupported("input is not contiguous");
  }

  explicit Square(const sy::Node&) {}

  void infer(sy::Infer& infer) {
    infer.set_output(0, sy::kFloat32, sy::shape_of(infer.input(0)));
  }

  void run(sy::Run& run) {
    const float* x = sy::data<float>(run.input(0));
    float* y = sy::data<float>(run.output(0));
    for (int64_t i = 0, n = sy::numel(run.input(0)); i < n; ++i) y[i] = x[i] * x[i];
  }
};

}  // namespace

SY_PLUGIN("oot", "1.0.0", "out-of-tree tests",
          sy::kernel<Square>("oot::square", "elementwise", {sy::kFloat32}))
