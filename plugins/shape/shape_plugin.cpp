// switchyard `shape` plugin: views, reshapes, splits and joins, and embedding's gather of
// rows (embedding.cpp), for every dtype, with no LibTorch.
//
// Two kinds of output:
//   * a view (view, permute, transpose, slice, select, expand, split pieces, ...) is
//     produced by the kernel (SY_OUTPUT_KERNEL_ALLOCATED): a DLManagedTensor with its own
//     shape/strides pointing into the input's memory; the host sees that its data lies
//     inside the input and keeps the input alive for as long as the view lives. No
//     element is touched.
//   * a copy (contiguous of a non-contiguous input, reshape/flatten that no view can
//     express, cat, stack) is written into a host-allocated output
//     (SY_OUTPUT_HOST_ALLOCATED), so it shares the host's memory plan, by the copy engine
//     (copy.cpp: memcpy of contiguous runs, oneDNN reorder for transposes).
// A view op is offered twice: by the copy kernel, for inputs whose geometry needs a copy
// when the plan is made, then by the view kernel for the rest. The view kernel still
// copies (into a buffer of its own) if a later run's input strides need it.
// Arguments follow the aten plugin's convention (plugins/aten/aten_ops.hpp): tensors are
// inputs (cat/stack: one per list element), everything else attributes named as in the
// ATen schema; a Tensor[] result (split, chunk, unbind) is one node output per piece.
#include "shape_ops.hpp"

#include "common/library_attributes.hpp"

#include <switchyard/shapes.hpp>

#include <cstring>
#include <memory>
#include <mutex>

namespace sy_shape {
namespace {

const std::vector<DLDataType>& all_dtypes() {
  static const std::vector<DLDataType> dtypes = {
      sy::kFloat32, sy::kFloat64, sy::kFloat16, sy::kBFloat16, sy::kInt8, DLDataType{kDLInt, 16, 1},
      sy::kInt32,   sy::kInt64,   sy::kUInt8,   sy::kBool};
  return dtypes;
}

size_t elem_size(DLDataType t) { return (static_cast<size_t>(t.bits) * t.lanes + 7) / 8; }

std::string dtype_label(DLDataType t) {
  return "code " + std::to_string(t.code) + " bits " + std::to_string(t.bits) + " lanes " + std::to_string(t.lanes);
}

void check_input(const sy::Node& n, size_t i) {
  if (!n.has_input(i)) throw sy::Unsupported("input " + std::to_string(i) + " is missing");
  const DLTensor& t = n.input(i);
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
    throw sy::Unsupported("input " + std::to_string(i) + " is not in CPU memory");
  bool known = false;
  for (DLDataType d : all_dtypes()) known = known || sy::same_dtype(d, t.dtype);
  if (!known)
    throw sy::Unsupported("input " + std::to_string(i) + " has an unsupported dtype (" + dtype_label(t.dtype) + ")");
  if (t.strides != nullptr)
    for (int d = 0; d < t.ndim; ++d)
      if (t.strides[d] < 0) throw sy::Unsupported("input " + std::to_string(i) + " has a negative stride");
}

// Declines attributes the op doesn't know (unless None): ignoring one could compute
// something else than the model asks for.
void check_attrs(const sy::Node& n, const std::string& known) {
  const SY_HostApi* h = sy::host_api();
  const size_t count = h->attr_count(n.attrs.raw());
  for (size_t i = 0; i < count; ++i) {
    const char* name = h->attr_name(n.attrs.raw(), i);
    // '@' attributes are config options (sdk.h, "Options"): never a reason to decline.
    if (name == nullptr || name[0] == '@' || n.attrs.kind(name) == SY_ATTR_NONE) continue;
    if ((" " + known + " ").find(" " + std::string(name) + " ") == std::string::npos)
      throw sy::Unsupported(std::string("unexpected attribute '") + name + "'");
  }
}

using sy::declining;  // an invalid argument found while checking a node becomes a decline

// ---- produced tensors --------------------------------------------------------------------

// One allocation per produced tensor up to kInlineDims dimensions: a transformer runs
// dozens of views per forward, and their shape vectors were most of its allocations.
constexpr size_t kInlineDims = 8;

struct Produced {
  DLManagedTensor managed{};
  int64_t dims[2 * kInlineDims];  // shape, then strides, when they fit
  Shape shape, strides;           // otherwise
  void* buffer = nullptr;         // a copy's memory (host allocator); nullptr for a view
};

void release(DLManagedTensor* m) {
  if (m == nullptr) return;
  auto* p = static_cast<Produced*>(m->manager_ctx);
  if (p->buffer != nullptr) sy::host_api()->free(sy::host_api()->host_context, p->buffer);
  delete p;
}

struct Release {
  void operator()(Produced* p) const { release(&p->managed); }
};
using ProducedPtr = std::unique_ptr<Produced, Release>;

ProducedPtr make(DLDataType dtype, const Shape& shape, const Shape& strides, void* data) {
  ProducedPtr p(new Produced);
  DLTensor& d = p->managed.dl_tensor;
  if (shape.size() <= kInlineDims) {
    std::copy(shape.begin(), shape.end(), p->dims);
    std::copy(strides.begin(), strides.end(), p->dims + kInlineDims);
    d.shape = p->dims;
    d.strides = p->dims + kInlineDims;
  } else {
    p->shape = shape;
    p->strides = strides;
    d.shape = p->shape.data();
    d.strides = p->strides.data();
  }
  d.data = data != nullptr ? data : p.get();  // an empty tensor still gets a valid address
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = static_cast<int32_t>(shape.size());
  d.dtype = dtype;
  d.byte_offset = 0;
  p->managed.manager_ctx = p.get();
  p->managed.deleter = &release;
  return p;
}

// A contiguous tensor in fresh host memory.
ProducedPtr make_buffer(DLDataType dtype, const Shape& shape) {
  const size_t bytes = static_cast<size_t>(product(shape)) * elem_size(dtype);
  const SY_HostApi* h = sy::host_api();
  void* buffer = h->alloc(h->host_context, bytes == 0 ? 1 : bytes, 64);
  if (buffer == nullptr)
    throw sy::Error("out of memory allocating " + std::to_string(bytes) + " bytes", SY_ERROR_OUT_OF_MEMORY);
  ProducedPtr p = make(dtype, shape, contiguous_strides(shape), buffer);
  p->buffer = buffer;
  return p;
}

char* base_of(const DLTensor& t) { return t.data == nullptr ? nullptr : static_cast<char*>(t.data) + t.byte_offset; }

void hand_over(sy::Run& r, std::vector<ProducedPtr>& outs) {
  for (size_t i = 0; i < outs.size(); ++i) r.produce(i, &outs[i].release()->managed);
}

// ---- views, reshapes, splits: one kernel class for every row of views.cpp --------------

class ShapeKernel {
 public:
  static constexpr SY_OutputMode output_mode = SY_OUTPUT_KERNEL_ALLOCATED;

  static void supports(const sy::Node& n) {
    const ViewOp& op = op_of(n);
    if (n.num_inputs != static_cast<size_t>(op.inputs))
      throw sy::Unsupported("takes " + std::to_string(op.inputs) + " tensor input(s), node has " +
                            std::to_string(n.num_inputs));
    for (size_t i = 0; i < n.num_inputs; ++i) check_input(n, i);
    check_attrs(n, op.attrs);
    Params p = declining([&] { return op.parse(n); });
    Shape other = op.inputs == 2 ? sy::shape_of(n.input(1)) : Shape{};
    auto outs = declining([&] { return op.apply(geometry_of(n.input(0)), p, &other); });
    if (op.multi ? n.num_outputs != outs.size() : n.num_outputs != 1)
      throw sy::Unsupported("makes " + std::to_string(op.multi ? outs.size() : 1) +
                            " output(s) for these arguments, node has " + std::to_string(n.num_outputs));
  }

  explicit ShapeKernel(const sy::Node& n) : op_(op_of(n)), params_(op_.parse(n)) {}

  void infer(sy::Infer& inf) {
    auto outs = apply(inf.input(0), inf.num_inputs() > 1 ? &inf.input(1) : nullptr);
    for (size_t i = 0; i < outs.size() && i < inf.args->num_outputs; ++i)
      inf.set_output(i, inf.input(0).dtype, outs[i].shape);
  }

  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    const DLTensor* other = r.num_inputs() > 1 ? &r.input(1) : nullptr;
    const std::shared_ptr<const Memo> memo = memo_for(x, other);
    const std::vector<Geometry>& outs = memo->outs;
    if (outs.size() != r.num_outputs())
      throw sy::Error(std::string(op_.op) + " makes " + std::to_string(outs.size()) + " pieces, node has " +
                      std::to_string(r.num_outputs()) + " outputs");
    const size_t es = elem_size(x.dtype);
    std::vector<ProducedPtr> produced;
    produced.reserve(outs.size());
    for (const Geometry& g : outs) {
      if (!g.copy) {
        // A view: same memory, its own geometry. Empty views still point at the input.
        char* data = base_of(x) == nullptr ? nullptr : base_of(x) + g.offset * static_cast<int64_t>(es);
        produced.push_back(make(x.dtype, g.shape, g.strides, data));
        continue;
      }
      // No view can express it: the input's elements in row-major order, then reshaped.
      const Geometry in = geometry_of(x);
      ProducedPtr p = make_buffer(x.dtype, g.shape);
      copy_strided(base_of(x), in.strides, p->managed.dl_tensor.data, contiguous_strides(in.shape), in.shape, es);
      produced.push_back(std::move(p));
    }
    hand_over(r, produced);
  }

 private:
  static const ViewOp& op_of(const sy::Node& n) { return *static_cast<const ViewOp*>(n.user_data); }

  std::vector<Geometry> apply(const DLTensor& x, const DLTensor* other) const {
    Shape other_shape = other != nullptr ? sy::shape_of(*other) : Shape{};
    return op_.apply(geometry_of(x), params_, &other_shape);
  }

  // The last call's input geometry and what it gave: runs repeat it, and working the
  // geometry out again allocated a dozen small vectors per view.
  struct Memo {
    sy::LayoutKey input, other;  // only other's shape matters, but a key is simplest
    std::vector<Geometry> outs;
  };

  std::shared_ptr<const Memo> memo_for(const DLTensor& x, const DLTensor* other) {
    {
      std::lock_guard<std::mutex> lock(memo_mutex_);
      if (memo_ && memo_->input.matches(&x) && memo_->other.matches(other)) return memo_;
    }
    auto m = std::make_shared<Memo>();
    m->input = sy::LayoutKey::of(&x);
    m->other = sy::LayoutKey::of(other);
    m->outs = apply(x, other);  // throws for invalid arguments: nothing is remembered then
    std::lock_guard<std::mutex> lock(memo_mutex_);
    memo_ = m;
    return m;
  }

  const ViewOp& op_;
  Params params_;
  std::mutex memo_mutex_;             // runs may overlap on one instance
  std::shared_ptr<const Memo> memo_;  // guarded by memo_mutex_
};

// ---- copies of the view ops: reshape/flatten/contiguous that no view can express -------

// The one output's geometry, when it is a copy; Unsupported when it is a view.
Geometry copy_geometry(const ViewOp& op, const Params& params, const DLTensor& x, const DLTensor* other) {
  Shape other_shape = other != nullptr ? sy::shape_of(*other) : Shape{};
  std::vector<Geometry> outs = op.apply(geometry_of(x), params, &other_shape);
  if (outs.size() != 1 || !outs[0].copy) throw sy::Unsupported("a view of its input; the view kernel takes it");
  return outs[0];
}

class CopyKernel {
 public:
  static constexpr SY_OutputMode output_mode = SY_OUTPUT_HOST_ALLOCATED;

  static void supports(const sy::Node& n) {
    const ViewOp& op = op_of(n);
    if (n.num_inputs != static_cast<size_t>(op.inputs) || n.num_outputs != 1)
      throw sy::Unsupported("takes " + std::to_string(op.inputs) + " tensor input(s) and makes 1 output");
    for (size_t i = 0; i < n.num_inputs; ++i) check_input(n, i);
    check_attrs(n, op.attrs);
    const Params p = declining([&] { return op.parse(n); });
    declining([&] { return copy_geometry(op, p, n.input(0), op.inputs == 2 ? &n.input(1) : nullptr); });
  }

  explicit CopyKernel(const sy::Node& n) : op_(op_of(n)), params_(op_.parse(n)) {}

  void infer(sy::Infer& inf) {
    const Shape in = sy::shape_of(inf.input(0));
    Shape other_shape = inf.num_inputs() > 1 ? sy::shape_of(inf.input(1)) : Shape{};
    // Shapes only: a contiguous geometry of the input's shape gives the output's shape.
    Geometry g;
    g.shape = in;
    g.strides = contiguous_strides(in);
    inf.set_output(0, inf.input(0).dtype, op_.apply(g, params_, &other_shape).at(0).shape);
  }

  // Row-major order of the input's elements is the output's, whatever its shape.
  void run(sy::Run& r) {
    const DLTensor& x = r.input(0);
    const Geometry in = geometry_of(x);
    copy_strided(base_of(x), in.strides, base_of(r.output(0)), contiguous_strides(in.shape), in.shape,
                 elem_size(x.dtype));
  }

 private:
  static const ViewOp& op_of(const sy::Node& n) { return *static_cast<const ViewOp*>(n.user_data); }
  const ViewOp& op_;
  Params params_;
};

// ---- joins: cat and stack -----------------------------------------------------------------

struct JoinPlan {
  Shape out;
  int64_t dim = 0;
  std::vector<size_t> parts;       // inputs that contribute (cat skips legacy [0] inputs)
  std::vector<Geometry> geometry;  // each part as a slab of the output along dim
};

struct Join {
  bool stack;
  const char* name;
};

JoinPlan plan_join(const Join& j, const DLTensor* const* inputs, size_t n, int64_t dim_attr) {
  JoinPlan plan;
  if (n == 0) throw sy::Error(std::string(j.name) + " expects a non-empty list of tensors");
  for (size_t i = 0; i < n; ++i) {
    Geometry g = geometry_of(*inputs[i]);
    if (j.stack) {
      if (g.shape != sy::shape_of(*inputs[0]))
        throw sy::Error("stack expects each tensor to be equal size, but got " + to_string(sy::shape_of(*inputs[0])) +
                        " at entry 0 and " + to_string(g.shape) + " at entry " + std::to_string(i));
      if (i == 0) plan.dim = wrap_dim(dim_attr, static_cast<int64_t>(g.shape.size()) + 1, "stack");
      g.shape.insert(g.shape.begin() + plan.dim, 1);  // stack = cat of unsqueezed inputs
      g.strides.insert(g.strides.begin() + plan.dim, 1);
    } else {
      if (g.shape.size() == 1 && g.shape[0] == 0) continue;  // ATen's legacy skip of empty 1-D inputs
      if (g.shape.empty())
        throw sy::Error("zero-dimensional tensor (at position " + std::to_string(i) + ") cannot be concatenated");
      if (plan.parts.empty()) plan.dim = wrap_dim(dim_attr, static_cast<int64_t>(g.shape.size()), "cat");
    }
    if (!plan.parts.empty()) {
      const Geometry& first = plan.geometry.front();
      if (first.shape.size() != g.shape.size())
        throw sy::Error("Tensors must have same number of dimensions: got " + std::to_string(first.shape.size()) +
                        " and " + std::to_string(g.shape.size()));
      for (size_t d = 0; d < g.shape.size(); ++d)
        if (static_cast<int64_t>(d) != plan.dim && g.shape[d] != first.shape[d])
          throw sy::Error("Sizes of tensors must match except in dimension " + std::to_string(plan.dim) +
                          ". Expected size " + std::to_string(first.shape[d]) + " but got size " +
                          std::to_string(g.shape[d]) + " for tensor number " + std::to_string(i) + " in the list.");
    }
    plan.parts.push_back(i);
    plan.geometry.push_back(std::move(g));
  }
  if (plan.parts.empty()) {
    plan.out = {0};
    return plan;
  }
  plan.out = plan.geometry.front().shape;
  plan.out[plan.dim] = 0;
  for (const Geometry& g : plan.geometry) plan.out[plan.dim] += g.shape[plan.dim];
  return plan;
}

class JoinKernel {
 public:
  static constexpr SY_OutputMode output_mode = SY_OUTPUT_HOST_ALLOCATED;

  static void supports(const sy::Node& n) {
    const Join& j = join_of(n);
    if (n.num_inputs == 0) throw sy::Unsupported(std::string(j.name) + " expects a non-empty list of tensors");
    for (size_t i = 0; i < n.num_inputs; ++i) {
      check_input(n, i);
      if (!sy::same_dtype(n.input(i).dtype, n.input(0).dtype))
        throw sy::Unsupported("input " + std::to_string(i) +
                              " has another dtype than input 0; type promotion is left to other backends");
    }
    check_attrs(n, "dim");
    const int64_t dim = declining([&] { return n.attrs.i("dim", 0); });
    declining([&] { return plan_join(j, n.inputs, n.num_inputs, dim); });
    if (n.num_outputs != 1) throw sy::Unsupported("makes 1 output, node has " + std::to_string(n.num_outputs));
  }

  explicit JoinKernel(const sy::Node& n) : join_(join_of(n)), dim_(n.attrs.i("dim", 0)) {}

  void infer(sy::Infer& inf) {
    inf.set_output(0, inf.input(0).dtype, plan_join(join_, inf.args->inputs, inf.num_inputs(), dim_).out);
  }

  void run(sy::Run& r) {
    const JoinPlan plan = plan_join(join_, r.args->inputs, r.num_inputs(), dim_);
    const size_t es = elem_size(r.input(0).dtype);
    const Shape strides = contiguous_strides(plan.out);
    char* dst = base_of(r.output(0));
    int64_t at = 0;  // where the next slab starts along dim
    for (size_t k = 0; k < plan.parts.size(); ++k) {
      const Geometry& g = plan.geometry[k];
      copy_strided(base_of(r.input(plan.parts[k])), g.strides, dst + at * strides[plan.dim] * static_cast<int64_t>(es),
                   strides, g.shape, es);
      at += g.shape[plan.dim];
    }
  }

 private:
  static const Join& join_of(const sy::Node& n) { return *static_cast<const Join*>(n.user_data); }
  const Join& join_;
  int64_t dim_;
};

const Join kCat{false, "cat"}, kStack{true, "stack"};

sy::PluginDef& plugin() {
  static sy::PluginDef def = [] {
    sy::PluginDef d("shape", "0.1.0", "switchyard");
    d.attribute("onednn", sy_attributes::onednn());  // strided copies: its reorders
    for (const ViewOp& op : view_ops()) {
      if (op.may_copy) d.add(sy::kernel<CopyKernel>(op.op, "shape", all_dtypes(), &op));
      d.add(sy::kernel<ShapeKernel>(op.op, "shape", all_dtypes(), &op));
    }
    d.add(sy::kernel<JoinKernel>("aten::cat", "shape", all_dtypes(), &kCat));
    d.add(sy::kernel<JoinKernel>("aten::concat", "shape", all_dtypes(), &kCat));
    d.add(sy::kernel<JoinKernel>("aten::stack", "shape", all_dtypes(), &kStack));
    add_embedding_kernels(d, all_dtypes());
    return d;
  }();
  return def;
}

}  // namespace
}  // namespace sy_shape

SY_PLUGIN_FROM(sy_shape::plugin)
