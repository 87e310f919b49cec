// cuda plugin: adaptive_avg_pool2d(self, output_size) on the plugin's own kernel (pool.cu),
// with ATen's uneven windows; [N, C, H, W] or unbatched [C, H, W]. (max_pool2d and
// avg_pool2d run on cuDNN: conv_kernels.cpp.)
#include "kernel_base.hpp"
#include "kernels.hpp"

namespace sycuda {
namespace {

class AdaptiveAvgPoolKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    AdaptiveAvgPoolKernel k(n);
    if (n.num_inputs != 1 || n.num_outputs != 1) throw sy::Unsupported("expected one input and one output");
    if (!is_float(n.input(0).dtype)) throw sy::Unsupported("adaptive_avg_pool2d of " + dtype_name(n.input(0).dtype));
    declining([&] { return k.out_shape(n.input(0)); });
  }

  explicit AdaptiveAvgPoolKernel(const sy::Node& n) : CudaKernel(n) {
    check_attributes(n, {"self", "output_size"});
    if (!n.attrs.has("output_size")) throw sy::Unsupported("attribute 'output_size' is missing");
    size_ = n.attrs.ints("output_size");
    if (size_.size() == 1) size_.push_back(size_[0]);
    if (size_.size() != 2 || size_[0] < 1 || size_[1] < 1)
      throw sy::Unsupported("output_size " + str(size_) + " (two positive sizes expected)");
  }

  void infer(sy::Infer& f) {
    f.set_output(0, f.input(0).dtype, at_run([&] { return out_shape(f.input(0)); }));
  }

  void run(sy::Run& r) {
    DeviceRun d(r);
    const DevTensor& x = d.in(0);
    const size_t nd = x.shape.size();
    const int64_t h = x.shape[nd - 2], w = x.shape[nd - 1];
    launched(launch::adaptive_avg_pool2d(*dt_of(x.dtype), x.data, d.out(0).data, x.numel() / (h * w), h, w, size_[0],
                                         size_[1], d.stream()),
             "adaptive_avg_pool2d");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0))), es = c.input(0).dtype.bits / 8.0;
    c.flops(n);
    c.bytes(n * es);
  }

 private:
  Shape out_shape(const DLTensor& x) const {
    if (x.ndim != 3 && x.ndim != 4)
      throw sy::Error("adaptive_avg_pool2d: expected a 3-D or 4-D input, got " + str(sy::shape_of(x)));
    for (int d = 1; d < x.ndim; ++d)
      if (x.shape[d] < 1)
        throw sy::Error("adaptive_avg_pool2d: input " + str(sy::shape_of(x)) + " has an empty dimension");
    Shape out = sy::shape_of(x);
    out[out.size() - 2] = size_[0];
    out[out.size() - 1] = size_[1];
    return out;
  }

  Shape size_;
};

}  // namespace

void add_pool_kernels(KernelList& list) {
  add_kernel<AdaptiveAvgPoolKernel>(list, "aten::adaptive_avg_pool2d", "conv", float_dtypes());
}

}  // namespace sycuda
