// A test plugin for kernel cost (SDK 1.1 SY_KernelDef.cost): a kernel reporting a cost
// no host formula would give, kernels whose cost fails or lies, one without cost, and
// one that tells how many times any cost function here has been asked.
//
//   test::costed       y = 2x; cost: 4242 FLOPs and 777 bytes per element, 99 scratch bytes
//   test::uncosted     y = 2x; no cost function (the host's formula applies)
//   test::cost_fails   y = 2x; its cost returns an error
//   test::cost_nan     y = 2x; its cost reports NaN FLOPs
//   test::cost_calls   y[0] = how many times a cost function of this plugin ran
//   test::tail         y = 2x; no cost function
//   test::costed+test::tail   y = 4x, fused; cost: 31337 FLOPs per element
//   test::scratchy     y = 2x; cost: 1000 scratch bytes per element (for the pre-flight)
#include <switchyard/plugin.hpp>

#include <atomic>
#include <limits>

namespace {

std::atomic<int> g_cost_calls{0};

struct Double {
  explicit Double(const sy::Node&) {}
  void infer(sy::Infer& io) { io.set_output(0, sy::kFloat32, sy::shape_of(io.input(0))); }
  void run(sy::Run& io) {
    const float* x = sy::data<float>(io.input(0));
    float* y = sy::data<float>(io.output(0));
    for (int64_t i = 0, n = sy::numel(io.output(0)); i < n; ++i) y[i] = 2.0f * x[i];
  }
};

struct Costed : Double {
  using Double::Double;
  void cost(sy::Cost& c) {
    ++g_cost_calls;
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(4242.0 * n);
    c.bytes(777.0 * n);
    c.scratch(99);
  }
};

struct Uncosted : Double {
  using Double::Double;
};

struct CostFails : Double {
  using Double::Double;
  void cost(sy::Cost&) {
    ++g_cost_calls;
    throw sy::Error("deliberate failure from test::cost_fails's cost", SY_ERROR_INTERNAL);
  }
};

struct CostNan : Double {
  using Double::Double;
  void cost(sy::Cost& c) {
    ++g_cost_calls;
    c.flops(std::numeric_limits<double>::quiet_NaN());
    c.bytes(8);
  }
};

struct FusedCostedTail {
  explicit FusedCostedTail(const sy::Node&) {}
  void infer(sy::Infer& io) { io.set_output(0, sy::kFloat32, sy::shape_of(io.input(0))); }
  void run(sy::Run& io) {
    const float* x = sy::data<float>(io.input(0));
    float* y = sy::data<float>(io.output(0));
    for (int64_t i = 0, n = sy::numel(io.output(0)); i < n; ++i) y[i] = 4.0f * x[i];
  }
  void cost(sy::Cost& c) {
    ++g_cost_calls;
    c.flops(31337.0 * static_cast<double>(sy::numel(c.input(0))));
  }
};

struct Scratchy : Double {
  using Double::Double;
  void cost(sy::Cost& c) { c.scratch(1000 * static_cast<uint64_t>(sy::numel(c.input(0)))); }
};

struct CostCalls {
  explicit CostCalls(const sy::Node&) {}
  void infer(sy::Infer& io) { io.set_output(0, sy::kFloat32, {1}); }
  void run(sy::Run& io) { sy::data<float>(io.output(0))[0] = static_cast<float>(g_cost_calls.load()); }
};

}  // namespace

SY_PLUGIN("costing", "0.0.1", "switchyard tests", sy::kernel<Costed>("test::costed", "test", {sy::kFloat32}),
          sy::kernel<Uncosted>("test::uncosted", "test", {sy::kFloat32}),
          sy::kernel<CostFails>("test::cost_fails", "test", {sy::kFloat32}),
          sy::kernel<CostNan>("test::cost_nan", "test", {sy::kFloat32}),
          sy::kernel<CostCalls>("test::cost_calls", "test", {sy::kFloat32}),
          sy::kernel<Uncosted>("test::tail", "test", {sy::kFloat32}),
          sy::kernel<FusedCostedTail>("test::costed+test::tail", "test", {sy::kFloat32}),
          sy::kernel<Scratchy>("test::scratchy", "test", {sy::kFloat32}))
