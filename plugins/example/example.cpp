// The example plugin: fp32 element-wise kernels written plainly against the SDK alone.
// Copy it to start a plugin of your own.
//
//   aten::add(self, other, alpha=1)   self + alpha * other
//   aten::mul(self, other)            self * other
//   aten::relu(self)
//
// `other` is a second tensor input, broadcast numpy-style against `self`, or, in the
// scalar form (no second input), the number in attribute `other`.
//
// Every kernel has infer(), so its output mode is SY_OUTPUT_HOST_ALLOCATED: the host
// allocates the output (contiguous) from the shape infer() reports, and run() fills it.
// Inputs may be strided (transposed, sliced, expanded): the loops read each input
// through its own strides, so no copy is needed.
//
// Every kernel also reports its cost (SDK 1.1, optional): the FLOPs and bytes of one run
// at the given input shapes, which `switchyard run --profile` uses for its roofline in
// place of the host's per-op estimate. add counts 2 FLOPs per element (a multiply by
// alpha, then an add), where the host's estimate counts 1.
#include <switchyard/plugin.hpp>
#include <switchyard/shapes.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using Shape = std::vector<int64_t>;

// Calls f(i, a, b) for every element i of a contiguous output of shape `out`, where a
// and b are the offsets of the matching elements of two inputs walked with sa and sb.
template <typename F>
void for_each_element(const Shape& out, const Shape& sa, const Shape& sb, F f) {
  int64_t n = 1;
  for (int64_t size : out) n *= size;
  Shape index(out.size(), 0);
  int64_t a = 0, b = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, a, b);
    for (size_t d = out.size(); d-- > 0;) {  // step the last dimension, carry leftwards
      a += sa[d];
      b += sb[d];
      if (++index[d] < out[d]) break;
      a -= sa[d] * out[d];
      b -= sb[d] * out[d];
      index[d] = 0;
    }
  }
}

float* output_data(DLTensor& out) {
  if (!sy::is_contiguous(out)) throw sy::Error("output is not contiguous", SY_ERROR_INTERNAL);
  return sy::data<float>(out);
}

void require_float32(const sy::Node& node) {
  for (size_t i = 0; i < node.num_inputs; ++i) {
    if (!node.has_input(i)) continue;
    DLDataType t = node.input(i).dtype;
    if (t.code != kDLFloat || t.bits != 32 || t.lanes != 1)
      throw sy::Unsupported("input " + std::to_string(i) + " is not float32");
  }
}

struct Add {
  static constexpr double kFlopsPerElement = 2;  // a + alpha * b, alpha multiplied even when 1
  explicit Add(const sy::Attrs& attrs) : alpha(static_cast<float>(attrs.f("alpha", 1.0))) {}
  float operator()(float a, float b) const { return a + alpha * b; }
  float alpha;
};

struct Mul {
  static constexpr double kFlopsPerElement = 1;
  explicit Mul(const sy::Attrs&) {}
  float operator()(float a, float b) const { return a * b; }
};

// self (input 0) <op> other (input 1, or the number in attribute "other").
template <typename Op>
class Binary {
 public:
  static void supports(const sy::Node& node) {
    require_float32(node);
    if (!node.has_input(1) && !node.attrs.is_number("other"))
      throw sy::Unsupported("'other' is neither a tensor input nor a number attribute");
  }

  explicit Binary(const sy::Node& node)
      : op_(node.attrs), scalar_(node.has_input(1) ? 0.0f : static_cast<float>(node.attrs.f("other"))) {}

  void infer(sy::Infer& infer) {
    Shape self = sy::shape_of(infer.input(0));
    Shape out = infer.has_input(1) ? sy::broadcast_shapes(self, sy::shape_of(infer.input(1))) : self;
    infer.set_output(0, sy::kFloat32, out);
  }

  // One run reads each fp32 input once and writes the broadcast output once.
  void cost(sy::Cost& c) {
    Shape self = sy::shape_of(c.input(0));
    double bytes = 4.0 * static_cast<double>(sy::numel(c.input(0)));
    Shape out = self;
    if (c.has_input(1)) {
      out = sy::broadcast_shapes(self, sy::shape_of(c.input(1)));
      bytes += 4.0 * static_cast<double>(sy::numel(c.input(1)));
    }
    double n = 1;
    for (int64_t size : out) n *= static_cast<double>(size);
    c.flops(Op::kFlopsPerElement * n);
    c.bytes(bytes + 4.0 * n);
  }

  void run(sy::Run& run) {
    const DLTensor& self = run.input(0);
    DLTensor& result = run.output(0);
    Shape out = sy::shape_of(result);

    // The scalar form reads the same number for every element: a stride of 0.
    const float* b = &scalar_;
    Shape sb(out.size(), 0);
    if (run.has_input(1)) {
      b = sy::data<float>(run.input(1));
      sb = sy::broadcast_strides(run.input(1), out);
    }
    const float* a = sy::data<float>(self);
    float* y = output_data(result);
    for_each_element(out, sy::broadcast_strides(self, out), sb,
                     [&](int64_t i, int64_t ia, int64_t ib) { y[i] = op_(a[ia], b[ib]); });
  }

 private:
  Op op_;
  float scalar_;
};

class Relu {
 public:
  static void supports(const sy::Node& node) { require_float32(node); }

  explicit Relu(const sy::Node&) {}

  void infer(sy::Infer& infer) { infer.set_output(0, sy::kFloat32, sy::shape_of(infer.input(0))); }

  // One comparison per element; reads the input and writes the output once.
  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(n);
    c.bytes(8.0 * n);
  }

  void run(sy::Run& run) {
    const DLTensor& self = run.input(0);
    DLTensor& result = run.output(0);
    Shape out = sy::shape_of(result);
    Shape strides = sy::broadcast_strides(self, out);
    const float* x = sy::data<float>(self);
    float* y = output_data(result);
    // `x < 0 ? 0 : x` keeps NaN as NaN, as torch.relu does.
    for_each_element(out, strides, strides,
                     [&](int64_t i, int64_t ix, int64_t) { y[i] = x[ix] < 0.0f ? 0.0f : x[ix]; });
  }
};

}  // namespace

SY_PLUGIN("example", "0.1.0", "switchyard", sy::kernel<Binary<Add>>("aten::add", "elementwise", {sy::kFloat32}),
          sy::kernel<Binary<Mul>>("aten::mul", "elementwise", {sy::kFloat32}),
          sy::kernel<Relu>("aten::relu", "elementwise", {sy::kFloat32}))
