// cuda plugin: selection, normalisation and fill kernels.
//
//   where(condition, self, other)       self/other tensors or Scalars; condition bool
//   masked_fill(self, mask, value)      value a Scalar or a 0-dim constant
//   batch_norm(input, weight?, bias?, running_mean, running_var, training=False, momentum, eps,
//              cudnn_enabled)           inference only; parameters of input's dtype
//   zeros_like, ones_like, full_like    dtype from the `dtype` attribute or the input
#include "kernel_base.hpp"
#include "kernels.hpp"

#include <cmath>

namespace sycuda {
namespace {

double esize(DLDataType dt) { return static_cast<double>((dt.bits * dt.lanes + 7) / 8); }

bool is_mask_dtype(DLDataType dt) {
  return dt.lanes == 1 && dt.bits == 8 && (dt.code == SY_DL_BOOL || dt.code == kDLUInt);
}

// A Scalar attribute or 0-dim constant; nullopt when the argument is a run-time tensor.
std::optional<double> scalar_arg(const sy::Node& n, const char* name, const DLTensor* input) {
  if (n.attrs.is_number(name)) return n.attrs.f(name);
  const DLTensor* t = n.attrs.kind(name) == SY_ATTR_TENSOR ? n.attrs.tensor(name) : input;
  if (t == nullptr || t->ndim != 0 || t->data == nullptr || t->device.device_type != kDLCPU) return std::nullopt;
  const char* p = static_cast<const char*>(t->data) + t->byte_offset;
  switch (need_dt(t->dtype, name)) {
    case launch::DT::F32: return *reinterpret_cast<const float*>(p);
    case launch::DT::F64: return *reinterpret_cast<const double*>(p);
    case launch::DT::I64: return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case launch::DT::I32: return *reinterpret_cast<const int32_t*>(p);
    case launch::DT::Bool:
    case launch::DT::U8: return *reinterpret_cast<const uint8_t*>(p);
    default: throw sy::Unsupported(std::string("0-dim '") + name + "' of dtype " + dtype_name(t->dtype));
  }
}

launch::Operand operand_of(const DevTensor& t, const Shape& out, Shape* strides) {
  launch::Operand o;
  o.data = t.data;
  o.dtype = *dt_of(t.dtype);
  *strides = broadcast_strides(t.shape, out);
  o.contiguous = *strides == broadcast_strides(out, out);
  return o;
}

// ---- where / masked_fill -----------------------------------------------------------------------

class WhereKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    WhereKernel k(n);
    declining([&] { k.plan(n.inputs, n.num_inputs); });
  }

  explicit WhereKernel(const sy::Node& n) : CudaKernel(n), masked_fill_(std::string(n.op) == "aten::masked_fill") {
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
    // Schema order: where(condition, self, other); masked_fill(self, mask, value).
    const std::vector<std::string> names = masked_fill_ ? std::vector<std::string>{"self", "mask", "value"}
                                                        : std::vector<std::string>{"condition", "self", "other"};
    check_attributes(n, names);
    size_t slot = 0;
    for (size_t i = 0; i < 3; ++i) {
      const SY_AttrKind kind = n.attrs.kind(names[i].c_str());
      if (kind == SY_ATTR_INT || kind == SY_ATTR_FLOAT || kind == SY_ATTR_TENSOR) {
        scalar_[i] = scalar_arg(n, names[i].c_str(), nullptr);
        if (!scalar_[i]) throw sy::Unsupported("argument '" + names[i] + "' as a tensor attribute that is not 0-dim");
        continue;
      }
      if (slot >= n.num_inputs || n.inputs[slot] == nullptr)
        throw sy::Unsupported("argument '" + names[i] + "' is missing");
      slot_[i] = static_cast<int>(slot);
      scalar_[i] = scalar_arg(n, names[i].c_str(), n.inputs[slot]);
      if (scalar_[i]) host_only(slot);
      ++slot;
    }
    if (slot != n.num_inputs)
      throw sy::Unsupported("takes 3 arguments, node has " + std::to_string(n.num_inputs) + " inputs");
    // The mask / condition is never folded: a 0-dim constant condition is still a tensor here.
    const size_t cond = masked_fill_ ? 1 : 0;
    if (scalar_[cond] && slot_[cond] >= 0) scalar_[cond].reset();
    if (scalar_[cond]) throw sy::Unsupported("a Scalar condition / mask is not implemented");
    if (masked_fill_ && slot_[0] >= 0) allow_in_place(static_cast<size_t>(slot_[0]));
  }

  void infer(sy::Infer& f) {
    const Plan p = at_run([&] { return plan(f.args->inputs, f.num_inputs()); });
    f.set_output(0, p.dtype, p.out);
  }

  void run(sy::Run& r) {
    const Plan p = plan(r.args->inputs, r.num_inputs());
    DeviceRun d(r);
    // Operands in kernel order: condition, value-if-true, value-if-false.
    const size_t idx[3] = {masked_fill_ ? 1u : 0u, masked_fill_ ? 2u : 1u, masked_fill_ ? 0u : 2u};
    launch::Operand ops[3];
    Shape strides[3];
    for (int k = 0; k < 3; ++k) {
      const size_t i = idx[k];
      if (scalar_[i]) {
        ops[k].scalar = *scalar_[i];
        ops[k].dtype = *dt_of(p.dtype);
        strides[k] = Shape(p.out.size(), 0);
      } else {
        ops[k] = operand_of(d.in(static_cast<size_t>(slot_[i])), p.out, &strides[k]);
      }
    }
    const launch::Walk w = make_walk(p.out, {&strides[0], &strides[1], &strides[2]});
    for (int k = 0; k < 3; ++k)
      for (size_t j = 0; j < strides[k].size(); ++j) ops[k].stride[j] = strides[k][j];
    DevTensor& y = d.out(0);
    launched(launch::where(ops[0], ops[1], ops[2], *dt_of(p.dtype), y.data, w, y.numel(), d.stream()), "where");
    d.finish();
  }

  void cost(sy::Cost& c) {
    double bytes = 0;
    for (size_t i = 0; i < c.num_inputs(); ++i)
      if (c.has_input(i)) bytes += static_cast<double>(sy::numel(c.input(i))) * esize(c.input(i).dtype);
    const Plan p = plan(c.args->inputs, c.num_inputs());
    c.flops(static_cast<double>(product(p.out)));
    c.bytes(bytes + static_cast<double>(product(p.out)) * esize(p.dtype));
  }

 private:
  struct Plan {
    Shape out;
    DLDataType dtype{};
  };

  Plan plan(const DLTensor* const* in, size_t n) const {
    auto tensor = [&](size_t i) -> const DLTensor* {
      return slot_[i] >= 0 && !scalar_[i] && static_cast<size_t>(slot_[i]) < n ? in[slot_[i]] : nullptr;
    };
    const size_t cond = masked_fill_ ? 1 : 0;
    const DLTensor* c = slot_[cond] >= 0 ? in[slot_[cond]] : nullptr;
    if (c == nullptr || !is_mask_dtype(c->dtype))
      throw sy::Unsupported(std::string(masked_fill_ ? "mask" : "condition") + " must be a bool tensor" +
                            (c ? ", got " + dtype_name(c->dtype) : ""));
    Plan p;
    std::optional<DLDataType> dt;
    for (size_t i = 0; i < 3; ++i) {
      if (i == cond) continue;
      const DLTensor* t = tensor(i);
      if (t == nullptr) continue;
      if (dt && !sy::same_dtype(*dt, t->dtype))
        throw sy::Unsupported("values of dtypes " + dtype_name(*dt) + " and " + dtype_name(t->dtype) +
                              " (type promotion is not implemented)");
      dt = t->dtype;
    }
    if (!dt) throw sy::Unsupported("both values are scalars (the result dtype would follow ATen's defaults)");
    need_dt(*dt, "the values");
    p.dtype = *dt;
    if (masked_fill_) {
      const DLTensor* self = tensor(0);
      if (self == nullptr) throw sy::Unsupported("masked_fill of a 0-dim constant");
      p.out = sy::shape_of(*self);
      if (broadcast_shapes(p.out, sy::shape_of(*c), "mask and self") != p.out)
        throw sy::Error("masked_fill: mask " + str(sy::shape_of(*c)) + " does not broadcast to self " + str(p.out));
      if (const DLTensor* v = tensor(2); v != nullptr && v->ndim != 0)
        throw sy::Unsupported("masked_fill only supports a 0-dimensional value tensor");
      return p;
    }
    p.out = sy::shape_of(*c);
    for (size_t i = 1; i < 3; ++i)
      if (const DLTensor* t = tensor(i)) p.out = broadcast_shapes(p.out, sy::shape_of(*t), "where");
    return p;
  }

  bool masked_fill_;
  int slot_[3] = {-1, -1, -1};
  std::optional<double> scalar_[3];
};

// ---- batch_norm --------------------------------------------------------------------------------

class BatchNormKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    BatchNormKernel k(n);
    declining([&] { k.check(n.inputs, n.num_inputs); });
  }

  explicit BatchNormKernel(const sy::Node& n)
      : CudaKernel(n),
        args_(n, {"input", "weight", "bias", "running_mean", "running_var"}, {false, true, true, false, false}) {
    check_attributes(
        n, {"input", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps", "cudnn_enabled"});
    if (n.attrs.i("training", 0) != 0) throw sy::Unsupported("batch_norm with training=True (inference only)");
    eps_ = n.attrs.f("eps", 1e-5);
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
  }

  void infer(sy::Infer& f) {
    const DLTensor& x = *args_.meta(0, f.args->inputs, f.num_inputs());
    at_run([&] { check(f.args->inputs, f.num_inputs()); });
    f.set_output(0, x.dtype, sy::shape_of(x));
  }

  void run(sy::Run& r) {
    DeviceRun d(r);
    DevTensor x = args_.device(0, d), w = args_.device(1, d), b = args_.device(2, d);
    DevTensor mean = args_.device(3, d), var = args_.device(4, d);
    const int64_t channels = x.shape.size() > 1 ? x.shape[1] : 1;
    const int64_t inner = x.shape.size() > 2 ? product(Shape(x.shape.begin() + 2, x.shape.end())) : 1;
    DevTensor& y = d.out(0);
    launched(launch::batch_norm(*dt_of(x.dtype), x.data, y.data, mean.data, var.data, w.data, b.data, eps_, x.numel(),
                                channels, inner, d.stream()),
             "batch_norm");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const DLTensor& x = *args_.meta(0, c.args->inputs, c.num_inputs());
    const double n = static_cast<double>(sy::numel(x));
    c.flops(4 * n);
    c.bytes(2 * n * esize(x.dtype));
  }

 private:
  void check(const DLTensor* const* in, size_t n) const {
    const DLTensor* x = args_.meta(0, in, n);
    if (!is_float(x->dtype)) throw sy::Unsupported("batch_norm of " + dtype_name(x->dtype));
    if (x->ndim < 2)
      throw sy::Unsupported("batch_norm needs an input of at least 2 dims, got " + std::to_string(x->ndim));
    for (size_t i = 1; i < 5; ++i) {
      const DLTensor* t = args_.meta(i, in, n);
      if (t == nullptr) continue;
      if (!sy::same_dtype(t->dtype, x->dtype))
        throw sy::Unsupported(args_.name(i) + " has dtype " + dtype_name(t->dtype) + ", input " + dtype_name(x->dtype) +
                              " (mixed dtypes are not implemented)");
      if (t->ndim != 1 || t->shape[0] != x->shape[1])
        throw sy::Error(args_.name(i) + " " + str(sy::shape_of(*t)) + " does not match " + std::to_string(x->shape[1]) +
                        " channels");
    }
  }

  TensorArgs args_;
  double eps_ = 1e-5;
};

// ---- zeros_like / ones_like / full_like --------------------------------------------------------

// ATen's ScalarType codes, as the `dtype` attribute carries them.
std::optional<DLDataType> scalar_type(int64_t code) {
  switch (code) {
    case 0: return sy::kUInt8;
    case 1: return sy::kInt8;
    case 2: return DLDataType{kDLInt, 16, 1};
    case 3: return sy::kInt32;
    case 4: return sy::kInt64;
    case 5: return sy::kFloat16;
    case 6: return sy::kFloat32;
    case 7: return sy::kFloat64;
    case 11: return sy::kBool;
    case 15: return sy::kBFloat16;
    default: return std::nullopt;
  }
}

class FillLikeKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    FillLikeKernel k(n);
    if (n.num_inputs != 1 || n.num_outputs != 1) throw sy::Unsupported("expected one input and one output");
    need_dt(k.dtype_ ? *k.dtype_ : n.input(0).dtype, "the result");
  }

  explicit FillLikeKernel(const sy::Node& n) : CudaKernel(n) {
    const std::string op = n.op;
    check_attributes(n, {"self", "fill_value", "dtype", "layout", "device", "pin_memory", "memory_format"});
    value_ = op == "aten::ones_like" ? 1.0 : 0.0;
    if (op == "aten::full_like") {
      if (!n.attrs.has("fill_value")) throw sy::Unsupported("full_like without fill_value");
      value_ = n.attrs.f("fill_value", 0);
    }
    if (n.attrs.has("dtype")) {
      dtype_ = scalar_type(n.attrs.i("dtype"));
      if (!dtype_)
        throw sy::Unsupported("dtype code " + std::to_string(n.attrs.i("dtype")) + " is not one the cuda plugin has");
    }
    host_only(0);  // only its shape is read
  }

  void infer(sy::Infer& f) { f.set_output(0, dtype_ ? *dtype_ : f.input(0).dtype, sy::shape_of(f.input(0))); }

  void run(sy::Run& r) {
    DeviceRun d(r);
    DevTensor& y = d.out(0);
    launched(launch::fill(*dt_of(y.dtype), y.data, y.numel(), value_, d.stream()), "fill");
    d.finish();
  }

  void cost(sy::Cost& c) {
    c.bytes(static_cast<double>(sy::numel(c.input(0))) * esize(dtype_ ? *dtype_ : c.input(0).dtype));
  }

 private:
  std::optional<DLDataType> dtype_;
  double value_ = 0;
};

}  // namespace

void add_select_kernels(KernelList& list) {
  add_kernel<WhereKernel>(list, "aten::where", "elementwise", all_dtypes());
  add_kernel<WhereKernel>(list, "aten::masked_fill", "elementwise", all_dtypes());
  add_kernel<BatchNormKernel>(list, "aten::batch_norm", "normalization", float_dtypes());
  for (const char* op : {"aten::zeros_like", "aten::ones_like", "aten::full_like"})
    add_kernel<FillLikeKernel>(list, op, "elementwise", all_dtypes());
}

}  // namespace sycuda
