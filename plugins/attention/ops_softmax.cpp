// attention plugin: the softmax of decomposed attention (scores -> softmax -> bmm).
//
//   aten::softmax(self, dim, dtype=None), aten::_softmax(self, dim, half_to_float=False)
//
// float32 over any dim. The output may take the input's buffer (SDK 1.1 output_inplace):
// the scores die at the softmax in every decomposed attention, so the host can write the
// weights over them instead of holding both, which is what makes it worth a kernel here
// rather than ATen's (which allocates its own output). Rows whose every score is -inf
// give NaN, and a NaN or +inf score gives a NaN row, as ATen's softmax does.
#include "binding.hpp"
#include "common/gather.hpp"
#include "onednn_rows.hpp"
#include "ops.hpp"

#include <switchyard/parallel.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace sy_attention {
namespace {

constexpr int64_t kGrainElements = 16384;  // a chunk worth a hand-over to another thread

// Softmax along the middle dim of [outer, size, inner], in place.
void softmax_inplace(float* y, int64_t outer, int64_t size, int64_t inner) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  if (inner == 1) {  // rows in memory: the attention case
    softmax_rows(y, outer, size);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, size * inner));
  sy::parallel_for(0, outer, grain, [&](int64_t begin, int64_t end, int) {
    std::vector<float> m(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
    for (int64_t o = begin; o < end; ++o) {
      float* block = y + o * size * inner;
      std::fill(m.begin(), m.end(), kNegInf);
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int64_t k = 0; k < size; ++k)
        for (int64_t j = 0; j < inner; ++j) {
          const float v = block[k * inner + j];
          m[j] = std::isnan(v) || std::isnan(m[j]) ? std::numeric_limits<float>::quiet_NaN() : std::max(m[j], v);
        }
      for (int64_t k = 0; k < size; ++k)
        for (int64_t j = 0; j < inner; ++j) sum[j] += block[k * inner + j] = std::exp(block[k * inner + j] - m[j]);
      for (int64_t j = 0; j < inner; ++j) sum[j] = 1.0f / sum[j];
      for (int64_t k = 0; k < size; ++k)
        for (int64_t j = 0; j < inner; ++j) block[k * inner + j] *= sum[j];
    }
  });
}

class Softmax {
 public:
  static void supports(const sy::Node& n) {
    Softmax k(n);
    if (n.num_inputs != 1 || n.num_outputs != 1) throw sy::Unsupported("expected one input and one output");
    require_f32(n.input(0), "self");
    k.dim_of(n.input(0));
  }

  explicit Softmax(const sy::Node& n) {
    const bool underscore = std::string(n.op).rfind("aten::_", 0) == 0;
    args_ = TensorArgs(n, {"self"}, {"dim", underscore ? "half_to_float" : "dtype"});
    if (!n.attrs.has("dim")) throw sy::Unsupported("attribute 'dim' is missing");
    dim_ = n.attrs.i("dim");
    if (underscore && n.attrs.i("half_to_float", 0) != 0)
      throw sy::Unsupported("half_to_float=True is not implemented");
    if (!underscore && n.attrs.has("dtype") && n.attrs.i("dtype") != 6)  // 6: ATen's code for float32
      throw sy::Unsupported("softmax with a dtype conversion (dtype=" + std::to_string(n.attrs.i("dtype")) + ")");
  }

  void infer(sy::Infer& f) { f.set_output(0, sy::kFloat32, shape_of(f.input(0))); }

  void storage(sy::StorageQuery& q) { q.in_place(0, 0); }  // the scores die here in attention

  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    const int64_t dim = at_run([&] { return dim_of(x); });
    float* y = output_f32(r, 0);
    const bool aliased = r.in_place(0, 0);
    if (sy::is_contiguous(x)) {
      if (!aliased && sy::numel(x) > 0) std::memcpy(y, sy::data<float>(x), sizeof(float) * sy::numel(x));
    } else if (aliased) {  // strided scores under the output: gather through a copy
      std::vector<float> tmp(static_cast<size_t>(sy::numel(x)));
      sy_common::gather_compact(x, tmp.data());
      std::copy(tmp.begin(), tmp.end(), y);
    } else {
      sy_common::gather_compact(x, y);
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < x.ndim; ++d) {
      if (d < dim) outer *= x.shape[d];
      if (d > dim) inner *= x.shape[d];
    }
    const int64_t size = x.ndim == 0 ? 1 : x.shape[dim];
    if (outer * size * inner > 0) softmax_inplace(y, outer, size, inner);
  }

  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(5 * n);  // max, subtract, exp, sum, scale
    c.bytes(2 * n * sizeof(float));
  }

 private:
  int64_t dim_of(const DLTensor& x) const {
    const int64_t rank = std::max<int64_t>(1, x.ndim);  // a 0-dim tensor takes dim 0 or -1
    if (dim_ < -rank || dim_ >= rank)
      throw sy::Unsupported("dim " + std::to_string(dim_) + " is out of range for rank " + std::to_string(x.ndim));
    return dim_ < 0 ? dim_ + rank : dim_;
  }

  TensorArgs args_;
  int64_t dim_ = -1;
};

}  // namespace

std::shared_ptr<sy::KernelEntry> make_softmax_kernel(const std::string& op) {
  return sy::kernel<Softmax>(op, "attention", {sy::kFloat32});
}

}  // namespace sy_attention
