// aten plugin: dtype mapping, the parser for the op table's schema strings, and reading
// attributes as schema-typed values.
#include "aten_ops.hpp"

#include <switchyard/aten_dtype.hpp>

#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sy_aten {

// ---- dtypes ------------------------------------------------------------------------------

bool to_scalar_type(DLDataType dt, at::ScalarType* out) { return sy::to_scalar_type(dt, out); }

DLDataType to_dl_dtype(at::ScalarType t) {
  DLDataType dt;
  if (!sy::to_dl_dtype(t, &dt))
    throw sy::Error(std::string("result dtype ") + c10::toString(t) + " has no DLPack code", SY_ERROR_INTERNAL);
  return dt;
}

std::string dl_name(DLDataType dt) {
  at::ScalarType st;
  if (!to_scalar_type(dt, &st))
    return "dtype(code " + std::to_string(dt.code) + ", bits " + std::to_string(dt.bits) + ", lanes " +
           std::to_string(dt.lanes) + ")";
  switch (st) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kChar: return "int8";
    case at::kShort: return "int16";
    case at::kInt: return "int32";
    case at::kLong: return "int64";
    case at::kByte: return "uint8";
    case at::kBool: return "bool";
    case at::kComplexFloat: return "complex64";
    case at::kComplexDouble: return "complex128";
    default: return c10::toString(st);
  }
}

// The dtypes in a mask, in a fixed order (also the order of SY_KernelDef.dtypes).
constexpr at::ScalarType kOrder[] = {at::kFloat, at::kDouble, at::kHalf,         at::kBFloat16,
                                     at::kChar,  at::kShort,  at::kInt,          at::kLong,
                                     at::kByte,  at::kBool,   at::kComplexFloat, at::kComplexDouble};

std::vector<DLDataType> mask_dtypes(DtypeMask m) {
  std::vector<DLDataType> out;
  for (at::ScalarType t : kOrder)
    if (m & bit(t)) out.push_back(to_dl_dtype(t));
  return out;
}

std::string mask_names(DtypeMask m) {
  std::string s;
  for (const DLDataType& d : mask_dtypes(m)) s += (s.empty() ? "" : ", ") + dl_name(d);
  return s;
}

bool scalar_type_from_name(const std::string& n, int64_t* code) {
  static const std::pair<const char*, at::ScalarType> kNames[] = {
      {"float32", at::kFloat}, {"float", at::kFloat}, {"float64", at::kDouble},    {"double", at::kDouble},
      {"float16", at::kHalf},  {"half", at::kHalf},   {"bfloat16", at::kBFloat16}, {"int8", at::kChar},
      {"int16", at::kShort},   {"int32", at::kInt},   {"int", at::kInt},           {"int64", at::kLong},
      {"long", at::kLong},     {"uint8", at::kByte},  {"bool", at::kBool}};
  for (const auto& [name, t] : kNames)
    if (n == name) return *code = static_cast<int64_t>(t), true;
  return false;
}

namespace {

// ---- schema parsing (at plugin init; a bad table line is a programming error) -------------

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Splits on commas outside brackets, parentheses, angle brackets and quotes.
std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  char quote = 0;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '>' && i > 0 && s[i - 1] == '-') {  // "->" in an alias annotation
      cur += ch;
      continue;
    }
    if (quote) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '[' || ch == '(' || ch == '<') {
      ++depth;
    } else if (ch == ']' || ch == ')' || ch == '>') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += ch;
  }
  if (!trim(cur).empty()) parts.push_back(trim(cur));
  return parts;
}

[[noreturn]] void bad_schema(const std::string& schema, const std::string& why) {
  throw std::logic_error("aten plugin: bad schema '" + schema + "': " + why);
}

Value parse_default(const std::string& schema, const ArgSpec& a, std::string d) {
  Value v;
  if (d == "None") return v;
  auto parse_int = [&](const std::string& x) {
    char* end = nullptr;
    long long n = std::strtoll(x.c_str(), &end, 10);
    if (end == x.c_str() || *end) bad_schema(schema, "bad int default '" + x + "'");
    return static_cast<int64_t>(n);
  };
  auto parse_float = [&](const std::string& x) {
    char* end = nullptr;
    double n = std::strtod(x.c_str(), &end);
    if (end == x.c_str() || *end) bad_schema(schema, "bad float default '" + x + "'");
    return n;
  };
  auto items = [&](const std::string& x) {
    std::string body = x;
    if (!body.empty() && body.front() == '[') body = body.substr(1, body.size() - 2);
    return split_top(body);
  };
  switch (a.type) {
    case ArgType::Int:
    case ArgType::ScalarType:
    case ArgType::Layout:
    case ArgType::MemoryFormat: v.kind = Value::kInt, v.i = parse_int(d); break;
    case ArgType::Bool:
      if (d != "True" && d != "False") bad_schema(schema, "bad bool default '" + d + "'");
      v.kind = Value::kInt, v.i = d == "True";
      break;
    case ArgType::Float: v.kind = Value::kFloat, v.f = parse_float(d); break;
    case ArgType::Scalar:
      if (d.find_first_of(".eEn") != std::string::npos)
        v.kind = Value::kFloat, v.f = parse_float(d);
      else
        v.kind = Value::kInt, v.i = parse_int(d);
      break;
    case ArgType::Str:
    case ArgType::Device:
      if (d.size() >= 2 && (d.front() == '"' || d.front() == '\'')) d = d.substr(1, d.size() - 2);
      v.kind = Value::kStr, v.s = d;
      break;
    case ArgType::Ints:
      v.kind = Value::kInts;
      for (const std::string& x : items(d)) v.ints.push_back(parse_int(x));
      if (a.fixed_len > 1 && v.ints.size() == 1) v.ints.assign(a.fixed_len, v.ints[0]);
      break;
    case ArgType::Floats:
      v.kind = Value::kFloats;
      for (const std::string& x : items(d)) v.floats.push_back(parse_float(x));
      break;
    default: bad_schema(schema, "argument '" + a.name + "' cannot have a default other than None");
  }
  return v;
}

bool is_tensor_arg(const ArgSpec& a) {
  return a.type == ArgType::Tensor || a.type == ArgType::TensorOrScalar || a.type == ArgType::TensorList;
}

ArgSpec parse_arg(const std::string& schema, const std::string& text) {
  ArgSpec a;
  // The type runs up to the first space outside parentheses/angle brackets.
  size_t pos = 0;
  int depth = 0;
  for (; pos < text.size(); ++pos) {
    char ch = text[pos];
    if (ch == '(' || ch == '<')
      ++depth;
    else if (ch == ')' || (ch == '>' && text[pos - 1] != '-'))
      --depth;
    else if (ch == ' ' && depth == 0)
      break;
  }
  std::string type = text.substr(0, pos);
  std::string rest = trim(text.substr(pos));
  size_t eq = rest.find('=');
  a.name = trim(rest.substr(0, eq));
  if (a.name.empty()) bad_schema(schema, "argument without a name: '" + text + "'");

  size_t i = 0;
  while (i < type.size() && (std::isalnum(static_cast<unsigned char>(type[i])) || type[i] == '_' || type[i] == '|'))
    ++i;
  std::string base = type.substr(0, i);
  bool list = false;
  for (; i < type.size(); ++i) {
    char ch = type[i];
    if (ch == '(') {  // aliasing annotation: (a), (a!), (a -> *)
      i = type.find(')', i);
      if (i == std::string::npos) bad_schema(schema, "unclosed '(' in " + type);
    } else if (ch == '<') {
      size_t close = type.find('>', i);
      if (close == std::string::npos) bad_schema(schema, "unclosed '<' in " + type);
      // <idx>, <long>, <bool>, <float>, <any>, or several joined by '|'; `main` is the
      // overload's own set (so <bool|main> is "bool or the op's dtypes").
      std::string sets = type.substr(i + 1, close - i - 1) + "|";
      for (size_t b = 0, e; (e = sets.find('|', b)) != std::string::npos; b = e + 1) {
        std::string set = sets.substr(b, e - b);
        if (set == "idx")
          a.dtypes |= kIdx;
        else if (set == "bool")
          a.dtypes |= kB;
        else if (set == "any")
          a.dtypes |= kAll;
        else if (set == "float")
          a.dtypes |= kFH;
        else if (set == "long")
          a.dtypes |= bit(at::kLong);
        else if (set == "main")
          a.main_dtypes = true;
        else
          bad_schema(schema, "unknown dtype set <" + set + ">");
      }
      i = close;
    } else if (ch == '[') {
      size_t close = type.find(']', i);
      if (close == std::string::npos) bad_schema(schema, "unclosed '[' in " + type);
      std::string n = type.substr(i + 1, close - i - 1);
      if (!n.empty()) a.fixed_len = std::atoi(n.c_str());
      if (a.optional) a.elems_optional = true, a.optional = false;  // Tensor?[]
      list = true;
      i = close;
    } else if (ch == '?') {
      a.optional = true;
    } else {
      bad_schema(schema, "unexpected '" + std::string(1, ch) + "' in type " + type);
    }
  }

  if (base == "Tensor")
    a.type = list ? ArgType::TensorList : ArgType::Tensor;
  else if (base == "Tensor|Scalar" && !list)
    a.type = ArgType::TensorOrScalar;
  else if (base == "int" || base == "SymInt")
    a.type = list ? ArgType::Ints : ArgType::Int;
  else if (base == "float")
    a.type = list ? ArgType::Floats : ArgType::Float;
  else if (base == "bool")
    a.type = list ? ArgType::Ints : ArgType::Bool;
  else if (base == "str" && !list)
    a.type = ArgType::Str;
  else if (base == "Scalar" && !list)
    a.type = ArgType::Scalar;
  else if (base == "ScalarType" && !list)
    a.type = ArgType::ScalarType;
  else if (base == "Layout" && !list)
    a.type = ArgType::Layout;
  else if (base == "Device" && !list)
    a.type = ArgType::Device;
  else if (base == "MemoryFormat" && !list)
    a.type = ArgType::MemoryFormat;
  else
    bad_schema(schema, "unsupported type '" + type + "'");

  if (eq != std::string::npos) {
    a.has_default = true;
    a.def = parse_default(schema, a, trim(rest.substr(eq + 1)));
  }
  return a;
}

void parse_schema(Overload& ov) {
  const std::string& s = ov.schema;
  size_t open = s.find('('), arrow = s.rfind("->");
  if (open == std::string::npos || arrow == std::string::npos) bad_schema(s, "expected 'name(args) -> returns'");
  size_t close = s.rfind(')', arrow);
  if (close == std::string::npos || close < open) bad_schema(s, "unbalanced parentheses");

  std::string name = trim(s.substr(0, open));
  size_t dot = name.find('.');
  ov.overload = dot == std::string::npos ? "" : name.substr(dot + 1);
  name = name.substr(0, dot);
  ov.op = name.find("::") == std::string::npos ? "aten::" + name : name;

  for (const std::string& part : split_top(s.substr(open + 1, close - open - 1))) {
    if (part == "*") continue;  // keyword-only marker: attributes are named anyway
    ov.args.push_back(parse_arg(s, part));
  }
  for (ArgSpec& a : ov.args)
    if (a.main_dtypes) a.dtypes |= ov.dtypes;
  // A tensor list followed by optional tensors or by another list can only be split with a
  // `<name>.len` attribute; `Tensor[N]` gives the length to assume when that is absent.
  for (size_t k = 0; k < ov.args.size(); ++k) {
    ArgSpec& a = ov.args[k];
    if (a.type != ArgType::TensorList) continue;
    for (size_t j = k + 1; j < ov.args.size(); ++j) {
      const ArgSpec& b = ov.args[j];
      if (b.type == ArgType::TensorList || (is_tensor_arg(b) && b.optional)) a.needs_len = true;
    }
  }

  std::string ret = trim(s.substr(arrow + 2));
  if (!ret.empty() && ret.front() == '(') {
    std::string body = trim(ret.substr(1, ret.size() - 2));
    ov.returns = body.empty() ? 0 : static_cast<int>(split_top(body).size());
  } else if (ret.size() >= 2 && ret.compare(ret.size() - 2, 2, "[]") == 0) {
    ov.returns = -1;
  } else {
    ov.returns = 1;
  }
}

}  // namespace

Overload& Registry::add(const char* schema, DtypeMask dtypes) {
  overloads_.emplace_back();
  Overload& ov = overloads_.back();
  ov.schema = schema;
  ov.family = family_;
  ov.dtypes = dtypes;
  parse_schema(ov);
  return ov;
}
Overload& Registry::def(const char* schema, DtypeMask dtypes, Fn fn) {
  Overload& ov = add(schema, dtypes);
  ov.fn = fn;
  return ov;
}
Overload& Registry::def(const char* schema, DtypeMask dtypes, FnMulti fn) {
  Overload& ov = add(schema, dtypes);
  ov.fn_multi = fn;
  return ov;
}

const char* kind_name(SY_AttrKind k) {
  switch (k) {
    case SY_ATTR_MISSING: return "missing";
    case SY_ATTR_NONE: return "None";
    case SY_ATTR_INT: return "an int";
    case SY_ATTR_FLOAT: return "a float";
    case SY_ATTR_STRING: return "a string";
    case SY_ATTR_INTS: return "an int list";
    case SY_ATTR_FLOATS: return "a float list";
    case SY_ATTR_TENSOR: return "a tensor";
  }
  return "unknown";
}

const char* type_name(const ArgSpec& a) {
  switch (a.type) {
    case ArgType::Tensor: return "Tensor";
    case ArgType::TensorList: return "Tensor[]";
    case ArgType::TensorOrScalar: return "Tensor or Scalar";
    case ArgType::Int: return "int";
    case ArgType::Float: return "float";
    case ArgType::Bool: return "bool";
    case ArgType::Str: return "str";
    case ArgType::Ints: return "int[]";
    case ArgType::Floats: return "float[]";
    case ArgType::Scalar: return "Scalar";
    case ArgType::ScalarType: return "ScalarType";
    case ArgType::Layout: return "Layout";
    case ArgType::Device: return "Device";
    case ArgType::MemoryFormat: return "MemoryFormat";
  }
  return "?";
}

// ---- attributes -> values ------------------------------------------------------------------

Value read_attr(const sy::Attrs& attrs, const ArgSpec& a, SY_AttrKind kind) {
  Value v;
  const char* n = a.name.c_str();
  auto wrong = [&]() -> Value {
    throw sy::Unsupported("attribute '" + a.name + "' is " + kind_name(kind) + ", expected " + type_name(a));
  };
  switch (a.type) {
    case ArgType::Int:
    case ArgType::Bool:
    case ArgType::Layout:
    case ArgType::MemoryFormat:
      if (kind != SY_ATTR_INT) return wrong();
      v.kind = Value::kInt, v.i = attrs.i(n);
      if (a.type == ArgType::Bool) v.i = v.i != 0;
      if (a.type == ArgType::Layout && v.i != 0)  // c10::Layout::Strided
        throw sy::Unsupported("attribute '" + a.name + "': only the strided layout is supported");
      return v;
    case ArgType::Float:
      if (kind != SY_ATTR_INT && kind != SY_ATTR_FLOAT) return wrong();
      v.kind = Value::kFloat, v.f = attrs.f(n);
      return v;
    case ArgType::Scalar:
    case ArgType::TensorOrScalar:
      if (kind == SY_ATTR_INT) return v.kind = Value::kInt, v.i = attrs.i(n), v;
      if (kind == SY_ATTR_FLOAT) return v.kind = Value::kFloat, v.f = attrs.f(n), v;
      return wrong();
    case ArgType::Str:
      if (kind != SY_ATTR_STRING) return wrong();
      v.kind = Value::kStr, v.s = attrs.s(n);
      return v;
    case ArgType::Ints:
      if (kind != SY_ATTR_INT && kind != SY_ATTR_INTS) return wrong();
      v.kind = Value::kInts, v.ints = attrs.ints(n);
      if (a.fixed_len > 1 && v.ints.size() == 1) v.ints.assign(a.fixed_len, v.ints[0]);
      return v;
    case ArgType::Floats:
      v.kind = Value::kFloats;
      if (kind == SY_ATTR_FLOATS)
        v.floats = attrs.floats(n);
      else if (kind == SY_ATTR_FLOAT || kind == SY_ATTR_INT)
        v.floats = {attrs.f(n)};
      else if (kind == SY_ATTR_INTS)
        for (int64_t x : attrs.ints(n)) v.floats.push_back(static_cast<double>(x));
      else
        return wrong();
      return v;
    case ArgType::ScalarType: {
      v.kind = Value::kInt;
      if (kind == SY_ATTR_INT) {
        v.i = attrs.i(n);
        at::ScalarType st = static_cast<at::ScalarType>(v.i);
        if (v.i < 0 || v.i >= static_cast<int64_t>(at::ScalarType::NumOptions) || !(kAll & bit(st)))
          throw sy::Unsupported("attribute '" + a.name + "': ScalarType code " + std::to_string(v.i) +
                                " is not supported");
      } else if (kind == SY_ATTR_STRING) {
        std::string s = attrs.s(n);
        if (!scalar_type_from_name(s, &v.i))
          throw sy::Unsupported("attribute '" + a.name + "': unknown dtype '" + s + "'");
      } else {
        return wrong();
      }
      return v;
    }
    case ArgType::Device: {
      if (kind != SY_ATTR_STRING) return wrong();
      std::string s = attrs.s(n);
      if (s.rfind("cpu", 0) != 0)
        throw sy::Unsupported("attribute '" + a.name + "': device '" + s + "'; the aten plugin runs on the CPU only");
      v.kind = Value::kStr, v.s = s;
      return v;
    }
    default: return wrong();
  }
}

}  // namespace sy_aten
