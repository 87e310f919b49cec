// elementwise plugin: float32 binary arithmetic, as ATen computes it.
//
//   aten::add(self, other, alpha=1)   self + alpha * other
//   aten::sub(self, other, alpha=1)   self - alpha * other
//   aten::mul(self, other)            self * other
//   aten::div(self, other)            self / other   (rounding_mode None only)
//   aten::maximum(self, other)        the larger; NaN if either is NaN
//   aten::minimum(self, other)        the smaller; NaN if either is NaN
//
// `other` is a float32 tensor input broadcast numpy-style against `self`, a 0-dim float64
// tensor (a traced Python number: ATen computes in float32 with it, as here), or, with no
// second input, the number in attribute `other`. Other dtypes are left to the next backend. The output is host-allocated and may take the buffer of an
// input of the output's shape that dies here (SDK 1.1 output_inplace): the residual adds,
// the score scaling and the masks of a transformer then need no memory of their own.
// Large outputs are split across the host's threads.
#include "broadcast.hpp"
#include "ops.hpp"

#include <switchyard/parallel.hpp>
#include <switchyard/shapes.hpp>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sy_elementwise {
namespace {

enum class Kind { Add, Sub, Mul, Div, Maximum, Minimum };

bool is_f64_number(const DLTensor& t) {
  return t.ndim == 0 && t.dtype.code == kDLFloat && t.dtype.bits == 64 && t.dtype.lanes == 1;
}

class Binary {
 public:
  static void supports(const sy::Node& n) {
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
    if (!n.has_input(0) || !is_f32(n.input(0))) throw sy::Unsupported("self is not a float32 tensor");
    if (n.has_input(1)) {
      if (!is_f32(n.input(1)) && !is_f64_number(n.input(1)))
        throw sy::Unsupported(
            "other is neither a float32 tensor nor a 0-dim float64 one (type promotion is left to aten)");
    } else {
      if (!n.attrs.is_number("other")) throw sy::Unsupported("'other' is neither a tensor input nor a number");
    }
    if (n.num_inputs > 2) throw sy::Unsupported("more than two inputs");
    if (n.attrs.has("rounding_mode")) throw sy::Unsupported("div with a rounding_mode");
  }

  Binary(const sy::Node& n, Kind kind) : kind_(kind) {
    alpha_ = static_cast<float>(n.attrs.f("alpha", 1.0));
    if (!n.has_input(1)) scalar_ = static_cast<float>(n.attrs.f("other"));
  }

  void infer(sy::Infer& f) { f.set_output(0, sy::kFloat32, output_shape(f)); }

  // The output may take an input's buffer when it has the output's shape.
  void storage(sy::StorageQuery& q) {
    const Shape out = output_shape(q);
    if (sy::shape_of(q.input(0)) == out)
      q.in_place(0, 0);
    else if (q.has_input(1) && sy::shape_of(q.input(1)) == out)
      q.in_place(0, 1);
  }

  void cost(sy::Cost& c) {
    const Shape out = output_shape(c);
    double bytes = 4.0 * static_cast<double>(sy::numel(c.input(0)));
    if (c.has_input(1)) bytes += 4.0 * static_cast<double>(sy::numel(c.input(1)));
    double n = 1;
    for (int64_t s : out) n *= static_cast<double>(s);
    c.flops(((kind_ == Kind::Add || kind_ == Kind::Sub) && alpha_ != 1.0f ? 2.0 : 1.0) * n);
    c.bytes(bytes + 4.0 * n);
  }

  void run(sy::Run& r) {
    float number = 0.0f;
    DLTensor& result = r.output(0);
    if (!sy::is_contiguous(result)) throw sy::Error("output is not contiguous", SY_ERROR_INTERNAL);
    if (sy::numel(result) == 0) return;
    float* y = sy::data<float>(result);
    const float* in[2] = {nullptr, &scalar_};
    const DLTensor* tensors[2] = {&r.input(0), nullptr};  // the operands the walk strides over
    bool memo_fits = true;
    std::vector<float> copy;  // an input under the output that is not laid out as it is
    for (size_t i = 0; i < 2; ++i) {
      if (i == 1 && !r.has_input(1)) break;
      const DLTensor& x = r.input(i);
      if (i == 1 && is_f64_number(x)) {  // a number: float32 arithmetic, as ATen's
        number = static_cast<float>(*sy::data<double>(x));
        in[1] = &number;
        break;
      }
      in[i] = sy::data<float>(x);
      tensors[i] = &x;
      if (r.in_place(0, i) && !sy::is_contiguous(x)) {
        const Shape out = sy::shape_of(result);
        copy.resize(static_cast<size_t>(sy::numel(x)));
        const Walk w = make_walk(out, {sy::broadcast_strides(x, out), Shape(out.size(), 0)});
        apply(w, copy.data(), in[i], &scalar_, [](float v, float) { return v; });
        in[i] = copy.data();
        tensors[i] = &result;  // the copy is laid out as the output
        memo_fits = false;     // rare: a strided input under its own output
      }
    }
    const std::shared_ptr<const WalkMemo> memo = memo_fits ? walk_for(result, tensors) : make_memo(result, tensors);
    const Walk& w = memo->walk;
    const float alpha = alpha_;
    switch (kind_) {
      case Kind::Add:
        if (alpha == 1.0f) return apply(w, y, in[0], in[1], [](float a, float b) { return a + b; });
        return apply(w, y, in[0], in[1], [alpha](float a, float b) { return a + alpha * b; });
      case Kind::Sub:
        if (alpha == 1.0f) return apply(w, y, in[0], in[1], [](float a, float b) { return a - b; });
        return apply(w, y, in[0], in[1], [alpha](float a, float b) { return a - alpha * b; });
      case Kind::Mul: return apply(w, y, in[0], in[1], [](float a, float b) { return a * b; });
      case Kind::Div: return apply(w, y, in[0], in[1], [](float a, float b) { return a / b; });
      // a != a: a is NaN. A NaN b fails the comparison and is returned too.
      case Kind::Maximum: return apply(w, y, in[0], in[1], [](float a, float b) { return a > b || a != a ? a : b; });
      case Kind::Minimum: return apply(w, y, in[0], in[1], [](float a, float b) { return a < b || a != a ? a : b; });
    }
  }

 private:
  // The last call's layouts and the walk they gave: runs repeat them, and building the walk
  // allocated about ten small vectors per node per run.
  struct WalkMemo {
    sy::LayoutKey out, operand[2];  // operand[1] absent: a number or the attribute
    Walk walk;
  };

  static std::shared_ptr<const WalkMemo> make_memo(const DLTensor& result, const DLTensor* const tensors[2]) {
    auto m = std::make_shared<WalkMemo>();
    m->out = sy::LayoutKey::of(&result);
    const Shape out = sy::shape_of(result);
    std::vector<Shape> strides{Shape(out.size(), 0), Shape(out.size(), 0)};
    for (size_t i = 0; i < 2; ++i) {
      m->operand[i] = sy::LayoutKey::of(tensors[i]);
      if (tensors[i] != nullptr) strides[i] = sy::broadcast_strides(*tensors[i], out);
    }
    m->walk = make_walk(out, strides);
    return m;
  }

  std::shared_ptr<const WalkMemo> walk_for(const DLTensor& result, const DLTensor* const tensors[2]) {
    {
      std::lock_guard<std::mutex> lock(memo_mutex_);
      if (memo_ && memo_->out.matches(&result) && memo_->operand[0].matches(tensors[0]) &&
          memo_->operand[1].matches(tensors[1]))
        return memo_;
    }
    std::shared_ptr<const WalkMemo> m = make_memo(result, tensors);
    std::lock_guard<std::mutex> lock(memo_mutex_);
    memo_ = m;
    return m;
  }

  // self's shape broadcast with other's (a number leaves it as it is).
  template <typename Args>
  static Shape output_shape(const Args& a) {
    const Shape self = sy::shape_of(a.input(0));
    return a.has_input(1) ? sy::broadcast_shapes(self, sy::shape_of(a.input(1))) : self;
  }

  Kind kind_;
  float alpha_ = 1.0f;
  float scalar_ = 0.0f;
  std::mutex memo_mutex_;                 // runs may overlap on one instance
  std::shared_ptr<const WalkMemo> memo_;  // guarded by memo_mutex_
};

template <Kind K>
struct BinaryOf : Binary {
  explicit BinaryOf(const sy::Node& n) : Binary(n, K) {}
};

}  // namespace

void add_binary_kernels(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels) {
  // float64 is listed for `other` as a 0-dim number only; supports() says so per node.
  const std::vector<DLDataType> dtypes{sy::kFloat32, sy::kFloat64};
  kernels.push_back(sy::kernel<BinaryOf<Kind::Add>>("aten::add", "elementwise", dtypes));
  kernels.push_back(sy::kernel<BinaryOf<Kind::Sub>>("aten::sub", "elementwise", dtypes));
  kernels.push_back(sy::kernel<BinaryOf<Kind::Mul>>("aten::mul", "elementwise", dtypes));
  kernels.push_back(sy::kernel<BinaryOf<Kind::Div>>("aten::div", "elementwise", dtypes));
  kernels.push_back(sy::kernel<BinaryOf<Kind::Maximum>>("aten::maximum", "elementwise", {sy::kFloat32}));
  kernels.push_back(sy::kernel<BinaryOf<Kind::Minimum>>("aten::minimum", "elementwise", {sy::kFloat32}));
}

}  // namespace sy_elementwise
