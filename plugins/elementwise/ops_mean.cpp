// elementwise plugin: the float32 mean over consecutive dims.
//
//   aten::mean(self, dim=None, keepdim=False, dtype=None)
//
// The reduced dims must be consecutive (size-1 dims aside): the last dim (RMSNorm, a token's features), the spatial dims
// of NCHW (global average pooling), a sequence's time steps ([B, T, C] over T), or all.
// The input is then [outer, reduced, inner] (a strided one is copied so first), summed in
// float64 and divided once. Other dims and a dtype argument are left to the next backend. An empty
// reduction gives NaN, as ATen's 0/0.
#include "broadcast.hpp"
#include "ops.hpp"

#include <switchyard/shapes.hpp>

#include <limits>
#include <string>
#include <vector>

namespace sy_elementwise {
namespace {

struct Blocks {
  int64_t outer = 1, reduced = 1, inner = 1;
};

class Mean {
 public:
  static void supports(const sy::Node& n) {
    if (n.num_inputs != 1 || n.num_outputs != 1) throw sy::Unsupported("expected one input and one output");
    if (!is_f32(n.input(0))) throw sy::Unsupported("self is not a float32 tensor");
    if (n.attrs.has("dtype")) throw sy::Unsupported("a dtype argument");
    blocks(sy::shape_of(n.input(0)), reduced_dims(dims_of(n.attrs), n.input(0).ndim));  // throws if not consecutive
  }

  explicit Mean(const sy::Node& n) : dims_(dims_of(n.attrs)), keepdim_(n.attrs.i("keepdim", 0) != 0) {}

  void infer(sy::Infer& f) {
    const Shape in = sy::shape_of(f.input(0));
    const std::vector<bool> reduce = reduced_dims(dims_, f.input(0).ndim);
    Shape out;
    for (size_t d = 0; d < in.size(); ++d)
      if (!reduce[d])
        out.push_back(in[d]);
      else if (keepdim_)
        out.push_back(1);
    f.set_output(0, sy::kFloat32, out);
  }

  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(n);
    c.bytes(4.0 * n);
  }

  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    const Shape shape = sy::shape_of(x);
    const Blocks b = blocks(shape, reduced_dims(dims_, x.ndim));
    const float* in = sy::data<float>(x);
    std::vector<float> copy;  // planned on a contiguous input; a strided one is read in order first
    if (!sy::is_contiguous(x)) {
      copy.resize(static_cast<size_t>(sy::numel(x)));
      const float none = 0.0f;
      apply(make_walk(shape, {sy::strides_of(x), Shape(shape.size(), 0)}), copy.data(), in, &none,
            [](float v, float) { return v; });
      in = copy.data();
    }
    float* y = sy::data<float>(r.output(0));
    const double scale = b.reduced > 0 ? 1.0 / static_cast<double>(b.reduced) : 0.0;
    const int64_t rows = b.outer * b.inner;
    const int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, b.reduced));
    sy::parallel_for(int64_t{0}, rows, grain, [&](int64_t begin, int64_t end, int) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t o = row / b.inner, i = row % b.inner;
        const float* p = in + o * b.reduced * b.inner + i;
        double sum = 0;
        for (int64_t k = 0; k < b.reduced; ++k) sum += p[k * b.inner];
        y[row] = b.reduced > 0 ? static_cast<float>(sum * scale) : std::numeric_limits<float>::quiet_NaN();
      }
    });
  }

 private:
  static std::vector<int64_t> dims_of(const sy::Attrs& attrs) {
    return attrs.has("dim") ? attrs.ints("dim") : std::vector<int64_t>{};
  }

  // Per input dim: reduced or not. No `dim` (or an empty list): all of them.
  static std::vector<bool> reduced_dims(const std::vector<int64_t>& dims, int32_t ndim) {
    std::vector<bool> reduce(static_cast<size_t>(ndim), false);
    if (dims.empty()) reduce.assign(reduce.size(), true);
    for (int64_t d : dims) {
      const int64_t k = d < 0 ? d + ndim : d;
      if (k < 0 || k >= ndim || reduce[static_cast<size_t>(k)])
        throw sy::Unsupported("dim " + std::to_string(d) + " is out of range or repeated for rank " +
                              std::to_string(ndim));
      reduce[static_cast<size_t>(k)] = true;
    }
    return reduce;
  }

  // The input as [outer, reduced, inner]; size-1 dims may sit anywhere.
  static Blocks blocks(const Shape& shape, const std::vector<bool>& reduce) {
    Blocks b;
    int phase = 0;  // 0: before the reduced dims, 1: in them, 2: after
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      if (reduce[d] && phase == 2) throw sy::Unsupported("the reduced dims are not consecutive");
      if (reduce[d]) phase = 1;
      if (!reduce[d] && phase == 1) phase = 2;
      (phase == 0 ? b.outer : phase == 1 ? b.reduced : b.inner) *= shape[d];
    }
    return b;
  }

  std::vector<int64_t> dims_;
  bool keepdim_;
};

}  // namespace

void add_mean_kernel(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels) {
  kernels.push_back(sy::kernel<Mean>("aten::mean", "elementwise", {sy::kFloat32}));
}

}  // namespace sy_elementwise
