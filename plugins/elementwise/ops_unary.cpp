// elementwise plugin: float32 unary math, as ATen computes it.
//
//   aten::neg(self)               -self
//   aten::exp(self)               e^self
//   aten::sqrt(self)              √self     (NaN below 0)
//   aten::rsqrt(self)             1 / √self (inf at 0, NaN below 0)
//   aten::sin(self), aten::cos    in radians
//   aten::pow(self, exponent)     self^exponent, the exponent a number attribute (a tensor
//                                 exponent is left to the next backend); 2 squares exactly
//   aten::relu(self)              max(self, 0), NaN kept (a relu no producer took in, e.g.
//                                 after an add that could not fuse)
//
// A decomposed RMSNorm (pow, mean, rsqrt) and rotary embeddings (sin, cos, neg) are made
// of these; on the aten plugin each cost a LibTorch dispatch and a tensor per node. The
// output is host-allocated and may take the input's buffer when the input dies here.
#include "broadcast.hpp"
#include "ops.hpp"

#include <switchyard/shapes.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace sy_elementwise {
namespace {

enum class Kind { Neg, Exp, Sqrt, Rsqrt, Sin, Cos, Pow, Relu };

class Unary {
 public:
  static void supports(const sy::Node& n, Kind kind) {
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
    if (!n.has_input(0) || !is_f32(n.input(0))) throw sy::Unsupported("self is not a float32 tensor");
    if (kind == Kind::Pow) {
      if (n.num_inputs > 1) throw sy::Unsupported("a tensor exponent (only a number is taken here)");
      if (!n.attrs.is_number("exponent")) throw sy::Unsupported("'exponent' is not a number");
    } else if (n.num_inputs > 1) {
      throw sy::Unsupported("expected one input");
    }
  }

  Unary(const sy::Node& n, Kind kind)
      : kind_(kind), exponent_(kind == Kind::Pow ? static_cast<float>(n.attrs.f("exponent")) : 0.0f) {}

  void infer(sy::Infer& f) { f.set_output(0, sy::kFloat32, sy::shape_of(f.input(0))); }
  void storage(sy::StorageQuery& q) { q.in_place(0, 0); }

  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(n);
    c.bytes(8.0 * n);
  }

  void run(sy::Run& r) {
    DLTensor& result = r.output(0);
    if (!sy::is_contiguous(result)) throw sy::Error("output is not contiguous", SY_ERROR_INTERNAL);
    if (sy::numel(result) == 0) return;
    const DLTensor& x = r.input(0);
    float* y = sy::data<float>(result);
    const float* a = sy::data<float>(x);
    const float e = exponent_;
    switch (kind_) {
      case Kind::Neg:
        return map(
            x, y, a, [](float v, float) { return -v; }, r.in_place(0, 0));
      case Kind::Exp:
        return map(
            x, y, a, [](float v, float) { return std::exp(v); }, r.in_place(0, 0));
      case Kind::Sqrt:
        return map(
            x, y, a, [](float v, float) { return std::sqrt(v); }, r.in_place(0, 0));
      case Kind::Rsqrt:
        return map(
            x, y, a, [](float v, float) { return 1.0f / std::sqrt(v); }, r.in_place(0, 0));
      case Kind::Sin:
        return map(
            x, y, a, [](float v, float) { return std::sin(v); }, r.in_place(0, 0));
      case Kind::Cos:
        return map(
            x, y, a, [](float v, float) { return std::cos(v); }, r.in_place(0, 0));
      case Kind::Relu:  // v < 0 is false for NaN: kept, as ATen's relu
        return map(
            x, y, a, [](float v, float) { return v < 0.0f ? 0.0f : v; }, r.in_place(0, 0));
      case Kind::Pow:
        if (e == 2.0f)
          return map(
              x, y, a, [](float v, float) { return v * v; }, r.in_place(0, 0));
        if (e == 1.0f)
          return map(
              x, y, a, [](float v, float) { return v; }, r.in_place(0, 0));
        if (e == 0.5f)
          return map(
              x, y, a, [](float v, float) { return std::sqrt(v); }, r.in_place(0, 0));
        return map(
            x, y, a, [e](float v, float) { return std::pow(v, e); }, r.in_place(0, 0));
    }
  }

 private:
  // y = f(x) over a contiguous output. A contiguous input is one row (no walk to build per
  // run); a strided one is walked, and read whole first when the output is written over it.
  template <typename F>
  static void map(const DLTensor& x, float* y, const float* a, F f, bool in_place) {
    static const float none = 0.0f;
    if (sy::is_contiguous(x)) return each(sy::numel(x), y, a, f);
    const Shape out = sy::shape_of(x);
    const Walk w = make_walk(out, {sy::strides_of(x), Shape(out.size(), 0)});
    if (!in_place) return apply(w, y, a, &none, f);
    std::vector<float> copy(static_cast<size_t>(sy::numel(x)));
    apply(w, copy.data(), a, &none, [](float v, float) { return v; });
    each(sy::numel(x), y, copy.data(), f);
  }

  template <typename F>
  static void each(int64_t n, float* y, const float* a, F f) {
    static const float none = 0.0f;
    sy::parallel_for(int64_t{0}, n, kGrainElements,
                     [&](int64_t begin, int64_t end, int) { row(y + begin, a + begin, 1, &none, 0, end - begin, f); });
  }

  Kind kind_;
  float exponent_;
};

template <Kind K>
struct UnaryOf : Unary {
  static void supports(const sy::Node& n) { Unary::supports(n, K); }
  explicit UnaryOf(const sy::Node& n) : Unary(n, K) {}
};

}  // namespace

void add_unary_kernels(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels) {
  const std::vector<DLDataType> f32{sy::kFloat32};
  kernels.push_back(sy::kernel<UnaryOf<Kind::Neg>>("aten::neg", "elementwise", f32));
  kernels.push_back(sy::kernel<UnaryOf<Kind::Exp>>("aten::exp", "elementwise", f32));
  kernels.push_back(sy::kernel<UnaryOf<Kind::Sqrt>>("aten::sqrt", "elementwise", f32));
  kernels.push_back(sy::kernel<UnaryOf<Kind::Rsqrt>>("aten::rsqrt", "elementwise", f32));
  kernels.push_back(sy::kernel<UnaryOf<Kind::Sin>>("aten::sin", "elementwise", f32));
  kernels.push_back(sy::kernel<UnaryOf<Kind::Cos>>("aten::cos", "elementwise", f32));
  kernels.push_back(sy::kernel<UnaryOf<Kind::Pow>>("aten::pow", "elementwise", f32));
  kernels.push_back(sy::kernel<UnaryOf<Kind::Relu>>("aten::relu", "elementwise", f32));
}

}  // namespace sy_elementwise
