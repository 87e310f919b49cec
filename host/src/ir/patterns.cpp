// Recognising decomposed layers (see patterns.hpp).
#include "ir/patterns.hpp"

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

struct RmsNorm {
  std::vector<int32_t> nodes;  // pow, mean, add, rsqrt, mul, mul (the last one kept)
  ValueId input = kNoValue, weight = kNoValue;
  double eps = 0;
};

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

}  // namespace

size_t recognise_patterns(Graph& graph, const std::function<bool(const std::string& op)>& offered) {
  if (!offered(kRmsNormOp)) return 0;
  const Readers readers(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t replaced = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (removed[n]) continue;
    const std::optional<RmsNorm> m = match_rms_norm(graph, readers, static_cast<int32_t>(n));
    if (!m) continue;
    bool free = true;  // no node of it taken by an earlier match
    for (int32_t k : m->nodes) free = free && !removed[static_cast<size_t>(k)];
    if (!free) continue;
    Node& last = graph.nodes[static_cast<size_t>(m->nodes.back())];
    Node fused;
    fused.name = last.name;
    fused.op = kRmsNormOp;
    fused.module_path = last.module_path;
    fused.inputs = {m->input, m->weight};
    fused.outputs = last.outputs;
    fused.attrs.emplace_back("eps", Attribute::of_float(m->eps));
    last = std::move(fused);
    for (size_t k = 0; k + 1 < m->nodes.size(); ++k) removed[static_cast<size_t>(m->nodes[k])] = true;
    ++replaced;
  }
  if (replaced == 0) return 0;
  std::vector<Node> kept;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (!removed[n]) kept.push_back(std::move(graph.nodes[n]));
  graph.nodes = std::move(kept);
  for (Value& v : graph.values)
    if (v.kind == ValueKind::NodeOutput) v.producer = -1;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (ValueId v : graph.nodes[n].outputs) graph.values[static_cast<size_t>(v)].producer = static_cast<int32_t>(n);
  return replaced;
}

}  // namespace switchyard::ir
