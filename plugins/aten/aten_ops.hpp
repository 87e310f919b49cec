// aten plugin, internal: the op table and the view an op function gets of one call.
//
// Included only by this plugin's own sources (it pulls in <ATen/ATen.h>, which the
// plugin target precompiles once). Nothing here crosses the SDK boundary.
//
// ---- The argument convention (how a switchyard node maps onto an ATen schema) ---------
//
//   * Tensor arguments are node inputs, in schema order.
//       aten::linear(Tensor input, Tensor weight, Tensor? bias=None)
//         -> inputs[0] = input, inputs[1] = weight, inputs[2] = bias
//   * An optional tensor argument (`Tensor?`) that is absent is a NULL inputs entry, or is
//     simply left off the end of the inputs array.
//   * A tensor-list argument (`Tensor[]`, e.g. aten::cat's `tensors`) takes consecutive
//     inputs. (`Tensor?[]`, e.g. aten::index's `indices`, may hold NULL entries.) How many:
//       - every `Tensor[]` that is not the last tensor list of its schema: the node carries
//         the int attribute `<arg>.len` (aten::lstm: `hx.len` = 2, so inputs are
//         [input, h0, c0, params...]). Without it the table's `Tensor[N]` length applies
//         (lstm and lstm_cell write `Tensor[2] hx`), so hand-written graphs work too;
//       - the last tensor list: all remaining inputs except one for each tensor argument
//         after it (aten::index_put: [self, indices..., values]), unless `<arg>.len` says.
//     A `<arg>.len` attribute is accepted on any tensor list and must fit the inputs.
//   * Every non-tensor argument is a node attribute named exactly as in the ATen schema
//     (`dim`, `alpha`, `eps`, `normalized_shape`, `approximate`, ...). Attributes with a
//     schema default may be omitted; optional ones (`int?`, `ScalarType?`, ...) may be
//     omitted or None. Booleans are ints 0/1; `ScalarType` is the c10::ScalarType code (an
//     int, as TorchScript stores it) or a dtype name such as "float32".
//   * A scalar in place of a tensor (aten::add(x, 1.0), aten::mul(x, 0.5)) is the attribute
//     named like the schema argument (`other`) with no input for it. In the table such an
//     argument is written `Tensor|Scalar`.
//   * A constant tensor may also arrive as an SY_ATTR_TENSOR attribute named like its
//     schema argument; it then takes no input slot.
//   * An attribute the schema doesn't name is declined (unless its value is None): ignoring
//     it could silently compute something else. Attributes whose names start with '@' are
//     config options (SDK 1.1): none is known to this plugin, and all are ignored.
//   * An op with several ATen overloads (aten::max: .dim / .other / all) is one kernel; the
//     first overload (in table order) that the node's inputs, attributes and number of
//     outputs fit is used. Outputs are the schema's returns in order; a node may use fewer,
//     except for list returns (aten::split), where the node must have one output per piece.
//   * A ScalarType attribute (`dtype=`) must name one of the op's dtypes (the set given to
//     def()): softmax(x, dtype=float16) is declined because ATen 1.13 can't do it on the CPU.
//   * Defaults: where ATen has none but inference has an obvious one, the table adds it
//     (dropout/batch_norm `train`/`training`=False and so on).
//   * In-place variants (aten::relu_, aten::add_, ...) run out of place: the host owns its
//     tensors, so the result is a new tensor and the input is left untouched.
//
// ---- Adding an op ---------------------------------------------------------------------
//   One line in one of the ops_*.cpp register functions:
//     r.def("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", kF,
//           [](const Call& c) { return at::softmax(c.t(0), c.i(1), c.dtype(2)); });
//   The schema is ATen's (aliasing annotations such as (a!) are allowed and ignored), with
//   three extensions: `Tensor|Scalar` (see above), `Tensor[N]` (a list's length when the
//   node has no `.len` attribute, see above) and a per-argument dtype set written
//   `Tensor<idx>` (int32/int64), `Tensor<long>`, `Tensor<bool>`, `Tensor<float>`,
//   `Tensor<any>`, or several joined by '|' where `main` names the op's own set
//   (`Tensor<bool|main>? attn_mask`); other tensor arguments must have one of the dtypes
//   given to def(). Accessors take the argument's position in the schema (0 = first
//   argument), so the lambda reads like the schema. The kernel's SY_KernelDef.dtypes is
//   the union of all these sets: every dtype that may appear on some input.
//   Then add an OP_CASE in tests/plugins/aten/test_ops_*.cpp; the test fails for a kernel
//   without a case, or for a claimed dtype no case exercised. docs/ops.md lists the ops;
//   `tools/ops/list_model_ops.py --missing` shows what traced models use that is still absent.
//
// ---- Outputs -----------------------------------------------------------------------------
//   Results go to the host zero-copy as DLManagedTensor. A result that aliases an input
//   (views, identity ops) is copied first, since host inputs may only be used during run().
//   ATen's undefined tensor (e.g. attention weights with need_weights=False) becomes an
//   empty float32 tensor; empty tensors get a non-NULL (never read) data pointer.
#pragma once

#include <ATen/ATen.h>
#include <switchyard/plugin.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <tuple>
#include <vector>

namespace sy_aten {

// ---- dtype sets (bit i = at::ScalarType i) ----------------------------------------------
using DtypeMask = uint64_t;
constexpr DtypeMask bit(at::ScalarType t) { return DtypeMask{1} << static_cast<int>(t); }
constexpr DtypeMask kF = bit(at::kFloat) | bit(at::kDouble) | bit(at::kBFloat16);  // no half
constexpr DtypeMask kH = bit(at::kHalf);
constexpr DtypeMask kFH = kF | kH;
constexpr DtypeMask kI = bit(at::kChar) | bit(at::kShort) | bit(at::kInt) | bit(at::kLong) | bit(at::kByte);
constexpr DtypeMask kB = bit(at::kBool);
constexpr DtypeMask kIdx = bit(at::kInt) | bit(at::kLong);
constexpr DtypeMask kAll = kFH | kI | kB;

// DLPack <-> ATen dtypes. Bool is {SY_DL_BOOL, 8, 1}.
bool to_scalar_type(DLDataType dt, at::ScalarType* out);
DLDataType to_dl_dtype(at::ScalarType t);  // throws sy::Error for types DLPack can't name
std::string dl_name(DLDataType dt);        // "float32", "bool", ...
std::vector<DLDataType> mask_dtypes(DtypeMask m);
std::string mask_names(DtypeMask m);                                 // "float32, float64"
bool scalar_type_from_name(const std::string& name, int64_t* code);  // "float32" -> 6

// ---- schema ----------------------------------------------------------------------------
enum class ArgType : uint8_t {
  Tensor,
  TensorList,
  TensorOrScalar,
  Int,
  Float,
  Bool,
  Str,
  Ints,
  Floats,
  Scalar,
  ScalarType,
  Layout,
  Device,
  MemoryFormat  // accepted and checked, not passed on (always CPU, strided)
};

// A resolved non-tensor value (an attribute, a schema default, or None).
struct Value {
  enum Kind : uint8_t { kNone, kInt, kFloat, kStr, kInts, kFloats, kTensor } kind = kNone;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  at::Tensor t;  // a constant tensor attribute (host-owned memory, wrapped at create)
};

struct ArgSpec {
  std::string name;
  ArgType type = ArgType::Tensor;
  bool optional = false;        // `?`: may be None / absent
  bool elems_optional = false;  // `Tensor?[]`
  bool has_default = false;
  int fixed_len = 0;         // int[2]: a single value is repeated to this length;
                             // Tensor[2]: the list's length when `<name>.len` is absent
  bool needs_len = false;    // Tensor[] followed by another list or an optional tensor
  DtypeMask dtypes = 0;      // tensors: 0 = the overload's set
  bool main_dtypes = false;  // <...|main>: `dtypes` includes the overload's set
  Value def;
};

// Reads attribute `a` of kind `kind` (present, not None) as `a`'s schema type; throws
// sy::Unsupported naming the attribute if the kind doesn't fit.
Value read_attr(const sy::Attrs& attrs, const ArgSpec& a, SY_AttrKind kind);
const char* type_name(const ArgSpec& a);  // "int", "Tensor[]", ...
const char* kind_name(SY_AttrKind kind);  // "an int", "a string", ...

class Call;
using Fn = at::Tensor (*)(const Call&);
using FnMulti = std::vector<at::Tensor> (*)(const Call&);
struct Bound;
// Extra capability check, run by supports() after binding. Throw sy::Unsupported("why").
using CheckFn = void (*)(const Bound&);

struct Overload {
  std::string schema;    // as written in the table
  std::string op;        // "aten::max"
  std::string overload;  // "dim"
  std::string family;
  std::vector<ArgSpec> args;
  int returns = 1;  // -1: a tensor list (any number of outputs)
  DtypeMask dtypes = 0;
  Fn fn = nullptr;
  FnMulti fn_multi = nullptr;
  CheckFn check = nullptr;

  Overload& with_check(CheckFn c) {
    check = c;
    return *this;
  }
};

// Collects table lines; the plugin groups them by op name into kernels.
class Registry {
 public:
  void family(const char* name) { family_ = name; }
  Overload& def(const char* schema, DtypeMask dtypes, Fn fn);
  Overload& def(const char* schema, DtypeMask dtypes, FnMulti fn);
  const std::deque<Overload>& overloads() const { return overloads_; }

 private:
  Overload& add(const char* schema, DtypeMask dtypes);
  std::string family_ = "misc";
  std::deque<Overload> overloads_;  // deque: stable addresses
};

void register_elementwise_ops(Registry& r);
void register_index_ops(Registry& r);
void register_linalg_ops(Registry& r);
void register_loss_ops(Registry& r);
void register_nn_ops(Registry& r);
void register_pool_ops(Registry& r);
void register_reduce_ops(Registry& r);
void register_rnn_ops(Registry& r);
void register_shape_ops(Registry& r);

// ---- binding: one node's inputs and attributes matched to one overload ------------------
struct ArgBinding {
  int32_t slot = -1;  // first input slot used, -1 = none (attribute, default or absent)
  int32_t count = 0;  // input slots used (lists: any number)
  Value value;        // non-tensor value, or a constant tensor attribute
};

struct Bound {
  const Overload* ov = nullptr;
  std::vector<ArgBinding> args;
  const DLTensor* const* inputs = nullptr;  // metadata; valid during supports()/create only
  size_t num_inputs = 0;

  // Metadata of tensor argument k for check functions (NULL if absent or an attribute).
  const DLTensor* meta(size_t k) const {
    const ArgBinding& a = args.at(k);
    return a.slot >= 0 && static_cast<size_t>(a.slot) < num_inputs ? inputs[a.slot] : nullptr;
  }
};

// ---- the view an op function gets ------------------------------------------------------
// k is the argument's position in the schema.
class Call {
 public:
  Call(const Bound& b, const at::Tensor* in) : b_(b), in_(in) {}

  const at::Tensor& t(size_t k) const {
    const at::Tensor& x = tensor_or_undefined(k);
    if (!x.defined()) missing(k);
    return x;
  }
  c10::optional<at::Tensor> ot(size_t k) const {
    const at::Tensor& x = tensor_or_undefined(k);
    return x.defined() ? c10::optional<at::Tensor>(x) : c10::nullopt;
  }
  bool is_tensor(size_t k) const { return tensor_or_undefined(k).defined(); }
  // `Tensor|Scalar`: the tensor, or the scalar as a wrapped-number tensor (which takes
  // part in type promotion like a Python scalar does).
  at::Tensor tos(size_t k) const;
  std::vector<at::Tensor> list(size_t k) const;
  c10::List<c10::optional<at::Tensor>> opt_list(size_t k) const;

  bool none(size_t k) const { return v(k).kind == Value::kNone; }
  int64_t i(size_t k) const { return v(k).i; }
  c10::optional<int64_t> oi(size_t k) const { return none(k) ? c10::nullopt : c10::optional<int64_t>(i(k)); }
  double f(size_t k) const { return v(k).kind == Value::kInt ? double(v(k).i) : v(k).f; }
  c10::optional<double> of(size_t k) const { return none(k) ? c10::nullopt : c10::optional<double>(f(k)); }
  bool b(size_t k) const { return v(k).i != 0; }
  at::Scalar scalar(size_t k) const {
    const Value& x = v(k);
    return x.kind == Value::kFloat ? at::Scalar(x.f) : at::Scalar(x.i);
  }
  c10::optional<at::Scalar> oscalar(size_t k) const {
    return none(k) ? c10::nullopt : c10::optional<at::Scalar>(scalar(k));
  }
  at::IntArrayRef ints(size_t k) const { return v(k).ints; }
  at::OptionalIntArrayRef oints(size_t k) const {
    return none(k) ? at::OptionalIntArrayRef() : at::OptionalIntArrayRef(v(k).ints);
  }
  c10::optional<at::ArrayRef<double>> ofloats(size_t k) const {
    return none(k) ? c10::nullopt : c10::optional<at::ArrayRef<double>>(v(k).floats);
  }
  const std::string& s(size_t k) const { return v(k).s; }
  c10::optional<c10::string_view> os(size_t k) const {
    return none(k) ? c10::nullopt : c10::optional<c10::string_view>(v(k).s);
  }
  c10::optional<at::ScalarType> dtype(size_t k) const {
    return none(k) ? c10::nullopt : c10::optional<at::ScalarType>(static_cast<at::ScalarType>(v(k).i));
  }

 private:
  const Value& v(size_t k) const { return b_.args[k].value; }
  const at::Tensor& tensor_or_undefined(size_t k) const {
    const ArgBinding& a = b_.args[k];
    return a.slot >= 0 ? in_[a.slot] : a.value.t;
  }
  [[noreturn]] void missing(size_t k) const;

  const Bound& b_;
  const at::Tensor* in_;  // one per input slot; undefined where the input is NULL
};

// Tuple results -> output lists.
inline std::vector<at::Tensor> outs(const std::tuple<at::Tensor, at::Tensor>& r) {
  return {std::get<0>(r), std::get<1>(r)};
}
inline std::vector<at::Tensor> outs(const std::tuple<at::Tensor, at::Tensor, at::Tensor>& r) {
  return {std::get<0>(r), std::get<1>(r), std::get<2>(r)};
}

}  // namespace sy_aten
