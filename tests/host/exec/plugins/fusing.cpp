// A plugin with a fused kernel, for the executor's fusion tests (test_fusion.cpp).
//   test::scale(x, k)               x * k
//   test::shift(x, by)              x + by
//   test::scale+test::shift         (x * k) + post.by in one pass; declines k < 0, so
//                                   the tests can see a rejected fusion fall back.
//   test::scale+aten::relu          max(x * k, 0) (the example plugin offers aten::relu
//                                   too, so a rule can route the consumer there).
//   test::addv(x, y)                x + y, element-wise
//   test::scale+test::shift+test::shift  x * k + post.by + post2.by (a chain of three; the
//                                   pair's kernel, reading post2.by too)
//   test::scale+test::shift+test::addv   x * k + post.by + y (a residual read by the third)
// Every run of the fused kernel bumps a counter the test reads through test::runs.
#include <switchyard/plugin.hpp>

#include <atomic>
#include <vector>

namespace {

std::atomic<long> fused_runs{0};

void require_float32(const sy::Node& node) {
  DLDataType t = node.input(0).dtype;
  if (t.code != kDLFloat || t.bits != 32 || t.lanes != 1) throw sy::Unsupported("input is not float32");
}

template <typename F>
void map(sy::Run& run, F f) {
  const DLTensor& x = run.input(0);
  int64_t n = 1;
  for (int d = 0; d < x.ndim; ++d) n *= x.shape[d];
  const float* in = sy::data<float>(x);
  float* out = sy::data<float>(run.output(0));
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

struct Same {
  static void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, sy::shape_of(infer.input(0))); }
};

class Scale : public Same {
 public:
  static void supports(const sy::Node& node) { require_float32(node); }
  explicit Scale(const sy::Node& node) : k_(static_cast<float>(node.attrs.f("k"))) {}
  void infer(sy::Infer& infer) { Same::infer(infer); }
  void run(sy::Run& run) {
    map(run, [&](float x) { return x * k_; });
  }

 private:
  float k_;
};

class Shift : public Same {
 public:
  static void supports(const sy::Node& node) { require_float32(node); }
  explicit Shift(const sy::Node& node) : by_(static_cast<float>(node.attrs.f("by"))) {}
  void infer(sy::Infer& infer) { Same::infer(infer); }
  void run(sy::Run& run) {
    map(run, [&](float x) { return x + by_; });
  }

 private:
  float by_;
};

class ScaleShift : public Same {
 public:
  static void supports(const sy::Node& node) {
    require_float32(node);
    if (node.attrs.f("k") < 0) throw sy::Unsupported("negative k is not fused (test rule)");
  }
  explicit ScaleShift(const sy::Node& node)  // also the chain of three: a second shift's "post2.by"
      : k_(static_cast<float>(node.attrs.f("k"))),
        by_(static_cast<float>(node.attrs.f("post.by") + node.attrs.f("post2.by", 0.0))) {}
  void infer(sy::Infer& infer) { Same::infer(infer); }
  void run(sy::Run& run) {
    ++fused_runs;
    map(run, [&](float x) { return x * k_ + by_; });
  }

 private:
  float k_, by_;
};

class ScaleRelu : public Same {
 public:
  static void supports(const sy::Node& node) { require_float32(node); }
  explicit ScaleRelu(const sy::Node& node) : k_(static_cast<float>(node.attrs.f("k"))) {}
  void infer(sy::Infer& infer) { Same::infer(infer); }
  void run(sy::Run& run) {
    ++fused_runs;
    map(run, [&](float x) { return x * k_ < 0.0f ? 0.0f : x * k_; });
  }

 private:
  float k_;
};

class AddV : public Same {
 public:
  static void supports(const sy::Node& node) { require_float32(node); }
  explicit AddV(const sy::Node&) {}
  void infer(sy::Infer& infer) { Same::infer(infer); }
  void run(sy::Run& run) {
    const float* y = sy::data<float>(run.input(1));
    int64_t i = 0;
    map(run, [&](float x) { return x + y[i++]; });
  }
};

// The chain of three with a residual: the third node's extra input comes last.
class ScaleShiftAddV : public Same {
 public:
  static void supports(const sy::Node& node) {
    require_float32(node);
    if (node.num_inputs != 2) throw sy::Unsupported("expected x and the residual");
  }
  explicit ScaleShiftAddV(const sy::Node& node)
      : k_(static_cast<float>(node.attrs.f("k"))), by_(static_cast<float>(node.attrs.f("post.by"))) {}
  void infer(sy::Infer& infer) { Same::infer(infer); }
  void run(sy::Run& run) {
    ++fused_runs;
    const float* y = sy::data<float>(run.input(1));
    int64_t i = 0;
    map(run, [&](float x) { return x * k_ + by_ + y[i++]; });
  }

 private:
  float k_, by_;
};

// test::runs(x) -> a 0-dim float32 tensor holding how often the fused kernel ran.
class Runs {
 public:
  explicit Runs(const sy::Node&) {}
  void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, {}); }
  void run(sy::Run& run) { *sy::data<float>(run.output(0)) = static_cast<float>(fused_runs.load()); }
};

}  // namespace

SY_PLUGIN("fusing", "0.0.1", "switchyard tests", sy::kernel<Scale>("test::scale", "test", {sy::kFloat32}),
          sy::kernel<Shift>("test::shift", "test", {sy::kFloat32}),
          sy::kernel<ScaleShift>("test::scale+test::shift", "test", {sy::kFloat32}),
          sy::kernel<ScaleRelu>("test::scale+aten::relu", "test", {sy::kFloat32}),
          sy::kernel<AddV>("test::addv", "test", {sy::kFloat32}),
          sy::kernel<ScaleShift>("test::scale+test::shift+test::shift", "test", {sy::kFloat32}),
          sy::kernel<ScaleShiftAddV>("test::scale+test::shift+test::addv", "test", {sy::kFloat32}),
          sy::kernel<Runs>("test::runs", "test", {sy::kFloat32}))
