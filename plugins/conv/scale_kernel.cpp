// conv plugin: a per-channel scale (aten::mul of [N, C, H, W] by [N or 1, C, 1, 1]) on
// oneDNN's binary primitive, in the activation's own layout; nhwc in and out by a loop of
// its own (scale_nhwc, below).
#include "scale_kernel.hpp"

#include "common/vector_clones.hpp"
#include "formats.hpp"

namespace syconv {

using memory = dnnl::memory;

struct ScaleKernel::Prepared {
  dnnl::binary mul;
  memory::desc x_user, s_user, s, dst_user, dst, scratch;
  dnnl::reorder s_in, dst_out;  // empty when the layouts already agree
};

namespace {

// Is `s` a per-channel scale of `x`: [1 or N, C, 1, 1] beside [N, C, H, W]?
bool scales(const DLTensor& x, const DLTensor& s) {
  if (x.ndim != 4 || s.ndim != 4) return false;
  return s.shape[1] == x.shape[1] && s.shape[2] == 1 && s.shape[3] == 1 &&
         (s.shape[0] == 1 || s.shape[0] == x.shape[0]);
}

// The activation's index (0 or 1); Unsupported unless one input scales the other by channel.
size_t activation_index(const sy::Node& node) {
  if (node.num_inputs != 2 || node.inputs[0] == nullptr || node.inputs[1] == nullptr)
    throw sy::Unsupported("not a product of two tensors");
  const DLTensor& a = node.input(0);
  const DLTensor& b = node.input(1);
  if (scales(a, b)) return 0;
  if (scales(b, a)) return 1;
  throw sy::Unsupported("not a per-channel scale ([N, C, H, W] times [1 or N, C, 1, 1]): shapes " +
                        to_string(sy::shape_of(a)) + " and " + to_string(sy::shape_of(b)));
}

// The scale in nhwc, in and out, with a compact scale: pixels outer, channels inner (the
// compiler vectorises them). oneDNN 2.6's binary primitive took 19 us for
// mobilenet_v3_small's [1, 16, 56, 56] in this layout, the loop 3; for a few channels its
// per-channel broadcast in nhwc is slow. Elementwise, so it may write over x.
// Rows [from, to) of c channels, batch-major.
SY_VECTOR_CLONES void scale_rows(const float* x, const float* scale, bool per_batch, float* out, int64_t c,
                                 int64_t pixels, int64_t from, int64_t to) {
  for (int64_t r = from; r < to; ++r) {
    const float* s = scale + (per_batch ? r / pixels * c : 0);
#pragma omp simd
    for (int64_t k = 0; k < c; ++k) out[r * c + k] = x[r * c + k] * s[k];
  }
}

void scale_nhwc(const float* x, const float* scale, bool per_batch, float* out, int64_t n, int64_t c, int64_t pixels) {
  auto rows = [&](int64_t from, int64_t to) { scale_rows(x, scale, per_batch, out, c, pixels, from, to); };
  const double work = static_cast<double>(n * c * pixels);
  if (work < sy_omp::kSerialWork) return rows(0, n * pixels);  // no parallel region: the team stays as it is
  sy_omp::Threads threads(work);
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads(), total = n * pixels;
    rows(total * t / team, total * (t + 1) / team);
  }
}

memory::desc user_desc(const DLTensor& t, SY_StorageIndex storage) {
  const Dims shape = sy::shape_of(t);
  return storage != SY_STORAGE_HOST ? layout_of_storage(storage, shape) : strided_desc(shape, strides_of(t));
}

}  // namespace

void ScaleKernel::supports(const sy::Node& node) {
  check_attr_names(node, {}, {});
  const size_t x = activation_index(node);
  check_tensor(node.input(x), "input");
  check_tensor(node.input(1 - x), "scale");
  describable(sy::shape_of(node.input(x)), strides_of(node.input(x)), "input");
  describable(sy::shape_of(node.input(1 - x)), strides_of(node.input(1 - x)), "scale");
  own_layouts_option(node.attrs);  // an unknown layout value is an error, here as at create
}

ScaleKernel::ScaleKernel(const sy::Node& node)
    : x_(activation_index(node)), s_(1 - x_), own_layouts_(own_layouts_option(node.attrs)) {}

void ScaleKernel::infer(sy::Infer& infer) {
  const DLTensor& x = infer.input(x_);
  if (!scales(x, infer.input(s_)))
    throw sy::Error("inputs are no longer a per-channel scale: shapes " + to_string(sy::shape_of(x)) + " and " +
                    to_string(sy::shape_of(infer.input(s_))));
  infer.set_output(0, sy::kFloat32, sy::shape_of(x));
}

void ScaleKernel::storage(sy::StorageQuery& q) {
  const DLTensor& x = q.input(x_);
  if (!own_layouts_ || !format_holds(x.dtype, x.ndim)) return;  // plain only
  const SY_StorageMask any =
      SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(Blocked16::kIndex) | SY_STORAGE_MASK(ChannelsLast::kIndex);
  q.reads(x_, any);
  q.reads(s_, any);
  // nhwc, as pooling writes: the layout oneDNN's convolutions keep on AVX-512 cores.
  q.writes(0, SY_STORAGE_MASK(ChannelsLast::kIndex) | SY_STORAGE_MASK_HOST);
  q.in_place(0, x_);  // the activation usually dies here (its other reader, the pooling, ran)
}

std::shared_ptr<const ScaleKernel::Prepared> ScaleKernel::prepare(const DLTensor& x, const DLTensor& s,
                                                                  const DLTensor& out, SY_StorageIndex in_x,
                                                                  SY_StorageIndex in_s, SY_StorageIndex to) {
  check_tensor(x, "input");  // layouts may differ from those supports() saw
  check_tensor(s, "scale");
  const memory::desc x_user = user_desc(x, in_x), s_user = user_desc(s, in_s), dst_user = user_desc(out, to);
  Dims key;
  append_key(key, x_user);
  append_key(key, s_user);
  append_key(key, dst_user);
  return cache_.get(key, [&] {
    auto p = std::make_shared<Prepared>();
    sy_omp::Threads threads(static_cast<double>(sy::numel(x)));  // as run() will hold
    try {
      p->x_user = x_user;
      p->s_user = s_user;
      p->dst_user = dst_user;
      // The product in the activation's layout (written over it when the host allows);
      // the scale compact, as the binary primitive broadcasts it per channel.
      p->s = memory::desc(sy::shape_of(s), memory::data_type::f32, memory::format_tag::abcd);
      p->dst = x_user;
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_mul, x_user, p->s, p->dst), attr,
                                      engine());
      p->mul = dnnl::binary(pd);
      p->scratch = pd.scratchpad_desc();
      if (s_user != p->s) p->s_in = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), s_user, engine(), p->s));
      if (dst_user != p->dst)
        p->dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p->dst, engine(), dst_user));
    } catch (const dnnl::error& e) {
      throw sy::Error("conv plugin: oneDNN could not prepare the channel scale of " + to_string(sy::shape_of(x)) +
                          ": " + error_message(e),
                      error_status(e));
    }
    return p;
  });
}

void ScaleKernel::run(sy::Run& run) {
  const DLTensor& x = run.input(x_);
  const DLTensor& s = run.input(s_);
  DLTensor& out = run.output(0);
  if (sy::numel(out) == 0) return;  // empty batch or channels: nothing to compute
  const bool scale_compact = run.input_storage(s_) == ChannelsLast::kIndex ||
                             (run.input_storage(s_) == SY_STORAGE_HOST && sy::is_contiguous(s));
  if (run.input_storage(x_) == ChannelsLast::kIndex && run.output_storage(0) == ChannelsLast::kIndex && scale_compact) {
    scale_nhwc(static_cast<const float*>(handle(x)), static_cast<const float*>(handle(s)), s.shape[0] != 1,
               static_cast<float*>(handle(out)), x.shape[0], x.shape[1], x.shape[2] * x.shape[3]);
    return;
  }
  std::shared_ptr<const Prepared> p =
      prepare(x, s, out, run.input_storage(x_), run.input_storage(s_), run.output_storage(0));
  sy_omp::Threads threads(static_cast<double>(sy::numel(out)));
  try {
    dnnl::engine& eng = engine();
    dnnl::stream& st = thread_stream();
    memory src0(p->x_user, eng, handle(x)), src1(p->s_user, eng, handle(s)), dst_user(p->dst_user, eng, handle(out));
    if (p->s_in) {
      memory compact(p->s, eng);
      reorder_into(st, p->s_in, src1, compact);
      src1 = compact;
    }
    // Another layout for the output (or in place across layouts): the product goes to a
    // scratch copy first, so the input is read whole before the output is written.
    memory dst = p->dst_out ? memory(p->dst, eng) : dst_user;
    memory scratch = thread_scratch(p->scratch);
    sy_onednn::execute(
        p->mul, st,
        {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratch}});
    if (p->dst_out) reorder_into(st, p->dst_out, dst, dst_user);
    st.wait();
  } catch (const dnnl::error& e) {
    throw sy::Error("conv plugin: oneDNN failed to run the channel scale: " + error_message(e), error_status(e));
  }
}

}  // namespace syconv
