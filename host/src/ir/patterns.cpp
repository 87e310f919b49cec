// Recognising decomposed layers (see patterns.hpp).
#include "ir/patterns.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace switchyard::ir {
namespace {

// Who reads each value, once per reading node; graph outputs and bound attributes count as
// readers that are never removed.
struct Readers {
  explicit Readers(const Graph& g) : count(g.values.size(), 0), reader(g.values.size(), -1) {
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      for (ValueId v : g.nodes[n].inputs)
        if (v != kNoValue) ++count[static_cast<size_t>(v)], reader[static_cast<size_t>(v)] = static_cast<int32_t>(n);
      for (const auto& [name, attr] : g.nodes[n].attrs)
        if (attr.bound()) count[static_cast<size_t>(attr.ref)] += 2;
    }
    for (ValueId v : g.outputs) count[static_cast<size_t>(v)] += 2;
  }
  // The one node that reads `v`, or -1 when none or several do.
  int32_t only(ValueId v) const { return count[static_cast<size_t>(v)] == 1 ? reader[static_cast<size_t>(v)] : -1; }
  std::vector<int> count;
  std::vector<int32_t> reader;
};

const Attribute* attr(const Node& n, const std::string& name) {
  for (const auto& [key, value] : n.attrs)
    if (key == name) return &value;
  return nullptr;
}

std::optional<double> number(const Attribute* a) {
  if (a == nullptr) return std::nullopt;
  if (a->kind == AttrKind::Int) return static_cast<double>(a->i);
  if (a->kind == AttrKind::Float) return a->f;
  return std::nullopt;
}

bool is_none(const Attribute* a) { return a == nullptr || a->kind == AttrKind::None; }

// A constant of one float32 or float64 element: its value.
std::optional<double> scalar_constant(const Graph& g, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const Value& value = g.values[static_cast<size_t>(v)];
  if (value.kind != ValueKind::Constant || value.constant.numel() != 1) return std::nullopt;
  const DLDataType t = value.constant.dtype();
  if (t.code != kDLFloat || t.lanes != 1) return std::nullopt;
  if (t.bits == 32) return static_cast<double>(value.constant.data<float>()[0]);
  if (t.bits == 64) return value.constant.data<double>()[0];
  return std::nullopt;
}

// The node reading `v` alone, if its op is `op`.
const Node* sole_reader(const Graph& g, const Readers& r, ValueId v, const char* op, int32_t* index) {
  *index = r.only(v);
  if (*index < 0) return nullptr;
  const Node& n = g.nodes[static_cast<size_t>(*index)];
  return n.op == op && n.outputs.size() == 1 ? &n : nullptr;
}

// The input of a two-input node that is not `known`, or kNoValue when neither or both are.
ValueId other_input(const Node& n, ValueId known) {
  if (n.inputs.size() != 2) return kNoValue;
  if (n.inputs[0] == known && n.inputs[1] != known) return n.inputs[1];
  if (n.inputs[1] == known && n.inputs[0] != known) return n.inputs[0];
  return kNoValue;
}

// A matched subgraph: its nodes (the last one becomes the new node) and that node.
struct Match {
  std::vector<int32_t> nodes;
  Node replacement;
  std::vector<std::pair<ValueId, ValueId>> renames;  // removed value -> the one its sym::size readers read
};

struct RmsNorm {
  std::vector<int32_t> nodes;  // pow, mean, add, rsqrt, mul, mul (the last one kept)
  ValueId input = kNoValue, weight = kNoValue;
  double eps = 0;
};

bool is_constant_matrix(const Graph& g, ValueId v) {
  if (v == kNoValue) return false;
  const Value& value = g.values[static_cast<size_t>(v)];
  return value.kind == ValueKind::Constant && value.constant.dim() == 2;
}

// A linear without bias on a constant weight: its input and weight.
bool plain_linear(const Graph& g, const Node& n, ValueId* input, ValueId* weight) {
  if (n.op != "aten::linear" || n.inputs.size() < 2 || n.outputs.size() != 1 || !n.attrs.empty()) return false;
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) return false;
  *input = n.inputs[0];
  *weight = n.inputs[1];
  return is_constant_matrix(g, *weight);
}

// linear(x, Wg) -> silu -> mul(., linear(x, Wu)), from the silu.
std::optional<Match> match_swiglu(const Graph& g, const Readers& r, int32_t silu_index) {
  const Node& silu = g.nodes[static_cast<size_t>(silu_index)];
  if (silu.op != "aten::silu" || silu.inputs.size() != 1 || silu.outputs.size() != 1) return std::nullopt;
  const Value& gate_out = g.values[static_cast<size_t>(silu.inputs[0])];
  if (gate_out.kind != ValueKind::NodeOutput || r.only(silu.inputs[0]) != silu_index) return std::nullopt;
  const int32_t gate_index = gate_out.producer;
  ValueId x = kNoValue, wg = kNoValue, xu = kNoValue, wu = kNoValue;
  if (gate_index < 0 || !plain_linear(g, g.nodes[static_cast<size_t>(gate_index)], &x, &wg)) return std::nullopt;
  int32_t mul_index = -1;
  const Node* mul = sole_reader(g, r, silu.outputs[0], "aten::mul", &mul_index);
  if (!mul) return std::nullopt;
  const ValueId up_out = other_input(*mul, silu.outputs[0]);
  if (up_out == kNoValue || r.only(up_out) != mul_index) return std::nullopt;
  const Value& up_value = g.values[static_cast<size_t>(up_out)];
  if (up_value.kind != ValueKind::NodeOutput || up_value.producer < 0) return std::nullopt;
  const int32_t up_index = up_value.producer;
  if (!plain_linear(g, g.nodes[static_cast<size_t>(up_index)], &xu, &wu) || xu != x) return std::nullopt;
  const Tensor& gate_w = g.values[static_cast<size_t>(wg)].constant;
  const Tensor& up_w = g.values[static_cast<size_t>(wu)].constant;
  if (gate_w.shape() != up_w.shape() || !same_dtype(gate_w.dtype(), up_w.dtype())) return std::nullopt;
  Match m;
  m.nodes = {gate_index, silu_index, up_index, mul_index};
  m.replacement.name = mul->name;
  m.replacement.op = kSwigluOp;
  m.replacement.module_path = mul->module_path;
  m.replacement.inputs = {x, wg, wu};
  m.replacement.outputs = mul->outputs;
  return m;
}

// pow(x, 2) -> mean(-1, keepdim) -> add(eps) -> rsqrt -> mul(x, .) -> mul(weight, .), from the pow.
std::optional<RmsNorm> match_rms_norm(const Graph& g, const Readers& r, int32_t pow_index) {
  const Node& pow = g.nodes[static_cast<size_t>(pow_index)];
  if (pow.op != "aten::pow" || pow.inputs.size() != 1 || pow.outputs.size() != 1) return std::nullopt;
  if (number(attr(pow, "exponent")) != 2.0) return std::nullopt;
  RmsNorm m;
  m.input = pow.inputs[0];
  m.nodes.push_back(pow_index);
  int32_t at = -1;
  const Node* mean = sole_reader(g, r, pow.outputs[0], "aten::mean", &at);
  if (!mean || mean->inputs.size() != 1) return std::nullopt;
  const Attribute* dim = attr(*mean, "dim");
  if (!dim || dim->kind != AttrKind::Ints || dim->ints != std::vector<int64_t>{-1}) return std::nullopt;
  if (number(attr(*mean, "keepdim")) != 1.0 || !is_none(attr(*mean, "dtype"))) return std::nullopt;
  m.nodes.push_back(at);
  const Node* add = sole_reader(g, r, mean->outputs[0], "aten::add", &at);
  if (!add) return std::nullopt;
  const std::optional<double> eps = scalar_constant(g, other_input(*add, mean->outputs[0]));
  const Attribute* alpha = attr(*add, "alpha");
  if (!eps || !(*eps >= 0) || (alpha != nullptr && number(alpha) != 1.0)) return std::nullopt;
  m.eps = *eps;
  m.nodes.push_back(at);
  const Node* rsqrt = sole_reader(g, r, add->outputs[0], "aten::rsqrt", &at);
  if (!rsqrt) return std::nullopt;
  m.nodes.push_back(at);
  const Node* scale = sole_reader(g, r, rsqrt->outputs[0], "aten::mul", &at);
  if (!scale || other_input(*scale, rsqrt->outputs[0]) != m.input) return std::nullopt;
  m.nodes.push_back(at);
  const Node* weigh = sole_reader(g, r, scale->outputs[0], "aten::mul", &at);
  if (!weigh) return std::nullopt;
  m.weight = other_input(*weigh, scale->outputs[0]);
  if (m.weight == kNoValue) return std::nullopt;
  const Value& w = g.values[static_cast<size_t>(m.weight)];
  if (w.kind != ValueKind::Constant || w.constant.dim() != 1) return std::nullopt;  // a per-feature weight
  m.nodes.push_back(at);
  return m;
}

// An int attribute's value or the scalar it is bound to: equal when both are the same.
bool same_int(const Attribute* a, const Attribute* b) {
  if (a == nullptr || b == nullptr || a->kind != AttrKind::Int || b->kind != AttrKind::Int) return false;
  return a->bound() ? a->ref == b->ref : !b->bound() && a->i == b->i;
}

bool literal(const Attribute* a, int64_t v) {
  return a != nullptr && a->kind == AttrKind::Int && !a->bound() && a->i == v;
}

// slice(x, dim, start, end, step 1) of `x`: its dim, or nullopt.
std::optional<int64_t> slice_of(const Node& n, ValueId x) {
  if (n.op != "aten::slice" || n.inputs.size() != 1 || n.inputs[0] != x || n.outputs.size() != 1) return std::nullopt;
  const Attribute* dim = attr(n, "dim");
  if (dim == nullptr || dim->kind != AttrKind::Int || dim->bound() || !literal(attr(n, "step"), 1)) return std::nullopt;
  return dim->i;
}

// The node that makes `v`, if `r` says its only reader is `reader`.
const Node* producer_read_by(const Graph& g, const Readers& r, ValueId v, int32_t reader, int32_t* index) {
  if (v == kNoValue || r.only(v) != reader) return nullptr;
  const Value& value = g.values[static_cast<size_t>(v)];
  if (value.kind != ValueKind::NodeOutput || value.producer < 0) return nullptr;
  *index = value.producer;
  return &g.nodes[static_cast<size_t>(value.producer)];
}

// add(mul(x, cos), mul(cat([neg(x[half:]), x[:half]]), sin)), from the add.
std::optional<Match> match_rotary(const Graph& g, const Readers& r, int32_t add_index) {
  const Node& add = g.nodes[static_cast<size_t>(add_index)];
  if (add.op != "aten::add" || add.inputs.size() != 2 || add.outputs.size() != 1) return std::nullopt;
  const Attribute* alpha = attr(add, "alpha");
  if (alpha != nullptr && number(alpha) != 1.0) return std::nullopt;
  for (int side = 0; side < 2; ++side) {  // which of the add's inputs is the rotated half's product
    int32_t m0 = -1, m1 = -1, cat_index = -1, neg_index = -1, s0 = -1, s1 = -1;
    const Node* plain = producer_read_by(g, r, add.inputs[static_cast<size_t>(1 - side)], add_index, &m0);
    const Node* rotated = producer_read_by(g, r, add.inputs[static_cast<size_t>(side)], add_index, &m1);
    if (!plain || !rotated || plain->op != "aten::mul" || rotated->op != "aten::mul" || plain->inputs.size() != 2 ||
        rotated->inputs.size() != 2)
      continue;
    for (int c = 0; c < 2; ++c) {  // mul(cat, sin) or mul(sin, cat)
      const Node* cat = producer_read_by(g, r, rotated->inputs[static_cast<size_t>(c)], m1, &cat_index);
      if (!cat || cat->op != "aten::cat" || cat->inputs.size() != 2) continue;
      const Attribute* cat_dim = attr(*cat, "dim");
      if (cat_dim == nullptr || cat_dim->kind != AttrKind::Int || cat_dim->bound()) continue;
      const Node* neg = producer_read_by(g, r, cat->inputs[0], cat_index, &neg_index);
      const Node* first = producer_read_by(g, r, cat->inputs[1], cat_index, &s0);
      if (!neg || !first || neg->op != "aten::neg" || neg->inputs.size() != 1) continue;
      const Node* second = producer_read_by(g, r, neg->inputs[0], neg_index, &s1);
      if (!second) continue;
      const ValueId x = first->inputs.empty() ? kNoValue : first->inputs[0];
      const std::optional<int64_t> d0 = slice_of(*first, x), d1 = slice_of(*second, x);
      if (!d0 || !d1 || *d0 != *d1 || !literal(attr(*first, "start"), 0) || !literal(attr(*second, "end"), INT64_MAX) ||
          !same_int(attr(*first, "end"), attr(*second, "start")))
        continue;
      const ValueId sin = rotated->inputs[static_cast<size_t>(1 - c)];
      const ValueId cos = other_input(*plain, x);
      if (cos == kNoValue) continue;
      Match m;
      m.nodes = {m0, s0, s1, neg_index, cat_index, m1, add_index};
      m.replacement.name = add.name;
      m.replacement.op = kRotaryOp;
      m.replacement.module_path = add.module_path;
      m.replacement.inputs = {x, cos, sin};
      m.replacement.outputs = add.outputs;
      m.replacement.attrs = {{"dim", Attribute::of_int(*d0)}, {"cat_dim", *cat_dim}, {"half", *attr(*first, "end")}};
      return m;
    }
  }
  return std::nullopt;
}

// The sym::list node making the value an attribute is bound to, with `n` entries.
const Node* sym_list(const Graph& g, const Attribute* a, size_t n) {
  if (a == nullptr || !a->bound()) return nullptr;
  const Value& v = g.values[static_cast<size_t>(a->ref)];
  if (v.producer < 0) return nullptr;
  const Node& list = g.nodes[static_cast<size_t>(v.producer)];
  return list.op == "sym::list" && list.inputs.size() == n ? &list : nullptr;
}

// Follows slices over a whole dim (start 0, end max, step 1) back to what they view, each
// read by the one before alone; adds them to `nodes`.
ValueId through_full_slices(const Graph& g, const Readers& r, ValueId v, int32_t reader, std::vector<int32_t>& nodes) {
  for (;;) {
    int32_t at = -1;
    const Node* n = producer_read_by(g, r, v, reader, &at);
    if (!n || n->op != "aten::slice" || n->inputs.size() != 1 || !literal(attr(*n, "start"), 0) ||
        !literal(attr(*n, "end"), INT64_MAX) || !literal(attr(*n, "step"), 1))
      return v;
    nodes.push_back(at);
    v = n->inputs[0];
    reader = at;
  }
}

// repeat_kv: reshape(expand(unsqueeze(x, 2), [B, H, g, S, D]), [B, H * g, S, D]) (full
// slices between them) of the value read by `reader` alone: x, with the nodes in `nodes`.
ValueId repeated_kv(const Graph& g, const Readers& r, ValueId v, int32_t reader, std::vector<int32_t>& nodes) {
  int32_t at = -1;
  const Node* reshape = producer_read_by(g, r, v, reader, &at);
  if (!reshape || reshape->op != "aten::reshape" || reshape->inputs.size() != 1) return kNoValue;
  nodes.push_back(at);
  const Node* merged = sym_list(g, attr(*reshape, "shape"), 4);
  int32_t expand_at = -1;
  const Node* expand = producer_read_by(g, r, reshape->inputs[0], at, &expand_at);
  if (!merged || !expand || expand->op != "aten::expand" || expand->inputs.size() != 1) return kNoValue;
  nodes.push_back(expand_at);
  const Node* sizes = sym_list(g, attr(*expand, "size"), 5);
  if (!sizes || !literal(attr(*expand, "implicit"), 0)) return kNoValue;
  // [B, H * g, S, D] from [B, H, g, S, D]: the same B, S and D, and H * g a product of those two.
  const Value& product = g.values[static_cast<size_t>(merged->inputs[1])];
  const Node* mul = product.producer >= 0 ? &g.nodes[static_cast<size_t>(product.producer)] : nullptr;
  if (merged->inputs[0] != sizes->inputs[0] || merged->inputs[2] != sizes->inputs[3] ||
      merged->inputs[3] != sizes->inputs[4] || !mul || mul->op != "sym::mul" ||
      mul->inputs != std::vector<ValueId>{sizes->inputs[1], sizes->inputs[2]})
    return kNoValue;
  int32_t unsqueeze_at = -1;
  const ValueId below = through_full_slices(g, r, expand->inputs[0], expand_at, nodes);
  const int32_t above = nodes.back();
  const Node* unsqueeze = producer_read_by(g, r, below, above, &unsqueeze_at);
  if (!unsqueeze || unsqueeze->op != "aten::unsqueeze" || !literal(attr(*unsqueeze, "dim"), 2)) return kNoValue;
  nodes.push_back(unsqueeze_at);
  return through_full_slices(g, r, unsqueeze->inputs[0], unsqueeze_at, nodes);
}

// matmul(to(softmax(add(div(matmul(q, transpose(repeat_kv(k), 2, 3)), c), mask), -1)),
// repeat_kv(v)), from the last matmul; the to (float32) and the add are optional.
std::optional<Match> match_grouped_attention(const Graph& g, const Readers& r, int32_t out_index) {
  const Node& out = g.nodes[static_cast<size_t>(out_index)];
  if (out.op != "aten::matmul" || out.inputs.size() != 2 || out.outputs.size() != 1) return std::nullopt;
  std::vector<int32_t> nodes;
  int32_t at = -1;
  const Node* n = producer_read_by(g, r, out.inputs[0], out_index, &at);
  if (n && n->op == "aten::to" && n->inputs.size() == 1 && literal(attr(*n, "dtype"), 6) &&
      literal(attr(*n, "copy"), 0)) {  // a float32 softmax's .to(float32): itself
    nodes.push_back(at);
    n = producer_read_by(g, r, n->inputs[0], at, &at);
  }
  if (!n || n->op != "aten::softmax" || !literal(attr(*n, "dim"), -1) ||
      !(is_none(attr(*n, "dtype")) || literal(attr(*n, "dtype"), 6)))
    return std::nullopt;
  nodes.push_back(at);
  ValueId mask = kNoValue;
  n = producer_read_by(g, r, n->inputs[0], at, &at);
  if (n && n->op == "aten::add" && n->inputs.size() == 2 && number(attr(*n, "alpha")).value_or(1.0) == 1.0) {
    nodes.push_back(at);
    mask = n->inputs[1];
    n = producer_read_by(g, r, n->inputs[0], at, &at);
  }
  if (!n || n->op != "aten::div" || n->inputs.size() != 2) return std::nullopt;
  const std::optional<double> divisor = scalar_constant(g, n->inputs[1]);
  if (!divisor || !(*divisor > 0)) return std::nullopt;
  nodes.push_back(at);
  const Node* scores = producer_read_by(g, r, n->inputs[0], at, &at);
  if (!scores || scores->op != "aten::matmul" || scores->inputs.size() != 2) return std::nullopt;
  const int32_t scores_at = at;
  nodes.push_back(at);
  const Node* kt = producer_read_by(g, r, scores->inputs[1], scores_at, &at);
  if (!kt || kt->op != "aten::transpose" || !literal(attr(*kt, "dim0"), 2) || !literal(attr(*kt, "dim1"), 3))
    return std::nullopt;
  nodes.push_back(at);
  const ValueId k = repeated_kv(g, r, kt->inputs[0], at, nodes);
  const ValueId v = repeated_kv(g, r, out.inputs[1], out_index, nodes);
  if (k == kNoValue || v == kNoValue) return std::nullopt;
  std::sort(nodes.begin(), nodes.end());
  nodes.push_back(out_index);
  Match m;
  m.nodes = nodes;
  m.replacement.name = out.name;
  m.replacement.op = kSdpaOp;
  m.replacement.module_path = out.module_path;
  m.replacement.inputs = {scores->inputs[0], k, v, mask};
  m.replacement.outputs = out.outputs;
  m.replacement.attrs = {{"dropout_p", Attribute::of_float(0.0)},
                         {"is_causal", Attribute::of_int(0)},
                         {"scale", Attribute::of_float(1.0 / *divisor)},
                         {"enable_gqa", Attribute::of_int(1)}};
  return m;
}

// The node that makes `v` (any readers), or nullptr for an input or a constant.
const Node* producer_of(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& value = g.values[static_cast<size_t>(v)];
  if (value.kind != ValueKind::NodeOutput || value.producer < 0) return nullptr;
  return &g.nodes[static_cast<size_t>(value.producer)];
}

// Is `v` sym::size(of, dim) of a rank-4 `of` (dim counted from either end)?
bool is_size_of(const Graph& g, ValueId v, ValueId of, int64_t dim) {
  const Node* n = producer_of(g, v);
  return n != nullptr && n->op == "sym::size" && n->inputs.size() == 1 && n->inputs[0] == of &&
         (literal(attr(*n, "dim"), dim) || literal(attr(*n, "dim"), dim - 4));
}

std::optional<int64_t> sym_constant(const Graph& g, ValueId v) {
  const Node* n = producer_of(g, v);
  const Attribute* a = n != nullptr && n->op == "sym::const" ? attr(*n, "value") : nullptr;
  if (a == nullptr || a->kind != AttrKind::Int || a->bound()) return std::nullopt;
  return a->i;
}

// The sym::list of `n` entries that a view or reshape's target shape is bound to.
const Node* view_shape(const Graph& g, const Node& n, size_t entries) {
  if (n.inputs.size() != 1 || n.outputs.size() != 1) return nullptr;
  if (n.op == "aten::view") return sym_list(g, attr(n, "size"), entries);
  if (n.op == "aten::reshape") return sym_list(g, attr(n, "shape"), entries);
  return nullptr;
}

// [N, _, H, W] of rank-4 `x`: entries 0, 2 and 3 of a 4-entry list are x's sizes (entry
// 1 then follows from the element count), or entries 0, 3 and 4 of a 5-entry one.
bool keeps_batch_and_image(const Graph& g, const Node& list, ValueId x) {
  const size_t h = list.inputs.size() - 2;
  return is_size_of(g, list.inputs[0], x, 0) && is_size_of(g, list.inputs[h], x, 2) &&
         is_size_of(g, list.inputs[h + 1], x, 3);
}

// Whether every reader of `v` but `reader` is a sym::size (of its shape, not its values).
bool only_sizes_besides(const Graph& g, const Readers& r, ValueId v, size_t reader) {
  int sizes = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (n == reader || std::find(g.nodes[n].inputs.begin(), g.nodes[n].inputs.end(), v) == g.nodes[n].inputs.end())
      continue;
    if (g.nodes[n].op != "sym::size") return false;
    ++sizes;
  }
  return r.count[static_cast<size_t>(v)] == sizes + 1;  // no graph output, no bound attribute
}

// view(contiguous(transpose(view(x, [N, g, C/g, H, W]), 1, 2)), [N, C, H, W]) (contiguous
// optional, reshape for view), from the first view; x a cat along channels is folded in.
std::optional<Match> match_channel_shuffle(const Graph& g, const Readers& r, int32_t view_index) {
  const Node& split = g.nodes[static_cast<size_t>(view_index)];
  const Node* split_shape = view_shape(g, split, 5);
  if (split_shape == nullptr) return std::nullopt;
  const ValueId x = split.inputs[0];
  const std::optional<int64_t> groups = sym_constant(g, split_shape->inputs[1]);
  if (!groups || *groups < 1 || !keeps_batch_and_image(g, *split_shape, x)) return std::nullopt;
  Match m;
  m.nodes = {view_index};
  int32_t at = -1;
  const Node* t = sole_reader(g, r, split.outputs[0], "aten::transpose", &at);
  if (!t || !((literal(attr(*t, "dim0"), 1) && literal(attr(*t, "dim1"), 2)) ||
              (literal(attr(*t, "dim0"), 2) && literal(attr(*t, "dim1"), 1))))
    return std::nullopt;
  m.nodes.push_back(at);
  ValueId shuffled = t->outputs[0];
  if (const Node* c = sole_reader(g, r, shuffled, "aten::contiguous", &at)) {
    m.nodes.push_back(at);
    shuffled = c->outputs[0];
  }
  at = r.only(shuffled);
  const Node* merge = at >= 0 ? &g.nodes[static_cast<size_t>(at)] : nullptr;
  const Node* merged_shape = merge != nullptr ? view_shape(g, *merge, 4) : nullptr;
  if (merged_shape == nullptr || !keeps_batch_and_image(g, *merged_shape, x)) return std::nullopt;
  m.nodes.push_back(at);
  m.replacement.name = merge->name;
  m.replacement.op = kChannelShuffleOp;
  m.replacement.module_path = merge->module_path;
  m.replacement.inputs = {x};
  m.replacement.outputs = merge->outputs;
  m.replacement.attrs = {{"groups", Attribute::of_int(*groups)}};
  const Node* cat = producer_of(g, x);
  if (cat != nullptr && cat->op == "aten::cat" && cat->outputs.size() == 1 &&
      (literal(attr(*cat, "dim"), 1) || literal(attr(*cat, "dim"), -3)) &&
      only_sizes_besides(g, r, x, static_cast<size_t>(view_index))) {
    m.replacement.inputs = cat->inputs;
    m.nodes.push_back(g.values[static_cast<size_t>(x)].producer);  // kept there: before the sizes read
    m.renames.emplace_back(x, merge->outputs[0]);                  // the sizes of the same [N, C, H, W]
  }
  return m;
}

std::optional<Match> match_rms_norm_node(const Graph& g, const Readers& r, int32_t pow_index) {
  const std::optional<RmsNorm> m = match_rms_norm(g, r, pow_index);
  if (!m) return std::nullopt;
  const Node& last = g.nodes[static_cast<size_t>(m->nodes.back())];
  Match out;
  out.nodes = m->nodes;
  out.replacement.name = last.name;
  out.replacement.op = kRmsNormOp;
  out.replacement.module_path = last.module_path;
  out.replacement.inputs = {m->input, m->weight};
  out.replacement.outputs = last.outputs;
  out.replacement.attrs.emplace_back("eps", Attribute::of_float(m->eps));
  return out;
}

}  // namespace

size_t recognise_patterns(Graph& graph, const std::function<bool(const Node& replacement)>& routed) {
  using Matcher = std::optional<Match> (*)(const Graph&, const Readers&, int32_t);
  const Matcher matchers[] = {match_rms_norm_node, match_swiglu, match_rotary, match_grouped_attention,
                              match_channel_shuffle};
  const Readers readers(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t replaced = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (Matcher match : matchers) {
      if (removed[n]) break;
      std::optional<Match> m = match(graph, readers, static_cast<int32_t>(n));
      if (!m) continue;
      bool free = true;  // no node of it taken by an earlier match
      for (int32_t k : m->nodes) free = free && !removed[static_cast<size_t>(k)];
      if (!free || !routed(m->replacement)) continue;
      graph.nodes[static_cast<size_t>(m->nodes.back())] = std::move(m->replacement);
      for (const auto& [from, to] : m->renames)
        for (Node& node : graph.nodes) std::replace(node.inputs.begin(), node.inputs.end(), from, to);
      for (size_t k = 0; k + 1 < m->nodes.size(); ++k) removed[static_cast<size_t>(m->nodes[k])] = true;
      ++replaced;
    }
  }
  if (replaced > 0) remove_nodes(graph, removed);
  return replaced;
}

}  // namespace switchyard::ir
