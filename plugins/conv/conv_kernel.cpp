// conv plugin: the convolution kernel (see conv_kernel.hpp).
#include "conv_kernel.hpp"

#include "finite_memo.hpp"
#include "formats.hpp"
#include "winograd.hpp"

#include "common/bf16_convert.hpp"

#include <switchyard/conv_attributes.hpp>

#include <algorithm>
#include <cmath>

namespace syconv {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

namespace {

const DLTensor* tensor_attr(const sy::Attrs& a, const char* name) {
  return a.kind(name) == SY_ATTR_TENSOR ? a.tensor(name) : nullptr;
}

}  // namespace

ConvKernel::Params parse_conv(const sy::Node& node) {
  ConvKernel::Params p;
  p.node = node.name != nullptr ? node.name : "";
  p.fusion = fusion_of(node.op, &p.producer);
  std::vector<std::string> known = sy::conv_attribute_names(p.producer);
  if (known.empty()) throw sy::Unsupported("conv plugin: unknown convolution op " + p.producer);
  if (node.num_outputs != 1) throw sy::Unsupported("expected one output");
  known.insert(known.end(), {"weight", "bias"});
  check_attr_names(node, known, p.fusion.attrs);

  const sy::Attrs& a = node.attrs;
  const sy::ConvAttributes conv = sy::conv_attributes(p.producer, a);
  p.spatial = conv.spatial;
  p.unbatched_ok = conv.unbatched_ok;
  p.pad_mode = conv.pad_mode;
  p.stride = conv.stride;
  p.padding = conv.padding;
  p.dilation = conv.dilation;
  p.groups = conv.groups;
  p.weight_attr = tensor_attr(a, "weight");
  p.bias_attr = tensor_attr(a, "bias");
  p.num_slots = 1 + (p.weight_attr ? 0 : 1) + (p.bias_attr ? 0 : 1);
  // Config option `layout`: "onednn" (default) lets values stay in oneDNN's layouts between
  // convolutions; "plain" keeps every value NCHW (to compare, or to rule the formats out).
  p.own_layouts = own_layouts_option(a);
  p.winograd_tiles = winograd_option(a);
  p.compute = sy_compute::choose(a);
  if (p.compute.bf16) p.winograd_tiles = 0;  // oneDNN's Winograd is float32 only
  return p;
}

ConvKernel::Geometry conv_geometry(const ConvKernel::Params& p, const DLTensor& x, const DLTensor& w,
                                   const DLTensor* b) {
  const int sp = p.spatial != 0 ? p.spatial : w.ndim - 2;
  if (sp < 1 || sp > 3) throw sy::Error("weight has " + std::to_string(w.ndim) + " dimensions (expected 3 to 5)");
  if (w.ndim != sp + 2)
    throw sy::Error("weight has " + std::to_string(w.ndim) + " dimensions, expected " + std::to_string(sp + 2));
  const bool unbatched = p.unbatched_ok && x.ndim == sp + 1;
  if (x.ndim != sp + 2 && !unbatched)
    throw sy::Error("input has " + std::to_string(x.ndim) + " dimensions, expected " + std::to_string(sp + 2) +
                    (p.unbatched_ok ? " (or " + std::to_string(sp + 1) + " unbatched)" : ""));
  auto expand = [&](const Dims& v, int64_t fallback, const char* what) {
    if (v.empty()) return Dims(sp, fallback);
    if (v.size() == 1) return Dims(sp, v[0]);
    if (static_cast<int>(v.size()) != sp)
      throw sy::Error(std::string(what) + " " + to_string(v) + " does not fit " + std::to_string(sp) +
                      " spatial dimensions");
    return v;
  };
  const Dims stride = expand(p.stride, 1, "stride"), dilation = expand(p.dilation, 1, "dilation");
  Dims pad_l = expand(p.padding, 0, "padding"), pad_r = pad_l;

  const Dims xs = sy::shape_of(x), ws = sy::shape_of(w);
  Dims xstr = strides_of(x);
  const int64_t batch = unbatched ? 1 : xs[0], channels = xs[unbatched ? 0 : 1];
  const int64_t oc = ws[0], icg = ws[1], g = p.groups;
  if (oc < 1 || icg < 1) throw sy::Error("weight " + to_string(ws) + " is empty");
  if (oc % g != 0)
    throw sy::Error("out_channels " + std::to_string(oc) + " is not divisible by groups " + std::to_string(g));
  if (channels != icg * g)
    throw sy::Error("input " + to_string(xs) + " has " + std::to_string(channels) + " channels; weight " +
                    to_string(ws) + " with groups=" + std::to_string(g) + " expects " + std::to_string(icg * g));
  if (b != nullptr && (b->ndim != 1 || b->shape[0] != oc))
    throw sy::Error("bias " + to_string(sy::shape_of(*b)) + " does not match out_channels " + std::to_string(oc));
  if (p.pad_mode == "same") {
    for (int d = 0; d < sp; ++d) {
      if (stride[d] != 1) throw sy::Error("padding='same' needs stride 1, got " + to_string(stride));
      int64_t total = dilation[d] * (ws[2 + d] - 1);
      pad_l[d] = total / 2;  // the odd one goes to the end, as ATen does
      pad_r[d] = total - pad_l[d];
    }
  }

  ConvKernel::Geometry geo;
  geo.out_channels = oc;
  geo.src = unbatched ? Dims{1} : Dims{};
  geo.src_strides = unbatched ? Dims{channels * xstr[0]} : Dims{};
  geo.src.insert(geo.src.end(), xs.begin(), xs.end());
  geo.src_strides.insert(geo.src_strides.end(), xstr.begin(), xstr.end());
  geo.dst = {batch, oc};
  for (int d = 0; d < sp; ++d) {
    const int64_t in = geo.src[2 + d], k = ws[2 + d];
    const int64_t span = dilation[d] * (k - 1) + 1;
    if (in < 1) throw sy::Error("input " + to_string(xs) + " is empty in a spatial dimension");
    if (in + pad_l[d] + pad_r[d] < span)
      throw sy::Error("input " + to_string(xs) + " (padded) is smaller than the kernel " + to_string(ws) +
                      " with dilation " + to_string(dilation));
    geo.dst.push_back((in + pad_l[d] + pad_r[d] - span) / stride[d] + 1);
    geo.dilation.push_back(dilation[d] - 1);
  }
  geo.stride = stride;
  geo.pad_l = pad_l;
  geo.pad_r = pad_r;
  geo.out_shape = geo.dst;
  if (unbatched) geo.out_shape.erase(geo.out_shape.begin());

  const Dims wstr = strides_of(w);
  if (g == 1) {
    geo.wts = ws;
    geo.wts_strides = wstr;
  } else {  // [OC, IC/g, k...] seen as [g, OC/g, IC/g, k...]
    geo.wts = {g, oc / g};
    geo.wts_strides = {oc / g * wstr[0], wstr[0]};
    geo.wts.insert(geo.wts.end(), ws.begin() + 1, ws.end());
    geo.wts_strides.insert(geo.wts_strides.end(), wstr.begin() + 1, wstr.end());
  }
  return geo;
}

// ---- the kernel ------------------------------------------------------------------------

struct ConvKernel::Prepared {
  dnnl::convolution_forward conv;
  memory::desc src_user, src, wts_user, wts, bias_user, bias, dst_user, dst, res_user, scratch;
  dnnl::reorder src_in, wts_in, bias_in, dst_out;  // empty when the layouts already agree
  bool src_to_bf16 = false;                        // src_in only changes float32 to bfloat16: sy_bf16::to_bf16 instead
  dnnl::reorder res_in;                            // residual into dst (a copy at least), when fused
  memory weights;                                  // constant weights in `wts` layout
  memory const_bias;                               // the constant bias's channels of this call
  bool has_bias = false;
  double work = 0;  // multiply-adds per run
};

ConvKernel::Args ConvKernel::args_of(const Params& params, const DLTensor* const* inputs, size_t n) {
  Args a{};
  if (params.fusion.residual) {  // the last input, wherever the convolution's optional ones end
    if (n < 2) throw sy::Error("the residual (the add's other tensor) is missing");
    a[3] = inputs[--n];
  }
  size_t slot = 0;
  auto next = [&]() -> const DLTensor* { return slot < n ? inputs[slot++] : (++slot, nullptr); };
  a[0] = next();
  a[1] = params.weight_attr ? params.weight_attr : next();
  a[2] = params.bias_attr ? params.bias_attr : next();
  if (a[0] == nullptr) throw sy::Error("input is missing");
  if (params.fusion.residual && a[3] == nullptr) throw sy::Error("the residual (the add's other tensor) is missing");
  if (a[1] == nullptr) throw sy::Error("weight is missing");
  return a;
}

Dims residual_strides(const ConvKernel::Geometry& g, const DLTensor& r) {
  Dims s = strides_of(r);
  if (g.out_shape.size() != g.dst.size()) s.insert(s.begin(), 0);
  return s;
}

void ConvKernel::supports(const sy::Node& node) {
  ConvKernel k(node, false);  // parses attributes and builds the post-ops: Unsupported on any doubt
  if (k.params_.fusion.max_pool) throw sy::Unsupported("a fused max pool is ConvPoolKernel's (conv_pool.hpp)");
  const size_t slots = k.params_.num_slots + (k.params_.fusion.residual ? 1 : 0);
  if (node.num_inputs > slots)
    throw sy::Unsupported(
        "expected at most " + std::to_string(slots) + " inputs" +
        (k.params_.fusion.residual ? "" : " (a fused activation with tensor inputs is not supported)") + ", got " +
        std::to_string(node.num_inputs));
  if (k.params_.fusion.residual && (node.num_inputs < 2 || node.inputs[node.num_inputs - 1] == nullptr))
    throw sy::Unsupported("the add's other operand is not a tensor");
  Args a = k.args_of(node.inputs, node.num_inputs);
  check_tensor(*a[0], "input");
  check_tensor(*a[1], "weight");
  if (a[2] != nullptr) check_tensor(*a[2], "bias");
  const Geometry g = sy::declining([&] { return conv_geometry(k.params_, *a[0], *a[1], a[2]); });
  describable(g.src, g.src_strides, "input");
  describable(g.wts, g.wts_strides, "weight");
  if (a[3] != nullptr) {  // oneDNN's sum adds element for element: no broadcasting
    check_tensor(*a[3], "residual");
    if (sy::shape_of(*a[3]) != g.out_shape)
      throw sy::Unsupported("residual " + to_string(sy::shape_of(*a[3])) + " is not the output's shape " +
                            to_string(g.out_shape) + " (a broadcasting add is not fused)");
    describable(g.dst, residual_strides(g, *a[3]), "residual");
  }
}

ConvKernel::ConvKernel(const sy::Node& node, bool prepare_now) : params_(parse_conv(node)) {
  post_ops_[kFused] = post_ops_of(params_.fusion, node.attrs);
  post_ops_[kSum] = post_ops_of(Fusion{params_.fusion.residual, nullptr, "", false, {}}, node.attrs);
  post_ops_[kBare] = dnnl::post_ops();
  post_ops_[kWinograd] = post_ops_[kFused];
  nan_guard_ = params_.fusion.activation != nullptr && !params_.fusion.activation->keeps_nan;
  const bool relu = params_.fusion.activation != nullptr && std::string(params_.fusion.activation->op) == "aten::relu";
  splits_ = params_.fusion.residual ? params_.fusion.activation == nullptr || relu : relu;
  residual_alpha_ = static_cast<float>(node.attrs.f("post.alpha", 1.0));
  if (!prepare_now) return;
  Args a = args_of(node.inputs, node.num_inputs);
  const_weights_ = a[1]->data != nullptr;
  const_bias_ = a[2] != nullptr && a[2]->data != nullptr;
  Geometry g = conv_geometry(params_, *a[0], *a[1], a[2]);
  sy_compute::Choice& compute = params_.compute;
  if (compute.bf16 && !const_weights_)
    compute = {true, false, "bfloat16 needs constant weights, converted once; these arrive per run"};
  if (compute.bf16 && few_channels(g)) compute = {true, false, "a few-channel input (an image stem) stays float32"};
  try {
    if (const_weights_) {
      const uint32_t exponent = max_exponent(memory(plain_desc(*a[1]), engine(), handle(*a[1])));
      consts_finite_ = exponent < kNonFinite;
      winograd_weights_ = exponent < kWinogradWeightsBelow;
    }
    if (const_bias_) {  // compact copy once; the primitive wants a dense bias
      memory user(plain_desc(*a[2]), engine(), handle(*a[2]));
      bias_ = memory(memory::desc({g.out_channels}, memory::data_type::f32, tag::a), engine());
      dnnl::stream& s = thread_stream();
      reorder_into(s, dnnl::reorder(user, bias_), user, bias_);
      s.wait();
      consts_finite_ = consts_finite_ && all_finite(bias_);
    }
  } catch (const dnnl::error& e) {
    throw sy::Error("conv plugin: could not copy the bias: " + error_message(e), error_status(e));
  }
  // The create-time shapes are those of the first run: prepare (and reorder weights) now.
  if (sy::numel(*a[0]) > 0 && !prepare_winograd(a)) prepare(a, nullptr);
}

void ConvKernel::infer(sy::Infer& infer) {
  Args a = args_of(infer.args->inputs, infer.num_inputs());
  infer.set_output(0, sy::kFloat32, conv_geometry(params_, *a[0], *a[1], a[2]).out_shape);
}

void ConvKernel::storage(sy::StorageQuery& q) {
  Args a = args_of(q.args->inputs, q.num_inputs());
  sy_compute::report(q, params_.compute, static_cast<uint64_t>(sy::numel(*a[0])),
                     static_cast<uint64_t>(sy::numel(*a[1])));
  const size_t res = q.num_inputs() - 1;
  if (a[3] != nullptr) q.in_place(0, res);  // the sum post-op adds onto what the output holds
  if (!params_.own_layouts) return;
  if (!format_holds(a[0]->dtype, a[0]->ndim) || a[1]->ndim != 4) return;  // plain only
  // Computing in bfloat16, it reads an input already rounded so (formats.hpp), and writes
  // its output so for readers that compute in bfloat16 too; not a residual sum's output,
  // which other readers see whole.
  const bool bf16 = params_.compute.bf16;
  q.reads(0, SY_STORAGE_MASK_HOST | kFloatFormats | (bf16 ? kBf16Formats : 0));
  const Geometry g = conv_geometry(params_, *a[0], *a[1], a[2]);
  Geometry call;
  const SY_StorageIndex mine = preferred_storage(g, a[2] != nullptr, winograd_call(a, &call));
  if (mine != SY_STORAGE_HOST) {
    const SY_StorageMask rounded = bf16 && a[3] == nullptr ? SY_STORAGE_MASK(bf16_twin(mine)) : 0;
    q.writes(0, rounded | SY_STORAGE_MASK(mine) | SY_STORAGE_MASK_HOST);
  }
  if (a[3] != nullptr)  // any layout: it is reordered into the output's unless already there
    q.reads(res, SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(Blocked16::kIndex) | SY_STORAGE_MASK(ChannelsLast::kIndex));
}

double conv_work(const ConvKernel::Geometry& g) {
  double work = static_cast<double>(g.src[0]);
  for (int64_t d : g.wts) work *= static_cast<double>(d);
  for (size_t d = 2; d < g.dst.size(); ++d) work *= static_cast<double>(g.dst[d]);
  return work;
}

namespace {
// Multiply-adds per input element from which a few-channel input is reordered to nhwc.
constexpr double kNhwcStemMacsPerInput = 256;

double elements(const Dims& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}
}  // namespace

bool few_channels(const ConvKernel::Geometry& g) { return g.src[1] <= 4 && g.wts.size() == g.src.size(); }

bool plain_stem(const ConvKernel::Geometry& g) {
  return few_channels(g) && conv_work(g) < kNhwcStemMacsPerInput * elements(g.src);
}

dnnl::convolution_forward::primitive_desc ConvKernel::describe(const Geometry& g, bool has_bias, Ops ops,
                                                               memory::data_type dst_type) const {
  using fwd = dnnl::convolution_forward;
  const auto f32 = memory::data_type::f32;
  // `any`: oneDNN picks the layouts its fastest implementation wants. Except for a few
  // input channels (an image stem, a patch embedding): then plain input skips a reorder
  // and oneDNN has direct kernels for it (measured with tools/bench/bench_conv). But where
  // each input element feeds hundreds of multiply-adds, nhwc's brgemm kernel gains more
  // than the reorder into nhwc costs: ResNet's 7x7 stem at batch 8, 4.4-4.5 -> 4.3 ms with
  // the reorder (node profiles); ViT's patch embedding about even.
  const bool few = few_channels(g);
  const bool plain_src = plain_stem(g);
  // bfloat16 products (params_.compute, never with few channels): src and weights in bf16.
  const auto in_type = params_.compute.bf16 ? memory::data_type::bf16 : f32;
  memory::desc src_any = plain_src ? strided_desc(g.src, compact_strides(g.src))
                         : few     ? memory::desc(g.src, f32, tag::nhwc)
                                   : memory::desc(g.src, in_type, tag::any);
  memory::desc wts_any(g.wts, in_type, tag::any), dst_any(g.dst, dst_type, tag::any);
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops_[ops]);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per-run scratch: runs may overlap
  auto make = [&](dnnl::algorithm alg, const memory::desc& src) {
    const auto prop = dnnl::prop_kind::forward_inference;
    fwd::desc d = has_bias ? fwd::desc(prop, alg, src, wts_any, memory::desc({g.out_channels}, f32, tag::a), dst_any,
                                       g.stride, g.dilation, g.pad_l, g.pad_r)
                           : fwd::desc(prop, alg, src, wts_any, dst_any, g.stride, g.dilation, g.pad_l, g.pad_r);
    return fwd::primitive_desc(d, attr, engine());
  };
  if (ops == kWinograd)  // throws where oneDNN has none for these shapes (winograd.cpp asks first)
    return make(dnnl::algorithm::convolution_winograd, memory::desc(g.src, f32, tag::any));
  fwd::primitive_desc pd = make(dnnl::algorithm::convolution_direct, src_any);
  // Narrow groups (RegNet's 8 channels) make oneDNN pick a blocked layout of its own
  // (aBcd8b), which no storage holds: each call would reorder in and out, and each reader
  // back, at about 6.6 us a reorder on RegNet-Y-400MF at batch 1. Its nhwc kernel for those
  // shapes ran 1-2 us slower than the blocked one (2 threads), so nhwc it is, where it is a JIT kernel.
  const bool grouped = g.wts.size() == 5;
  if (grouped && !few && !plain_src && storage_of_layout(pd.dst_desc(), g.dst) == SY_STORAGE_HOST) {
    try {
      dst_any = memory::desc(g.dst, dst_type, tag::nhwc);
      fwd::primitive_desc nhwc = make(dnnl::algorithm::convolution_direct, memory::desc(g.src, in_type, tag::nhwc));
      const std::string impl = nhwc.impl_info_str();
      if (impl.rfind("jit", 0) == 0 || impl.rfind("brg", 0) == 0) return nhwc;
    } catch (const dnnl::error&) {  // no nhwc kernel for it: the blocked one stays
    }
  }
  return pd;
}

SY_StorageIndex ConvKernel::preferred_storage(const Geometry& g, bool has_bias, const WinogradPlan& winograd) const {
  try {
    const Geometry call = winograd.images > 0 ? winograd_geometry(g, winograd) : g;  // what one primitive call sees
    sy_omp::Threads threads(conv_work(call));  // as build() will make it: same implementation
    return storage_of_layout(describe(call, has_bias, winograd.images > 0 ? kWinograd : kFused).dst_desc(), call.dst);
  } catch (const dnnl::error&) {
    return SY_STORAGE_HOST;  // no layout to offer: stay plain (run() reports real failures)
  }
}

bool ConvKernel::CallKey::operator==(const CallKey& o) const {
  return n == o.n && std::equal(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), o.v.begin());
}

bool ConvKernel::call_key(const Args& a, const DLTensor* out, SY_StorageIndex in, SY_StorageIndex to,
                          SY_StorageIndex res, int64_t first_channel, CallKey& key) {
  key.n = 0;
  auto push = [&](int64_t x) {
    if (key.n == key.v.size()) return false;
    key.v[key.n++] = x;
    return true;
  };
  bool fits = push(in) && push(to) && push(res) && push(first_channel);
  for (const DLTensor* t : {a[0], a[1], a[2], a[3], out}) {
    if (t == nullptr) {
      fits = fits && push(-1);
      continue;
    }
    fits = fits && push(t->ndim) && push(t->dtype.code | (t->dtype.bits << 8) | (int64_t{t->dtype.lanes} << 16)) &&
           push(t->device.device_type);
    for (int d = 0; d < t->ndim; ++d) fits = fits && push(t->shape[d]) && push(t->strides ? t->strides[d] : -2);
  }
  return fits;
}

std::shared_ptr<const ConvKernel::Prepared> ConvKernel::prepare(const Args& a, const DLTensor* out, Ops ops,
                                                                SY_StorageIndex in, SY_StorageIndex to,
                                                                SY_StorageIndex res, int64_t first_channel) {
  CallKey call;
  const bool memo = call_key(a, out, in, to, res, first_channel, call);
  if (memo) {
    std::lock_guard<std::mutex> lock(memo_mutex_);
    if (memo_[ops] && memo_key_[ops] == call) return memo_[ops];
  }
  std::shared_ptr<const Prepared> p = prepare_uncached(a, out, ops, in, to, res, first_channel);
  if (memo) {
    std::lock_guard<std::mutex> lock(memo_mutex_);
    memo_key_[ops] = call;
    memo_[ops] = p;
  }
  return p;
}

std::shared_ptr<const ConvKernel::Prepared> ConvKernel::prepare_uncached(const Args& a, const DLTensor* out, Ops ops,
                                                                         SY_StorageIndex in, SY_StorageIndex to,
                                                                         SY_StorageIndex res, int64_t first_channel) {
  check_tensor(*a[0], "input");  // layouts may differ from those supports() saw
  check_tensor(*a[1], "weight");
  if (a[2] != nullptr) check_tensor(*a[2], "bias");
  Geometry g = conv_geometry(params_, *a[0], *a[1], a[2]);
  Dims dst_strides;
  if (out != nullptr) {
    if (sy::shape_of(*out) != g.out_shape)
      throw sy::Error("output " + to_string(sy::shape_of(*out)) + " is not the inferred " + to_string(g.out_shape),
                      SY_ERROR_INTERNAL);
    dst_strides = strides_of(*out);
    if (g.out_shape.size() != g.dst.size()) dst_strides.insert(dst_strides.begin(), 0);  // unbatched
  } else {
    dst_strides = compact_strides(g.dst);
  }
  memory::desc src_user = in != SY_STORAGE_HOST ? layout_of_storage(in, g.src) : strided_desc(g.src, g.src_strides);
  memory::desc dst_user = to != SY_STORAGE_HOST ? layout_of_storage(to, g.dst) : strided_desc(g.dst, dst_strides);
  memory::desc wts_user = strided_desc(g.wts, g.wts_strides);
  memory::desc bias_user = a[2] != nullptr ? plain_desc(*a[2]) : memory::desc();
  memory::desc res_user;
  if (a[3] != nullptr) {
    check_tensor(*a[3], "residual");
    if (sy::shape_of(*a[3]) != g.out_shape)
      throw sy::Error("residual " + to_string(sy::shape_of(*a[3])) + " is not the output's shape " +
                      to_string(g.out_shape));
    res_user = res != SY_STORAGE_HOST ? layout_of_storage(res, g.dst) : strided_desc(g.dst, residual_strides(g, *a[3]));
  }
  Dims key = {first_channel};
  append_key(key, src_user);
  append_key(key, dst_user);
  append_key(key, wts_user);
  key.push_back(a[2] != nullptr);
  if (a[2] != nullptr) append_key(key, bias_user);
  if (a[3] != nullptr) append_key(key, res_user);
  return cache_[ops].get(
      key, [&] { return build(a, g, src_user, wts_user, bias_user, dst_user, res_user, ops, first_channel); });
}

std::shared_ptr<ConvKernel::Prepared> ConvKernel::build(const Args& a, const Geometry& g, const memory::desc& src_user,
                                                        const memory::desc& wts_user, const memory::desc& bias_user,
                                                        const memory::desc& dst_user, const memory::desc& res_user,
                                                        Ops ops, int64_t first_channel) {
  using fwd = dnnl::convolution_forward;
  auto p = std::make_shared<Prepared>();
  p->has_bias = a[2] != nullptr;
  p->work = conv_work(g);
  sy_omp::Threads threads(p->work);  // oneDNN fixes an implementation's thread count when it is made
  try {
    fwd::primitive_desc pd = describe(g, p->has_bias, ops, dst_user.data_type());  // bf16 into a .bf16 storage
    p->conv = fwd(pd);
    p->src = pd.src_desc();
    p->wts = pd.weights_desc();
    p->dst = pd.dst_desc();
    p->src_user = user_layout(src_user, p->src);
    p->wts_user = wts_user;
    p->bias_user = bias_user;
    p->dst_user = user_layout(dst_user, p->dst);
    p->res_user = a[3] != nullptr ? user_layout(res_user, p->dst) : res_user;
    p->bias = p->has_bias ? pd.bias_desc() : memory::desc();
    p->scratch = pd.scratchpad_desc();
    auto reorder = [](const memory::desc& from, const memory::desc& to) {
      return from == to ? dnnl::reorder() : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
    };
    p->src_in = reorder(p->src_user, p->src);
    if (p->src.data_type() == memory::data_type::bf16) {  // the same layout in float32: a flat conversion
      memory::desc as_f32 = p->src;
      as_f32.data.data_type = dnnl_f32;
      p->src_to_bf16 = as_f32 == p->src_user && p->src_user.get_size() == 2 * p->src.get_size();
    }
    p->dst_out = reorder(p->dst, p->dst_user);
    if (a[3] != nullptr)
      p->res_in = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p->res_user, engine(), p->dst));
    if (p->has_bias && !const_bias_) p->bias_in = reorder(bias_user, p->bias);
    if (p->has_bias && const_bias_)  // bias_ from the call's first channel on
      p->const_bias = memory(p->bias, engine(), static_cast<float*>(bias_.get_data_handle()) + first_channel);
    if (!const_weights_) {
      p->wts_in = reorder(wts_user, p->wts);
    } else {
      for (const PackedWeights& w : weights_)
        if (w.packed.md == p->wts && w.first_channel == first_channel) p->weights = w.packed.mem;
      if (!p->weights) {  // the one-time reorder of constant weights
        memory user(wts_user, engine(), handle(*a[1]));
        sy_onednn::ConstantMemory mine = sy_onednn::constant_memory(p->wts);
        dnnl::stream& s = thread_stream();
        reorder_into(s, dnnl::reorder(user, mine.mem), user, mine.mem);
        s.wait();
        p->weights = mine.mem;
        weights_.push_back({first_channel, std::move(mine)});
      }
    }
  } catch (const dnnl::error& e) {
    throw sy::Error("conv plugin: oneDNN could not prepare " + params_.producer + " for input " + to_string(g.src) +
                        ", weight " + to_string(g.wts) + ": " + error_message(e),
                    error_status(e));
  }
  return p;
}

void ConvKernel::run(sy::Run& run) {
  Args a = args_of(run.args->inputs, run.num_inputs());
  DLTensor& out = run.output(0);
  if (sy::numel(out) == 0) return;  // empty batch: nothing to compute
  const SY_StorageIndex in = run.input_storage(0), to = run.output_storage(0);
  const SY_StorageIndex res = a[3] != nullptr ? run.input_storage(run.num_inputs() - 1) : SY_STORAGE_HOST;
  if (run_winograd(a, out, in, to, res)) return;
  if (splits_ && run_split(a, out, in, to, res)) return;
  std::shared_ptr<const Prepared> p = prepare(a, &out, kFused, in, to, res);
  sy_omp::Threads threads(p->work);
  if (execute(*p, a, handle(out), nan_guard_, in, res)) return;
  // A NaN or infinity came in (nothing is written yet), and oneDNN's relu/clip turn NaN
  // into a number where ATen keeps it: run with and without the activation into scratch
  // buffers (`out` may be the residual's buffer), then take the NaNs of the latter. Both
  // are in out's layout, so element i is the same element in each.
  std::shared_ptr<const Prepared> q = prepare(a, &out, kSum, in, to, res);
  if (holds_bf16(to)) return keep_nans<uint16_t>(*p, *q, a, out);
  keep_nans<float>(*p, *q, a, out);
}

// Runs `fused` and `bare` (the same without the activation) into scratch buffers and writes
// `out` from the former, but the latter's NaNs. T: float, or uint16_t (bfloat16's bits).
template <typename T>
void ConvKernel::keep_nans(const Prepared& fused, const Prepared& bare, const Args& a, DLTensor& out) const {
  std::vector<T> with(fused.dst_user.get_size() / sizeof(T)), without(bare.dst_user.get_size() / sizeof(T));
  execute(fused, a, with.data(), false);
  execute(bare, a, without.data(), false);
  auto nan = [](T v) {
    if constexpr (std::is_same_v<T, float>)
      return std::isnan(v);
    else
      return (v & 0x7fffu) > 0x7f80u;
  };
  T* y = static_cast<T*>(handle(out));
  for (size_t i = 0; i < without.size(); ++i) y[i] = nan(without[i]) ? without[i] : with[i];
}

void ConvKernel::run_bare(const Args& a, const DLTensor& out, SY_StorageIndex in, SY_StorageIndex to, void* dst) {
  std::shared_ptr<const Prepared> p = prepare(a, &out, kBare, in, to, SY_STORAGE_HOST);
  sy_omp::Threads threads(p->work);
  execute(*p, a, dst, /*check_finite=*/false);
}

bool ConvKernel::execute(const Prepared& p, const Args& a, void* out, bool check_finite, SY_StorageIndex in,
                         SY_StorageIndex res) const {
  try {
    dnnl::engine& eng = engine();
    dnnl::stream& s = thread_stream();
    auto input = [&](const memory::desc& user_md, const DLTensor& t, const dnnl::reorder& r, const memory::desc& md) {
      memory user(user_md, eng, handle(t));
      if (!r) return user;
      // The input in bfloat16 (params_.compute) goes to a buffer kept per thread: it is made on every run.
      memory mine = md.data_type() == memory::data_type::bf16 ? sy_onednn::thread_converted(md) : memory(md, eng);
      reorder_into(s, r, user, mine);
      return mine;
    };
    memory src;
    if (p.src_to_bf16) {
      src = sy_onednn::thread_converted(p.src);
      const int64_t n = static_cast<int64_t>(p.src.get_size() / 2);
      sy_bf16::to_bf16(static_cast<const float*>(handle(*a[0])), n, static_cast<uint16_t*>(src.get_data_handle()), n, 1,
                       n);
    } else {
      src = input(p.src_user, *a[0], p.src_in, p.src);
    }
    memory wts = p.weights ? p.weights : input(p.wts_user, *a[1], p.wts_in, p.wts);
    memory dst_user(p.dst_user, eng, out);
    memory dst = p.dst_out ? memory(p.dst, eng) : dst_user;
    memory scratch = thread_scratch(p.scratch);
    memory bias;  // empty without one: an absent argument
    if (p.has_bias) bias = const_bias_ ? p.const_bias : input(p.bias_user, *a[2], p.bias_in, p.bias);
    memory residual;
    if (a[3] != nullptr) residual = memory(p.res_user, eng, handle(*a[3]));
    if (check_finite) {
      s.wait();  // the reorders above have filled src (and weights, bias)
      // `src` may be a reordered copy: the memo is keyed by the user's tensor.
      const bool finite = consts_finite_ && values_below(*a[0], p.src_user, in, src, kNonFinite) &&
                          (p.weights || all_finite(wts)) && (!p.has_bias || const_bias_ || all_finite(bias)) &&
                          (a[3] == nullptr || values_below(*a[3], p.res_user, res, residual, kNonFinite));
      if (!finite) return false;  // nothing written: run() takes the careful path
    }
    // The sum post-op adds onto what dst holds: the residual, unless the output already is
    // the residual's buffer in dst's layout (in place).
    if (a[3] != nullptr && !(handle(*a[3]) == dst.get_data_handle() && p.res_user == p.dst)) {
      if (handle(*a[3]) == out) {  // in place across layouts: read the residual out first
        memory copy(p.res_user, eng);
        dnnl::reorder(residual, copy).execute(s, residual, copy);
        residual = copy;
      }
      reorder_into(s, p.res_in, residual, dst);
    }
    sy_onednn::execute(p.conv, s,
                       {{DNNL_ARG_SRC, src},
                        {DNNL_ARG_WEIGHTS, wts},
                        {DNNL_ARG_BIAS, bias},
                        {DNNL_ARG_DST, dst},
                        {DNNL_ARG_SCRATCHPAD, scratch}});
    if (p.dst_out) reorder_into(s, p.dst_out, dst, dst_user);
    s.wait();
  } catch (const dnnl::error& e) {
    throw sy::Error("conv plugin: oneDNN failed to run " + params_.producer + ": " + error_message(e), error_status(e));
  }
  return true;
}

}  // namespace syconv
