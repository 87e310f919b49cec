// A plugin whose kernels are subtly wrong, for check-plugin's negative test: each bug is
// one a real kernel could ship with, and the conformance kit must catch every one.
//   aten::relu     leaky: 0.01 * x for x < 0
//   aten::sigmoid  ignores strides (reads the buffer as if contiguous)
//   aten::tanh     right (must PASS beside the failures)
//   aten::neg      right on host memory; its storage "reversed" (elements in reverse
//                  order) forgets to reverse them back in to_host: only a run with values
//                  kept in that storage shows it
//   aten::exp      declares that its output may take its input's buffer, then clears the
//                  output before it reads the input: right unless the host grants it
#include <switchyard/plugin.hpp>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

void require_float32(const sy::Node& node) {
  DLDataType t = node.input(0).dtype;
  if (t.code != kDLFloat || t.bits != 32 || t.lanes != 1) throw sy::Unsupported("input is not float32");
}

template <float (*F)(float), bool kHonourStrides>
class Unary {
 public:
  static void supports(const sy::Node& node) { require_float32(node); }
  explicit Unary(const sy::Node&) {}
  void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, sy::shape_of(infer.input(0))); }
  void run(sy::Run& run) {
    const DLTensor& x = run.input(0);
    std::vector<int64_t> shape = sy::shape_of(x);
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    const float* in = sy::data<float>(x);
    float* out = sy::data<float>(run.output(0));
    if (!kHonourStrides || x.strides == nullptr || x.ndim < 2) {
      for (int64_t i = 0; i < n; ++i) out[i] = F(in[i]);
      return;
    }
    // 2-D strided walk (the tests only pass strided 2-D tensors here).
    for (int64_t i = 0, k = 0; i < shape[0]; ++i)
      for (int64_t j = 0; j < n / shape[0]; ++j, ++k) out[k] = F(in[i * x.strides[0] + j * x.strides[x.ndim - 1]]);
  }
};

// Element i (in logical row-major order) of a float32 host tensor, strided or not.
float element(const DLTensor& t, int64_t i) {
  int64_t offset = 0;
  for (int d = t.ndim - 1; d >= 0; --d) {
    const int64_t size = t.shape[d], index = i % size;
    i /= size;
    int64_t stride = 1;
    if (t.strides != nullptr)
      stride = t.strides[d];
    else
      for (int k = d + 1; k < t.ndim; ++k) stride *= t.shape[k];
    offset += index * stride;
  }
  return sy::data<float>(t)[offset];
}

struct Reversed {
  static void from_host(const DLTensor& src, DLTensor& dst) {
    const int64_t n = sy::numel(src);
    for (int64_t i = 0; i < n; ++i) sy::data<float>(dst)[n - 1 - i] = element(src, i);
  }
  static void to_host(const DLTensor& src, DLTensor& dst) {  // the bug: no reversal
    const int64_t n = sy::numel(src);
    for (int64_t i = 0; i < n; ++i) sy::data<float>(dst)[i] = sy::data<const float>(src)[i];
  }
};

class Neg {
 public:
  static void supports(const sy::Node& node) { require_float32(node); }
  explicit Neg(const sy::Node&) {}
  void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, sy::shape_of(infer.input(0))); }
  void storage(sy::StorageQuery& q) {
    q.reads(0, SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(0));
    q.writes(0, SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(0));
  }
  void run(sy::Run& run) {
    const DLTensor& x = run.input(0);
    const bool in_reversed = run.input_storage(0) == 0, out_reversed = run.output_storage(0) == 0;
    const int64_t n = sy::numel(x);
    float* out = sy::data<float>(run.output(0));
    for (int64_t i = 0; i < n; ++i)
      out[out_reversed ? n - 1 - i : i] = -(in_reversed ? sy::data<const float>(x)[n - 1 - i] : element(x, i));
  }
};

class ClearingExp {
 public:
  static void supports(const sy::Node& node) { require_float32(node); }
  explicit ClearingExp(const sy::Node&) {}
  void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, sy::shape_of(infer.input(0))); }
  void storage(sy::StorageQuery& q) { q.in_place(0, 0); }
  void run(sy::Run& run) {
    const DLTensor& x = run.input(0);
    const int64_t n = sy::numel(x);
    float* out = sy::data<float>(run.output(0));
    std::memset(out, 0, static_cast<size_t>(n) * sizeof(float));  // the bug: in place, this clears x
    for (int64_t i = 0; i < n; ++i) out[i] += std::exp(element(x, i));
  }
};

float leaky_relu(float x) { return x < 0.0f ? 0.01f * x : x; }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float tanh_(float x) { return std::tanh(x); }

}  // namespace

namespace {
sy::PluginDef& subtly_wrong() {
  static sy::PluginDef def = [] {
    sy::PluginDef d("subtly_wrong", "0.0.1", "switchyard tests");
    d.add_storage(sy::storage<Reversed>("reversed", DLDevice{kDLCPU, 0}));
    d.add(sy::kernel<Unary<leaky_relu, true>>("aten::relu", "elementwise", {sy::kFloat32}));
    d.add(sy::kernel<Unary<sigmoid, false>>("aten::sigmoid", "elementwise", {sy::kFloat32}));
    d.add(sy::kernel<Unary<tanh_, true>>("aten::tanh", "elementwise", {sy::kFloat32}));
    d.add(sy::kernel<Neg>("aten::neg", "elementwise", {sy::kFloat32}));
    d.add(sy::kernel<ClearingExp>("aten::exp", "elementwise", {sy::kFloat32}));
    return d;
  }();
  return def;
}
}  // namespace

SY_PLUGIN_FROM(subtly_wrong)
