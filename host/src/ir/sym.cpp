// sym:: ops (see sym.hpp): one table entry per op, with its arity, its result kind and
// its evaluation.
#include "ir/sym.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

namespace switchyard::ir {
namespace {

using Kinds = std::vector<AttrKind>;
using Args = std::vector<SymArg>;

[[noreturn]] void bad_graph(const Node& node, const std::string& why) {
  throw Error(ErrorKind::Graph, "node '" + node.name + "' (" + node.op + "): " + why);
}
[[noreturn]] void bad_input(const Node& node, const std::string& why) {
  throw Error(ErrorKind::Input, "node '" + node.name + "' (" + node.op + "): " + why);
}

// AttrKind::None stands for a number whose kind is known only at run time (sym::item).
bool is_number(AttrKind k) { return k == AttrKind::Int || k == AttrKind::Float || k == AttrKind::None; }
bool is_list(AttrKind k) { return k == AttrKind::Ints || k == AttrKind::Floats; }

double as_double(const Attribute& a) { return a.kind == AttrKind::Int ? static_cast<double>(a.i) : a.f; }

const Attribute& scalar_arg(const Node& node, const Args& args, size_t i) {
  if (i >= args.size() || args[i].scalar == nullptr) bad_graph(node, "input " + std::to_string(i) + " is not a scalar");
  return *args[i].scalar;
}
const Tensor& tensor_arg(const Node& node, const Args& args, size_t i) {
  if (i >= args.size() || args[i].tensor == nullptr || !args[i].tensor->defined())
    bad_graph(node, "input " + std::to_string(i) + " is not a tensor");
  return *args[i].tensor;
}

// An int attribute or an optional int input at `index`; `fallback` if neither is there.
bool int_operand(const Node& node, const Args& args, size_t index, const char* attr, int64_t* out) {
  if (index < args.size() && args[index].scalar != nullptr) {
    const Attribute& a = *args[index].scalar;
    if (a.kind != AttrKind::Int) bad_graph(node, std::string("'") + attr + "' must be an int");
    *out = a.i;
    return true;
  }
  const Attribute* a = find_attr(node.attrs, attr);
  if (a == nullptr || a->kind == AttrKind::None) return false;
  if (a->kind != AttrKind::Int) bad_graph(node, std::string("attribute '") + attr + "' must be an int");
  *out = a->i;
  return true;
}

int64_t floor_div(const Node& node, int64_t a, int64_t b) {
  if (b == 0) bad_input(node, "integer division by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) bad_input(node, "integer overflow in division");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(const Node& node, int64_t a, int64_t b) {
  if (b == 0) bad_input(node, "integer modulo by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t checked(const Node& node, bool overflow, int64_t value) {
  if (overflow) bad_input(node, "integer overflow");
  return value;
}

// The check comes first: -INT64_MIN is undefined behaviour, not just a wrong value.
int64_t negated(const Node& node, int64_t value) {
  if (value == std::numeric_limits<int64_t>::min()) bad_input(node, "integer overflow");
  return -value;
}

// ---- the table -----------------------------------------------------------------------

struct OpDef {
  size_t min_inputs, max_inputs;
  std::function<AttrKind(const Node&, const Kinds&)> kind;
  std::function<Attribute(const Node&, const Args&)> eval;
};

AttrKind numeric_result(const Node& node, const Kinds& k) {
  for (AttrKind x : k)
    if (!is_number(x)) bad_graph(node, "expects numbers, got a " + std::string(attr_kind_name(x)));
  for (AttrKind x : k)
    if (x == AttrKind::Float) return AttrKind::Float;
  for (AttrKind x : k)
    if (x == AttrKind::None) return AttrKind::None;
  return AttrKind::Int;
}

OpDef binary(std::function<Attribute(const Node&, const Attribute&, const Attribute&)> f,
             std::function<AttrKind(const Node&, const Kinds&)> kind = numeric_result) {
  return OpDef{2, 2, std::move(kind),
               [f](const Node& n, const Args& a) { return f(n, scalar_arg(n, a, 0), scalar_arg(n, a, 1)); }};
}

OpDef unary(std::function<Attribute(const Node&, const Attribute&)> f,
            std::function<AttrKind(const Node&, const Kinds&)> kind) {
  return OpDef{1, 1, std::move(kind), [f](const Node& n, const Args& a) { return f(n, scalar_arg(n, a, 0)); }};
}

AttrKind always_int(const Node& node, const Kinds& k) {
  numeric_result(node, k);
  return AttrKind::Int;
}
AttrKind always_float(const Node& node, const Kinds& k) {
  numeric_result(node, k);
  return AttrKind::Float;
}

OpDef compare(std::function<bool(double, double)> f) {
  return binary(
      [f](const Node&, const Attribute& a, const Attribute& b) {
        if (a.kind == AttrKind::Int && b.kind == AttrKind::Int)
          return Attribute::of_int(f(static_cast<double>(a.i), static_cast<double>(b.i)) ? 1 : 0);
        return Attribute::of_int(f(as_double(a), as_double(b)) ? 1 : 0);
      },
      always_int);
}

AttrKind list_arg_kind(const Node& node, const Kinds& k) {
  if (k.empty() || !(is_list(k[0]) || k[0] == AttrKind::None)) bad_graph(node, "expects a list as its first input");
  return k[0];
}

using Table = std::map<std::string, OpDef>;

// Ops that read tensors: their sizes, an element, or a tensor made from scalars.
void add_tensor_ops(Table& t) {
  t["sym::const"] = {0, 0,
                     [](const Node& n, const Kinds&) {
                       const Attribute* v = find_attr(n.attrs, "value");
                       if (v == nullptr || !(is_number(v->kind) || is_list(v->kind)) || v->bound())
                         bad_graph(n, "needs a literal int, float or list attribute 'value'");
                       return v->kind;
                     },
                     [](const Node& n, const Args&) { return *find_attr(n.attrs, "value"); }};
  t["sym::size"] = {1, 2,
                    [](const Node& n, const Kinds& k) {
                      if (k[0] != AttrKind::Tensor) bad_graph(n, "input 0 must be a tensor");
                      const Attribute* d = find_attr(n.attrs, "dim");
                      const bool one = k.size() > 1 || (d != nullptr && d->kind != AttrKind::None);
                      if (k.size() > 1 && k[1] != AttrKind::Int) bad_graph(n, "the dim input must be an int");
                      return one ? AttrKind::Int : AttrKind::Ints;
                    },
                    [](const Node& n, const Args& a) {
                      const Tensor& t = tensor_arg(n, a, 0);
                      int64_t dim = 0;
                      if (!int_operand(n, a, 1, "dim", &dim)) return Attribute::of_ints(t.shape());
                      const int64_t rank = t.dim();
                      if (dim < -rank || dim >= rank)
                        bad_input(n, "dimension " + std::to_string(dim) + " is out of range for a tensor of shape " +
                                         shape_string(t.shape()));
                      return Attribute::of_int(t.shape()[static_cast<size_t>(dim < 0 ? dim + rank : dim)]);
                    }};
  auto tensor_int = [](std::function<int64_t(const Tensor&)> f) {
    return OpDef{1, 1,
                 [](const Node& n, const Kinds& k) {
                   if (k[0] != AttrKind::Tensor) bad_graph(n, "input 0 must be a tensor");
                   return AttrKind::Int;
                 },
                 [f](const Node& n, const Args& a) { return Attribute::of_int(f(tensor_arg(n, a, 0))); }};
  };
  t["sym::dim"] = tensor_int([](const Tensor& x) { return x.dim(); });
  t["sym::numel"] = tensor_int([](const Tensor& x) { return x.numel(); });
  t["sym::item"] = {1, 1,
                    [](const Node& n, const Kinds& k) {
                      if (k[0] != AttrKind::Tensor) bad_graph(n, "input 0 must be a tensor");
                      return AttrKind::None;  // Int or Float, by the tensor's dtype at run time
                    },
                    [](const Node& n, const Args& a) {
                      const Tensor& x = tensor_arg(n, a, 0);
                      if (x.numel() != 1)
                        bad_input(n, "reads one element, but the tensor has shape " + shape_string(x.shape()));
                      if (x.device().device_type != kDLCPU) bad_graph(n, "reads a tensor that is not in host memory");
                      const DLDataType d = x.dtype();
                      const void* p = x.raw_data();
                      if (d.code == kDLFloat && d.bits == 32) return Attribute::of_float(*static_cast<const float*>(p));
                      if (d.code == kDLFloat && d.bits == 64)
                        return Attribute::of_float(*static_cast<const double*>(p));
                      if (d.code == kDLInt && d.bits == 64) return Attribute::of_int(*static_cast<const int64_t*>(p));
                      if (d.code == kDLInt && d.bits == 32) return Attribute::of_int(*static_cast<const int32_t*>(p));
                      if ((d.code == kDLUInt || d.code == SY_DL_BOOL) && d.bits == 8)
                        return Attribute::of_int(*static_cast<const uint8_t*>(p));
                      bad_input(n, "cannot read a " + dtype_name(d) + " element");
                    }};
  t["sym::tensor"] = {1, 1,
                      [](const Node& n, const Kinds& k) {
                        if (!(is_number(k[0]) || is_list(k[0]))) bad_graph(n, "input 0 must be a scalar");
                        return AttrKind::Tensor;
                      },
                      [](const Node& n, const Args&) -> Attribute { bad_graph(n, "is evaluated by eval_sym_tensor"); }};
}

// Arithmetic, comparisons and conversions on ints and floats.
void add_number_ops(Table& t) {
  t["sym::add"] = binary([](const Node& n, const Attribute& a, const Attribute& b) {
    int64_t r = 0;
    if (a.kind == AttrKind::Int && b.kind == AttrKind::Int) {
      const bool overflow = __builtin_add_overflow(a.i, b.i, &r);  // before reading r
      return Attribute::of_int(checked(n, overflow, r));
    }
    return Attribute::of_float(as_double(a) + as_double(b));
  });
  t["sym::sub"] = binary([](const Node& n, const Attribute& a, const Attribute& b) {
    int64_t r = 0;
    if (a.kind == AttrKind::Int && b.kind == AttrKind::Int) {
      const bool overflow = __builtin_sub_overflow(a.i, b.i, &r);  // before reading r
      return Attribute::of_int(checked(n, overflow, r));
    }
    return Attribute::of_float(as_double(a) - as_double(b));
  });
  t["sym::mul"] = binary([](const Node& n, const Attribute& a, const Attribute& b) {
    int64_t r = 0;
    if (a.kind == AttrKind::Int && b.kind == AttrKind::Int) {
      const bool overflow = __builtin_mul_overflow(a.i, b.i, &r);  // before reading r
      return Attribute::of_int(checked(n, overflow, r));
    }
    return Attribute::of_float(as_double(a) * as_double(b));
  });
  t["sym::div"] = binary(
      [](const Node& n, const Attribute& a, const Attribute& b) {
        if (as_double(b) == 0.0 && a.kind == AttrKind::Int && b.kind == AttrKind::Int) bad_input(n, "division by zero");
        return Attribute::of_float(as_double(a) / as_double(b));
      },
      always_float);
  t["sym::floordiv"] = binary([](const Node& n, const Attribute& a, const Attribute& b) {
    if (a.kind == AttrKind::Int && b.kind == AttrKind::Int) return Attribute::of_int(floor_div(n, a.i, b.i));
    return Attribute::of_float(std::floor(as_double(a) / as_double(b)));
  });
  t["sym::mod"] = binary([](const Node& n, const Attribute& a, const Attribute& b) {
    if (a.kind == AttrKind::Int && b.kind == AttrKind::Int) return Attribute::of_int(floor_mod(n, a.i, b.i));
    const double x = as_double(a), y = as_double(b);
    double r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return Attribute::of_float(r);
  });
  t["sym::pow"] = binary([](const Node&, const Attribute& a,
                            const Attribute& b) { return Attribute::of_float(std::pow(as_double(a), as_double(b))); },
                         always_float);
  t["sym::min"] = binary([](const Node&, const Attribute& a, const Attribute& b) {
    if (a.kind == AttrKind::Int && b.kind == AttrKind::Int) return Attribute::of_int(std::min(a.i, b.i));
    return Attribute::of_float(std::min(as_double(a), as_double(b)));
  });
  t["sym::max"] = binary([](const Node&, const Attribute& a, const Attribute& b) {
    if (a.kind == AttrKind::Int && b.kind == AttrKind::Int) return Attribute::of_int(std::max(a.i, b.i));
    return Attribute::of_float(std::max(as_double(a), as_double(b)));
  });
  t["sym::eq"] = compare([](double x, double y) { return x == y; });
  t["sym::ne"] = compare([](double x, double y) { return x != y; });
  t["sym::lt"] = compare([](double x, double y) { return x < y; });
  t["sym::le"] = compare([](double x, double y) { return x <= y; });
  t["sym::gt"] = compare([](double x, double y) { return x > y; });
  t["sym::ge"] = compare([](double x, double y) { return x >= y; });
  t["sym::and"] = compare([](double x, double y) { return x != 0 && y != 0; });
  t["sym::or"] = compare([](double x, double y) { return x != 0 || y != 0; });

  auto same = [](const Node& n, const Kinds& k) { return numeric_result(n, k); };
  t["sym::neg"] = unary(
      [](const Node& n, const Attribute& a) {
        if (a.kind == AttrKind::Int) return Attribute::of_int(negated(n, a.i));
        return Attribute::of_float(-a.f);
      },
      same);
  t["sym::abs"] = unary(
      [](const Node& n, const Attribute& a) {
        if (a.kind == AttrKind::Int) return Attribute::of_int(a.i < 0 ? negated(n, a.i) : a.i);
        return Attribute::of_float(std::fabs(a.f));
      },
      same);
  auto to_int = [](const Node& n, double v) {
    if (!std::isfinite(v) || v < -9.2e18 || v > 9.2e18) bad_input(n, "the value does not fit an int");
    return Attribute::of_int(static_cast<int64_t>(v));
  };
  t["sym::floor"] = unary(
      [to_int](const Node& n, const Attribute& a) { return a.kind == AttrKind::Int ? a : to_int(n, std::floor(a.f)); },
      always_int);
  t["sym::ceil"] = unary(
      [to_int](const Node& n, const Attribute& a) { return a.kind == AttrKind::Int ? a : to_int(n, std::ceil(a.f)); },
      always_int);
  t["sym::int"] = unary(
      [to_int](const Node& n, const Attribute& a) { return a.kind == AttrKind::Int ? a : to_int(n, std::trunc(a.f)); },
      always_int);
  t["sym::round"] = unary(
      [](const Node&, const Attribute& a) {
        return Attribute::of_float(std::nearbyint(as_double(a)));  // half to even, as Python
      },
      always_float);
  t["sym::sqrt"] =
      unary([](const Node&, const Attribute& a) { return Attribute::of_float(std::sqrt(as_double(a))); }, always_float);
  t["sym::float"] =
      unary([](const Node&, const Attribute& a) { return Attribute::of_float(as_double(a)); }, always_float);
  t["sym::not"] =
      unary([](const Node&, const Attribute& a) { return Attribute::of_int(as_double(a) == 0 ? 1 : 0); }, always_int);
  t["sym::bool"] =
      unary([](const Node&, const Attribute& a) { return Attribute::of_int(as_double(a) != 0 ? 1 : 0); }, always_int);
}

// Lists of ints or floats.
void add_list_ops(Table& t) {
  t["sym::list"] = {
      0, 64,
      [](const Node& n, const Kinds& k) {
        const AttrKind e = numeric_result(n, k);
        return e == AttrKind::None ? AttrKind::None : e == AttrKind::Int ? AttrKind::Ints : AttrKind::Floats;
      },
      [](const Node& n, const Args& a) {
        bool all_int = true;
        for (size_t i = 0; i < a.size(); ++i) all_int = all_int && scalar_arg(n, a, i).kind == AttrKind::Int;
        std::vector<int64_t> ints;
        std::vector<double> floats;
        for (size_t i = 0; i < a.size(); ++i) {
          const Attribute& x = scalar_arg(n, a, i);
          if (!is_number(x.kind)) bad_graph(n, "list elements must be numbers");
          ints.push_back(x.i);
          floats.push_back(as_double(x));
        }
        return all_int ? Attribute::of_ints(std::move(ints)) : Attribute::of_floats(std::move(floats));
      }};
  t["sym::get"] = {
      1, 2,
      [](const Node& n, const Kinds& k) {
        const AttrKind l = list_arg_kind(n, k);
        if (k.size() > 1 && k[1] != AttrKind::Int) bad_graph(n, "the index must be an int");
        return l == AttrKind::Ints ? AttrKind::Int : l == AttrKind::None ? AttrKind::None : AttrKind::Float;
      },
      [](const Node& n, const Args& a) {
        const Attribute& l = scalar_arg(n, a, 0);
        int64_t i = 0;
        if (!int_operand(n, a, 1, "index", &i)) bad_graph(n, "needs an index input or attribute");
        const int64_t size = static_cast<int64_t>(l.kind == AttrKind::Ints ? l.ints.size() : l.floats.size());
        if (i < -size || i >= size)
          bad_input(n, "index " + std::to_string(i) + " is out of range for " + scalar_string(l));
        const size_t at = static_cast<size_t>(i < 0 ? i + size : i);
        return l.kind == AttrKind::Ints ? Attribute::of_int(l.ints[at]) : Attribute::of_float(l.floats[at]);
      }};
  t["sym::len"] = {
      1, 1,
      [](const Node& n, const Kinds& k) {
        list_arg_kind(n, k);
        return AttrKind::Int;
      },
      [](const Node& n, const Args& a) {
        const Attribute& l = scalar_arg(n, a, 0);
        return Attribute::of_int(static_cast<int64_t>(l.kind == AttrKind::Ints ? l.ints.size() : l.floats.size()));
      }};
  t["sym::slice"] = {1, 1, list_arg_kind, [](const Node& n, const Args& a) {
                       const Attribute& l = scalar_arg(n, a, 0);
                       const int64_t size =
                           static_cast<int64_t>(l.kind == AttrKind::Ints ? l.ints.size() : l.floats.size());
                       int64_t step = 1;
                       int_operand(n, {}, 0, "step", &step);
                       if (step <= 0) bad_graph(n, "step must be positive");
                       auto clamp = [&](const char* name, int64_t fallback) {
                         int64_t v = fallback;
                         if (!int_operand(n, {}, 0, name, &v)) return fallback;
                         if (v < 0) v += size;
                         return std::max<int64_t>(0, std::min(v, size));
                       };
                       const int64_t start = clamp("start", 0), end = clamp("end", size);
                       Attribute out = l;
                       out.ints.clear();
                       out.floats.clear();
                       for (int64_t i = start; i < end; i += step) {
                         if (l.kind == AttrKind::Ints)
                           out.ints.push_back(l.ints[static_cast<size_t>(i)]);
                         else
                           out.floats.push_back(l.floats[static_cast<size_t>(i)]);
                       }
                       return out;
                     }};
  t["sym::cat"] = {2, 2,
                   [](const Node& n, const Kinds& k) {
                     if (!(is_list(k[0]) || k[0] == AttrKind::None) || !(is_list(k[1]) || k[1] == AttrKind::None))
                       bad_graph(n, "joins two lists");
                     return k[0] == AttrKind::Ints && k[1] == AttrKind::Ints ? AttrKind::Ints : AttrKind::Floats;
                   },
                   [](const Node& n, const Args& a) {
                     const Attribute &x = scalar_arg(n, a, 0), &y = scalar_arg(n, a, 1);
                     if (x.kind == AttrKind::Ints && y.kind == AttrKind::Ints) {
                       std::vector<int64_t> v = x.ints;
                       v.insert(v.end(), y.ints.begin(), y.ints.end());
                       return Attribute::of_ints(std::move(v));
                     }
                     auto floats = [](const Attribute& l) {
                       return l.kind == AttrKind::Floats ? l.floats : std::vector<double>(l.ints.begin(), l.ints.end());
                     };
                     std::vector<double> v = floats(x), w = floats(y);
                     v.insert(v.end(), w.begin(), w.end());
                     return Attribute::of_floats(std::move(v));
                   }};
}

const Table& table() {
  static const Table ops = [] {
    Table t;
    add_tensor_ops(t);
    add_number_ops(t);
    add_list_ops(t);
    return t;
  }();
  return ops;
}

const OpDef& def_of(const Node& node) {
  auto it = table().find(node.op);
  if (it == table().end()) bad_graph(node, "unknown sym op (known: see host/src/ir/sym.hpp)");
  return it->second;
}

}  // namespace

bool is_sym_op(const std::string& op) { return op.rfind("sym::", 0) == 0; }

std::vector<std::string> sym_op_names() {
  std::vector<std::string> names;
  for (const auto& [name, def] : table()) names.push_back(name);
  return names;
}

AttrKind sym_result_kind(const Node& node, const std::vector<AttrKind>& input_kinds) {
  const OpDef& def = def_of(node);
  if (input_kinds.size() < def.min_inputs || input_kinds.size() > def.max_inputs)
    bad_graph(node, "takes " + std::to_string(def.min_inputs) +
                        (def.max_inputs != def.min_inputs ? " to " + std::to_string(def.max_inputs) : "") +
                        " inputs, has " + std::to_string(input_kinds.size()));
  if (node.outputs.size() != 1) bad_graph(node, "must have exactly one output");
  return def.kind(node, input_kinds);
}

Attribute eval_sym(const Node& node, const std::vector<SymArg>& args) { return def_of(node).eval(node, args); }

Tensor eval_sym_tensor(const Node& node, const Attribute& value) {
  DLDataType dtype = value.kind == AttrKind::Int || value.kind == AttrKind::Ints ? DLDataType{kDLInt, 64, 1}
                                                                                 : DLDataType{kDLFloat, 64, 1};
  if (const Attribute* d = find_attr(node.attrs, "dtype"); d != nullptr && d->kind == AttrKind::String)
    if (!parse_dtype(d->s, &dtype)) bad_graph(node, "unknown dtype '" + d->s + "'");
  const bool list = is_list(value.kind);
  const size_t n = list ? (value.kind == AttrKind::Ints ? value.ints.size() : value.floats.size()) : 1;
  Tensor t = Tensor::empty(dtype, list ? std::vector<int64_t>{static_cast<int64_t>(n)} : std::vector<int64_t>{});
  for (size_t i = 0; i < n; ++i) {
    const double v =
        list ? (value.kind == AttrKind::Ints ? static_cast<double>(value.ints[i]) : value.floats[i]) : as_double(value);
    const int64_t iv = list ? (value.kind == AttrKind::Ints ? value.ints[i] : static_cast<int64_t>(v))
                            : (value.kind == AttrKind::Int ? value.i : static_cast<int64_t>(v));
    char* p = static_cast<char*>(t.raw_data()) + i * dtype_size(dtype);
    if (dtype.code == kDLFloat && dtype.bits == 32)
      *reinterpret_cast<float*>(p) = static_cast<float>(v);
    else if (dtype.code == kDLFloat && dtype.bits == 64)
      *reinterpret_cast<double*>(p) = v;
    else if (dtype.code == kDLInt && dtype.bits == 64)
      *reinterpret_cast<int64_t*>(p) = iv;
    else if (dtype.code == kDLInt && dtype.bits == 32)
      *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(iv);
    else if (dtype.code == SY_DL_BOOL && dtype.bits == 8)
      *reinterpret_cast<uint8_t*>(p) = v != 0;
    else
      bad_graph(node, "cannot make a " + dtype_name(dtype) + " tensor");
  }
  return t;
}

Attribute bind_scalar(const Attribute& value, AttrKind expected, const Node& node, const std::string& attr) {
  if (value.kind == expected) return value;
  if (expected == AttrKind::Float && value.kind == AttrKind::Int)
    return Attribute::of_float(static_cast<double>(value.i));
  if (expected == AttrKind::Ints && value.kind == AttrKind::Int) return Attribute::of_ints({value.i});
  if (expected == AttrKind::Floats && value.kind == AttrKind::Ints)
    return Attribute::of_floats(std::vector<double>(value.ints.begin(), value.ints.end()));
  if (expected == AttrKind::Floats && value.kind == AttrKind::Float) return Attribute::of_floats({value.f});
  if (expected == AttrKind::Floats && value.kind == AttrKind::Int)
    return Attribute::of_floats({static_cast<double>(value.i)});
  throw Error(ErrorKind::Graph, "node '" + node.name + "' (" + node.op + "): attribute '" + attr + "' expects " +
                                    attr_kind_name(expected) + " but its value " + scalar_string(value) + " is " +
                                    attr_kind_name(value.kind));
}

std::string scalar_string(const Attribute& v) {
  auto num = [](double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s += '0';
    return s;
  };
  switch (v.kind) {
    case AttrKind::Int: return std::to_string(v.i);
    case AttrKind::Float: return num(v.f);
    case AttrKind::Ints: return shape_string(v.ints);
    case AttrKind::Floats: {
      std::string s = "[";
      for (size_t i = 0; i < v.floats.size(); ++i) s += (i ? ", " : "") + num(v.floats[i]);
      return s + "]";
    }
    default: return attr_kind_name(v.kind);
  }
}

}  // namespace switchyard::ir
