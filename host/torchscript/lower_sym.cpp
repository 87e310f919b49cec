// TorchScript importer: size arithmetic as sym:: nodes (ir/sym.hpp, docs/shapes.md).
//
// A plain trace computes sizes at run time: `x.view(x.size(0), -1)` is recorded as
//     %b = aten::size(%x, 0); %l = prim::ListConstruct(%b, -1); %y = aten::view(%x, %l)
// and `x.size(-1) ** 0.5` as NumToTensor -> aten::pow on a 0-D tensor. Every such Dep::Shape
// number, list and 0-D "shape tensor" becomes a sym value here, lowered on demand where it
// is used: sym::size/dim/numel read tensor shapes, arithmetic maps onto sym ops with
// Python semantics, and conversions follow the trace's own types. Kernel arguments bind to
// sym values (ir::Attribute::of_ref); a shape tensor read as a kernel input goes through
// sym::tensor with the dtype PyTorch would give it. Result dtypes of tensor arithmetic are
// learned by running the op itself on stand-in values of the right types (PyTorch's own
// promotion rules, no copy of them here). Tensor arithmetic the table does not know runs
// as a kernel; aten::Int of a kernel's result is sym::item.
#include "ir/sym.hpp"
#include "lower_state.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace switchyard::torchscript {

namespace jit = torch::jit;
using ir::Attribute;
using ir::Attributes;
using ir::AttrKind;

namespace {

// aten/prim op (unqualified) -> sym op, for numbers and 0-D shape tensors alike.
const std::unordered_map<std::string, std::string>& binary_ops() {
  static const std::unordered_map<std::string, std::string> ops = {{"add", "sym::add"},
                                                                   {"sub", "sym::sub"},
                                                                   {"mul", "sym::mul"},
                                                                   {"div", "sym::div"},
                                                                   {"true_divide", "sym::div"},
                                                                   {"truediv", "sym::div"},
                                                                   {"floordiv", "sym::floordiv"},
                                                                   {"floor_divide", "sym::floordiv"},
                                                                   {"remainder", "sym::mod"},
                                                                   {"pow", "sym::pow"},
                                                                   {"min", "sym::min"},
                                                                   {"max", "sym::max"},
                                                                   {"minimum", "sym::min"},
                                                                   {"maximum", "sym::max"},
                                                                   {"eq", "sym::eq"},
                                                                   {"ne", "sym::ne"},
                                                                   {"lt", "sym::lt"},
                                                                   {"le", "sym::le"},
                                                                   {"gt", "sym::gt"},
                                                                   {"ge", "sym::ge"},
                                                                   {"__and__", "sym::and"},
                                                                   {"__or__", "sym::or"},
                                                                   {"logical_and", "sym::and"},
                                                                   {"logical_or", "sym::or"},
                                                                   {"rsub", "sym::sub"}};
  return ops;
}
const std::unordered_map<std::string, std::string>& unary_ops() {
  static const std::unordered_map<std::string, std::string> ops = {{"neg", "sym::neg"},
                                                                   {"abs", "sym::abs"},
                                                                   {"floor", "sym::floor"},
                                                                   {"ceil", "sym::ceil"},
                                                                   {"round", "sym::round"},
                                                                   {"sqrt", "sym::sqrt"},
                                                                   {"__not__", "sym::not"},
                                                                   {"logical_not", "sym::not"},
                                                                   {"trunc", "sym::int"},
                                                                   {"Int", "sym::int"},
                                                                   {"IntImplicit", "sym::int"},
                                                                   {"Float", "sym::float"},
                                                                   {"FloatImplicit", "sym::float"},
                                                                   {"Bool", "sym::bool"}};
  return ops;
}
// Ops that keep a 0-D shape tensor's value (and may change its dtype).
bool is_identity_op(const std::string& name) {
  static const std::unordered_set<std::string> ops = {"to",         "type_as", "_to_copy",       "clone", "detach",
                                                      "contiguous", "alias",   "ScalarImplicit", "item",  "list"};
  return ops.count(name) > 0;
}

bool is_size_op(const jit::Node* n) {
  const std::string k = n->kind().toQualString();
  return k == "aten::size" || k == "aten::sym_size" || k == "prim::shape";
}

bool is_list_type(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::ListType; }

// The sym kind of a JIT number or list type (None for Scalar/number: known from the value).
AttrKind kind_of_type(const c10::TypePtr& type) {
  c10::TypePtr t = type;
  if (auto o = t->cast<c10::OptionalType>()) t = o->getElementType();
  switch (t->kind()) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::BoolType: return AttrKind::Int;
    case c10::TypeKind::FloatType: return AttrKind::Float;
    case c10::TypeKind::ListType: {
      const AttrKind e = kind_of_type(t->expectRef<c10::ListType>().getElementType());
      return e == AttrKind::Int ? AttrKind::Ints : e == AttrKind::Float ? AttrKind::Floats : AttrKind::String;
    }
    case c10::TypeKind::NumberType: return AttrKind::None;
    default: return AttrKind::String;  // not a number: no sym form
  }
}

// Exact identity of a literal (floats by their bits), for sharing sym::const nodes.
std::string const_key(const Attribute& a) {
  auto bits = [](double x) {
    uint64_t u = 0;
    std::memcpy(&u, &x, sizeof u);
    return std::to_string(u);
  };
  std::string key = std::to_string(static_cast<int>(a.kind)) + ":";
  if (a.kind == AttrKind::Int) key += std::to_string(a.i);
  if (a.kind == AttrKind::Float) key += bits(a.f);
  for (int64_t x : a.ints) key += std::to_string(x) + ",";
  for (double x : a.floats) key += bits(x) + ",";
  return key;
}

bool is_float_dtype(at::ScalarType t) { return at::isFloatingType(t); }

std::optional<c10::IValue> run_op(const jit::Node* n, const std::vector<c10::IValue>& args) {
  try {
    jit::Stack stack(args.begin(), args.end());
    n->getOperation()(stack);
    if (stack.size() != 1) return std::nullopt;
    return stack[0];
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

// ---- emitting sym nodes ------------------------------------------------------------------

SymVal Lowerer::sym_node(const std::string& op, std::vector<ir::ValueId> inputs, Attributes attrs,
                         const std::string& path) {
  std::vector<AttrKind> kinds;
  for (ir::ValueId in : inputs) {
    const ir::Value& value = g_.values[static_cast<size_t>(in)];
    kinds.push_back(value.type == ir::ValueType::Scalar ? sym_kinds_.at(in) : AttrKind::Tensor);
  }
  const ir::ValueId out = g_.add_sym("sym", op, std::move(inputs), std::move(attrs), "sym");
  ir::Node& node = g_.nodes.back();
  node.module_path = path;
  meta_.push_back(NodeMeta{path, op.substr(5), true});
  SymVal s;
  s.id = out;
  s.kind = ir::sym_result_kind(node, kinds);  // the IR's own typing; throws for a misuse
  s.dtype = s.kind == AttrKind::Float ? at::kDouble : at::kLong;
  sym_kinds_[out] = s.kind;
  return s;
}

SymVal Lowerer::sym_const(const c10::IValue& value, const jit::Node* user, const std::string& arg) {
  c10::IValue v = value;
  bool tensor = false;
  at::ScalarType dtype = at::kLong;
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.dim() != 0)
      fail(user, "argument '" + arg + "' mixes sizes with a constant tensor of shape " + shape_string(t.sizes().vec()) +
                     "; only 0-D tensors take part in size arithmetic");
    tensor = true;
    dtype = t.scalar_type();
    v = t.item();
    if (v.isComplexDouble()) fail(user, "argument '" + arg + "' uses a complex number in size arithmetic");
    if (dtype == at::kBool) v = c10::IValue(v.toBool());
  } else if (v.isBool() || v.isBoolList()) {
    dtype = at::kBool;
  } else if (v.isDouble() || v.isDoubleList()) {
    dtype = at::kDouble;
  }
  Attribute a;
  if (!to_attribute(v, &a) ||
      !(a.kind == AttrKind::Int || a.kind == AttrKind::Float || a.kind == AttrKind::Ints || a.kind == AttrKind::Floats))
    fail(user, "argument '" + arg + "' uses a " + value.tagKind() + " constant in size arithmetic");
  const std::string key = const_key(a);
  auto it = sym_consts_.find(key);
  SymVal s = it != sym_consts_.end() ? it->second : sym_node("sym::const", {}, {{"value", a}}, "");
  sym_consts_[key] = s;
  s.tensor = tensor;
  s.dtype = tensor ? dtype : (a.kind == AttrKind::Float ? at::kDouble : dtype);
  s.stand_in = tensor ? c10::IValue(value.toTensor()) : v;
  return s;
}

SymVal Lowerer::sym_convert(SymVal s, AttrKind want, const std::string& path) {
  if (want == AttrKind::Int && s.kind != AttrKind::Int) {
    SymVal c = sym_node("sym::int", {s.id}, {}, path);
    c.tensor = s.tensor, c.dtype = s.dtype, c.stand_in = s.stand_in;
    return c;
  }
  if (want == AttrKind::Float && s.kind != AttrKind::Float) {
    SymVal c = sym_node("sym::float", {s.id}, {}, path);
    c.tensor = s.tensor, c.dtype = s.dtype, c.stand_in = s.stand_in;
    return c;
  }
  return s;
}

ir::ValueId Lowerer::sym_tensor(const SymVal& s, const std::string& path) {
  const auto key = std::make_pair(s.id, static_cast<int>(s.dtype));
  auto it = sym_tensors_.find(key);
  if (it != sym_tensors_.end()) return it->second;
  DLDataType dl{};
  if (!to_dl_dtype(s.dtype, &dl))
    dl = s.kind == AttrKind::Float ? DLDataType{kDLFloat, 64, 1} : DLDataType{kDLInt, 64, 1};
  const ir::ValueId t =
      g_.add_sym("sym", "sym::tensor", {s.id}, {{"dtype", Attribute::of_string(dtype_name(dl))}}, "sym");
  g_.nodes.back().module_path = path;
  meta_.push_back(NodeMeta{path, "tensor", true});
  return sym_tensors_[key] = t;
}

Attribute Lowerer::bind(const SymVal& s, const c10::TypePtr& type, const jit::Node* user, const std::string& arg) {
  AttrKind want = kind_of_type(type);
  if (want == AttrKind::None) want = s.kind == AttrKind::Int ? AttrKind::Int : AttrKind::Float;  // a Scalar
  const bool fits =
      want == s.kind || s.kind == AttrKind::None || (want == AttrKind::Float && s.kind == AttrKind::Int) ||
      (want == AttrKind::Ints && s.kind == AttrKind::Int) || (want == AttrKind::Floats && s.kind != AttrKind::String);
  if (want == AttrKind::String || !fits)
    fail(user, "argument '" + arg + "' (" + type->repr_str() + ") is computed from sizes as a " +
                   ir::attr_kind_name(s.kind) + ", which switchyard cannot pass as that type");
  return Attribute::of_ref(s.id, want);
}

// ---- which values are sym values ---------------------------------------------------------

bool Lowerer::lowered_as_sym(const jit::Value* v) { return shape_scalar(v).has_value(); }

std::optional<SymVal> Lowerer::shape_scalar(const jit::Value* v) {
  auto it = syms_.find(v);
  if (it != syms_.end()) return it->second;
  if (not_sym_.count(v) || !is_tensor(v->type()) || eval_.written(v) || eval_.dep(v) != Dep::Shape) return std::nullopt;
  const jit::Node* p = v->node();
  const std::string name = p->kind().toUnqualString();
  bool ok = p->kind() == c10::prim::NumToTensor;
  if (!ok && (binary_ops().count(name) || unary_ops().count(name) || is_identity_op(name))) {
    ok = true;
    for (const jit::Value* in : p->inputs()) {
      if (!is_tensor(in->type())) continue;
      if (eval_.dep(in) == Dep::Const) {
        c10::IValue c = eval_.eval(in, p, "self");
        ok = ok && c.isTensor() && c.toTensor().dim() == 0;
      } else {
        ok = ok && shape_scalar(in).has_value();
      }
    }
  }
  if (ok) {
    SymVal s = lower_sym(v, p, "result");
    if (s.id != ir::kNoValue) return syms_[v] = s;
  }
  not_sym_[v] = true;
  return std::nullopt;
}

SymVal Lowerer::sym(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  auto it = syms_.find(v);
  if (it != syms_.end()) return it->second;
  const Dep d = eval_.dep(v);
  if (d == Dep::Data)
    fail(user, "argument '" + arg + "' is computed from tensor values at run time (by " + where(v->node()) +
                   "); switchyard computes sizes from input shapes and constants only");
  if (d == Dep::Const) return syms_[v] = sym_const(eval_.eval(v, user, arg), user, arg);
  if (is_tensor(v->type())) {
    if (auto s = shape_scalar(v)) return *s;
    fail(user, "argument '" + arg + "' is computed from sizes by " + where(v->node()) +
                   ", whose result is not a 0-D tensor switchyard can compute at load time");
  }
  SymVal s = lower_sym(v, user, arg);
  if (s.id == ir::kNoValue)
    fail(user, "argument '" + arg + "' is computed from sizes by " + where(v->node()) +
                   ", which switchyard's size arithmetic does not support (see docs/shapes.md)");
  return syms_[v] = s;
}

// ---- lowering one value --------------------------------------------------------------------

// Returns a SymVal with id kNoValue where `v`'s producer has no sym form (a tensor op then
// runs as a kernel).
SymVal Lowerer::lower_sym(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  const jit::Node* p = v->node();
  const c10::Symbol k = p->kind();
  const std::string name = k.toUnqualString();
  const std::string path = path_of(p);
  auto in = [&](size_t i) { return sym(p->input(i), user, arg); };
  auto const_int = [&](size_t i, int64_t* out) {
    if (i >= p->inputs().size() || eval_.dep(p->input(i)) != Dep::Const) return false;
    c10::IValue c = eval_.eval(p->input(i), user, arg);
    if (!c.isInt()) return false;
    *out = c.toInt();
    return true;
  };
  auto size_of = [&](const jit::Value* t, std::optional<int64_t> dim) {
    Attributes attrs;
    if (dim) attrs.emplace_back("dim", Attribute::of_int(*dim));
    SymVal s = sym_node("sym::size", {tensor(t, user, arg)}, std::move(attrs), path);
    s.stand_in = dim ? c10::IValue(int64_t{6 + (*dim % 5 + 5) % 5}) : c10::IValue(std::vector<int64_t>{});
    return s;
  };
  auto get = [&](const jit::Value* list, int64_t index) {
    const jit::Node* src = list->node();
    if ((src->kind() == c10::prim::ListConstruct || src->kind() == c10::prim::TupleConstruct) &&
        index >= -static_cast<int64_t>(src->inputs().size()) && index < static_cast<int64_t>(src->inputs().size()))
      return sym(
          src->input(static_cast<size_t>(index < 0 ? index + static_cast<int64_t>(src->inputs().size()) : index)), user,
          arg);
    if (is_size_op(src) && src->inputs().size() == 1) return size_of(src->input(0), index);
    SymVal l = sym(list, user, arg);
    SymVal s = sym_node("sym::get", {l.id}, {{"index", Attribute::of_int(index)}}, path);
    s.stand_in = c10::IValue(int64_t{6});
    return s;
  };

  // Structure: lists, tuples and their elements.
  if (k == c10::prim::NumToTensor) {
    SymVal s = in(0);
    s.tensor = true;
    if (s.dtype != at::kBool) s.dtype = s.kind == AttrKind::Float ? at::kDouble : at::kLong;
    if (s.stand_in.isInt() || s.stand_in.isDouble() || s.stand_in.isBool())
      s.stand_in = at::scalar_to_tensor(s.stand_in.toScalar()).to(s.dtype);
    return s;
  }
  if (k == c10::prim::ListConstruct) {
    std::vector<ir::ValueId> ids;
    std::vector<int64_t> stand_ins;
    for (size_t i = 0; i < p->inputs().size(); ++i) {
      SymVal e = in(i);
      ids.push_back(e.id);
      stand_ins.push_back(e.stand_in.isInt() ? e.stand_in.toInt() : 6);
    }
    SymVal s = sym_node("sym::list", std::move(ids), {}, path);
    s.stand_in = c10::IValue(stand_ins);
    return s;
  }
  if (k == c10::prim::ListUnpack || k == c10::prim::TupleUnpack) {
    const jit::Node* src = p->input(0)->node();
    if (k == c10::prim::ListUnpack && is_size_op(src) && src->inputs().size() == 1 &&
        src->input(0)->node()->kind() == c10::prim::Param)  // `b, s = ids.shape`: ids has rank 2
      unpacked_ranks_[src->input(0)] = static_cast<int64_t>(p->outputs().size());
    return get(p->input(0), static_cast<int64_t>(v->offset()));
  }
  if (k == c10::prim::TupleIndex || (k == c10::aten::__getitem__ && p->inputs().size() == 2)) {
    int64_t index = 0;
    if (const_int(1, &index)) return get(p->input(0), index);
    if (k == c10::prim::TupleIndex)
      fail(user, "argument '" + arg + "' indexes a tuple with an index computed at run time");
    SymVal s = sym_node("sym::get", {in(0).id, in(1).id}, {}, path);
    s.stand_in = c10::IValue(int64_t{6});
    return s;
  }

  // Shapes.
  if (is_size_op(p)) {
    if (p->inputs().size() == 1) return size_of(p->input(0), std::nullopt);
    int64_t dim = 0;
    if (const_int(1, &dim)) return size_of(p->input(0), dim);
    SymVal s = sym_node("sym::size", {tensor(p->input(0), user, arg), in(1).id}, {}, path);
    s.stand_in = c10::IValue(int64_t{6});
    return s;
  }
  if (k == c10::aten::dim || name == "numel" || (k == c10::aten::len && is_tensor(p->input(0)->type()))) {
    if (k == c10::aten::len) return size_of(p->input(0), 0);
    SymVal s = sym_node(k == c10::aten::dim ? "sym::dim" : "sym::numel", {tensor(p->input(0), user, arg)}, {}, path);
    s.stand_in = c10::IValue(int64_t{k == c10::aten::dim ? 4 : 216});
    return s;
  }
  if (k == c10::aten::len) {
    SymVal s = sym_node("sym::len", {in(0).id}, {}, path);
    s.stand_in = c10::IValue(int64_t{4});
    return s;
  }
  if (!p->inputs().empty() && is_list_type(p->input(0)->type())) {  // list ops
    if (name == "slice" && p->inputs().size() == 4) {
      Attributes attrs;
      const char* names[] = {"start", "end", "step"};
      for (size_t i = 1; i < 4; ++i) {
        if (is_none(p->input(i))) continue;
        int64_t x = 0;
        if (!const_int(i, &x))
          fail(user, "argument '" + arg + "' slices a list of sizes with a bound computed at run time");
        attrs.emplace_back(names[i - 1], Attribute::of_int(x));
      }
      SymVal s = sym_node("sym::slice", {in(0).id}, std::move(attrs), path);
      s.stand_in = c10::IValue(std::vector<int64_t>{});
      return s;
    }
    if (name == "add" && p->inputs().size() == 2 && is_list_type(p->input(1)->type())) {
      SymVal s = sym_node("sym::cat", {in(0).id, in(1).id}, {}, path);
      s.stand_in = c10::IValue(std::vector<int64_t>{});
      return s;
    }
    if (name == "list" && p->inputs().size() == 1) return in(0);
    return SymVal{};
  }

  // Numbers from tensors: aten::Int(t) on a kernel's result reads its element.
  const bool from_tensor = !p->inputs().empty() && is_tensor(p->input(0)->type()) && !is_tensor(v->type());
  if (from_tensor && !shape_scalar(p->input(0)) && eval_.dep(p->input(0)) == Dep::Shape &&
      (unary_ops().count(name) || is_identity_op(name))) {
    SymVal item = sym_node("sym::item", {tensor(p->input(0), user, arg)}, {}, path);
    item.stand_in = c10::IValue(int64_t{6});
    SymVal s = sym_convert(item, kind_of_type(v->type()), path);
    if (name == "Bool") s = sym_node("sym::bool", {item.id}, {}, path);
    s.stand_in = c10::IValue(int64_t{6});
    return s;
  }

  // Arithmetic on numbers and 0-D shape tensors.
  const bool binary = binary_ops().count(name) > 0, unary = unary_ops().count(name) > 0;
  if (!binary && !unary && !is_identity_op(name)) return SymVal{};
  std::vector<c10::IValue> stand_ins;
  for (const jit::Value* x : p->inputs()) {
    if (is_none(x))
      stand_ins.emplace_back();
    else if (eval_.dep(x) == Dep::Const)
      stand_ins.push_back(eval_.eval(x, user, arg));
    else
      stand_ins.push_back(sym(x, user, arg).stand_in);
  }
  std::optional<c10::IValue> result = run_op(p, stand_ins);
  AttrKind want = kind_of_type(v->type());
  at::ScalarType dtype = at::kLong;
  if (is_tensor(v->type())) {  // PyTorch's own promotion decides the dtype
    if (!result || !result->isTensor() || result->toTensor().dim() != 0) return SymVal{};
    dtype = result->toTensor().scalar_type();
    if (at::isComplexType(dtype)) return SymVal{};
    want = is_float_dtype(dtype) ? AttrKind::Float : AttrKind::Int;
  } else if (want == AttrKind::String) {
    return SymVal{};
  }

  SymVal s;
  const size_t arity = p->inputs().size();
  if (is_identity_op(name)) {
    s = in(0);
  } else if (unary) {
    if (arity != 1) return SymVal{};
    const std::string& op = unary_ops().at(name);
    s = in(0);
    const bool same =
        (op == "sym::int" && s.kind == AttrKind::Int) || (op == "sym::float" && s.kind == AttrKind::Float);
    if (!same) s = sym_node(op, {s.id}, {}, path);
  } else {
    if (arity < 2) return SymVal{};
    SymVal a = in(0), b = in(1);
    std::string op = binary_ops().at(name);
    if (name == "rsub") std::swap(a, b);
    if ((name == "add" || name == "sub" || name == "rsub") && arity == 3) {  // alpha
      c10::IValue alpha = eval_.dep(p->input(2)) == Dep::Const ? eval_.eval(p->input(2), user, arg) : c10::IValue();
      if (alpha.isNone()) return SymVal{};
      const bool one = alpha.isInt() ? alpha.toInt() == 1 : alpha.isDouble() && alpha.toDouble() == 1.0;
      if (!one) {
        SymVal scaled = sym_node("sym::mul", {name == "rsub" ? a.id : b.id, sym_const(alpha, user, arg).id}, {}, path);
        (name == "rsub" ? a : b) = scaled;
      }
    } else if (name == "div" && arity == 3) {  // rounding_mode
      if (eval_.dep(p->input(2)) != Dep::Const) return SymVal{};
      c10::IValue mode = eval_.eval(p->input(2), user, arg);
      if (mode.isString() && mode.toStringRef() == "floor")
        op = "sym::floordiv";
      else if (mode.isString() && mode.toStringRef() == "trunc")
        op = "trunc";
      else if (!mode.isNone())
        return SymVal{};
    } else if (arity != 2) {
      return SymVal{};
    }
    if (op == "trunc") {
      s = sym_node("sym::int", {sym_node("sym::div", {a.id, b.id}, {}, path).id}, {}, path);
    } else {
      s = sym_node(op, {a.id, b.id}, {}, path);
    }
  }
  s = sym_convert(s, want, path);
  s.tensor = is_tensor(v->type());
  s.dtype = s.tensor ? dtype
                     : (v->type()->kind() == c10::TypeKind::BoolType ? at::kBool
                        : s.kind == AttrKind::Float                  ? at::kDouble
                                                                     : at::kLong);
  if (result)
    s.stand_in = *result;
  else
    s.stand_in = s.kind == AttrKind::Float ? c10::IValue(1.5) : c10::IValue(int64_t{6});
  return s;
}

}  // namespace switchyard::torchscript
