// conv plugin: a channel concatenation read only by an inference batch norm (see
// cat_norm_kernel.hpp): each part normalised into its channels of the output.
#include "cat_norm_kernel.hpp"

#include "common/vector_clones.hpp"
#include "formats.hpp"

#include <algorithm>
#include <string>

namespace syconv {
namespace {

const char* const kStatAttrs[] = {"post.weight", "post.bias", "post.running_mean", "post.running_var"};

struct Parsed {
  bool relu = false;
  float eps = 1e-5f;
  std::array<const DLTensor*, 4> attr_tensors{};
  size_t stat_inputs = 4;  // the batch norm's statistics that come as inputs, after the parts
};

Parsed parse(const sy::Node& node) {
  Parsed p;
  const std::string op = node.op;
  if (op == "aten::cat+aten::batch_norm+aten::relu")
    p.relu = true;
  else if (op != "aten::cat+aten::batch_norm")
    throw sy::Unsupported("conv plugin: unknown concatenation op " + op);
  if (node.num_outputs != 1) throw sy::Unsupported("expected one output");
  check_attr_names(node, {"dim"},
                   {"post.training", "post.momentum", "post.eps", "post.cudnn_enabled", "post.weight", "post.bias",
                    "post.running_mean", "post.running_var"});
  const sy::Attrs& a = node.attrs;
  const int64_t dim = a.i("dim", 0);
  if (dim != 1 && dim != -3) throw sy::Unsupported("a concatenation along dim " + std::to_string(dim) + ", not 1");
  if (a.has("post.training") && (a.kind("post.training") != SY_ATTR_INT || a.i("post.training") != 0))
    throw sy::Unsupported("batch_norm with training=True (the conv plugin runs inference only)");
  if (a.has("post.eps") && !a.is_number("post.eps")) throw sy::Unsupported("batch_norm's eps is not a constant number");
  p.eps = static_cast<float>(a.f("post.eps", 1e-5));
  for (size_t i = 0; i < 4; ++i)
    if (a.kind(kStatAttrs[i]) == SY_ATTR_TENSOR) {
      p.attr_tensors[i] = a.tensor(kStatAttrs[i]);
      --p.stat_inputs;
    }
  if (node.num_inputs < p.stat_inputs + 1)
    throw sy::Unsupported("expected the parts, then " + std::to_string(p.stat_inputs) + " statistics as inputs");
  return p;
}

// The statistics (Args[1..4]; Args[0] is unused here) after the n - stat_inputs parts.
BatchNormKernel::Args stats_of(const std::array<const DLTensor*, 4>& attr_tensors, size_t stat_inputs,
                               const DLTensor* const* inputs, size_t n) {
  BatchNormKernel::Args a = BatchNormKernel::args_of(attr_tensors, inputs + (n - stat_inputs) - 1, stat_inputs + 1);
  a[0] = nullptr;
  return a;
}

// The parts' common [N, _, H, W] and the sum of their channels; Unsupported otherwise,
// an Error for statistics that do not fit (ATen reports those too).
int64_t check_parts(const DLTensor* const* inputs, size_t parts, const BatchNormKernel::Args& stats) {
  int64_t channels = 0;
  for (size_t i = 0; i < parts; ++i) {
    const DLTensor* t = inputs[i];
    if (t == nullptr || t->ndim != 4) throw sy::Unsupported("the concatenated parts are not [N, C, H, W] tensors");
    check_tensor(*t, "part");
    const DLTensor& first = *inputs[0];
    if (t->shape[0] != first.shape[0] || t->shape[2] != first.shape[2] || t->shape[3] != first.shape[3])
      throw sy::Unsupported("parts differ in more than their channels: " + to_string(sy::shape_of(first)) + " and " +
                            to_string(sy::shape_of(*t)));
    channels += t->shape[1];
  }
  if (stats[3] == nullptr || stats[4] == nullptr)
    throw sy::Unsupported("batch_norm without running statistics (inference uses them)");
  for (size_t i = 1; i < 5; ++i) {
    if (stats[i] == nullptr) continue;
    check_tensor(*stats[i], kStatAttrs[i - 1] + 5);
    if (stats[i]->ndim != 1 || stats[i]->shape[0] != channels)
      throw sy::Error(std::string("batch_norm: ") + (kStatAttrs[i - 1] + 5) + " " + to_string(sy::shape_of(*stats[i])) +
                      " does not match the concatenation's " + std::to_string(channels) + " channels");
  }
  return channels;
}

// One part: its channels [c0, c0 + channels) of the output, and both element strides.
struct Part {
  const float* src;
  Dims src_strides;
  int64_t c0, channels;
};

// `rows` rows of `c` channels, xs and ys elements apart: y = x * s + b, then relu (v < 0
// is false for NaN: kept, as ATen's relu). One call per part and thread: rows are short
// (DenseNet's parts are 32 channels), so the loop over them stays inside.
SY_VECTOR_CLONES void scale_rows(const float* x, int64_t xs, float* y, int64_t ys, const float* s, const float* b,
                                 int64_t c, int64_t rows, bool relu) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * xs;
    float* yr = y + r * ys;
    if (relu) {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) {
        const float v = xr[j] * s[j] + b[j];
        yr[j] = v < 0.f ? 0.f : v;
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) yr[j] = xr[j] * s[j] + b[j];
    }
  }
}

// Whether pixel (n, h, w) of `shape` sits at (n * H * W + h * W + w) * strides[3]: nhwc,
// compact or with channels to spare (the output's slice of them).
bool uniform_pixels(const Dims& strides, const Dims& shape) {
  return strides[2] == shape[3] * strides[3] && strides[0] == shape[2] * strides[2];
}

// Rows [from, to) of the part: pixels (n, h, w) when channels are contiguous on both sides,
// else (n, c, h) rows along w. y = x * s + b (then relu) with the part's scale and shift.
void normalise_rows(const Part& p, float* out, const Dims& os, const Dims& shape, const float* s, const float* b,
                    bool relu, int64_t from, int64_t to) {
  const Dims& is = p.src_strides;
  const float* sc = s + p.c0;
  const float* sh = b + p.c0;
  float* dst = out + p.c0 * os[1];
  if (is[1] == 1 && os[1] == 1) {
    if (uniform_pixels(is, shape) && uniform_pixels(os, shape))
      return scale_rows(p.src + from * is[3], is[3], dst + from * os[3], os[3], sc, sh, p.channels, to - from, relu);
    for (int64_t r = from; r < to; ++r) {
      const int64_t n = r / (shape[2] * shape[3]), h = r / shape[3] % shape[2], w = r % shape[3];
      scale_rows(p.src + n * is[0] + h * is[2] + w * is[3], 0, dst + n * os[0] + h * os[2] + w * os[3], 0, sc, sh,
                 p.channels, 1, relu);
    }
    return;
  }
  for (int64_t r = from; r < to; ++r) {
    const int64_t n = r / (p.channels * shape[2]), c = r / shape[2] % p.channels, h = r % shape[2];
    const float* x = p.src + n * is[0] + c * is[1] + h * is[2];
    float* y = dst + n * os[0] + c * os[1] + h * os[2];
    const float m = sc[c], a = sh[c];
    for (int64_t w = 0; w < shape[3]; ++w) {
      const float v = x[w * is[3]] * m + a;
      y[w * os[3]] = relu && v < 0.f ? 0.f : v;  // v < 0 is false for NaN: kept, as ATen's relu
    }
  }
}

double product_of(const Dims& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

int64_t rows_of(const Part& p, const Dims& os, const Dims& shape) {
  return p.src_strides[1] == 1 && os[1] == 1 ? shape[0] * shape[2] * shape[3] : shape[0] * p.channels * shape[2];
}

}  // namespace

struct CatNormKernel::Prepared {
  dnnl::reorder into_out;
};

std::shared_ptr<const CatNormKernel::Prepared> CatNormKernel::prepare(const dnnl::memory::desc& from,
                                                                      const dnnl::memory::desc& to) {
  Dims key;
  append_key(key, from);
  append_key(key, to);
  return cache_.get(key, [&] {
    auto p = std::make_shared<Prepared>();
    try {
      p->into_out = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
    } catch (const dnnl::error& e) {
      throw sy::Error("conv plugin: oneDNN could not prepare the reorder of a concatenated part " +
                          to_string(from.dims()) + ": " + error_message(e),
                      error_status(e));
    }
    return p;
  });
}

void CatNormKernel::reorder_part(const float* src, const Dims& src_strides, const Dims& dims, float* slice,
                                 const Dims& out_strides) {
  const dnnl::memory::desc from_md = strided_desc(dims, src_strides), to_md = strided_desc(dims, out_strides);
  std::shared_ptr<const Prepared> p = prepare(from_md, to_md);
  sy_omp::Threads threads(product_of(dims));
  try {
    dnnl::stream& st = thread_stream();
    dnnl::memory from(from_md, engine(), const_cast<float*>(src)), into(to_md, engine(), slice);
    reorder_into(st, p->into_out, from, into);
    st.wait();
  } catch (const dnnl::error& e) {
    throw sy::Error("conv plugin: oneDNN failed to reorder a concatenated part: " + error_message(e), error_status(e));
  }
}

void CatNormKernel::supports(const sy::Node& node) {
  const Parsed p = parse(node);
  if (!own_layouts_option(node.attrs)) throw sy::Unsupported("option layout = \"plain\": the cat runs on its own");
  sy::declining([&] {
    check_parts(node.inputs, node.num_inputs - p.stat_inputs,
                stats_of(p.attr_tensors, p.stat_inputs, node.inputs, node.num_inputs));
  });
}

CatNormKernel::CatNormKernel(const sy::Node& node) {
  const Parsed p = parse(node);
  relu_ = p.relu;
  eps_ = p.eps;
  attr_tensors_ = p.attr_tensors;
  stat_inputs_ = p.stat_inputs;
  const BatchNormKernel::Args a = stats_of(attr_tensors_, stat_inputs_, node.inputs, node.num_inputs);
  bool constant = a[3] != nullptr && a[4] != nullptr;
  for (size_t i = 1; i < 5; ++i) constant = constant && (a[i] == nullptr || a[i]->data != nullptr);
  if (!constant) return;  // statistics that arrive per run are folded per run
  const int64_t channels = a[4]->shape[0];
  scale_.resize(static_cast<size_t>(channels));
  shift_.resize(static_cast<size_t>(channels));
  fold(a, eps_, channels, scale_.data(), shift_.data());
  folded_ = true;
}

void CatNormKernel::infer(sy::Infer& infer) {
  const DLTensor* const* in = infer.args->inputs;
  const size_t n = infer.num_inputs();
  const int64_t channels = check_parts(in, n - stat_inputs_, stats_of(attr_tensors_, stat_inputs_, in, n));
  infer.set_output(0, sy::kFloat32, {in[0]->shape[0], channels, in[0]->shape[2], in[0]->shape[3]});
}

void CatNormKernel::storage(sy::StorageQuery& q) {
  if (!format_holds(q.input(0).dtype, q.input(0).ndim)) return;  // plain only
  for (size_t i = 0; i + stat_inputs_ < q.num_inputs(); ++i)
    q.reads(i, SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(ChannelsLast::kIndex));
  q.writes(0, SY_STORAGE_MASK(ChannelsLast::kIndex) | SY_STORAGE_MASK_HOST);  // nhwc, as the next conv reads
}

void CatNormKernel::run(sy::Run& run) {
  const size_t n = run.num_inputs(), parts = n - stat_inputs_;
  const BatchNormKernel::Args stats = stats_of(attr_tensors_, stat_inputs_, run.args->inputs, n);
  const int64_t channels = check_parts(run.args->inputs, parts, stats);
  DLTensor& out = run.output(0);
  if (sy::numel(out) == 0) return;  // an empty batch or image: nothing to write
  std::vector<float> scale, shift;
  if (!folded_) {  // statistics that arrive per run
    scale.resize(static_cast<size_t>(channels));
    shift.resize(static_cast<size_t>(channels));
    fold(stats, eps_, channels, scale.data(), shift.data());
  } else if (scale_.size() != static_cast<size_t>(channels)) {
    throw sy::Error("batch_norm: the concatenation's " + std::to_string(channels) + " channels no longer match the " +
                    std::to_string(scale_.size()) + " statistics");
  }
  const float* s = folded_ ? scale_.data() : scale.data();
  const float* b = folded_ ? shift_.data() : shift.data();
  const Dims shape = sy::shape_of(out), os = element_strides(out, run.output_storage(0));
  std::vector<Part> all;
  int64_t c0 = 0, total_rows = 0;
  float* dst = static_cast<float*>(handle(out));
  for (size_t i = 0; i < parts; ++i) {
    const DLTensor& t = run.input(i);
    if (t.shape[1] > 0) {
      Part part{static_cast<const float*>(handle(t)), element_strides(t, run.input_storage(i)), c0, t.shape[1]};
      if ((part.src_strides[1] == 1) != (os[1] == 1)) {  // channels apart on one side only
        float* slice = dst + c0 * os[1];
        reorder_part(part.src, part.src_strides, {shape[0], part.channels, shape[2], shape[3]}, slice, os);
        part.src = slice;  // now scaled in place, where it lies in the output
        part.src_strides = os;
      }
      all.push_back(part);
      total_rows += rows_of(all.back(), os, shape);
    }
    c0 += t.shape[1];
  }
  // The parts' rows in one sequence, split evenly over the team.
  auto rows = [&](int64_t from, int64_t to) {
    int64_t first = 0;
    for (const Part& part : all) {
      const int64_t count = rows_of(part, os, shape);
      const int64_t lo = std::max(from, first), hi = std::min(to, first + count);
      if (lo < hi) normalise_rows(part, dst, os, shape, s, b, relu_, lo - first, hi - first);
      first += count;
    }
  };
  const double work = static_cast<double>(sy::numel(out));
  if (work < sy_omp::kSerialWork) return rows(0, total_rows);  // the team stays as it is
  sy_omp::Threads threads(work);
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    rows(total_rows * t / team, total_rows * (t + 1) / team);
  }
}

}  // namespace syconv
