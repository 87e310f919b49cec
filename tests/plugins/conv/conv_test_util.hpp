// Helpers for the conv plugin's tests: single-node graphs run once on the conv plugin
// and once on the aten reference plugin (each strict, so nothing falls back silently),
// random tensors, strided views, and the comparison.
#pragma once

#include "../../host/exec/exec_test_util.hpp"
#include "api/internal.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace convtest {

using switchyard::Tensor;
using Shape = std::vector<int64_t>;
namespace ir = switchyard::ir;

// One argument of a node: a graph input (fed at run) or a graph constant (a weight).
struct Arg {
  Tensor t;
  bool constant = false;
};
inline Arg in(Tensor t) { return {std::move(t), false}; }
inline Arg weight(Tensor t) { return {std::move(t), true}; }

inline Tensor random(Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::uninitialized(sytest::kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// The same values as random(shape, seed), stored with the last two dims swapped:
// a non-contiguous view.
inline Tensor transposed_view(Shape shape, uint32_t seed) {
  Tensor c = random(shape, seed);
  Shape swapped = shape;
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  Tensor store = Tensor::uninitialized(sytest::kF32, swapped);
  const int64_t h = shape[shape.size() - 2], w = shape.back(), plane = h * w;
  for (int64_t p = 0; p < c.numel() / plane; ++p)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        store.data<float>()[p * plane + j * h + i] = c.data<float>()[p * plane + i * w + j];
  Shape strides = c.strides();
  strides[strides.size() - 1] = h;
  strides[strides.size() - 2] = 1;
  Tensor view = Tensor::from_blob(store.raw_data(), sytest::kF32, shape, strides);
  view.keep_alive(store.owner());
  return view;
}

// Every other channel (dim 1) of a tensor twice as wide: a non-contiguous view.
inline Tensor channel_strided(Shape shape, uint32_t seed) {
  Shape wide = shape;
  wide[1] *= 2;
  Tensor store = random(wide, seed);
  Shape strides = store.strides();
  strides[0] = store.strides()[0];
  strides[1] *= 2;
  Tensor view = Tensor::from_blob(store.raw_data(), sytest::kF32, shape, strides);
  view.keep_alive(store.owner());
  return view;
}

// n values with stride 2 (every other element of a buffer twice as long).
inline Tensor strided_vector(int64_t n, uint32_t seed) {
  Tensor store = random({2 * n}, seed);
  Tensor view = Tensor::from_blob(store.raw_data(), sytest::kF32, {n}, {2});
  view.keep_alive(store.owner());
  return view;
}

inline std::string strict_config(const std::string& backend) {
  return sytest::write_config(
      "conv_test_" + backend,
      "[plugins]\nload = [\"" + backend + "\"]\n[selection]\ndefault = [\"" + backend + "\"]\nstrict = true\n");
}

// One runtime per backend for the whole test binary (loading LibTorch once).
inline switchyard::Runtime& runtime(const std::string& backend) {
  static std::unique_ptr<switchyard::Runtime> conv, aten, both;
  std::unique_ptr<switchyard::Runtime>& slot = backend == "conv" ? conv : backend == "aten" ? aten : both;
  if (!slot) {
    std::string config = backend == "both" ? sytest::write_config("conv_test_both",
                                                                  "[plugins]\nload = [\"conv\", \"aten\"]\n"
                                                                  "[selection]\ndefault = [\"conv\", \"aten\"]\n")
                                           : strict_config(backend);
    slot = std::make_unique<switchyard::Runtime>(switchyard::Options{config});
  }
  return *slot;
}

// A graph of nodes applied in a chain: node 0 takes `args` (std::nullopt: an absent
// optional input), each later node takes the previous output followed by its own extra args.
struct Step {
  std::string op;
  ir::Attributes attrs;
};

struct Built {
  ir::Graph graph;
  std::vector<Tensor> feeds;  // values for the graph inputs, in order
};

inline Built chain(const std::vector<Step>& steps, const std::vector<std::optional<Arg>>& args) {
  Built b;
  std::vector<ir::ValueId> ids;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i]) {
      ids.push_back(ir::kNoValue);
    } else if (args[i]->constant) {
      ids.push_back(b.graph.add_constant("c" + std::to_string(i), args[i]->t));
    } else {
      ids.push_back(b.graph.add_input("x" + std::to_string(i), args[i]->t.dtype()));
      b.feeds.push_back(args[i]->t);
    }
  }
  for (size_t s = 0; s < steps.size(); ++s) {
    std::string out = "y" + std::to_string(s);
    b.graph.add_node("n" + std::to_string(s), steps[s].op, ids, {out}, steps[s].attrs);
    ids = {b.graph.find_value(out)};
  }
  b.graph.outputs = ids;
  return b;
}

// Runs the chain on one strict backend; checks that backend ran every node.
inline Tensor run_on(const std::string& backend, const std::vector<Step>& steps,
                     const std::vector<std::optional<Arg>>& args) {
  Built b = chain(steps, args);
  auto model = load_graph(runtime(backend), std::move(b.graph));
  for (const switchyard::PlanEntry& e : model->plan(b.feeds)) EXPECT_EQ(e.backend, backend) << e.node;
  std::vector<Tensor> out = model->run(b.feeds);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Tensor() : out[0];
}

// Element-wise |got - ref| <= 1e-5 * max(1, max|ref|) + 1e-4 * |ref|, same shape, NaN where
// the reference has NaN and the same infinities; and the reference is not trivially zero
// (a test that cannot fail is no test).
inline void expect_close(const Tensor& got, const Tensor& ref, const std::string& what) {
  ASSERT_TRUE(got.defined() && ref.defined()) << what;
  ASSERT_EQ(got.shape(), ref.shape()) << what;
  std::vector<float> a = sytest::values(got), r = sytest::values(ref);
  double scale = 1.0;
  for (float v : r)
    if (std::isfinite(v)) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  size_t bad = 0, nonzero = 0;
  double worst = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!std::isfinite(r[i]) || !std::isfinite(a[i])) {
      if (std::isnan(r[i]) ? !std::isnan(a[i]) : a[i] != r[i]) ++bad;
      ++nonzero;
      continue;
    }
    double d = std::fabs(static_cast<double>(a[i]) - r[i]);
    worst = std::max(worst, d);
    if (!(d <= 1e-5 * scale + 1e-4 * std::fabs(r[i]))) ++bad;
    if (r[i] != 0.f) ++nonzero;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << r.size() << " elements differ, worst " << worst;
  if (!r.empty()) EXPECT_GT(nonzero, 0u) << what << ": the reference is all zeros";
}

// The first run per input shapes is the planning run, which keeps every value plain;
// later runs use the planned storages and in-place writes. Compares two runs with `ref`.
inline void expect_runs_close(switchyard::Model& model, const std::vector<Tensor>& feeds, const Tensor& ref,
                              const std::string& what) {
  expect_close(model.run(feeds)[0], ref, what + " (planning run)");
  expect_close(model.run(feeds)[0], ref, what + " (planned run)");
}

// The conv plugin against aten on the same node.
inline void compare(const std::string& what, const std::string& op, const std::vector<std::optional<Arg>>& args,
                    ir::Attributes attrs = {}) {
  SCOPED_TRACE(what);
  Tensor ref = run_on("aten", {{op, attrs}}, args);
  Tensor got = run_on("conv", {{op, std::move(attrs)}}, args);
  expect_close(got, ref, what);
}

// Why the conv plugin declines a node: the error of planning it with conv alone (strict),
// which quotes the plugin's reason; "" if conv takes it.
inline std::string rejection(const std::string& op, const std::vector<std::optional<Arg>>& args,
                             ir::Attributes attrs = {}) {
  Built b = chain({{op, std::move(attrs)}}, args);
  auto model = load_graph(runtime("conv"), std::move(b.graph));
  try {
    for (const switchyard::PlanEntry& e : model->plan(b.feeds)) EXPECT_EQ(e.backend, "conv");
  } catch (const switchyard::Error& e) {
    return e.what();
  }
  return "";
}

inline ir::Attribute ints(std::vector<int64_t> v) { return ir::Attribute::of_ints(std::move(v)); }
inline ir::Attribute integer(int64_t v) { return ir::Attribute::of_int(v); }
inline ir::Attribute number(double v) { return ir::Attribute::of_float(v); }
inline ir::Attribute text(std::string v) { return ir::Attribute::of_string(std::move(v)); }

inline ir::Attributes conv_attrs(std::vector<int64_t> stride, std::vector<int64_t> padding,
                                 std::vector<int64_t> dilation, int64_t groups) {
  return {{"stride", ints(std::move(stride))},
          {"padding", ints(std::move(padding))},
          {"dilation", ints(std::move(dilation))},
          {"groups", integer(groups)}};
}

// A 2-D pooling's attributes.
inline ir::Attributes pool_attrs(std::vector<int64_t> kernel, std::vector<int64_t> stride,
                                 std::vector<int64_t> padding) {
  return {{"kernel_size", ints(std::move(kernel))},
          {"stride", ints(std::move(stride))},
          {"padding", ints(std::move(padding))}};
}

// aten::_convolution's attributes as TorchScript records them.
inline ir::Attributes convolution_attrs(std::vector<int64_t> stride, std::vector<int64_t> padding,
                                        std::vector<int64_t> dilation, int64_t groups, bool underscore) {
  ir::Attributes a = conv_attrs(stride, padding, dilation, groups);
  a.push_back({"transposed", integer(0)});
  a.push_back({"output_padding", ints(std::vector<int64_t>(stride.size(), 0))});
  if (underscore)
    for (const char* flag : {"benchmark", "deterministic", "cudnn_enabled", "allow_tf32"})
      a.push_back({flag, integer(0)});
  return a;
}

}  // namespace convtest
