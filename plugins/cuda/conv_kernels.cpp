// cuda plugin: convolution and pooling on cuDNN 9 (its legacy descriptor API, still part
// of cuDNN 9).
//
//   conv1d, conv2d (int or "same"/"valid" padding, unbatched input too), convolution and
//   _convolution (1 or 2 spatial dims, not transposed); strided, padded, dilated, grouped
//   and depthwise; bias optional. "<each>+<activation>": bias and activation in one pass
//   after cuDNN's convolution.
//   max_pool2d (NaN propagates, as ATen), avg_pool2d (count_include_pad either way)
//
// float32 convolves with CUDNN_FMA_MATH: no TF32, and only algorithms whose math is FMA
// are taken. The node's '@precision' option may allow tf32 (CUDNN_DEFAULT_MATH) or float16
// (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION); float16 tensors use tensor cores with float
// accumulation. The algorithm comes from cuDNN's heuristic (as PyTorch's default), once per
// input shape, and is kept by the kernel instance with its descriptors.
#include "conv_plan.hpp"
#include "dynload.hpp"
#include "kernel_base.hpp"
#include "kernels.hpp"

#include <map>

namespace sycuda {
namespace {

double esize(DLDataType dt) { return static_cast<double>((dt.bits * dt.lanes + 7) / 8); }

void check_cudnn(cudnnStatus_t st, const char* call, int line) {
  if (st == CUDNN_STATUS_SUCCESS) return;
  const SY_Status status = st == CUDNN_STATUS_ALLOC_FAILED ? SY_ERROR_OUT_OF_MEMORY : SY_ERROR_INTERNAL;
  throw sy::Error(std::string(call) + " failed: " + lib::dnn().cudnnGetErrorString(st) + " (cuDNN status " +
                      std::to_string(st) + ") at conv_kernels.cpp:" + std::to_string(line),
                  status);
}
#define SY_CUDNN_CHECK(call) check_cudnn((call), #call, __LINE__)

// The device's cuDNN handle, made on first use under the device lock, bound to its stream.
cudnnHandle_t cudnn() {
  static cudnnHandle_t handle = nullptr;
  Device& device = Device::get();
  std::lock_guard<std::recursive_mutex> guard(device.lock());
  if (handle == nullptr) {
    SY_CUDNN_CHECK(lib::dnn().cudnnCreate(&handle));
    SY_CUDNN_CHECK(lib::dnn().cudnnSetStream(handle, device.stream()));
  }
  return handle;
}

cudnnDataType_t cudnn_type(DLDataType dt) {
  return sy::same_dtype(dt, sy::kFloat16) ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

bool conv_dtype(DLDataType dt) { return sy::same_dtype(dt, sy::kFloat32) || sy::same_dtype(dt, sy::kFloat16); }

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { SY_CUDNN_CHECK(lib::dnn().cudnnCreateTensorDescriptor(&d)); }
  ~TensorDesc() { lib::dnn().cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

// ---- convolution ---------------------------------------------------------------------------------

class ConvKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    ConvKernel k(n);
    declining([&] { k.geometry(n.inputs, n.num_inputs); });
  }

  explicit ConvKernel(const sy::Node& n)
      : CudaKernel(n),
        params_(parse_conv(producer_of(n.op), n.attrs)),
        args_(n, {"input", "weight", "bias"}, {false, false, true}) {
    std::vector<std::string> known = sy::conv_attribute_names(params_.producer);
    known.insert(known.end(), {"input", "weight", "bias"});
    const std::string op = n.op;
    if (op.find('+') != std::string::npos)
      for (const std::string& a : unary_attr_names(op.substr(op.find('+') + 1))) known.push_back("post." + a);
    check_attributes(n, known);
    act_ = fused_activation(n);
    precision_ = precision_of(n.attrs);
    if (precision_ == Precision::Bfloat16)
      throw sy::Unsupported("precision = \"bfloat16\" for a convolution: cuDNN's legacy API converts to float16 only");
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
  }

  void infer(sy::Infer& f) {
    const auto [g, dt] = at_run([&] { return geometry(f.args->inputs, f.num_inputs()); });
    f.set_output(0, dt, g.out_shape);
  }

  void run(sy::Run& r) {
    const auto [g, dt] = geometry(r.args->inputs, r.num_inputs());
    DeviceRun d(r);
    DevTensor& y = d.out(0);
    if (y.numel() == 0) return d.finish();
    const DevTensor x = args_.device(0, d), w = args_.device(1, d), b = args_.device(2, d);
    const Prepared& p = prepared(g, dt);
    DeviceBuffer workspace(p.workspace);
    const float one = 1.f, zero = 0.f;
    SY_CUDNN_CHECK(lib::dnn().cudnnConvolutionForward(cudnn(), &one, p.x.d, x.data, p.w, w.data, p.conv, p.algo,
                                                      workspace.get(), p.workspace, &zero, p.y.d, y.data));
    if (b.data != nullptr || act_)
      launched(launch::bias_activation(*dt_of(dt), act_ ? *act_ : UnaryOp{}, y.data, b.data, y.numel(), g.k,
                                       g.oh * g.ow, d.stream()),
               "bias_activation");
    else if (Device::get().sync_each_kernel())
      launched(cudaSuccess, "cudnnConvolutionForward");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const auto [g, dt] = geometry(c.args->inputs, c.num_inputs());
    const double macs = static_cast<double>(g.n) * g.k * g.oh * g.ow * (g.c / g.groups) * g.r * g.s;
    c.flops(2 * macs);
    double bytes = static_cast<double>(g.n * g.k * g.oh * g.ow) * esize(dt);
    for (size_t i = 0; i < args_.size(); ++i)
      if (const DLTensor* t = args_.meta(i, c.args->inputs, c.num_inputs()))
        bytes += static_cast<double>(sy::numel(*t)) * esize(t->dtype);
    c.bytes(bytes);
  }

 private:
  struct Prepared {
    TensorDesc x, y;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnConvolutionFwdAlgo_t algo{};
    size_t workspace = 0;
    Prepared() = default;
    Prepared(const Prepared&) = delete;
    Prepared& operator=(const Prepared&) = delete;
    ~Prepared() {
      if (conv) lib::dnn().cudnnDestroyConvolutionDescriptor(conv);
      if (w) lib::dnn().cudnnDestroyFilterDescriptor(w);
    }
  };

  std::pair<ConvGeometry, DLDataType> geometry(const DLTensor* const* in, size_t n) const {
    const DLTensor* x = args_.meta(0, in, n);
    const DLTensor* w = args_.meta(1, in, n);
    const DLTensor* b = args_.meta(2, in, n);
    for (const DLTensor* t : {x, w, b}) {
      if (t == nullptr) continue;
      if (!conv_dtype(t->dtype))
        throw sy::Unsupported("convolution of " + dtype_name(t->dtype) + " (float32 and float16 only)");
      if (!sy::same_dtype(t->dtype, x->dtype)) throw sy::Unsupported("mixed dtypes in a convolution");
    }
    const Shape bias = b ? sy::shape_of(*b) : Shape{};
    return {conv_geometry(params_, sy::shape_of(*x), sy::shape_of(*w), b ? &bias : nullptr), x->dtype};
  }

  cudnnMathType_t math_type(DLDataType dt) const {
    if (sy::same_dtype(dt, sy::kFloat16)) return CUDNN_TENSOR_OP_MATH;
    switch (precision_) {
      case Precision::Tf32: return CUDNN_DEFAULT_MATH;
      case Precision::Float16: return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
      default: return CUDNN_FMA_MATH;
    }
  }

  // Descriptors and algorithm for one geometry; built once, under the device lock.
  const Prepared& prepared(const ConvGeometry& g, DLDataType dt) {
    const Shape key = {g.n, g.c, g.h, g.w, g.k, g.r, g.s, static_cast<int64_t>(cudnn_type(dt))};
    auto it = cache_.find(key);
    if (it != cache_.end()) return *it->second;
    if (cache_.size() >= 32) cache_.clear();
    auto p = std::make_unique<Prepared>();
    const cudnnDataType_t type = cudnn_type(dt);
    auto i32 = [](int64_t v) { return static_cast<int>(v); };
    SY_CUDNN_CHECK(
        lib::dnn().cudnnSetTensor4dDescriptor(p->x.d, CUDNN_TENSOR_NCHW, type, i32(g.n), i32(g.c), i32(g.h), i32(g.w)));
    SY_CUDNN_CHECK(lib::dnn().cudnnCreateFilterDescriptor(&p->w));
    SY_CUDNN_CHECK(lib::dnn().cudnnSetFilter4dDescriptor(p->w, type, CUDNN_TENSOR_NCHW, i32(g.k), i32(g.c / g.groups),
                                                         i32(g.r), i32(g.s)));
    SY_CUDNN_CHECK(lib::dnn().cudnnCreateConvolutionDescriptor(&p->conv));
    SY_CUDNN_CHECK(lib::dnn().cudnnSetConvolution2dDescriptor(p->conv, i32(g.pad_h), i32(g.pad_w), i32(g.stride_h),
                                                              i32(g.stride_w), i32(g.dil_h), i32(g.dil_w),
                                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    SY_CUDNN_CHECK(lib::dnn().cudnnSetConvolutionGroupCount(p->conv, i32(g.groups)));
    const cudnnMathType_t math = math_type(dt);
    SY_CUDNN_CHECK(lib::dnn().cudnnSetConvolutionMathType(p->conv, math));
    int n = 0, c = 0, h = 0, w = 0;
    SY_CUDNN_CHECK(lib::dnn().cudnnGetConvolution2dForwardOutputDim(p->conv, p->x.d, p->w, &n, &c, &h, &w));
    if (n != g.n || c != g.k || h != g.oh || w != g.ow)
      throw sy::Error("cuDNN's output " + str({n, c, h, w}) + " differs from ATen's " + str({g.n, g.k, g.oh, g.ow}),
                      SY_ERROR_INTERNAL);
    SY_CUDNN_CHECK(lib::dnn().cudnnSetTensor4dDescriptor(p->y.d, CUDNN_TENSOR_NCHW, type, n, c, h, w));
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    SY_CUDNN_CHECK(lib::dnn().cudnnGetConvolutionForwardAlgorithm_v7(
        cudnn(), p->x.d, p->w, p->conv, p->y.d, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
    bool found = false;
    for (int i = 0; i < returned && !found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
      // float32 without an option: FMA algorithms only (a TENSOR_OP one would be TF32).
      if (math == CUDNN_FMA_MATH && perf[i].mathType != CUDNN_FMA_MATH) continue;
      SY_CUDNN_CHECK(lib::dnn().cudnnSetConvolutionMathType(p->conv, perf[i].mathType));
      p->algo = perf[i].algo;
      found = true;
    }
    if (!found)
      throw sy::Error("cuDNN has no forward algorithm for input " + str({g.n, g.c, g.h, g.w}) + " and weight " +
                          str({g.k, g.c / g.groups, g.r, g.s}) + " with math " + std::to_string(math),
                      SY_ERROR_INTERNAL);
    SY_CUDNN_CHECK(lib::dnn().cudnnGetConvolutionForwardWorkspaceSize(cudnn(), p->x.d, p->w, p->conv, p->y.d, p->algo,
                                                                      &p->workspace));
    return *cache_.emplace(key, std::move(p)).first->second;
  }

  ConvParams params_;
  TensorArgs args_;
  std::optional<UnaryOp> act_;
  Precision precision_ = Precision::Float32;
  std::map<Shape, std::unique_ptr<Prepared>> cache_;  // used under the device lock only
};

// ---- pooling -------------------------------------------------------------------------------------

class PoolKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    PoolKernel k(n);
    if (n.num_inputs != 1 || n.num_outputs != 1)
      throw sy::Unsupported("expected one input and one output (no indices)");
    if (!conv_dtype(n.input(0).dtype)) throw sy::Unsupported("pooling of " + dtype_name(n.input(0).dtype));
    declining([&] { return pool_geometry(k.params_, sy::shape_of(n.input(0))); });
  }

  explicit PoolKernel(const sy::Node& n)
      : CudaKernel(n), params_(parse_pool(std::string(n.op) == "aten::max_pool2d", n.attrs)) {
    check_attributes(n, pool_attribute_names(params_.max));
  }

  void infer(sy::Infer& f) {
    f.set_output(0, f.input(0).dtype,
                 at_run([&] { return pool_geometry(params_, sy::shape_of(f.input(0))); }).out_shape);
  }

  void run(sy::Run& r) {
    const PoolGeometry g = pool_geometry(params_, sy::shape_of(r.input(0)));
    DeviceRun d(r);
    DevTensor& y = d.out(0);
    if (y.numel() == 0) return d.finish();
    const DevTensor& x = d.in(0);
    const cudnnDataType_t type = cudnn_type(x.dtype);
    auto i32 = [](int64_t v) { return static_cast<int>(v); };
    TensorDesc xd, yd;
    SY_CUDNN_CHECK(
        lib::dnn().cudnnSetTensor4dDescriptor(xd.d, CUDNN_TENSOR_NCHW, type, i32(g.n), i32(g.c), i32(g.h), i32(g.w)));
    SY_CUDNN_CHECK(
        lib::dnn().cudnnSetTensor4dDescriptor(yd.d, CUDNN_TENSOR_NCHW, type, i32(g.n), i32(g.c), i32(g.oh), i32(g.ow)));
    cudnnPoolingDescriptor_t pool = nullptr;
    SY_CUDNN_CHECK(lib::dnn().cudnnCreatePoolingDescriptor(&pool));
    struct Guard {
      cudnnPoolingDescriptor_t p;
      ~Guard() { lib::dnn().cudnnDestroyPoolingDescriptor(p); }
    } guard{pool};
    const cudnnPoolingMode_t mode = params_.max                 ? CUDNN_POOLING_MAX
                                    : params_.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    SY_CUDNN_CHECK(lib::dnn().cudnnSetPooling2dDescriptor(
        pool, mode, CUDNN_PROPAGATE_NAN, i32(params_.kernel[0]), i32(params_.kernel[1]), i32(params_.padding[0]),
        i32(params_.padding[1]), i32(params_.stride[0]), i32(params_.stride[1])));
    const float one = 1.f, zero = 0.f;
    SY_CUDNN_CHECK(lib::dnn().cudnnPoolingForward(cudnn(), pool, &one, xd.d, x.data, &zero, yd.d, y.data));
    if (Device::get().sync_each_kernel()) launched(cudaSuccess, "cudnnPoolingForward");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const PoolGeometry g = pool_geometry(params_, sy::shape_of(c.input(0)));
    const double out = static_cast<double>(g.n * g.c * g.oh * g.ow);
    c.flops(out * static_cast<double>(params_.kernel[0] * params_.kernel[1]));
    c.bytes((static_cast<double>(sy::numel(c.input(0))) + out) * esize(c.input(0).dtype));
  }

 private:
  PoolParams params_;
};

}  // namespace

void add_conv_kernels(KernelList& list) {
  const std::vector<DLDataType> dtypes = {sy::kFloat32, sy::kFloat16};
  for (const char* op : {"aten::conv1d", "aten::conv2d", "aten::convolution", "aten::_convolution"}) {
    add_kernel<ConvKernel>(list, op, "conv", dtypes);
    for (const std::string& act : fusable_activations())
      add_kernel<ConvKernel>(list, std::string(op) + "+" + act, "conv", dtypes);
  }
  add_kernel<PoolKernel>(list, "aten::max_pool2d", "conv", dtypes);
  add_kernel<PoolKernel>(list, "aten::avg_pool2d", "conv", dtypes);
}

}  // namespace sycuda
