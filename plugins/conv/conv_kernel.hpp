// conv plugin: float32 convolution on oneDNN, alone or with a fused activation.
//
// Serves aten::conv1d, aten::conv2d (int or "same"/"valid" padding; unbatched input too),
// aten::convolution and aten::_convolution (1-3 spatial dimensions, not transposed),
// "<each of those>+<activation>" from the consumer table (post_ops.cpp), and
// "<each>+aten::add" / "<each>+aten::add+aten::relu": a residual of the output's shape
// added by oneDNN's sum post-op (a ResNet block's tail; split in two past 16 MiB, see
// split_epilogue.cpp), written in place over the residual when the host allows it. Strided,
// padded (asymmetric for "same"), dilated, grouped and depthwise; bias optional.
//
// Tensor arguments: input, weight, bias (node inputs in that order; weight and bias may
// instead be SY_ATTR_TENSOR attributes of those names), then the residual when fused. Constant weights (data at create)
// are reordered once into the layout the primitive prefers; weights that arrive per run
// are reordered per run. Outputs are host-allocated (infer() gives their shape).
#pragma once

#include "conv_common.hpp"

#include "common/compute_option.hpp"

#include <array>
#include <map>
#include <mutex>

namespace syconv {

class ConvKernel {
 public:
  explicit ConvKernel(const sy::Node& node) : ConvKernel(node, true) {}
  static void supports(const sy::Node& node);
  void infer(sy::Infer& infer);
  // 4-D input and output may be in the oneDNN-format storages (formats.hpp): the output
  // offers the one oneDNN's chosen convolution writes anyway.
  void storage(sy::StorageQuery& q);
  void run(sy::Run& run);

  struct Params {
    std::string node;                // the node's name, for the log
    std::string producer;            // "aten::conv2d"
    int spatial = 0;                 // 1 or 2 (conv1d/conv2d); 0: from the weight's rank
    bool unbatched_ok = false;       // conv1d/conv2d accept an input without batch dim
    std::string pad_mode;            // "", "same" or "valid"
    Dims stride, padding, dilation;  // empty: the attribute is absent (defaults apply)
    int64_t groups = 1;
    Fusion fusion;                          // what is fused after the convolution
    const DLTensor* weight_attr = nullptr;  // weight / bias given as tensor attributes
    const DLTensor* bias_attr = nullptr;
    size_t num_slots = 0;     // input slots the tensors take (2 or 3, fewer with attrs)
    bool own_layouts = true;  // option "@layout": values may stay in oneDNN's layouts
    int winograd_tiles = 2;   // option "@winograd": 0 none, 2 F(2x2,3x3), 4 also F(4x4,3x3)
    // option "@compute" = "bf16": products in bfloat16 (weights converted once, the input
    // per run), accumulated in float32; the output stays float32. Its note says why not.
    sy_compute::Choice compute;
  };

  struct Geometry {
    Dims src, src_strides;                // oneDNN src dims (always batched) and element strides
    Dims wts, wts_strides;                // weights, with a leading group dim when groups > 1
    Dims dst;                             // oneDNN dst dims
    Dims out_shape;                       // what the node returns (no batch dim when unbatched)
    Dims stride, dilation, pad_l, pad_r;  // oneDNN: dilation 0 = none
    int64_t out_channels = 0;
  };

  // input, weight, bias (may be NULL), residual (NULL unless fused) of one call.
  using Args = std::array<const DLTensor*, 4>;
  // The node's or run's inputs in those roles (weight and bias may be attributes).
  static Args args_of(const Params& p, const DLTensor* const* inputs, size_t n);

 private:
  struct Prepared;
  Args args_of(const DLTensor* const* inputs, size_t n) const { return args_of(params_, inputs, n); }
  // prepare_now = false: parse only (for supports()).
  ConvKernel(const sy::Node& node, bool prepare_now);
  // Which of the node's post-ops a primitive runs.
  enum Ops : int {
    kFused = 0,     // all: the sum (residual), then the activation
    kSum = 1,       // the sum alone (the NaN path)
    kBare = 2,      // none: the convolution and its bias (split_epilogue.cpp)
    kWinograd = 3,  // all, by Winograd's algorithm (winograd.cpp); the others are direct
  };
  static constexpr int kNumOps = 4;
  // The primitive for these tensors (`out` NULL: a compact output), built once per layout.
  // `in` / `to` / `res`: the storage of the input / the output / the residual
  // (SY_STORAGE_HOST: plain, strided as the tensor says). `first_channel`: where the call's
  // output channels start, when it takes a part of them (its weight and bias are views of
  // those rows; winograd.cpp).
  std::shared_ptr<const Prepared> prepare(const Args& a, const DLTensor* out, Ops ops = kFused,
                                          SY_StorageIndex in = SY_STORAGE_HOST, SY_StorageIndex to = SY_STORAGE_HOST,
                                          SY_StorageIndex res = SY_STORAGE_HOST, int64_t first_channel = 0);
  std::shared_ptr<const Prepared> prepare_uncached(const Args& a, const DLTensor* out, Ops ops, SY_StorageIndex in,
                                                   SY_StorageIndex to, SY_StorageIndex res, int64_t first_channel);
  // The convolution for these shapes, formats left to oneDNN; callers hold the thread
  // count the runs will use (oneDNN picks its implementation for it).
  dnnl::convolution_forward::primitive_desc describe(
      const Geometry& g, bool has_bias, Ops ops, dnnl::memory::data_type dst_type = dnnl::memory::data_type::f32) const;
  // How a Winograd convolution is cut into primitive calls: `images` images per call (0: no
  // Winograd), each call taking 1 / `parts` of the output channels.
  struct WinogradPlan {
    int64_t images = 0;
    int64_t parts = 1;
  };
  // What one primitive call of `plan` sees of the convolution `g`.
  static Geometry winograd_geometry(const Geometry& g, const WinogradPlan& plan);
  // The storage whose layout that convolution writes (cut as `winograd` says), or
  // SY_STORAGE_HOST where oneDNN has none.
  SY_StorageIndex preferred_storage(const Geometry& g, bool has_bias, const WinogradPlan& winograd) const;
  std::shared_ptr<Prepared> build(const Args& a, const Geometry& g, const dnnl::memory::desc& src_user,
                                  const dnnl::memory::desc& wts_user, const dnnl::memory::desc& bias_user,
                                  const dnnl::memory::desc& dst_user, const dnnl::memory::desc& res_user, Ops ops,
                                  int64_t first_channel);
  // The bare convolution a batch chunk at a time, then the plugin's own loop for what
  // follows it: a residual tail (`+aten::add`, `+aten::add+aten::relu`) on a large output,
  // or a relu after a convolution that reads twice what it writes (split_epilogue.cpp).
  // False when neither applies: run() takes the fused path.
  bool run_split(const Args& a, DLTensor& out, SY_StorageIndex in, SY_StorageIndex to, SY_StorageIndex res);
  // The convolution alone (kBare; `a` without residual) into `dst`, laid out as `out` in `to`.
  void run_bare(const Args& a, const DLTensor& out, SY_StorageIndex in, SY_StorageIndex to, void* dst);
  // A 3x3 convolution by Winograd's algorithm where winograd.hpp allows it and oneDNN has
  // a kernel, a batch chunk at a time if need be (winograd.cpp). False when it does not
  // apply, or the input is one Winograd may not take: run() goes on.
  bool run_winograd(const Args& a, DLTensor& out, SY_StorageIndex in, SY_StorageIndex to, SY_StorageIndex res);
  // The Winograd plan for this call, none where the option, the tensors or the shapes rule
  // Winograd out (winograd.hpp); fills `g` when it gets that far.
  WinogradPlan winograd_call(const Args& a, Geometry* g) const;
  // At create: prepares the Winograd primitive of the first run's shapes; false where
  // Winograd does not apply.
  bool prepare_winograd(const Args& a);
  // The Winograd plan for these shapes: the whole batch, else the largest divisor of it,
  // else one image and the fewest parts of the output channels, for which oneDNN picks the
  // tiles the option allows. Memoized per input shape.
  WinogradPlan winograd_plan(const Geometry& g, bool has_bias) const;
  // Runs `p` into `out` (laid out as p's dst_user); with check_finite, returns whether the
  // input, weights, bias and residual were all finite (else true). `in` / `res`: the
  // storages of the input and the residual (finite_memo.hpp).
  template <typename T>
  void keep_nans(const Prepared& fused, const Prepared& bare, const Args& a, DLTensor& out) const;
  bool execute(const Prepared& p, const Args& a, void* out, bool check_finite, SY_StorageIndex in = SY_STORAGE_HOST,
               SY_StorageIndex res = SY_STORAGE_HOST) const;

  // The last call's tensor layouts per cache (fused, unfused) and what they gave: runs
  // mostly repeat them, and rebuilding descriptors for the cache key cost more than a
  // small convolution's arithmetic.
  struct CallKey {
    std::array<int64_t, 96> v;  // the first n are set (left uninitialised: built per call)
    size_t n = 0;
    bool operator==(const CallKey& o) const;
  };
  // False when the layouts do not fit a key (no memo then).
  static bool call_key(const Args& a, const DLTensor* out, SY_StorageIndex in, SY_StorageIndex to, SY_StorageIndex res,
                       int64_t first_channel, CallKey& key);

  Params params_;
  dnnl::post_ops post_ops_[kNumOps];  // per Ops
  bool nan_guard_ = false;            // the activation may turn a NaN into a number
  bool splits_ = false;               // run_split() may take it: a residual tail or a relu, nothing else
  float residual_alpha_ = 1.f;        // aten::add's alpha: output = conv + alpha * residual
  bool const_weights_ = false, const_bias_ = false;
  bool consts_finite_ = true;      // constant weights and bias hold no NaN or infinity
  bool winograd_weights_ = false;  // constant weights small enough for Winograd (winograd.hpp)
  // Constant weights per layout a primitive asked for (usually one), and per part of the
  // output channels (Winograd may take a part per call); guarded by the cache's lock,
  // since only build() touches it.
  struct PackedWeights {
    int64_t first_channel;  // the part's first output channel (0: all of them)
    sy_onednn::ConstantMemory packed;
  };
  std::vector<PackedWeights> weights_;
  dnnl::memory bias_;                    // constant bias, compact
  ShapeCache<Prepared> cache_[kNumOps];  // per Ops
  std::mutex memo_mutex_;
  CallKey memo_key_[kNumOps];
  std::shared_ptr<const Prepared> memo_[kNumOps];  // per Ops
  mutable std::mutex plans_mutex_;
  mutable std::map<Dims, WinogradPlan> winograd_plans_;  // per input dims
};

// Parses and checks everything but the tensors' shapes; throws sy::Unsupported.
ConvKernel::Params parse_conv(const sy::Node& node);
// Shapes of one call; throws sy::Error naming what does not fit.
ConvKernel::Geometry conv_geometry(const ConvKernel::Params& p, const DLTensor& x, const DLTensor& w,
                                   const DLTensor* b);
// Multiply-adds of one run: what decides whether it is worth more than one thread.
double conv_work(const ConvKernel::Geometry& g);
// A few input channels (an image stem, a patch embedding): oneDNN's direct kernels take
// them plain or nhwc, in float32.
bool few_channels(const ConvKernel::Geometry& g);
// A few input channels and little work per input element (a 3x3 stem rather than ResNet's
// 7x7): oneDNN's direct kernel then reads the input plain, with no reorder to nhwc first.
bool plain_stem(const ConvKernel::Geometry& g);
// The residual's element strides as oneDNN sees it, over the dst dims (a batch stride of
// 0 when the node is unbatched).
Dims residual_strides(const ConvKernel::Geometry& g, const DLTensor& r);

}  // namespace syconv
