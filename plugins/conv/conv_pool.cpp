// conv plugin: the fused convolution, relu and max pooling (see conv_pool.hpp).
#include "conv_pool.hpp"

#include "formats.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <string>

namespace syconv {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

namespace {

// A band's convolution output at most about this large, so that the pool reads it from the
// thread's own L2 cache (1 MiB here). ResNet's stem at batch 8 (3.2 MB per image), node
// times of the bands: 4.21 ms in two bands per image, 4.10 in three, 4.17-4.25 in four.
constexpr uint64_t kBandBytes = uint64_t{5} << 18;  // 1.25 MiB

// One band of one image: pooled output rows [out_begin, out_end), from convolution rows
// [conv_begin, conv_begin + conv_rows), from input rows [in_begin, in_begin + in_rows).
struct Band {
  int64_t out_begin, out_end, conv_begin, conv_rows, in_begin, in_rows;
  size_t primitive;  // the convolution for this band's shape and padding
};

// The pooling over the convolution's output shape.
PoolKernel::Geometry pool_of(const PoolKernel::Params& pool, const ConvKernel::Geometry& g) {
  DLTensor y{};
  y.ndim = 4;
  y.dtype = sy::kFloat32;
  y.shape = const_cast<int64_t*>(g.dst.data());
  return pool_geometry(pool, y);
}

double product(const Dims& d) {
  double n = 1;
  for (int64_t v : d) n *= static_cast<double>(v);
  return n;
}

}  // namespace

struct ConvPoolKernel::Prepared {
  ConvKernel::Geometry conv;
  PoolKernel::Geometry pool;
  struct Primitive {
    int64_t in_rows, conv_rows, pad_top, pad_bottom;  // what it was made for
    dnnl::convolution_forward conv;
    memory::desc src, dst, scratch;
    memory weights;
  };
  std::vector<Primitive> primitives;
  std::vector<Band> bands;          // one image's, top to bottom
  memory::desc src_user, src_nhwc;  // the input as it comes, and whole in nhwc
  dnnl::reorder to_nhwc;            // empty when it comes in nhwc
  memory bias;                      // compact [OC]; empty without one
  double work = 0;                  // multiply-adds per run
};

ConvPoolKernel::ConvPoolKernel(const sy::Node& node)
    : conv_(parse_conv(node)), pool_(pool_params(node.attrs, PoolKernel::Kind::Max, "post2.")) {
  ConvKernel::Args a = ConvKernel::args_of(conv_, node.inputs, node.num_inputs);
  // The create-time shapes are those of the first run: reorder the weights now.
  if (sy::numel(*a[0]) > 0) prepare(a, SY_STORAGE_HOST);
}

void ConvPoolKernel::supports(const sy::Node& node) {
  const ConvKernel::Params p = parse_conv(node);  // Unsupported on any doubt
  if (!p.fusion.max_pool || p.fusion.activation == nullptr || std::string(p.fusion.activation->op) != "aten::relu")
    throw sy::Unsupported("expected <conv>+aten::relu+aten::max_pool2d, got " + std::string(node.op));
  const PoolKernel::Params pool = pool_params(node.attrs, PoolKernel::Kind::Max, "post2.");
  if (node.num_inputs > p.num_slots)
    throw sy::Unsupported("expected at most " + std::to_string(p.num_slots) + " inputs, got " +
                          std::to_string(node.num_inputs));
  const ConvKernel::Args a = ConvKernel::args_of(p, node.inputs, node.num_inputs);
  check_tensor(*a[0], "input");
  check_tensor(*a[1], "weight");
  if (a[2] != nullptr) check_tensor(*a[2], "bias");
  if (a[1]->data == nullptr || (a[2] != nullptr && a[2]->data == nullptr))
    throw sy::Unsupported("weights or a bias that arrive per run (the unfused kernels take them)");
  if (a[0]->ndim != 4 || a[1]->ndim != 4) throw sy::Unsupported("only a batched 2-D convolution is fused with a pool");
  const ConvKernel::Geometry g = sy::declining([&] {
    ConvKernel::Geometry geometry = conv_geometry(p, *a[0], *a[1], a[2]);
    pool_of(pool, geometry);
    return geometry;
  });
  describable(g.src, g.src_strides, "input");
  if (plain_stem(g))  // the bands' nhwc brgemm convolution would need the input reordered first
    throw sy::Unsupported(
        "a few-channel convolution with little work per input element runs faster unfused, on plain input");
  const int64_t span = (g.dilation[0] + 1) * (a[1]->shape[2] - 1) + 1;
  if (g.pad_l[0] >= span || g.pad_r[0] >= span)  // a band could then start inside the padding
    throw sy::Unsupported("convolution padding " + to_string(g.pad_l) + " as large as the kernel");
}

void ConvPoolKernel::infer(sy::Infer& infer) {
  ConvKernel::Args a = ConvKernel::args_of(conv_, infer.args->inputs, infer.num_inputs());
  infer.set_output(0, sy::kFloat32, pool_of(pool_, conv_geometry(conv_, *a[0], *a[1], a[2])).out_shape);
}

void ConvPoolKernel::storage(sy::StorageQuery& q) {
  if (conv_.compute.asked) q.computes_in(sy::kFloat32, 0, 0, "the fused convolution + max pool runs in float32");
  if (!conv_.own_layouts) return;
  const DLTensor& x = *ConvKernel::args_of(conv_, q.args->inputs, q.num_inputs())[0];
  if (!format_holds(x.dtype, x.ndim)) return;
  q.reads(0, SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(Blocked16::kIndex) | SY_STORAGE_MASK(ChannelsLast::kIndex));
  q.writes(0, SY_STORAGE_MASK(ChannelsLast::kIndex) | SY_STORAGE_MASK_HOST);
}

memory ConvPoolKernel::weights_in(const memory::desc& md, const memory::desc& user_md, const DLTensor& w) {
  std::lock_guard<std::mutex> lock(weights_mutex_);
  for (const sy_onednn::ConstantMemory& c : weights_)
    if (c.md == md) return c.mem;
  sy_onednn::ConstantMemory mine = sy_onednn::constant_memory(md);
  memory user(user_md, engine(), handle(w));
  dnnl::stream& s = thread_stream();
  reorder_into(s, dnnl::reorder(user, mine.mem), user, mine.mem);
  s.wait();
  weights_.push_back(std::move(mine));
  return weights_.back().mem;
}

std::shared_ptr<const ConvPoolKernel::Prepared> ConvPoolKernel::prepare(const ConvKernel::Args& a, SY_StorageIndex in) {
  const DLTensor& x = *a[0];
  Dims key = {in, x.ndim};
  const Dims strides = strides_of(x);
  for (int d = 0; d < x.ndim; ++d) key.push_back(x.shape[d]), key.push_back(strides[d]);
  return cache_.get(key, [&] {
    try {
      return std::shared_ptr<const Prepared>(build(a, in));
    } catch (const dnnl::error& e) {
      throw sy::Error("conv plugin: oneDNN could not prepare " + conv_.producer +
                          "+aten::relu+aten::max_pool2d for input " + to_string(sy::shape_of(x)) + ": " +
                          error_message(e),
                      error_status(e));
    }
  });
}

std::shared_ptr<ConvPoolKernel::Prepared> ConvPoolKernel::build(const ConvKernel::Args& a, SY_StorageIndex in) {
  auto p = std::make_shared<Prepared>();
  const ConvKernel::Geometry& g = p->conv = conv_geometry(conv_, *a[0], *a[1], a[2]);
  const PoolKernel::Geometry& pg = p->pool = pool_of(pool_, g);
  const auto f32 = memory::data_type::f32;
  const int64_t N = g.src[0], IC = g.src[1], H = g.src[2], W = g.src[3];
  const int64_t OC = g.dst[1], CH = g.dst[2], CW = g.dst[3], PH = pg.dst[2];
  const int64_t conv_span = (g.dilation[0] + 1) * (a[1]->shape[2] - 1) + 1;
  const int64_t pool_last_tap = (pg.dilation[0] + 1) * (pg.kernel[0] - 1);
  p->work = product(g.wts) * static_cast<double>(N * CH * CW);

  p->src_user = in == SY_STORAGE_HOST ? strided_desc(g.src, g.src_strides) : layout_of_storage(in, g.src);
  p->src_nhwc = memory::desc(g.src, f32, tag::nhwc);
  const int threads = [&] {
    sy_omp::Threads team(p->work);  // as run() will size it
    if (in != ChannelsLast::kIndex)
      p->to_nhwc = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p->src_user, engine(), p->src_nhwc));
    return omp_get_max_threads();
  }();
  if (a[2] != nullptr) {  // a compact copy: the primitive wants a dense bias
    memory user(plain_desc(*a[2]), engine(), handle(*a[2]));
    p->bias = memory(memory::desc({OC}, f32, tag::a), engine());
    dnnl::stream& s = thread_stream();
    reorder_into(s, dnnl::reorder(user, p->bias), user, p->bias);
    s.wait();
  }

  // Bands per image: none whose convolution output passes kBandBytes, and N * bands a
  // multiple of the threads, so that each thread gets as many.
  const uint64_t image_bytes = static_cast<uint64_t>(CH * CW * OC) * sizeof(float);
  const int64_t step = threads / std::gcd<int64_t>(N, threads);
  int64_t bands = std::max<int64_t>(1, static_cast<int64_t>((image_bytes + kBandBytes - 1) / kBandBytes));
  bands = std::min((bands + step - 1) / step * step, PH);

  sy_omp::Threads one(0);  // each band's convolution runs on one thread: made for one
  for (int64_t b = 0; b < bands; ++b) {
    Band band{};
    band.out_begin = PH * b / bands;
    band.out_end = PH * (b + 1) / bands;
    band.conv_begin = std::max<int64_t>(0, band.out_begin * pg.stride[0] - pg.pad_l[0]);
    const int64_t conv_end = std::min(CH, (band.out_end - 1) * pg.stride[0] - pg.pad_l[0] + pool_last_tap + 1);
    band.conv_rows = conv_end - band.conv_begin;
    const int64_t in_start = band.conv_begin * g.stride[0] - g.pad_l[0];
    const int64_t in_end = (conv_end - 1) * g.stride[0] - g.pad_l[0] + conv_span;
    band.in_begin = std::max<int64_t>(0, in_start);
    band.in_rows = std::min(H, in_end) - band.in_begin;
    const int64_t pad_top = band.in_begin - in_start, pad_bottom = in_end - (band.in_begin + band.in_rows);
    auto same = [&](const Prepared::Primitive& q) {
      return q.in_rows == band.in_rows && q.conv_rows == band.conv_rows && q.pad_top == pad_top &&
             q.pad_bottom == pad_bottom;
    };
    auto found = std::find_if(p->primitives.begin(), p->primitives.end(), same);
    band.primitive = static_cast<size_t>(found - p->primitives.begin());
    p->bands.push_back(band);
    if (found != p->primitives.end()) continue;

    Prepared::Primitive q{band.in_rows, band.conv_rows, pad_top, pad_bottom, {}, {}, {}, {}, {}};
    q.src = memory::desc({1, IC, band.in_rows, W}, f32, tag::nhwc);
    q.dst = memory::desc({1, OC, band.conv_rows, CW}, f32, tag::nhwc);
    auto describe = [&](const memory::desc& wts) {
      using fwd = dnnl::convolution_forward;
      const auto prop = dnnl::prop_kind::forward_inference;
      const auto alg = dnnl::algorithm::convolution_direct;
      const Dims pad_l = {pad_top, g.pad_l[1]}, pad_r = {pad_bottom, g.pad_r[1]};
      fwd::desc d = a[2] != nullptr ? fwd::desc(prop, alg, q.src, wts, p->bias.get_desc(), q.dst, g.stride, g.dilation,
                                                pad_l, pad_r)
                                    : fwd::desc(prop, alg, q.src, wts, q.dst, g.stride, g.dilation, pad_l, pad_r);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per-thread scratch: bands run at once
      return fwd::primitive_desc(d, attr, engine());
    };
    // Every band in the first band's weight layout where oneDNN takes it: one copy of them.
    std::unique_ptr<dnnl::convolution_forward::primitive_desc> pd;
    if (!p->primitives.empty()) {
      try {
        pd = std::make_unique<dnnl::convolution_forward::primitive_desc>(describe(p->primitives[0].weights.get_desc()));
      } catch (const dnnl::error&) {}
    }
    if (!pd)
      pd = std::make_unique<dnnl::convolution_forward::primitive_desc>(describe(memory::desc(g.wts, f32, tag::any)));
    q.conv = dnnl::convolution_forward(*pd);
    q.scratch = pd->scratchpad_desc();
    q.weights = weights_in(pd->weights_desc(), strided_desc(g.wts, g.wts_strides), *a[1]);
    p->primitives.push_back(std::move(q));
  }
  return p;
}

void ConvPoolKernel::run(sy::Run& run) {
  const ConvKernel::Args a = ConvKernel::args_of(conv_, run.args->inputs, run.num_inputs());
  DLTensor& out = run.output(0);
  if (sy::numel(out) == 0) return;  // empty batch: nothing to compute
  const SY_StorageIndex in = run.input_storage(0), to = run.output_storage(0);
  if (to != SY_STORAGE_HOST && to != ChannelsLast::kIndex)
    throw sy::Error("conv plugin: output storage " + std::to_string(to) + " was never offered", SY_ERROR_INTERNAL);
  const std::shared_ptr<const Prepared> prepared = prepare(a, in);
  const Prepared& p = *prepared;
  const ConvKernel::Geometry& g = p.conv;
  const int64_t IC = g.src[1], H = g.src[2], W = g.src[3], OC = g.dst[1];
  const int64_t PH = p.pool.dst[2], PW = p.pool.dst[3];
  sy_omp::Threads threads(p.work);
  const float* x = static_cast<const float*>(handle(*a[0]));
  if (p.to_nhwc) {
    float* copy = thread_buffer(ThreadBuffer::kInput, p.src_nhwc.get_size());
    try {
      dnnl::stream& s = thread_stream();
      sy_onednn::execute(p.to_nhwc, s,
                         {{DNNL_ARG_FROM, sy_onednn::thread_memory(sy_onednn::kSrcSlot, p.src_user, handle(*a[0]))},
                          {DNNL_ARG_TO, sy_onednn::thread_memory(sy_onednn::kDstSlot, p.src_nhwc, copy)}});
      s.wait();
    } catch (const dnnl::error& e) {
      throw sy::Error("conv plugin: oneDNN failed to reorder the input of " + conv_.producer + ": " + error_message(e),
                      error_status(e));
    }
    x = copy;
  }
  // Where pooled pixel (n, oh, ow), channel c goes: y[n * image + oh * ys[0] + ow * ys[1] + c * ys[2]].
  int64_t image = PH * PW * OC, ys[3] = {PW * OC, OC, 1};
  if (to == SY_STORAGE_HOST) {
    const Dims s = strides_of(out);
    image = s[0];
    ys[0] = s[2], ys[1] = s[3], ys[2] = s[1];
  }
  float* y = static_cast<float*>(handle(out));

  const int64_t bands = static_cast<int64_t>(p.bands.size()), tasks = g.src[0] * bands;
  std::mutex failure_mutex;
  std::string failure;  // no exception may leave the parallel region
  SY_Status failure_status = SY_OK;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t n = t / bands;
    const Band& b = p.bands[static_cast<size_t>(t % bands)];
    const Prepared::Primitive& q = p.primitives[b.primitive];
    try {
      float* rows = thread_buffer(ThreadBuffer::kChunk, q.dst.get_size());
      float* src = const_cast<float*>(x) + ((n * H + b.in_begin) * W) * IC;
      dnnl::stream& s = thread_stream();
      sy_onednn::execute(q.conv, s,
                         {{DNNL_ARG_SRC, sy_onednn::thread_memory(sy_onednn::kSrcSlot, q.src, src)},
                          {DNNL_ARG_WEIGHTS, q.weights},
                          {DNNL_ARG_BIAS, p.bias},
                          {DNNL_ARG_DST, sy_onednn::thread_memory(sy_onednn::kDstSlot, q.dst, rows)},
                          {DNNL_ARG_SCRATCHPAD, thread_scratch(q.scratch)}});
      s.wait();
      max_pool_rows(p.pool, rows, b.conv_begin, b.out_begin, b.out_end, /*relu=*/true, y + n * image, ys);
    } catch (const dnnl::error& e) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      failure = "oneDNN failed to run " + conv_.producer + " for rows " + std::to_string(b.conv_begin) + "-" +
                std::to_string(b.conv_begin + b.conv_rows - 1) + " of image " + std::to_string(n) + ": " +
                error_message(e);
      failure_status = error_status(e);
    } catch (const sy::Error& e) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      failure = e.what();
      failure_status = e.status;
    }
  }
  if (!failure.empty()) throw sy::Error("conv plugin: " + failure, failure_status);
}

}  // namespace syconv
