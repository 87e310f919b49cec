// elementwise plugin: rotary position embeddings, as the host's pattern pass writes them
// (host/src/ir/patterns.hpp) in place of a trace's slice, slice, neg, cat, mul, mul, add:
//
//   switchyard::rotary(Tensor input, Tensor cos, Tensor sin, int dim, int cat_dim, int half)
//       = input * cos + cat([-input[..., half:], input[..., :half]], cat_dim) * sin
//
// Taken where dim and cat_dim are both the last dim and cos and sin broadcast to the
// input's shape (a Llama decoder's [B, H, T, D] queries and keys against [1, 1, T, D]);
// anything else is left to the next backend. One pass: each output row reads its input
// row twice, in cache, and its cos and sin rows once; the input may be strided (the
// transposed heads of a projection).
#include "broadcast.hpp"
#include "ops.hpp"

#include <switchyard/shapes.hpp>

#include <string>
#include <vector>

namespace sy_elementwise {
namespace {

class Rotary {
 public:
  static void supports(const sy::Node& n) {
    if (n.num_inputs != 3 || n.num_outputs != 1) throw sy::Unsupported("expected input, cos and sin, one output");
    for (size_t i = 0; i < 3; ++i)
      if (!is_f32(n.input(i))) throw sy::Unsupported("float32 tensors only");
    const DLTensor& x = n.input(0);
    if (x.ndim < 1) throw sy::Unsupported("a 0-dim input");
    const int64_t last = x.ndim - 1;
    for (const char* a : {"dim", "cat_dim"}) {
      const int64_t d = n.attrs.i(a);
      if (d != last && d != -1)
        throw sy::Unsupported(std::string(a) + " is not the last dim (left to the next backend)");
    }
    for (size_t i = 1; i < 3; ++i)
      if (sy::broadcast_shapes(sy::shape_of(x), sy::shape_of(n.input(i)), "rotary") != sy::shape_of(x))
        throw sy::Unsupported("cos and sin must broadcast to the input's shape " + sy::shape_string(sy::shape_of(x)));
  }

  explicit Rotary(const sy::Node& n) : half_(n.attrs.i("half")) {}

  void infer(sy::Infer& f) { f.set_output(0, sy::kFloat32, sy::shape_of(f.input(0))); }

  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(3.0 * n);
    c.bytes(16.0 * n);
  }

  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    const Shape shape = sy::shape_of(x);
    const int64_t d = shape.back();
    if (sy::numel(x) == 0) return;
    const int64_t half = half_ < 0 ? half_ + d : half_;
    if (half < 0 || half > d)
      throw sy::Error("half " + std::to_string(half_) + " is outside the last dim of " + std::to_string(d));
    const Shape xs = sy::strides_of(x), cs = sy::broadcast_strides(r.input(1), shape),
                ss = sy::broadcast_strides(r.input(2), shape);
    const float* in = sy::data<float>(x);
    const float* cos = sy::data<float>(r.input(1));
    const float* sin = sy::data<float>(r.input(2));
    float* y = sy::data<float>(r.output(0));
    const int64_t rows = sy::numel(x) / d, tail = d - half;  // rot[k] = -x[half + k] for k < tail, else x[k - tail]
    const size_t outer = shape.size() - 1;
    const int64_t grain = std::max<int64_t>(1, kGrainElements / d);
    sy::parallel_for(int64_t{0}, rows, grain, [&](int64_t begin, int64_t end, int) {
      for (int64_t row = begin; row < end; ++row) {
        int64_t ox = 0, oc = 0, os = 0;
        for (size_t k = outer, rest = static_cast<size_t>(row); k-- > 0;) {  // the row's index, last dim fastest
          const int64_t at = static_cast<int64_t>(rest) % shape[k];
          rest /= static_cast<size_t>(shape[k]);
          ox += at * xs[k], oc += at * cs[k], os += at * ss[k];
        }
        const float *p = in + ox, *c = cos + oc, *s = sin + os;
        const int64_t px = xs[outer], pc = cs[outer], ps = ss[outer];
        float* q = y + row * d;
        for (int64_t k = 0; k < d; ++k) {
          const float rot = k < tail ? -p[(half + k) * px] : p[(k - tail) * px];
          q[k] = p[k * px] * c[k * pc] + rot * s[k * ps];
        }
      }
    });
  }

 private:
  int64_t half_;
};

}  // namespace

void add_rotary_kernel(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels) {
  kernels.push_back(sy::kernel<Rotary>("switchyard::rotary", "elementwise", {sy::kFloat32}));
}

}  // namespace sy_elementwise
