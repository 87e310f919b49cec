// conv plugin: the pooling kernel (see pool_kernel.hpp).
#include "pool_kernel.hpp"

#include "finite_memo.hpp"
#include "formats.hpp"

#include <algorithm>
#include <cmath>

namespace syconv {

using dnnl::memory;

namespace {

struct PoolOp {
  const char* op;
  PoolKernel::Kind kind;
  std::vector<std::string> attrs;
};

const std::vector<PoolOp>& pool_ops() {
  static const std::vector<PoolOp> table = {
      {"aten::max_pool2d", PoolKernel::Kind::Max, max_pool_attr_names()},
      {"aten::avg_pool2d",
       PoolKernel::Kind::Avg,
       {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"}},
      {"aten::adaptive_avg_pool2d", PoolKernel::Kind::AdaptiveAvg, {"output_size"}},
  };
  return table;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

PoolKernel::Params parse_pool(const sy::Node& node) {
  const PoolOp* op = nullptr;
  for (const PoolOp& q : pool_ops())
    if (std::string(node.op) == q.op) op = &q;
  if (op == nullptr) throw sy::Unsupported(std::string("conv plugin: unknown pooling op ") + node.op);
  if (node.num_outputs != 1) throw sy::Unsupported("expected one output (indices are not produced)");
  if (node.num_inputs != 1) throw sy::Unsupported("expected one input");
  check_attr_names(node, op->attrs, {});

  PoolKernel::Params p = pool_params(node.attrs, op->kind, "");
  p.own_layouts = own_layouts_option(node.attrs);
  return p;
}

PoolKernel::Params pool_params(const sy::Attrs& a, PoolKernel::Kind kind, const std::string& prefix) {
  PoolKernel::Params p;
  p.kind = kind;
  auto name = [&](const char* n) { return prefix + n; };
  auto positive = [](const Dims& v, const char* what) {
    for (int64_t x : v)
      if (x < 1) throw sy::Unsupported(std::string(what) + " must be positive, got " + to_string(v));
    return v;
  };
  if (p.kind == PoolKernel::Kind::AdaptiveAvg) {
    p.output_size = positive(int_list(a, name("output_size").c_str(), 2, {}), "output_size");
    return p;
  }
  p.kernel = positive(int_list(a, name("kernel_size").c_str(), 2, {}), "kernel_size");
  // An empty stride means "the kernel size" in ATen.
  const std::string stride = name("stride");
  bool no_stride = !a.has(stride.c_str());
  if (!no_stride && a.kind(stride.c_str()) == SY_ATTR_INTS) {
    const Dims given = a.ints(stride.c_str());
    no_stride = given.empty();
  }
  p.stride = no_stride ? p.kernel : positive(int_list(a, stride.c_str(), 2, {}), "stride");
  p.padding = int_list(a, name("padding").c_str(), 2, {0, 0});
  if (p.kind == PoolKernel::Kind::Max)
    p.dilation = positive(int_list(a, name("dilation").c_str(), 2, {1, 1}), "dilation");
  for (size_t d = 0; d < 2; ++d)
    if (p.padding[d] < 0 || p.padding[d] > p.kernel[d] / 2)
      throw sy::Unsupported("padding " + to_string(p.padding) + " must be between 0 and half the kernel size " +
                            to_string(p.kernel));
  p.ceil_mode = a.i(name("ceil_mode").c_str(), 0) != 0;
  p.count_include_pad = a.i(name("count_include_pad").c_str(), 1) != 0;
  p.divisor = a.i(name("divisor_override").c_str(), 0);
  if (a.has(name("divisor_override").c_str()) && p.divisor == 0)
    throw sy::Unsupported("divisor_override must not be zero");
  return p;
}

PoolKernel::Geometry pool_geometry(const PoolKernel::Params& p, const DLTensor& x) {
  if (x.ndim != 3 && x.ndim != 4)
    throw sy::Error("input has " + std::to_string(x.ndim) + " dimensions, expected 4 (or 3 unbatched)");
  const Dims xs = sy::shape_of(x), xstr = strides_of(x);
  PoolKernel::Geometry g;
  g.src = x.ndim == 3 ? Dims{1} : Dims{};
  g.src_strides = x.ndim == 3 ? Dims{0} : Dims{};  // a size-1 dim: any stride
  g.src.insert(g.src.end(), xs.begin(), xs.end());
  g.src_strides.insert(g.src_strides.end(), xstr.begin(), xstr.end());
  if (g.src[1] < 1 || g.src[2] < 1 || g.src[3] < 1)
    throw sy::Error("input " + to_string(xs) + " has an empty channel or spatial dimension");
  g.dst = {g.src[0], g.src[1], 0, 0};
  for (int d = 0; d < 2; ++d) {
    const int64_t in = g.src[2 + d];
    if (p.kind == PoolKernel::Kind::AdaptiveAvg) {
      const int64_t out = p.output_size[d];
      if (in % out != 0)
        throw sy::Unsupported("adaptive_avg_pool2d: output size " + to_string(p.output_size) +
                              " does not divide input size " + to_string(xs) +
                              " (uneven adaptive windows are not supported)");
      g.kernel.push_back(in / out);
      g.stride.push_back(in / out);
      g.dilation.push_back(0);
      g.pad_l.push_back(0);
      g.pad_r.push_back(0);
      g.dst[2 + d] = out;
      continue;
    }
    const int64_t k = p.kernel[d], s = p.stride[d], pad = p.padding[d], dil = p.dilation[d];
    const int64_t span = dil * (k - 1) + 1;
    // ATen's output size (pooling_output_shape): the last window must start inside the
    // input or its left padding.
    int64_t out = floor_div(in + 2 * pad - span + (p.ceil_mode ? s - 1 : 0), s) + 1;
    if (p.ceil_mode && (out - 1) * s >= in + pad) --out;
    if (out < 1)
      throw sy::Error("input " + to_string(xs) + " is too small for kernel " + to_string(p.kernel) + " with padding " +
                      to_string(p.padding) + " and dilation " + to_string(p.dilation));
    // oneDNN wants the right padding that makes exactly `out` windows.
    const int64_t right = (out - 1) * s + span - in - pad;
    if (p.kind == PoolKernel::Kind::Avg && p.count_include_pad && p.divisor == 0 && right > pad)
      throw sy::Unsupported(
          "avg_pool2d with ceil_mode and count_include_pad where the last window "
          "runs past the padded input (ATen divides it by a smaller count)");
    g.kernel.push_back(k);
    g.stride.push_back(s);
    g.dilation.push_back(dil - 1);
    g.pad_l.push_back(pad);
    g.pad_r.push_back(std::max<int64_t>(right, 0));
    g.dst[2 + d] = out;
  }
  g.out_shape = g.dst;
  if (x.ndim == 3) g.out_shape.erase(g.out_shape.begin());
  return g;
}

// ---- the kernel ------------------------------------------------------------------------

struct PoolKernel::Prepared {
  dnnl::pooling_v2_forward pool;
  memory::desc src_user, src, dst_user, dst, scratch;
  dnnl::reorder src_in, dst_out;  // empty when the layouts already agree
  bool plain = true;              // the primitive runs on compact NCHW (else a storage's layout)
  double window = 0;              // elements read per output element
};

void PoolKernel::supports(const sy::Node& node) {
  Params p = parse_pool(node);
  const DLTensor& x = node.input(0);
  check_tensor(x, "input");
  const Geometry g = sy::declining([&] { return pool_geometry(p, x); });
  describable(g.src, g.src_strides, "input");
}

PoolKernel::PoolKernel(const sy::Node& node) : params_(parse_pool(node)) {
  if (sy::numel(node.input(0)) > 0) prepare(node.input(0), nullptr);
}

void PoolKernel::infer(sy::Infer& infer) {
  infer.set_output(0, sy::kFloat32, pool_geometry(params_, infer.input(0)).out_shape);
}

void PoolKernel::storage(sy::StorageQuery& q) {
  const DLTensor& x = *q.args->inputs[0];
  if (!params_.own_layouts || !format_holds(x.dtype, x.ndim)) return;  // plain only
  q.reads(0, SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(Blocked16::kIndex) | SY_STORAGE_MASK(ChannelsLast::kIndex));
  // nhwc: the layout oneDNN's convolutions keep on AVX-512 cores (formats.hpp); a reader
  // wanting another reorders as it would from NCHW.
  q.writes(0, SY_STORAGE_MASK(ChannelsLast::kIndex) | SY_STORAGE_MASK_HOST);
}

std::shared_ptr<const PoolKernel::Prepared> PoolKernel::prepare(const DLTensor& x, const DLTensor* out,
                                                                SY_StorageIndex in, SY_StorageIndex to) {
  check_tensor(x, "input");  // its layout may differ from the one supports() saw
  Geometry g = pool_geometry(params_, x);
  Dims dst_strides = compact_strides(g.dst);
  if (out != nullptr) {
    if (sy::shape_of(*out) != g.out_shape)
      throw sy::Error("output " + to_string(sy::shape_of(*out)) + " is not the inferred " + to_string(g.out_shape),
                      SY_ERROR_INTERNAL);
    dst_strides = strides_of(*out);
    if (out->ndim == 3) dst_strides.insert(dst_strides.begin(), 0);
  }
  memory::desc src_user = in != SY_STORAGE_HOST ? layout_of_storage(in, g.src) : strided_desc(g.src, g.src_strides);
  memory::desc dst_user = to != SY_STORAGE_HOST ? layout_of_storage(to, g.dst) : strided_desc(g.dst, dst_strides);
  Dims key;
  append_key(key, src_user);
  append_key(key, dst_user);
  return cache_.get(key, [&] {
    auto p = std::make_shared<Prepared>();
    p->window = static_cast<double>(g.kernel[0] * g.kernel[1]);
    double work = static_cast<double>(g.dst[0] * g.dst[1] * g.dst[2] * g.dst[3]) * p->window;
    sy_omp::Threads threads(work);  // oneDNN fixes an implementation's thread count when it is made
    try {
      const auto f32 = memory::data_type::f32;
      const Params& q = params_;
      dnnl::algorithm alg = q.kind == Kind::Max ? dnnl::algorithm::pooling_max
                            : (q.kind == Kind::AdaptiveAvg || q.count_include_pad || q.divisor != 0)
                                ? dnnl::algorithm::pooling_avg_include_padding
                                : dnnl::algorithm::pooling_avg_exclude_padding;
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      if (q.divisor != 0) {  // oneDNN divides every window by its full size: rescale
        dnnl::post_ops ops;
        float window = static_cast<float>(g.kernel[0] * g.kernel[1]);
        ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, window / static_cast<float>(q.divisor), 0.f);
        attr.set_post_ops(ops);
      }
      // The input's layout where it is a storage's (no reorder in), else compact NCHW;
      // the output in the same layout (pooling is memory-bound: a layout change buys nothing).
      const memory::format_tag layout = in == Blocked16::kIndex      ? memory::format_tag::nChw16c
                                        : in == ChannelsLast::kIndex ? memory::format_tag::nhwc
                                                                     : memory::format_tag::nchw;
      p->plain = layout == memory::format_tag::nchw;
      memory::desc src(g.src, f32, layout), dst(g.dst, f32, layout);
      dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, dst, g.stride, g.kernel,
                                       g.dilation, g.pad_l, g.pad_r);
      dnnl::pooling_v2_forward::primitive_desc pd(d, attr, engine());
      p->pool = dnnl::pooling_v2_forward(pd);
      p->src_user = src_user;
      p->dst_user = dst_user;
      p->src = pd.src_desc();
      p->dst = pd.dst_desc();
      p->scratch = pd.scratchpad_desc();
      if (p->src != src_user)
        p->src_in = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), src_user, engine(), p->src));
      if (p->dst != dst_user)
        p->dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p->dst, engine(), dst_user));
    } catch (const dnnl::error& e) {
      throw sy::Error(
          "conv plugin: oneDNN could not prepare pooling for input " + to_string(g.src) + ": " + error_message(e),
          error_status(e));
    }
    return p;
  });
}

// oneDNN's max pooling skips NaN; ATen's returns NaN for every window holding one. `src`
// and `dst` are compact NCHW (the primitive's own layouts), and src holds a non-finite value.
static void propagate_nan(const PoolKernel::Geometry& g, const memory& src, memory& dst) {
  const float* x = static_cast<const float*>(src.get_data_handle());
  float* y = static_cast<float*>(dst.get_data_handle());
  const int64_t H = g.src[2], W = g.src[3], OH = g.dst[2], OW = g.dst[3];
  const int64_t n = g.src[0] * g.src[1] * H * W;
  for (const float* it = std::find_if(x, x + n, [](float v) { return std::isnan(v); }); it != x + n;
       it = std::find_if(it + 1, x + n, [](float v) { return std::isnan(v); })) {
    const int64_t i = it - x, plane = i / (H * W), h = i / W % H, w = i % W;
    // Output (oh, ow) reads input row oh * stride - pad + kh * dilation for kh < kernel.
    for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
      const int64_t th = h + g.pad_l[0] - kh * (g.dilation[0] + 1);
      if (th < 0 || th % g.stride[0] != 0 || th / g.stride[0] >= OH) continue;
      for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
        const int64_t tw = w + g.pad_l[1] - kw * (g.dilation[1] + 1);
        if (tw < 0 || tw % g.stride[1] != 0 || tw / g.stride[1] >= OW) continue;
        y[(plane * OH + th / g.stride[0]) * OW + tw / g.stride[1]] = *it;
      }
    }
  }
}

// Whether the pooling's input holds no NaN or infinity, asking the memo first (`src` may be
// a reordered copy of `x`: the memo is keyed by the user's tensor).
static bool src_finite(const DLTensor& x, SY_StorageIndex storage, const memory::desc& user_md, const memory& src) {
  return values_below(x, user_md, storage, src, kNonFinite);
}

void PoolKernel::run(sy::Run& run) {
  const DLTensor& x = run.input(0);
  DLTensor& out = run.output(0);
  if (sy::numel(out) == 0) return;  // empty batch or channels: nothing to compute
  if (params_.kind == Kind::Max && run.output_storage(0) == ChannelsLast::kIndex &&
      max_pool_into_nhwc(pool_geometry(params_, x), static_cast<const float*>(handle(x)), run.input_storage(0),
                         static_cast<float*>(handle(out))))
    return;
  std::shared_ptr<const Prepared> p = prepare(x, &out, run.input_storage(0), run.output_storage(0));
  sy_omp::Threads threads(static_cast<double>(sy::numel(out)) * p->window);
  try {
    dnnl::engine& eng = engine();
    dnnl::stream& s = thread_stream();
    memory src_user(p->src_user, eng, handle(x)), dst_user(p->dst_user, eng, handle(out));
    memory src = src_user, dst = dst_user;
    if (p->src_in) {
      src = memory(p->src, eng);
      reorder_into(s, p->src_in, src_user, src);
    }
    if (p->dst_out) dst = memory(p->dst, eng);
    memory scratch = thread_scratch(p->scratch);
    sy_onednn::execute(p->pool, s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratch}});
    if (params_.kind == Kind::Max) s.wait();
    // Any layout holds the same values (a blocked one pads with zeros): check them all.
    if (params_.kind == Kind::Max && !src_finite(x, run.input_storage(0), p->src_user, src)) {
      const Geometry g = pool_geometry(params_, x);
      if (p->plain) {
        propagate_nan(g, src, dst);
      } else {  // oneDNN's jit pooling kept NaN in the storage tests; an implementation that
                // skips it is mended in NCHW copies, written back in the primitive's layout
        const auto f32 = memory::data_type::f32;
        memory src_nchw({g.src, f32, memory::format_tag::nchw}, eng),
            dst_nchw({g.dst, f32, memory::format_tag::nchw}, eng);
        dnnl::reorder(src, src_nchw).execute(s, src, src_nchw);
        dnnl::reorder(dst, dst_nchw).execute(s, dst, dst_nchw);
        s.wait();
        propagate_nan(g, src_nchw, dst_nchw);
        dnnl::reorder(dst_nchw, dst).execute(s, dst_nchw, dst);
      }
    }
    if (p->dst_out) reorder_into(s, p->dst_out, dst, dst_user);
    s.wait();
  } catch (const dnnl::error& e) {
    throw sy::Error("conv plugin: oneDNN failed to run pooling: " + error_message(e), error_status(e));
  }
}

}  // namespace syconv
