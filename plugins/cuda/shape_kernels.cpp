// cuda plugin: shape ops on the device, every dtype.
//
// Values in the "cuda" storage are compact (sdk.h), so a view op cannot hand out a strided
// view: each output is a compact copy of the view the shape plugin's geometry table
// (plugins/shape/views.cpp, ATen's rules) describes. Ops whose output is the input's bytes
// unchanged (view, reshape, flatten, squeeze, unsqueeze, contiguous, ...) let the host give
// the output the input's buffer when the input dies there: then they copy nothing.
//
//   the view table's ops      view reshape view_as reshape_as flatten unflatten permute
//                             transpose t expand expand_as broadcast_to slice narrow select
//                             squeeze unsqueeze alias detach contiguous split
//                             split_with_sizes chunk unbind
//   cat, concat, stack        (ATen's legacy skip of empty 1-dim inputs included)
//   embedding, index_select   row gathers; an index out of range fails the run
#include "kernel_base.hpp"
#include "kernels.hpp"
#include "shape_ops.hpp"

#include <cstring>

namespace sycuda {
namespace {

double esize(DLDataType dt) { return static_cast<double>((dt.bits * dt.lanes + 7) / 8); }

// Queues dst (compact, `shape`) <- the elements of `src` seen through (shape, strides, offset).
void copy_geometry(const void* src, const sy_shape::Geometry& g, void* dst, size_t es, cudaStream_t stream,
                   const std::string& node) {
  Shape from = g.strides, to = broadcast_strides(g.shape, g.shape);
  const launch::Walk shape_walk = make_walk(g.shape, {&from, &to});
  launch::Walk s = shape_walk, d = shape_walk;
  for (int k = 0; k < shape_walk.ndim; ++k) s.stride[k] = from[k], d.stride[k] = to[k];
  const char* base = static_cast<const char*>(src) + g.offset * static_cast<int64_t>(es);
  launched(launch::strided_copy(static_cast<int>(es), base, s, dst, d, stream), "strided_copy", node);
}

bool alias_op(const std::string& op) {
  static const char* const ops[] = {"aten::view",    "aten::reshape",   "aten::view_as",   "aten::reshape_as",
                                    "aten::flatten", "aten::unflatten", "aten::squeeze",   "aten::unsqueeze",
                                    "aten::alias",   "aten::detach",    "aten::contiguous"};
  for (const char* o : ops)
    if (op == o) return true;
  return false;
}

// ---- one kernel class for every row of the view table -------------------------------------------

class ViewKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    ViewKernel k(n);
    if (n.num_inputs != static_cast<size_t>(k.op_->inputs))
      throw sy::Unsupported("takes " + std::to_string(k.op_->inputs) + " tensor input(s), node has " +
                            std::to_string(n.num_inputs));
    need_dt(n.input(0).dtype, "the input");
    const std::vector<sy_shape::Geometry> outs =
        declining([&] { return k.apply(n.input(0), n.num_inputs > 1 ? &n.input(1) : nullptr); });
    if (outs.size() != n.num_outputs)
      throw sy::Unsupported("makes " + std::to_string(outs.size()) + " outputs, node has " +
                            std::to_string(n.num_outputs));
  }

  explicit ViewKernel(const sy::Node& n) : CudaKernel(n) {
    for (const sy_shape::ViewOp& v : sy_shape::view_ops())
      if (std::string(n.op) == v.op) op_ = &v;
    if (op_ == nullptr) throw sy::Unsupported(std::string("no view op ") + n.op);
    std::vector<std::string> known = {"self", "other"};
    for (const char* p = op_->attrs; *p != '\0';) {
      const char* end = std::strchr(p, ' ');
      known.emplace_back(p, end ? static_cast<size_t>(end - p) : std::strlen(p));
      p = end ? end + 1 : p + std::strlen(p);
    }
    check_attributes(n, known);
    params_ = declining([&] { return op_->parse(n); });
    if (op_->inputs > 1) host_only(1);  // view_as & co. read only the other's shape
    if (alias_op(op_->op)) allow_in_place(0);
  }

  void infer(sy::Infer& f) {
    const auto outs = at_run([&] { return apply(f.input(0), f.num_inputs() > 1 ? &f.input(1) : nullptr); });
    for (size_t o = 0; o < outs.size() && o < f.args->num_outputs; ++o)
      f.set_output(o, f.input(0).dtype, outs[o].shape);
  }

  void run(sy::Run& r) {
    const auto outs = apply(r.input(0), r.num_inputs() > 1 ? &r.input(1) : nullptr);
    DeviceRun d(r);
    const DevTensor& x = d.in(0);
    const size_t es = static_cast<size_t>(esize(x.dtype));
    for (size_t o = 0; o < outs.size() && o < d.num_outputs(); ++o) {
      DevTensor& y = d.out(o);
      if (y.numel() == 0) continue;
      if (y.data == x.data && outs[o].offset == 0 && sy_shape::is_contiguous(outs[o]))
        continue;  // given the input's buffer
      copy_geometry(x.data, outs[o], y.data, es, d.stream(), node_name());
    }
    d.finish();
  }

  void cost(sy::Cost& c) {
    const double bytes = static_cast<double>(sy::numel(c.input(0))) * esize(c.input(0).dtype);
    c.bytes(2 * bytes);
  }

 private:
  std::vector<sy_shape::Geometry> apply(const DLTensor& x, const DLTensor* other) const {
    sy_shape::Geometry in;
    in.shape = sy::shape_of(x);
    in.strides = sy_shape::contiguous_strides(in.shape);  // the device copy is compact
    Shape other_shape = other ? sy::shape_of(*other) : Shape{};
    return op_->apply(in, params_, other ? &other_shape : nullptr);
  }

  const sy_shape::ViewOp* op_ = nullptr;
  sy_shape::Params params_;
};

// ---- cat / stack -----------------------------------------------------------------------------------

struct JoinPlan {
  Shape out;
  int64_t dim = 0;
  std::vector<size_t> parts;  // inputs that contribute
  std::vector<Shape> shapes;  // each part's shape (stack: with the new dim of 1)
};

JoinPlan plan_join(bool stack, const DLTensor* const* in, size_t n, int64_t dim_attr) {
  JoinPlan p;
  if (n == 0) throw sy::Error(std::string(stack ? "stack" : "cat") + " expects a non-empty list of tensors");
  for (size_t i = 0; i < n; ++i) {
    Shape s = sy::shape_of(*in[i]);
    if (!sy::same_dtype(in[i]->dtype, in[0]->dtype))
      throw sy::Unsupported("inputs of dtypes " + dtype_name(in[0]->dtype) + " and " + dtype_name(in[i]->dtype) +
                            " (type promotion is not implemented)");
    if (stack) {
      if (s != sy::shape_of(*in[0]))
        throw sy::Error("stack expects each tensor to be equal size, but got " + str(sy::shape_of(*in[0])) +
                        " at entry 0 and " + str(s) + " at entry " + std::to_string(i));
      if (i == 0) p.dim = wrap_dim(dim_attr, static_cast<int64_t>(s.size()) + 1, "stack");
      s.insert(s.begin() + p.dim, 1);
    } else {
      if (s.size() == 1 && s[0] == 0) continue;  // ATen's legacy skip of empty 1-dim inputs
      if (s.empty())
        throw sy::Error("zero-dimensional tensor (at position " + std::to_string(i) + ") cannot be concatenated");
      if (p.parts.empty()) p.dim = wrap_dim(dim_attr, static_cast<int64_t>(s.size()), "cat");
    }
    if (!p.parts.empty()) {
      const Shape& first = p.shapes.front();
      if (first.size() != s.size())
        throw sy::Error("Tensors must have same number of dimensions: got " + std::to_string(first.size()) + " and " +
                        std::to_string(s.size()));
      for (size_t d = 0; d < s.size(); ++d)
        if (static_cast<int64_t>(d) != p.dim && s[d] != first[d])
          throw sy::Error("Sizes of tensors must match except in dimension " + std::to_string(p.dim) +
                          ". Expected size " + std::to_string(first[d]) + " but got size " + std::to_string(s[d]) +
                          " for tensor number " + std::to_string(i) + " in the list.");
    }
    p.parts.push_back(i);
    p.shapes.push_back(std::move(s));
  }
  if (p.parts.empty()) {
    p.out = {0};
    return p;
  }
  p.out = p.shapes.front();
  p.out[p.dim] = 0;
  for (const Shape& s : p.shapes) p.out[p.dim] += s[p.dim];
  return p;
}

class JoinKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    JoinKernel k(n);
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
    for (size_t i = 0; i < n.num_inputs; ++i)
      if (n.inputs[i] == nullptr) throw sy::Unsupported("list entry " + std::to_string(i) + " is missing");
    need_dt(n.input(0).dtype, "the inputs");
    declining([&] { return plan_join(k.stack_, n.inputs, n.num_inputs, k.dim_); });
  }

  explicit JoinKernel(const sy::Node& n) : CudaKernel(n), stack_(std::string(n.op) == "aten::stack") {
    check_attributes(n, {"tensors", "dim"});
    dim_ = n.attrs.i("dim", 0);
  }

  void infer(sy::Infer& f) {
    const JoinPlan p = at_run([&] { return plan_join(stack_, f.args->inputs, f.num_inputs(), dim_); });
    f.set_output(0, f.input(0).dtype, p.out);
  }

  void run(sy::Run& r) {
    const JoinPlan p = plan_join(stack_, r.args->inputs, r.num_inputs(), dim_);
    DeviceRun d(r);
    DevTensor& y = d.out(0);
    const size_t es = static_cast<size_t>(esize(y.dtype));
    const Shape out_strides = sy_shape::contiguous_strides(p.out);
    int64_t start = 0;
    for (size_t k = 0; k < p.parts.size(); ++k) {
      const Shape& s = p.shapes[k];
      const DevTensor& x = d.in(p.parts[k]);
      if (product(s) > 0) {
        Shape from = sy_shape::contiguous_strides(s), to = out_strides;
        const launch::Walk w = make_walk(s, {&from, &to});
        launch::Walk src = w, dst = w;
        for (int j = 0; j < w.ndim; ++j) src.stride[j] = from[j], dst.stride[j] = to[j];
        char* slab = static_cast<char*>(y.data) + start * out_strides[p.dim] * static_cast<int64_t>(es);
        launched(launch::strided_copy(static_cast<int>(es), x.data, src, slab, dst, d.stream()), "cat");
      }
      start += s[p.dim];
    }
    d.finish();
  }

  void cost(sy::Cost& c) {
    double bytes = 0;
    for (size_t i = 0; i < c.num_inputs(); ++i)
      bytes += static_cast<double>(sy::numel(c.input(i))) * esize(c.input(i).dtype);
    c.bytes(2 * bytes);
  }

 private:
  bool stack_;
  int64_t dim_ = 0;
};

// ---- embedding / index_select ------------------------------------------------------------------

class GatherKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    GatherKernel k(n);
    if (n.num_outputs != 1 || n.num_inputs != 2) throw sy::Unsupported("expected two inputs and one output");
    need_dt(k.table(n.inputs).dtype, "the table");
    declining([&] { return k.plan(n.inputs); });
  }

  explicit GatherKernel(const sy::Node& n) : CudaKernel(n), embedding_(std::string(n.op) == "aten::embedding") {
    if (embedding_) {
      check_attributes(n, {"weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse"});
      if (n.attrs.i("sparse", 0) != 0)
        throw sy::Unsupported("sparse embedding gradients (training) are not implemented");
    } else {
      check_attributes(n, {"self", "dim", "index"});
      if (!n.attrs.has("dim")) throw sy::Unsupported("attribute 'dim' is missing");
      dim_ = n.attrs.i("dim");
    }
    if (Device::get().usable() && !Device::get().plan_only())
      error_code_ = Device::get().register_error("node '" + node_name() + "' (" + n.op + "): an index is out of range");
  }

  void infer(sy::Infer& f) {
    const Plan p = at_run([&] { return plan(f.args->inputs); });
    f.set_output(0, table(f.args->inputs).dtype, p.out);
  }

  void run(sy::Run& r) {
    const Plan p = plan(r.args->inputs);
    DeviceRun d(r);
    const DevTensor& t = d.in(0);
    const DevTensor& idx = d.in(1);
    DevTensor& y = d.out(0);
    launched(
        launch::gather(static_cast<int>(esize(t.dtype)), t.data, p.outer, p.rows, p.inner, idx.data, *dt_of(idx.dtype),
                       p.count, y.data, Device::get().error_word_device(), error_code_, d.stream()),
        "gather");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const Plan p = plan(c.args->inputs);
    c.bytes(2.0 * static_cast<double>(product(p.out)) * esize(table(c.args->inputs).dtype));
  }

 private:
  struct Plan {
    Shape out;
    int64_t outer = 1, rows = 0, inner = 1, count = 0;
  };

  // embedding(weight, indices); index_select(self, index): the table is input 0 either way.
  static const DLTensor& table(const DLTensor* const* in) { return *in[0]; }

  Plan plan(const DLTensor* const* in) const {
    const DLTensor& t = *in[0];
    const DLTensor& idx = *in[1];
    if (!(sy::same_dtype(idx.dtype, sy::kInt64) || sy::same_dtype(idx.dtype, sy::kInt32)))
      throw sy::Unsupported("indices of dtype " + dtype_name(idx.dtype) + " (int64 or int32 expected)");
    Plan p;
    p.count = sy::numel(idx);
    const Shape ts = sy::shape_of(t);
    if (embedding_) {
      if (ts.size() != 2) throw sy::Error("embedding: weight must be 2-D, got " + str(ts));
      p.rows = ts[0];
      p.inner = ts[1];
      p.out = sy::shape_of(idx);
      p.out.push_back(ts[1]);
      return p;
    }
    if (idx.ndim > 1) throw sy::Error("index_select(): Index is supposed to be a vector");
    const int64_t dim = wrap_dim(dim_, static_cast<int64_t>(ts.size()), "index_select");
    p.out = ts;
    if (!ts.empty()) {
      p.rows = ts[dim];
      for (int64_t k = 0; k < dim; ++k) p.outer *= ts[k];
      for (size_t k = static_cast<size_t>(dim) + 1; k < ts.size(); ++k) p.inner *= ts[k];
      p.out[dim] = p.count;
    } else {
      p.rows = 1;
    }
    return p;
  }

  bool embedding_;
  int64_t dim_ = 0;
  int error_code_ = 0;
};

}  // namespace

void add_shape_kernels(KernelList& list) {
  for (const sy_shape::ViewOp& v : sy_shape::view_ops()) add_kernel<ViewKernel>(list, v.op, "shape", all_dtypes());
  add_kernel<JoinKernel>(list, "aten::cat", "shape", all_dtypes());
  add_kernel<JoinKernel>(list, "aten::concat", "shape", all_dtypes());
  add_kernel<JoinKernel>(list, "aten::stack", "shape", all_dtypes());
  add_kernel<GatherKernel>(list, "aten::embedding", "shape", all_dtypes());
  add_kernel<GatherKernel>(list, "aten::index_select", "shape", all_dtypes());
}

}  // namespace sycuda
