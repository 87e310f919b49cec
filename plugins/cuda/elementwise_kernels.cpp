// cuda plugin: element-wise kernels.
//
//   unary     relu relu6 gelu silu sigmoid tanh hardswish hardsigmoid hardtanh leaky_relu elu
//             neg exp log sqrt rsqrt abs erf reciprocal sin cos clamp clamp_min clamp_max
//             pow(Tensor, Scalar) dropout(train=False) logical_not     (float dtypes; bool)
//   binary    add sub rsub mul div maximum minimum pow, eq ne lt le gt ge (-> bool), with
//             numpy broadcasting; `other` a tensor, a Scalar attribute, or a 0-dim
//             constant (read once, as ATen treats a 0-dim tensor: a scalar that does not
//             promote the dtype)
// (where, masked_fill, batch_norm and the fills are in select_kernels.cpp.)
// Tensor operands share one dtype (float32/float16/bfloat16; int64/int32 for integer
// arithmetic and comparisons); anything ATen would promote is declined.
#include "kernel_base.hpp"
#include "kernels.hpp"

#include <cmath>
#include <map>

namespace sycuda {

// ---- unary ops ---------------------------------------------------------------------------------

namespace {

struct UnaryDef {
  Unary kind;
  std::vector<std::string> attrs;
};

const std::map<std::string, UnaryDef>& unary_table() {
  static const std::map<std::string, UnaryDef> table = {
      {"aten::relu", {Unary::Relu, {}}},
      {"aten::relu6", {Unary::Hardtanh, {}}},
      {"aten::gelu", {Unary::Gelu, {"approximate"}}},
      {"aten::silu", {Unary::Silu, {}}},
      {"aten::sigmoid", {Unary::Sigmoid, {}}},
      {"aten::tanh", {Unary::Tanh, {}}},
      {"aten::hardswish", {Unary::Hardswish, {}}},
      {"aten::hardsigmoid", {Unary::Hardsigmoid, {}}},
      {"aten::hardtanh", {Unary::Hardtanh, {"min_val", "max_val"}}},
      {"aten::leaky_relu", {Unary::LeakyRelu, {"negative_slope"}}},
      {"aten::elu", {Unary::Elu, {"alpha", "scale", "input_scale"}}},
      {"aten::neg", {Unary::Neg, {}}},
      {"aten::exp", {Unary::Exp, {}}},
      {"aten::log", {Unary::Log, {}}},
      {"aten::sqrt", {Unary::Sqrt, {}}},
      {"aten::rsqrt", {Unary::Rsqrt, {}}},
      {"aten::abs", {Unary::Abs, {}}},
      {"aten::erf", {Unary::Erf, {}}},
      {"aten::reciprocal", {Unary::Reciprocal, {}}},
      {"aten::sin", {Unary::Sin, {}}},
      {"aten::cos", {Unary::Cos, {}}},
      {"aten::clamp", {Unary::Hardtanh, {"min", "max"}}},
      {"aten::clamp_min", {Unary::ClampMin, {"min"}}},
      {"aten::clamp_max", {Unary::ClampMax, {"max"}}},
      {"aten::dropout", {Unary::Identity, {"p", "train"}}},
      {"aten::feature_dropout", {Unary::Identity, {"p", "train"}}},
  };
  return table;
}

float scalar_of(const sy::Attrs& a, const std::string& name, double fallback) {
  return static_cast<float>(a.f(name.c_str(), fallback));
}

}  // namespace

std::optional<UnaryOp> unary_op(const std::string& op, const sy::Attrs& a, const std::string& prefix) {
  auto it = unary_table().find(op);
  if (it == unary_table().end()) return std::nullopt;
  UnaryOp u;
  u.kind = it->second.kind;
  auto attr = [&](const char* name) { return prefix + name; };
  if (op == "aten::relu6") {
    u.a = 0.f, u.b = 6.f;
  } else if (op == "aten::gelu") {
    const std::string name = attr("approximate");
    const std::string approximate = a.has(name.c_str()) ? a.s(name.c_str()) : "none";
    if (approximate == "tanh")
      u.kind = Unary::GeluTanh;
    else if (approximate != "none")
      throw sy::Unsupported("gelu approximate='" + approximate + "' (expected 'none' or 'tanh')");
  } else if (op == "aten::hardtanh") {
    u.a = scalar_of(a, attr("min_val"), -1.0), u.b = scalar_of(a, attr("max_val"), 1.0);
  } else if (op == "aten::leaky_relu") {
    u.a = scalar_of(a, attr("negative_slope"), 0.01);
  } else if (op == "aten::elu") {
    u.a = scalar_of(a, attr("alpha"), 1.0), u.b = scalar_of(a, attr("scale"), 1.0),
    u.c = scalar_of(a, attr("input_scale"), 1.0);
  } else if (op == "aten::clamp") {
    const bool lo = a.has(attr("min").c_str()), hi = a.has(attr("max").c_str());
    if (a.kind(attr("min").c_str()) == SY_ATTR_TENSOR || a.kind(attr("max").c_str()) == SY_ATTR_TENSOR)
      throw sy::Unsupported("clamp with tensor bounds is not implemented");
    if (!lo && !hi) throw sy::Unsupported("clamp needs at least one of min and max");
    if (lo && hi)
      u.a = scalar_of(a, attr("min"), 0), u.b = scalar_of(a, attr("max"), 0);
    else if (lo)
      u.kind = Unary::ClampMin, u.a = scalar_of(a, attr("min"), 0);
    else
      u.kind = Unary::ClampMax, u.a = scalar_of(a, attr("max"), 0);
  } else if (op == "aten::clamp_min") {
    u.a = scalar_of(a, attr("min"), 0);
  } else if (op == "aten::clamp_max") {
    u.a = scalar_of(a, attr("max"), 0);
  } else if (op == "aten::dropout" || op == "aten::feature_dropout") {
    if (a.i(attr("train").c_str(), 0) != 0) throw sy::Unsupported("dropout with train=True is random; inference only");
  }
  return u;
}

std::vector<std::string> unary_attr_names(const std::string& op) {
  auto it = unary_table().find(op);
  return it == unary_table().end() ? std::vector<std::string>{} : it->second.attrs;
}

const std::vector<std::string>& fusable_activations() {
  static const std::vector<std::string> list = {
      "aten::relu", "aten::relu6",     "aten::gelu",        "aten::silu",     "aten::sigmoid",
      "aten::tanh", "aten::hardswish", "aten::hardsigmoid", "aten::hardtanh", "aten::leaky_relu"};
  return list;
}

std::string producer_of(const std::string& op) { return op.substr(0, op.find('+')); }

std::optional<UnaryOp> fused_activation(const sy::Node& node) {
  const std::string op = node.op;
  const size_t plus = op.find('+');
  if (plus == std::string::npos) return std::nullopt;
  const std::string post = op.substr(plus + 1);
  std::optional<UnaryOp> u = unary_op(post, node.attrs, "post.");
  if (!u) throw sy::Unsupported("no fused activation '" + post + "' in the cuda plugin");
  return u;
}

namespace {

// Bytes of one element of a tensor.
double esize(const DLTensor& t) { return static_cast<double>((t.dtype.bits * t.dtype.lanes + 7) / 8); }

class UnaryKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    UnaryKernel k(n);
    if (n.num_inputs != 1 || n.num_outputs != 1) throw sy::Unsupported("expected one input and one output");
    const DLTensor& x = n.input(0);
    if (k.logical_not_ ? !sy::same_dtype(x.dtype, sy::kBool) : !is_float(x.dtype))
      throw sy::Unsupported(std::string(n.op) + " on " + dtype_name(x.dtype) + " (the cuda kernel takes " +
                            (k.logical_not_ ? "bool" : "float32, float16 and bfloat16") + ")");
  }
  explicit UnaryKernel(const sy::Node& n) : CudaKernel(n), logical_not_(std::string(n.op) == "aten::logical_not") {
    if (!logical_not_) {
      check_attributes(n, unary_attr_names(n.op));
      op_ = *unary_op(n.op, n.attrs, "");
    } else {
      check_attributes(n, {});
    }
    allow_in_place(0);
  }
  void infer(sy::Infer& f) { f.set_output(0, f.input(0).dtype, sy::shape_of(f.input(0))); }
  void run(sy::Run& r) {
    DeviceRun d(r);
    const DevTensor& x = d.in(0);
    DevTensor& y = d.out(0);
    if (logical_not_)
      launched(launch::logical_not(x.data, y.data, x.numel(), d.stream()), "logical_not");
    else
      launched(launch::unary(*dt_of(x.dtype), op_, x.data, y.data, x.numel(), d.stream()), "unary");
    d.finish();
  }
  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(n);
    c.bytes(2 * n * esize(c.input(0)));
  }

 private:
  bool logical_not_;
  UnaryOp op_;
};

// ---- binary ops --------------------------------------------------------------------------------

struct BinaryDef {
  Binary kind;
  bool has_alpha = false;
  bool reversed = false;  // rsub: other - alpha * self
};

const std::map<std::string, BinaryDef>& binary_table() {
  static const std::map<std::string, BinaryDef> table = {
      {"aten::add", {Binary::Add, true}},
      {"aten::sub", {Binary::Sub, true}},
      {"aten::rsub", {Binary::Sub, true, true}},
      {"aten::mul", {Binary::Mul}},
      {"aten::div", {Binary::Div}},
      {"aten::maximum", {Binary::Maximum}},
      {"aten::minimum", {Binary::Minimum}},
      {"aten::pow", {Binary::Pow}},
      {"aten::eq", {Binary::Eq}},
      {"aten::ne", {Binary::Ne}},
      {"aten::lt", {Binary::Lt}},
      {"aten::le", {Binary::Le}},
      {"aten::gt", {Binary::Gt}},
      {"aten::ge", {Binary::Ge}},
  };
  return table;
}

bool is_int(DLDataType dt) { return dt.code == kDLInt && (dt.bits == 64 || dt.bits == 32) && dt.lanes == 1; }

// A 0-dim constant's value, as a double.
double constant_value(const DLTensor& t) {
  const char* p = static_cast<const char*>(t.data) + t.byte_offset;
  auto d = dt_of(t.dtype);
  if (!d) throw sy::Unsupported("0-dim constant of dtype " + dtype_name(t.dtype));
  switch (*d) {
    case launch::DT::F32: return *reinterpret_cast<const float*>(p);
    case launch::DT::F64: return *reinterpret_cast<const double*>(p);
    case launch::DT::I64: return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case launch::DT::I32: return *reinterpret_cast<const int32_t*>(p);
    case launch::DT::Bool:
    case launch::DT::U8: return *reinterpret_cast<const uint8_t*>(p);
    default: throw sy::Unsupported("0-dim constant of dtype " + dtype_name(t.dtype) + " as a scalar");
  }
}

bool is_constant_scalar(const DLTensor* t) {
  return t != nullptr && t->ndim == 0 && t->data != nullptr && t->device.device_type == kDLCPU;
}

// One operand slot: a tensor input, a scalar attribute, or a 0-dim constant folded to a scalar.
struct Arg {
  int input = -1;  // input slot, or -1 for a scalar
  double scalar = 0;
  bool scalar_is_float = false;
};

// The operands of an element-wise node: tensors as inputs in schema order, or an attribute
// named like the argument (Scalar, or a constant tensor).
Arg arg_of(const sy::Node& n, const char* name, size_t* slot, bool* folded) {
  Arg a;
  const SY_AttrKind kind = n.attrs.kind(name);
  const DLTensor* t = nullptr;
  if (kind == SY_ATTR_INT || kind == SY_ATTR_FLOAT) {
    a.scalar = n.attrs.f(name);
    a.scalar_is_float = kind == SY_ATTR_FLOAT;
    return a;
  }
  if (kind == SY_ATTR_TENSOR) {
    t = n.attrs.tensor(name);
    if (!is_constant_scalar(t)) throw sy::Unsupported(std::string("tensor attribute '") + name + "' that is not 0-dim");
  } else {
    if (*slot >= n.num_inputs || n.inputs[*slot] == nullptr)
      throw sy::Unsupported(std::string("argument '") + name + "' is missing");
    t = n.inputs[*slot];
    a.input = static_cast<int>((*slot)++);
    if (!is_constant_scalar(t)) return a;
  }
  a.scalar = constant_value(*t);
  a.scalar_is_float = t->dtype.code == kDLFloat || t->dtype.code == kDLBfloat;
  if (a.input >= 0) *folded = true;
  return a;
}

class BinaryKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    BinaryKernel k(n);
    declining([&] { return k.output_dtype(n.inputs); });
    declining([&] { return k.output_shape(n.inputs); });
  }

  explicit BinaryKernel(const sy::Node& n) : CudaKernel(n) {
    const std::string op = n.op;
    def_ = binary_table().at(op);
    std::vector<std::string> known = {"self", "other"};
    if (def_.has_alpha) known.push_back("alpha");
    if (op == "aten::div") known.push_back("rounding_mode");
    if (op == "aten::pow") known = {"self", "exponent"};
    check_attributes(n, known);
    if (op == "aten::div" && n.attrs.has("rounding_mode"))
      throw sy::Unsupported("div with rounding_mode='" + n.attrs.s("rounding_mode") + "' is not implemented");
    if (n.num_outputs != 1) throw sy::Unsupported("expected one output");
    size_t slot = 0;
    bool folded_self = false, folded_other = false;
    self_ = arg_of(n, "self", &slot, &folded_self);
    other_ = arg_of(n, op == "aten::pow" ? "exponent" : "other", &slot, &folded_other);
    if (slot != n.num_inputs)
      throw sy::Unsupported("takes 2 arguments, node has " + std::to_string(n.num_inputs) + " inputs");
    if (self_.input < 0 && other_.input < 0) throw sy::Unsupported("both operands are scalars");
    if (folded_self && self_.input >= 0) host_only(static_cast<size_t>(self_.input));
    if (folded_other && other_.input >= 0) host_only(static_cast<size_t>(other_.input));
    if (folded_self) self_tensor_ = false;
    if (folded_other) other_tensor_ = false;
    if (self_.input < 0) self_tensor_ = false;
    if (other_.input < 0) other_tensor_ = false;
    op_.kind = def_.kind;
    op_.alpha = def_.has_alpha ? n.attrs.f("alpha", 1.0) : 1.0;
    if (self_tensor_ && !is_comparison(def_.kind)) allow_in_place(static_cast<size_t>(self_.input));
  }

  void infer(sy::Infer& f) {
    const DLDataType dt = at_run([&] { return output_dtype(f.args->inputs); });
    f.set_output(0, dt, at_run([&] { return output_shape(f.args->inputs); }));
  }

  void run(sy::Run& r) {
    DeviceRun d(r);
    const Shape out = output_shape(r.args->inputs);
    const DLDataType tensor_dt = tensor_dtype(r.args->inputs);
    Shape sa = self_tensor_ ? broadcast_strides(sy::shape_of(d.meta(self_.input)), out) : Shape(out.size(), 0);
    Shape sb = other_tensor_ ? broadcast_strides(sy::shape_of(d.meta(other_.input)), out) : Shape(out.size(), 0);
    const Shape compact = broadcast_strides(out, out);
    const bool a_contiguous = self_tensor_ && sa == compact, b_contiguous = other_tensor_ && sb == compact;
    const launch::Walk w = make_walk(out, {&sa, &sb});
    launch::Operand a = operand(d, self_, self_tensor_, sa, a_contiguous, tensor_dt);
    launch::Operand b = operand(d, other_, other_tensor_, sb, b_contiguous, tensor_dt);
    if (def_.reversed) std::swap(a, b);
    DevTensor& y = d.out(0);
    launched(launch::binary(op_, a, b, *dt_of(y.dtype), y.data, w, y.numel(), d.stream()), "binary");
    d.finish();
  }

  void cost(sy::Cost& c) {
    double bytes = 0, n = 1;
    const Shape out = output_shape(c.args->inputs);
    n = static_cast<double>(product(out));
    for (size_t i = 0; i < c.num_inputs(); ++i)
      if (c.has_input(i)) bytes += static_cast<double>(sy::numel(c.input(i))) * esize(c.input(i));
    c.flops(n);
    c.bytes(bytes + n * (is_comparison(def_.kind) ? 1 : esize(*first_tensor(c.args->inputs))));
  }

 private:
  const DLTensor* first_tensor(const DLTensor* const* in) const {
    return self_tensor_ ? in[self_.input] : in[other_.input];
  }

  DLDataType tensor_dtype(const DLTensor* const* in) const {
    if (!self_tensor_ && !other_tensor_) {  // both folded constants: the dtype of the non-scalar one
      return in[self_.input >= 0 ? self_.input : other_.input]->dtype;
    }
    return first_tensor(in)->dtype;
  }

  // The result dtype under the rules this kernel implements; Unsupported otherwise.
  DLDataType output_dtype(const DLTensor* const* in) const {
    if (!self_tensor_ && !other_tensor_) throw sy::Unsupported("both operands are 0-dim constants");
    const DLDataType dt = first_tensor(in)->dtype;
    if (self_tensor_ && other_tensor_ && !sy::same_dtype(in[self_.input]->dtype, in[other_.input]->dtype))
      throw sy::Unsupported("operands of dtypes " + dtype_name(in[self_.input]->dtype) + " and " +
                            dtype_name(in[other_.input]->dtype) + " (type promotion is not implemented)");
    const bool cmp = is_comparison(def_.kind);
    const Arg& scalar = self_tensor_ ? other_ : self_;
    const bool has_scalar = !(self_tensor_ && other_tensor_);
    if (is_float(dt)) return cmp ? sy::kBool : dt;
    if (is_int(dt)) {
      if (def_.kind == Binary::Div || def_.kind == Binary::Pow)
        throw sy::Unsupported(std::string("integer ") + (def_.kind == Binary::Div ? "true division" : "pow") +
                              " (its result is float) is not implemented");
      if (has_scalar && scalar.scalar_is_float && scalar.scalar != std::floor(scalar.scalar))
        throw sy::Unsupported("an integer tensor with a non-integral scalar promotes to float; not implemented");
      if (op_.alpha != std::floor(op_.alpha)) throw sy::Unsupported("integer arithmetic with a non-integral alpha");
      return cmp ? sy::kBool : dt;
    }
    if (sy::same_dtype(dt, sy::kBool) && (def_.kind == Binary::Eq || def_.kind == Binary::Ne)) return sy::kBool;
    throw sy::Unsupported(std::string("operands of dtype ") + dtype_name(dt));
  }

  Shape output_shape(const DLTensor* const* in) const {
    Shape out;
    if (self_tensor_) out = sy::shape_of(*in[self_.input]);
    if (other_tensor_) out = broadcast_shapes(out, sy::shape_of(*in[other_.input]), "operands");
    return out;
  }

  static launch::Operand operand(DeviceRun& d, const Arg& arg, bool tensor, const Shape& strides, bool contiguous,
                                 DLDataType dt) {
    launch::Operand o;
    o.dtype = *dt_of(dt);
    if (!tensor) {
      o.scalar = arg.scalar;
      return o;
    }
    o.data = d.in(static_cast<size_t>(arg.input)).data;
    o.contiguous = contiguous;
    for (size_t k = 0; k < strides.size(); ++k) o.stride[k] = strides[k];
    return o;
  }

  BinaryDef def_;
  BinaryOp op_;
  Arg self_, other_;
  bool self_tensor_ = true, other_tensor_ = true;
};

}  // namespace

void add_elementwise_kernels(KernelList& list) {
  for (const auto& [op, def] : unary_table()) add_kernel<UnaryKernel>(list, op, "elementwise", float_dtypes());
  add_kernel<UnaryKernel>(list, "aten::logical_not", "elementwise", {sy::kBool});
  const std::vector<DLDataType> dtypes = {sy::kFloat32, sy::kFloat16, sy::kBFloat16, sy::kInt64, sy::kInt32, sy::kBool};
  for (const auto& [op, def] : binary_table()) add_kernel<BinaryKernel>(list, op, "elementwise", dtypes);
}

}  // namespace sycuda
