// attention plugin: the layer norm of decomposed transformers.
//
//   aten::layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable)
//
// float32, normalised over the trailing dims that normalized_shape names, on oneDNN's
// layer normalization (onednn_rows.cpp). The output may take the input's buffer (SDK 1.1
// output_inplace): in a pre-norm or post-norm block the normalised value is usually the
// input's last use, so the host need not hold both. weight and bias, where given, have normalized_shape.
#include "binding.hpp"
#include "dense.hpp"
#include "onednn_rows.hpp"
#include "ops.hpp"

#include <algorithm>
#include <cstring>

namespace sy_attention {
namespace {

class LayerNorm {
 public:
  static void supports(const sy::Node& n) {
    LayerNorm k(n);
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
    const std::vector<const DLTensor*> t = k.args_.all(n);
    if (t[0] == nullptr) throw sy::Unsupported("input is missing");
    require_f32(*t[0], "input");
    k.rows_of(*t[0]);
    for (size_t i : {1, 2})
      if (t[i] != nullptr) {
        require_f32(*t[i], k.args_.name(i));
        if (shape_of(*t[i]) != k.normalized_)
          throw sy::Unsupported(k.args_.name(i) + " " + str(shape_of(*t[i])) + " is not normalized_shape " +
                                str(k.normalized_));
      }
  }

  explicit LayerNorm(const sy::Node& n) {
    args_ = TensorArgs(n, {"input", "weight", "bias"}, {"normalized_shape", "eps", "cudnn_enable"});
    if (!n.attrs.has("normalized_shape")) throw sy::Unsupported("attribute 'normalized_shape' is missing");
    normalized_ = n.attrs.ints("normalized_shape");
    eps_ = n.attrs.f("eps", 1e-5);
  }

  void infer(sy::Infer& f) { f.set_output(0, sy::kFloat32, shape_of(f.input(0))); }

  void storage(sy::StorageQuery& q) { q.in_place(0, 0); }

  void run(sy::Run& r) {
    const std::vector<const DLTensor*> t = args_.all(r);
    const DLTensor& x = *t[0];
    const int64_t rows = at_run([&] { return rows_of(x); });
    int64_t d = 1;
    for (int64_t s : normalized_) d *= s;
    float* y = output_f32(r, 0);
    if (rows * d == 0) return;
    std::vector<float> compact, w, b;
    if (!r.in_place(0, 0) || !sy::is_contiguous(x)) {  // normalise a compact copy in y
      const Rows in = as_rows(x, compact);
      if (in.data != y) std::memmove(y, in.data, sizeof(float) * static_cast<size_t>(rows * d));
    }
    const float* gamma = t[1] ? as_rows(*t[1], w).data : nullptr;
    const float* beta = t[2] ? as_rows(*t[2], b).data : nullptr;
    layer_norm(y, rows, d, gamma, beta, eps_);
  }

  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(8 * n);  // two sums, the normalisation, scale and shift
    c.bytes(3 * n * sizeof(float));
  }

 private:
  // Rows of the normalised trailing dims; Unsupported unless they match normalized_shape.
  int64_t rows_of(const DLTensor& x) const {
    const Shape shape = shape_of(x);
    if (normalized_.empty() || normalized_.size() > shape.size() ||
        !std::equal(normalized_.begin(), normalized_.end(),
                    shape.end() - static_cast<std::ptrdiff_t>(normalized_.size())))
      throw sy::Unsupported("input " + str(shape) + " does not end in normalized_shape " + str(normalized_));
    int64_t rows = 1;
    for (size_t i = 0; i + normalized_.size() < shape.size(); ++i) rows *= shape[i];
    return rows;
  }

  TensorArgs args_;
  Shape normalized_;
  double eps_ = 1e-5;
};

}  // namespace

std::shared_ptr<sy::KernelEntry> make_layer_norm_kernel(const std::string& op) {
  return sy::kernel<LayerNorm>(op, "attention", {sy::kFloat32});
}

}  // namespace sy_attention
