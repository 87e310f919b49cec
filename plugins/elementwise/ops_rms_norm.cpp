// elementwise plugin: RMSNorm over the last dim, as the host's pattern pass writes it
// (host/src/ir/patterns.hpp) in place of a trace's pow, mean, add, rsqrt, mul and mul.
//
//   switchyard::rms_norm(Tensor input, Tensor weight, float eps)
//       = weight * (input * rsqrt(mean(input ** 2, dim=-1, keepdim=True) + eps))
//
// float32; the sum of squares of a row in float64, as the mean kernel sums; one pass to
// read a row and one to write it, rows split over the team.
#include "broadcast.hpp"
#include "ops.hpp"

#include "common/vector_clones.hpp"

#include <switchyard/shapes.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace sy_elementwise {
namespace {

// One row: its sum of squares in float64 (lanes summed in any order), then the scaled row.
SY_VECTOR_CLONES void rms_row(const float* p, const float* weight, float* q, int64_t d, float eps) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t k = 0; k < d; ++k) sum += static_cast<double>(p[k]) * p[k];
  // As the trace computes it: the mean in float32, then rsqrt(mean + eps) in float32.
  const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(d)) + eps);
#pragma omp simd
  for (int64_t k = 0; k < d; ++k) q[k] = weight[k] * (p[k] * scale);
}

class RmsNorm {
 public:
  static void supports(const sy::Node& n) {
    if (n.num_inputs != 2 || n.num_outputs != 1) throw sy::Unsupported("expected input and weight, one output");
    const DLTensor& x = n.input(0);
    const DLTensor& w = n.input(1);
    if (!is_f32(x) || !is_f32(w)) throw sy::Unsupported("float32 tensors only");
    if (x.ndim < 1 || w.ndim != 1 || w.shape[0] != x.shape[x.ndim - 1])
      throw sy::Unsupported("weight " + sy::shape_string(sy::shape_of(w)) + " is not one value per feature of input " +
                            sy::shape_string(sy::shape_of(x)));
  }

  explicit RmsNorm(const sy::Node& n) : eps_(n.attrs.f("eps", 0.0)) {}

  void infer(sy::Infer& f) { f.set_output(0, sy::kFloat32, sy::shape_of(f.input(0))); }

  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(4.0 * n);
    c.bytes(8.0 * n);
  }

  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    const DLTensor& w = r.input(1);
    const int64_t d = x.shape[x.ndim - 1];
    if (d == 0 || sy::numel(x) == 0) return;
    std::vector<float> copy;  // a strided input or weight is read in order first
    const float* in = contiguous(x, copy);
    std::vector<float> wcopy;
    const float* weight = contiguous(w, wcopy);
    float* y = sy::data<float>(r.output(0));
    const int64_t rows = sy::numel(x) / d;
    const int64_t grain = std::max<int64_t>(1, kGrainElements / d);
    sy::parallel_for(int64_t{0}, rows, grain, [&](int64_t begin, int64_t end, int) {
      for (int64_t row = begin; row < end; ++row) rms_row(in + row * d, weight, y + row * d, d, eps_);
    });
  }

 private:
  static const float* contiguous(const DLTensor& t, std::vector<float>& copy) {
    if (sy::is_contiguous(t)) return sy::data<float>(t);
    const Shape shape = sy::shape_of(t);
    copy.resize(static_cast<size_t>(sy::numel(t)));
    const float none = 0.0f;
    apply(make_walk(shape, {sy::strides_of(t), Shape(shape.size(), 0)}), copy.data(), sy::data<float>(t), &none,
          [](float v, float) { return v; });
    return copy.data();
  }

  float eps_;
};

}  // namespace

void add_rms_norm_kernel(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels) {
  kernels.push_back(sy::kernel<RmsNorm>("switchyard::rms_norm", "elementwise", {sy::kFloat32}));
}

}  // namespace sy_elementwise
