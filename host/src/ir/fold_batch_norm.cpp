// fold_batch_norm (see fold_batch_norm.hpp).
#include "ir/fold_batch_norm.hpp"

#include <cmath>
#include <vector>

namespace switchyard::ir {

namespace {

bool is_float32_constant(const Graph& g, ValueId v) {
  if (v == kNoValue) return false;
  const Value& value = g.values[static_cast<size_t>(v)];
  return value.kind == ValueKind::Constant && value.constant.defined() &&
         same_dtype(value.constant.dtype(), DLDataType{kDLFloat, 32, 1});
}

int64_t int_attr(const Node& n, const char* name, int64_t fallback) {
  const Attribute* a = find_attr(n.attrs, name);
  return a != nullptr && a->kind == AttrKind::Int && !a->bound() ? a->i : fallback;
}

bool is_foldable_conv(const Graph& g, const Node& conv) {
  static const char* kOps[] = {"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution",
                               "aten::_convolution"};
  bool known = false;
  for (const char* op : kOps) known = known || conv.op == op;
  if (!known || conv.outputs.size() != 1 || conv.inputs.size() < 2 || int_attr(conv, "transposed", 0) != 0)
    return false;
  const bool bias_ok = conv.inputs.size() < 3 || conv.inputs[2] == kNoValue || is_float32_constant(g, conv.inputs[2]);
  return is_float32_constant(g, conv.inputs[1]) && bias_ok;
}

// The batch norm's per-channel statistics, or false if any is not a float32 constant.
struct Stats {
  std::vector<double> scale, shift;  // y = x * scale + shift
};
bool read_stats(const Graph& g, const Node& bn, int64_t channels, Stats* out) {
  if (bn.op != "aten::batch_norm" || bn.inputs.size() < 5 || bn.outputs.size() != 1 || int_attr(bn, "training", 0) != 0)
    return false;
  const ValueId gamma = bn.inputs[1], beta = bn.inputs[2], mean = bn.inputs[3], var = bn.inputs[4];
  for (ValueId v : {mean, var})
    if (!is_float32_constant(g, v)) return false;
  for (ValueId v : {gamma, beta})
    if (v != kNoValue && !is_float32_constant(g, v)) return false;
  const Attribute* eps_attr = find_attr(bn.attrs, "eps");
  if (eps_attr != nullptr && (eps_attr->bound() || eps_attr->kind != AttrKind::Float)) return false;
  const double eps = eps_attr != nullptr ? eps_attr->f : 1e-5;
  auto values = [&](ValueId v, double fallback) {
    std::vector<double> out(static_cast<size_t>(channels), fallback);
    if (v == kNoValue) return out;
    const Tensor t = g.values[static_cast<size_t>(v)].constant.contiguous();
    for (int64_t c = 0; c < channels && c < t.numel(); ++c) out[static_cast<size_t>(c)] = t.data<float>()[c];
    return out;
  };
  for (ValueId v : {gamma, beta, mean, var})
    if (v != kNoValue && g.values[static_cast<size_t>(v)].constant.numel() != channels) return false;
  const auto w = values(gamma, 1.0), b = values(beta, 0.0), m = values(mean, 0.0), s2 = values(var, 1.0);
  out->scale.resize(static_cast<size_t>(channels));
  out->shift.resize(static_cast<size_t>(channels));
  for (size_t c = 0; c < out->scale.size(); ++c) {
    out->scale[c] = w[c] / std::sqrt(s2[c] + eps);
    out->shift[c] = b[c] - m[c] * out->scale[c];
  }
  return true;
}

// The folded weight and bias as new constants named after the convolution's.
void fold_into(Graph& g, Node& conv, const Stats& stats) {
  const Tensor weight = g.values[static_cast<size_t>(conv.inputs[1])].constant.contiguous();
  const int64_t channels = weight.shape()[0];
  const int64_t per_channel = channels == 0 ? 0 : weight.numel() / channels;
  Tensor w = Tensor::empty(weight.dtype(), weight.shape());
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < per_channel; ++k)
      w.data<float>()[c * per_channel + k] =
          static_cast<float>(weight.data<float>()[c * per_channel + k] * stats.scale[static_cast<size_t>(c)]);
  Tensor b = Tensor::empty(weight.dtype(), {channels});
  const bool has_bias = conv.inputs.size() >= 3 && conv.inputs[2] != kNoValue;
  const Tensor bias = has_bias ? g.values[static_cast<size_t>(conv.inputs[2])].constant.contiguous() : Tensor();
  for (int64_t c = 0; c < channels; ++c) {
    const double b0 = has_bias ? bias.data<float>()[c] : 0.0;
    b.data<float>()[c] =
        static_cast<float>(b0 * stats.scale[static_cast<size_t>(c)] + stats.shift[static_cast<size_t>(c)]);
  }
  const std::string base = conv.name.empty() ? "conv" : conv.name;
  const ValueId wv = g.add_constant(base + ".weight.bn_folded", w);
  const ValueId bv = g.add_constant(base + ".bias.bn_folded", b);
  conv.inputs[1] = wv;
  if (conv.inputs.size() < 3) conv.inputs.resize(3, kNoValue);
  conv.inputs[2] = bv;
}

}  // namespace

size_t fold_batch_norm(Graph& graph) {
  std::vector<int> uses(graph.values.size(), 0);
  std::vector<int32_t> reader(graph.values.size(), -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId v : graph.nodes[n].inputs)
      if (v != kNoValue) ++uses[static_cast<size_t>(v)], reader[static_cast<size_t>(v)] = static_cast<int32_t>(n);
    for (const auto& [name, attr] : graph.nodes[n].attrs)
      if (attr.bound()) ++uses[static_cast<size_t>(attr.ref)];
  }
  for (ValueId v : graph.outputs) uses[static_cast<size_t>(v)] += 2;  // a graph output keeps its value
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t folded = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (!is_foldable_conv(graph, graph.nodes[n])) continue;
    const ValueId mid = graph.nodes[n].outputs[0];
    if (uses[static_cast<size_t>(mid)] != 1) continue;
    const size_t bn_index = static_cast<size_t>(reader[static_cast<size_t>(mid)]);
    const Node& bn = graph.nodes[bn_index];
    Stats stats;
    const int64_t channels = graph.values[static_cast<size_t>(graph.nodes[n].inputs[1])].constant.shape()[0];
    if (bn.inputs[0] != mid || !read_stats(graph, bn, channels, &stats)) continue;
    fold_into(graph, graph.nodes[n], stats);  // may grow graph.values: take references after
    graph.nodes[n].outputs[0] = graph.nodes[bn_index].outputs[0];
    removed[bn_index] = true;
    ++folded;
  }
  if (folded > 0) remove_nodes(graph, removed);
  return folded;
}

}  // namespace switchyard::ir
