// cuda plugin: softmax and layer norm.
//
//   softmax(self, dim, dtype=None), _softmax(self, dim, half_to_float=False),
//   log_softmax(self, dim, dtype=None), _log_softmax(...)     over any dim
//   layer_norm(input, normalized_shape, weight?, bias?, eps=1e-5, cudnn_enable)
// float32, float16 and bfloat16, computed in float.
#include "kernel_base.hpp"
#include "kernels.hpp"

namespace sycuda {
namespace {

double esize(DLDataType dt) { return static_cast<double>((dt.bits * dt.lanes + 7) / 8); }

class SoftmaxKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    SoftmaxKernel k(n);
    if (n.num_inputs != 1 || n.num_outputs != 1) throw sy::Unsupported("expected one input and one output");
    const DLTensor& x = n.input(0);
    if (!is_float(x.dtype)) throw sy::Unsupported(std::string(n.op) + " of " + dtype_name(x.dtype));
    declining([&] { return wrap_dim(k.dim_, x.ndim, n.op); });
  }

  explicit SoftmaxKernel(const sy::Node& n) : CudaKernel(n) {
    const std::string op = n.op;
    log_ = op.find("log_softmax") != std::string::npos;
    const bool underscore = op.rfind("aten::_", 0) == 0;
    check_attributes(n, {"self", "dim", underscore ? "half_to_float" : "dtype"});
    if (!n.attrs.has("dim")) throw sy::Unsupported("attribute 'dim' is missing");
    dim_ = n.attrs.i("dim");
    if (underscore && n.attrs.i("half_to_float", 0) != 0)
      throw sy::Unsupported("half_to_float=True is not implemented");
    if (!underscore && n.attrs.has("dtype")) {
      // The dtype argument converts first; only "the input's own dtype" is a no-op here.
      const int64_t code = n.attrs.i("dtype");
      const DLTensor* x = n.num_inputs > 0 ? n.inputs[0] : nullptr;
      const bool same = x != nullptr && ((code == 6 && sy::same_dtype(x->dtype, sy::kFloat32)) ||
                                         (code == 5 && sy::same_dtype(x->dtype, sy::kFloat16)) ||
                                         (code == 15 && sy::same_dtype(x->dtype, sy::kBFloat16)));
      if (!same) throw sy::Unsupported("softmax with a dtype conversion (dtype=" + std::to_string(code) + ")");
    }
    allow_in_place(0);
  }

  void infer(sy::Infer& f) { f.set_output(0, f.input(0).dtype, sy::shape_of(f.input(0))); }

  void run(sy::Run& r) {
    DeviceRun d(r);
    const DevTensor& x = d.in(0);
    const int64_t dim = wrap_dim(dim_, static_cast<int64_t>(x.shape.size()), "softmax");
    int64_t outer = 1, inner = 1, size = 1;
    for (int64_t k = 0; k < static_cast<int64_t>(x.shape.size()); ++k) {
      if (k < dim)
        outer *= x.shape[k];
      else if (k > dim)
        inner *= x.shape[k];
      else
        size = x.shape[k];
    }
    launched(launch::softmax(*dt_of(x.dtype), x.data, d.out(0).data, outer, size, inner, log_, d.stream()),
             log_ ? "log_softmax" : "softmax");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(5 * n);
    c.bytes(2 * n * esize(c.input(0).dtype));
  }

 private:
  int64_t dim_ = -1;
  bool log_ = false;
};

class LayerNormKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    LayerNormKernel k(n);
    declining([&] { k.rows_cols(n.inputs, n.num_inputs); });
  }

  explicit LayerNormKernel(const sy::Node& n)
      : CudaKernel(n), args_(n, {"input", "weight", "bias"}, {false, true, true}) {
    check_attributes(n, {"input", "weight", "bias", "normalized_shape", "eps", "cudnn_enable"});
    if (!n.attrs.has("normalized_shape")) throw sy::Unsupported("attribute 'normalized_shape' is missing");
    normalized_ = n.attrs.ints("normalized_shape");
    eps_ = n.attrs.f("eps", 1e-5);
    if (n.num_outputs != 1)
      throw sy::Unsupported("expected one output (native_layer_norm's mean and rstd are not made)");
  }

  void infer(sy::Infer& f) {
    const DLTensor& x = *args_.meta(0, f.args->inputs, f.num_inputs());
    at_run([&] { return rows_cols(f.args->inputs, f.num_inputs()); });
    f.set_output(0, x.dtype, sy::shape_of(x));
  }

  void run(sy::Run& r) {
    const auto [rows, cols] = rows_cols(r.args->inputs, r.num_inputs());
    DeviceRun d(r);
    const DevTensor x = args_.device(0, d), w = args_.device(1, d), b = args_.device(2, d);
    launched(launch::layer_norm(*dt_of(x.dtype), x.data, d.out(0).data, w.data, b.data, rows, cols, eps_, d.stream()),
             "layer_norm");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const DLTensor& x = *args_.meta(0, c.args->inputs, c.num_inputs());
    const double n = static_cast<double>(sy::numel(x));
    c.flops(8 * n);
    c.bytes(2 * n * esize(x.dtype));
  }

 private:
  std::pair<int64_t, int64_t> rows_cols(const DLTensor* const* in, size_t n) const {
    const DLTensor* x = args_.meta(0, in, n);
    if (!is_float(x->dtype)) throw sy::Unsupported("layer_norm of " + dtype_name(x->dtype));
    const size_t k = normalized_.size();
    const Shape xs = sy::shape_of(*x);
    if (k == 0 || k > xs.size() || !std::equal(normalized_.begin(), normalized_.end(), xs.end() - static_cast<long>(k)))
      throw sy::Error("layer_norm: normalized_shape " + str(normalized_) +
                      " does not match the input's trailing dims " + str(xs));
    for (size_t i = 1; i < 3; ++i) {
      const DLTensor* t = args_.meta(i, in, n);
      if (t == nullptr) continue;
      if (!sy::same_dtype(t->dtype, x->dtype))
        throw sy::Unsupported(args_.name(i) + " has dtype " + dtype_name(t->dtype) + ", input " + dtype_name(x->dtype));
      if (sy::shape_of(*t) != normalized_)
        throw sy::Error("layer_norm: " + args_.name(i) + " " + str(sy::shape_of(*t)) + " is not normalized_shape " +
                        str(normalized_));
    }
    const int64_t cols = product(normalized_);
    return {cols == 0 ? 0 : product(xs) / cols, cols};
  }

  TensorArgs args_;
  Shape normalized_;
  double eps_ = 1e-5;
};

}  // namespace

void add_reduce_kernels(KernelList& list) {
  for (const char* op : {"aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax"})
    add_kernel<SoftmaxKernel>(list, op, "normalization", float_dtypes());
  add_kernel<LayerNormKernel>(list, "aten::layer_norm", "normalization", float_dtypes());
}

}  // namespace sycuda
