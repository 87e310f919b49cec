// conv plugin: inference batch norm as a per-channel scale and shift (see
// batch_norm_kernel.hpp), by loops of its own over NCHW or nhwc; other layouts in are
// reordered into the output's first.
#include "batch_norm_kernel.hpp"

#include "common/vector_clones.hpp"
#include "formats.hpp"

#include <algorithm>
#include <cmath>

namespace syconv {

using memory = dnnl::memory;

struct BatchNormKernel::Prepared {
  dnnl::reorder to_out;  // the input's layout into the output's
};

namespace {

const char* const kStatNames[] = {"weight", "bias", "running_mean", "running_var"};

// y = x * s + b over n elements, one scale per element (channels last) or one for all.
// Then relu: `v < 0 ? 0 : v` keeps NaN, as ATen's relu does. Element-wise, so y may be x.
// Elements [from, to) of rows of `c` channels (nhwc, or [N, C]).
SY_VECTOR_CLONES void channels_last(const float* x, float* y, const float* s, const float* b, int64_t c, int64_t from,
                                    int64_t to, bool relu) {
  int64_t k = from % c;
  for (int64_t e = from; e < to; k = 0) {
    const int64_t n = std::min(to - e, c - k);
    const float* xs = x + e;
    float* ys = y + e;
    const float* ss = s + k;
    const float* bs = b + k;
    if (relu) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {
        const float v = xs[j] * ss[j] + bs[j];
        ys[j] = v < 0.f ? 0.f : v;
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) ys[j] = xs[j] * ss[j] + bs[j];
    }
    e += n;
  }
}

// Elements [from, to) of [N, C, inner] (plain NCHW, NCL, NCDHW, ...).
SY_VECTOR_CLONES void channels_first(const float* x, float* y, const float* s, const float* b, int64_t c, int64_t inner,
                                     int64_t from, int64_t to, bool relu) {
  int64_t row = from / inner, offset = from % inner;
  for (int64_t e = from; e < to; ++row, offset = 0) {
    const int64_t n = std::min(to - e, inner - offset);
    const float* xs = x + e;
    float* ys = y + e;
    const float sc = s[row % c], sh = b[row % c];
    if (relu) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {
        const float v = xs[j] * sc + sh;
        ys[j] = v < 0.f ? 0.f : v;
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) ys[j] = xs[j] * sc + sh;
    }
    e += n;
  }
}

// The whole tensor of `total` elements, split across the host's threads when large.
// inner == 1: channels vary fastest (nhwc, or a 2-D input); else [N, C, inner].
void apply(const float* x, float* y, const float* s, const float* b, int64_t c, int64_t inner, int64_t total,
           bool relu) {
  auto part = [&](int64_t from, int64_t to) {
    if (inner == 1)
      channels_last(x, y, s, b, c, from, to, relu);
    else
      channels_first(x, y, s, b, c, inner, from, to, relu);
  };
  const double work = static_cast<double>(total);
  if (work < sy_omp::kSerialWork) return part(0, total);  // no parallel region: the team stays as it is
  sy_omp::Threads threads(work);
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    auto cut = [&](int64_t i) { return i == team ? total : total * i / team / 16 * 16; };  // whole vectors
    part(cut(t), cut(t + 1));
  }
}

float element(const DLTensor& t, int64_t i) {
  return sy::data<float>(t)[i * (t.strides != nullptr ? t.strides[0] : 1)];
}

}  // namespace

// ATen's terms (batch_norm_cpu_collect_linear_and_constant_terms), in float as it computes
// them for float input: scale = weight / sqrt(var + eps), shift = bias - mean * scale.
void fold(const BatchNormKernel::Args& a, float eps, int64_t channels, float* scale, float* shift) {
  for (int64_t c = 0; c < channels; ++c) {
    const float invstd = 1.f / std::sqrt(element(*a[4], c) + eps);
    const float w = a[1] != nullptr ? element(*a[1], c) : 1.f, b = a[2] != nullptr ? element(*a[2], c) : 0.f;
    scale[c] = invstd * w;
    shift[c] = b - element(*a[3], c) * scale[c];
  }
}

namespace {

// The checks of one call's tensors: Unsupported for what the kernel does not do, Error
// for statistics that do not fit the input (ATen reports those too).
void check_args(const BatchNormKernel::Args& a) {
  if (a[0] == nullptr) throw sy::Error("batch_norm: input is missing");
  const DLTensor& x = *a[0];
  check_tensor(x, "input");
  if (x.ndim < 2)
    throw sy::Unsupported("batch_norm of a rank-" + std::to_string(x.ndim) +
                          " input (the conv plugin needs [N, C, ...])");
  if (a[3] == nullptr || a[4] == nullptr)
    throw sy::Unsupported("batch_norm without running statistics (inference uses them)");
  for (size_t i = 1; i < 5; ++i) {
    if (a[i] == nullptr) continue;
    check_tensor(*a[i], kStatNames[i - 1]);
    if (a[i]->ndim != 1 || a[i]->shape[0] != x.shape[1])
      throw sy::Error(std::string("batch_norm: ") + kStatNames[i - 1] + " " + to_string(sy::shape_of(*a[i])) +
                      " does not match the input's " + std::to_string(x.shape[1]) + " channels");
  }
}

struct Parsed {
  bool relu = false;
  float eps = 1e-5f;
  std::array<const DLTensor*, 4> attr_tensors{};
};

Parsed parse(const sy::Node& node) {
  Parsed p;
  const std::string op = node.op;
  if (op == "aten::batch_norm+aten::relu")
    p.relu = true;
  else if (op != "aten::batch_norm")
    throw sy::Unsupported("conv plugin: unknown batch norm op " + op);
  if (node.num_outputs != 1) throw sy::Unsupported("expected one output");
  check_attr_names(
      node, {"training", "momentum", "eps", "cudnn_enabled", "weight", "bias", "running_mean", "running_var"}, {});
  const sy::Attrs& a = node.attrs;
  if (a.has("training")) {
    if (a.kind("training") != SY_ATTR_INT) throw sy::Unsupported("batch_norm's training is not a constant bool");
    if (a.i("training") != 0)
      throw sy::Unsupported("batch_norm with training=True (the conv plugin runs inference only)");
  }
  if (a.has("eps") && !a.is_number("eps")) throw sy::Unsupported("batch_norm's eps is not a constant number");
  p.eps = static_cast<float>(a.f("eps", 1e-5));  // ATen adds it as the input's dtype
  for (size_t i = 0; i < 4; ++i)
    if (a.kind(kStatNames[i]) == SY_ATTR_TENSOR) p.attr_tensors[i] = a.tensor(kStatNames[i]);
  own_layouts_option(a);  // an unknown layout value is an error, here as at create
  return p;
}

memory::desc user_desc(const DLTensor& t, SY_StorageIndex storage) {
  const Dims shape = sy::shape_of(t);
  return storage != SY_STORAGE_HOST ? layout_of_storage(storage, shape) : strided_desc(shape, strides_of(t));
}

}  // namespace

BatchNormKernel::Args BatchNormKernel::args_of(const std::array<const DLTensor*, 4>& attr_tensors,
                                               const DLTensor* const* inputs, size_t n) {
  Args a{};
  size_t slot = 0;
  a[0] = n > 0 ? inputs[slot] : nullptr;
  ++slot;
  for (size_t i = 0; i < 4; ++i) {
    if (attr_tensors[i] != nullptr) {
      a[i + 1] = attr_tensors[i];
    } else {
      a[i + 1] = slot < n ? inputs[slot] : nullptr;
      ++slot;
    }
  }
  return a;
}

void BatchNormKernel::supports(const sy::Node& node) {
  const Parsed p = parse(node);
  size_t slots = 1;
  for (const DLTensor* t : p.attr_tensors) slots += t == nullptr ? 1 : 0;
  if (node.num_inputs > slots)
    throw sy::Unsupported("expected at most " + std::to_string(slots) + " inputs, got " +
                          std::to_string(node.num_inputs));
  const Args a = args_of(p.attr_tensors, node.inputs, node.num_inputs);
  sy::declining([&] { check_args(a); });
  describable(sy::shape_of(*a[0]), strides_of(*a[0]), "input");
}

BatchNormKernel::BatchNormKernel(const sy::Node& node) {
  const Parsed p = parse(node);
  relu_ = p.relu;
  eps_ = p.eps;
  attr_tensors_ = p.attr_tensors;
  own_layouts_ = own_layouts_option(node.attrs);
  const Args a = args_of(attr_tensors_, node.inputs, node.num_inputs);
  if (a[0] == nullptr || a[0]->ndim < 2 || a[3] == nullptr || a[4] == nullptr) return;  // supports() says why
  // Constant statistics (data at create, as the host passes constants): folded once.
  bool constant = true;
  for (size_t i = 1; i < 5; ++i) constant = constant && (a[i] == nullptr || a[i]->data != nullptr);
  if (!constant) return;
  check_args(a);
  const int64_t channels = a[0]->shape[1];
  scale_.resize(static_cast<size_t>(channels));
  shift_.resize(static_cast<size_t>(channels));
  fold(a, eps_, channels, scale_.data(), shift_.data());
  folded_ = true;
}

void BatchNormKernel::infer(sy::Infer& infer) {
  const Args a = args_of(attr_tensors_, infer.args->inputs, infer.num_inputs());
  check_args(a);
  if (folded_ && static_cast<size_t>(a[0]->shape[1]) != scale_.size())
    throw sy::Error("batch_norm: input " + to_string(sy::shape_of(*a[0])) + " no longer has the statistics' " +
                    std::to_string(scale_.size()) + " channels");
  infer.set_output(0, sy::kFloat32, sy::shape_of(*a[0]));
}

void BatchNormKernel::storage(sy::StorageQuery& q) {
  const DLTensor& x = q.input(0);
  q.in_place(0, 0);                                             // element-wise: the activation usually dies here
  if (!own_layouts_ || !format_holds(x.dtype, x.ndim)) return;  // plain only
  q.reads(0, SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(Blocked16::kIndex) | SY_STORAGE_MASK(ChannelsLast::kIndex));
  // nhwc, as pooling and the channel scale write: the layout oneDNN's convolutions keep
  // on AVX-512 cores.
  q.writes(0, SY_STORAGE_MASK(ChannelsLast::kIndex) | SY_STORAGE_MASK_HOST);
}

std::shared_ptr<const BatchNormKernel::Prepared> BatchNormKernel::prepare(const memory::desc& x_md,
                                                                          const memory::desc& out_md) {
  Dims key;
  append_key(key, x_md);
  append_key(key, out_md);
  return cache_.get(key, [&] {
    auto p = std::make_shared<Prepared>();
    try {
      p->to_out = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), x_md, engine(), out_md));
    } catch (const dnnl::error& e) {
      throw sy::Error("conv plugin: oneDNN could not prepare the batch norm's reorder of " + to_string(x_md.dims()) +
                          ": " + error_message(e),
                      error_status(e));
    }
    return p;
  });
}

void BatchNormKernel::run(sy::Run& run) {
  const Args a = args_of(attr_tensors_, run.args->inputs, run.num_inputs());
  const DLTensor& x = *a[0];
  DLTensor& out = run.output(0);
  const int64_t total = sy::numel(out);
  if (total == 0) return;  // an empty batch or no channels: nothing to compute
  const int64_t channels = x.shape[1];
  std::vector<float> scale, shift;
  if (!folded_) {  // statistics that arrive per run
    check_args(a);
    scale.resize(static_cast<size_t>(channels));
    shift.resize(static_cast<size_t>(channels));
    fold(a, eps_, channels, scale.data(), shift.data());
  }
  if (folded_ && scale_.size() != static_cast<size_t>(channels))
    throw sy::Error("batch_norm: input " + to_string(sy::shape_of(x)) + " no longer has the statistics' " +
                    std::to_string(scale_.size()) + " channels");
  const float* s = folded_ ? scale_.data() : scale.data();
  const float* b = folded_ ? shift_.data() : shift.data();

  const SY_StorageIndex in = run.input_storage(0), to = run.output_storage(0);
  if (to != SY_STORAGE_HOST && to != ChannelsLast::kIndex)
    throw sy::Error("batch_norm: an output in storage " + std::to_string(to) + ", which it does not write",
                    SY_ERROR_INTERNAL);
  if (to == SY_STORAGE_HOST && !sy::is_contiguous(out))
    throw sy::Error("batch_norm: the host's output is not compact", SY_ERROR_INTERNAL);
  const memory::desc x_md = user_desc(x, in), out_md = user_desc(out, to);
  const float* src = static_cast<const float*>(handle(x));
  float* dst = static_cast<float*>(handle(out));
  if (!same_bytes(x_md, out_md)) {
    // Another layout (a storage's, or strided): one reorder into the output's layout, then
    // the loop over it in place. Into scratch when the output is the input's buffer.
    std::shared_ptr<const Prepared> p = prepare(x_md, out_md);
    float* into = handle(out) == handle(x) ? thread_buffer(ThreadBuffer::kInput, out_md.get_size()) : dst;
    sy_omp::Threads threads(static_cast<double>(total));
    try {
      dnnl::stream& st = thread_stream();
      memory from(x_md, engine(), handle(x)), into_mem(out_md, engine(), into);
      reorder_into(st, p->to_out, from, into_mem);
      st.wait();
    } catch (const dnnl::error& e) {
      throw sy::Error("conv plugin: oneDNN failed to reorder the batch norm's input: " + error_message(e),
                      error_status(e));
    }
    src = into;
  }
  // nhwc (or a 2-D input): channels fastest; plain: [N, C, inner].
  int64_t inner = 1;
  if (to == SY_STORAGE_HOST)
    for (int d = 2; d < out.ndim; ++d) inner *= out.shape[d];
  apply(src, dst, s, b, channels, inner, total, relu_);
}

}  // namespace syconv
