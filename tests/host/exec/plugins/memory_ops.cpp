// A plugin for the memory planner's tests (test_memory_plan.cpp):
//   test::scale(x, k)   x * k                       host-allocated: lands in the arena
//   test::add(a, b)     a + b                       host-allocated
//   test::alias(x)      x itself                    a view: points into x's memory
//   test::late_alias(x) a copy of x on an instance's first run, x itself after: the
//                       planning run sees no view, later runs return one (the host
//                       must notice and copy it out of the arena)
//   test::repeat2(x)    every element twice, [n] -> [2n]; may be written over a buffer
//                       that ends with x (SDK 1.2 output_inplace_tail)
#include <switchyard/plugin.hpp>

#include <atomic>
#include <cstring>
#include <vector>

namespace {

int64_t numel(const DLTensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.shape[d];
  return n;
}

struct SameShape {
  static void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, sy::shape_of(infer.input(0))); }
};

class Scale : public SameShape {
 public:
  explicit Scale(const sy::Node& node) : k_(static_cast<float>(node.attrs.f("k"))) {}
  void infer(sy::Infer& infer) { SameShape::infer(infer); }
  void run(sy::Run& run) {
    const float* in = sy::data<float>(run.input(0));
    float* out = sy::data<float>(run.output(0));
    for (int64_t i = 0, n = numel(run.input(0)); i < n; ++i) out[i] = in[i] * k_;
  }

 private:
  float k_;
};

class Add : public SameShape {
 public:
  explicit Add(const sy::Node&) {}
  void infer(sy::Infer& infer) { SameShape::infer(infer); }
  void run(sy::Run& run) {
    const float* a = sy::data<float>(run.input(0));
    const float* b = sy::data<float>(run.input(1));
    float* out = sy::data<float>(run.output(0));
    for (int64_t i = 0, n = numel(run.input(0)); i < n; ++i) out[i] = a[i] + b[i];
  }
};

class Repeat2 {
 public:
  explicit Repeat2(const sy::Node&) {}
  void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, {2 * numel(infer.input(0))}); }
  void storage(sy::StorageQuery& q) { q.in_place_tail(0, 0); }
  void run(sy::Run& run) {
    const float* in = sy::data<float>(run.input(0));
    float* out = sy::data<float>(run.output(0));
    // Front to back, each element read before its two copies are written: over a buffer
    // that ends with x, copy j lands at or before x[j]'s own place, never past it.
    for (int64_t j = 0, n = numel(run.input(0)); j < n; ++j) {
      const float v = in[j];
      out[2 * j] = v;
      out[2 * j + 1] = v;
    }
  }
};

// A produced tensor: a view of `data`, or a copy when `own` holds the bytes.
struct Produced {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  std::vector<float> own;
};

DLManagedTensor* produce(const DLTensor& x, bool copy) {
  auto* p = new Produced;
  p->shape.assign(x.shape, x.shape + x.ndim);
  const float* src = sy::data<float>(x);
  if (copy) p->own.assign(src, src + numel(x));
  DLTensor& d = p->managed.dl_tensor;
  d.data = copy ? static_cast<void*>(p->own.data()) : const_cast<float*>(src);
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = x.ndim;
  d.dtype = x.dtype;
  d.shape = p->shape.data();
  d.strides = nullptr;
  d.byte_offset = 0;
  p->managed.manager_ctx = p;
  p->managed.deleter = [](DLManagedTensor* m) { delete static_cast<Produced*>(m->manager_ctx); };
  return &p->managed;
}

class Alias {
 public:
  static constexpr SY_OutputMode output_mode = SY_OUTPUT_KERNEL_ALLOCATED;
  explicit Alias(const sy::Node&) {}
  void run(sy::Run& run) { run.produce(0, produce(run.input(0), /*copy=*/false)); }
};

class LateAlias {
 public:
  static constexpr SY_OutputMode output_mode = SY_OUTPUT_KERNEL_ALLOCATED;
  explicit LateAlias(const sy::Node&) {}
  void run(sy::Run& run) { run.produce(0, produce(run.input(0), /*copy=*/runs_++ == 0)); }

 private:
  std::atomic<long> runs_{0};
};

}  // namespace

SY_PLUGIN("memory_ops", "0.0.1", "switchyard tests", sy::kernel<Scale>("test::scale", "test", {sy::kFloat32}),
          sy::kernel<Add>("test::add", "test", {sy::kFloat32}),
          sy::kernel<Alias>("test::alias", "test", {sy::kFloat32}),
          sy::kernel<LateAlias>("test::late_alias", "test", {sy::kFloat32}),
          sy::kernel<Repeat2>("test::repeat2", "test", {sy::kFloat32}))
