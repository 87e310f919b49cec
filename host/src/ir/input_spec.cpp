// Input specs (input_spec.hpp): each graph input's first consumers, reached through ops
// that keep its shape, say what its rank and some of its sizes must be. One table entry
// per kind of consumer.
#include "ir/input_spec.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace switchyard::ir {
namespace {

struct Use {
  const Node* node;
  size_t position;  // index into node->inputs
};

// What one consumer fixes about the value it reads.
struct Fix {
  int64_t rank = -1;
  std::vector<InputSpec::Fixed> dims;
  std::string layout;  // "conv", "seq_first", "batch_first" or "" (names by rank)
};

const Value* constant_at(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return nullptr;
  const Value& v = g.values[static_cast<size_t>(n.inputs[i])];
  return v.kind == ValueKind::Constant && v.constant.defined() ? &v : nullptr;
}

bool literal_int(const Node& n, const char* name, int64_t* out) {
  const Attribute* a = find_attr(n.attrs, name);
  if (a == nullptr || a->bound() || a->kind != AttrKind::Int) return false;
  *out = a->i;
  return true;
}

// A weight's name for messages, else the node's.
std::string by(const Value* weight, const Node& n) { return weight != nullptr ? weight->name : n.name; }

// Ops whose output has their first input's shape (element-wise with scalars, activations).
bool keeps_shape(const Graph& g, const Node& n, size_t position) {
  static const std::unordered_set<std::string> unary = {
      "aten::relu",       "aten::relu_",       "aten::gelu",         "aten::silu",
      "aten::sigmoid",    "aten::tanh",        "aten::hardswish",    "aten::hardsigmoid",
      "aten::leaky_relu", "aten::elu",         "aten::dropout",      "aten::feature_dropout",
      "aten::contiguous", "aten::clone",       "aten::to",           "aten::type_as",
      "aten::neg",        "aten::abs",         "aten::exp",          "aten::hardtanh",
      "aten::relu6",      "aten::masked_fill", "aten::masked_fill_", "aten::detach",
      "aten::alias"};
  static const std::unordered_set<std::string> with_scalar = {"aten::mul",  "aten::add",  "aten::sub",  "aten::div",
                                                              "aten::mul_", "aten::add_", "aten::sub_", "aten::div_"};
  if (position != 0 || n.outputs.empty()) return false;
  if (unary.count(n.op)) return true;
  if (!with_scalar.count(n.op)) return false;
  // The other operand is an attribute, or a one-element constant: no broadcasting.
  if (n.inputs.size() < 2 || n.inputs[1] == kNoValue) return true;
  const Value* other = constant_at(g, n, 1);
  return other != nullptr && other->constant.numel() == 1 && other->constant.dim() <= 1;
}

// What consumer `u` of a value fixes about it.
Fix fix_of(const Graph& g, const Use& u) {
  const Node& n = *u.node;
  const std::string& op = n.op;
  Fix f;
  auto dim = [&](int64_t d, int64_t size, std::string who) { f.dims.push_back({d, size, std::move(who)}); };
  static const std::unordered_set<std::string> convs = {"aten::conv1d", "aten::conv2d", "aten::conv3d",
                                                        "aten::convolution", "aten::_convolution"};
  static const std::unordered_set<std::string> transposed_convs = {"aten::conv_transpose1d", "aten::conv_transpose2d",
                                                                   "aten::conv_transpose3d"};
  if ((convs.count(op) || transposed_convs.count(op)) && u.position == 0) {
    const Value* w = constant_at(g, n, 1);
    if (w == nullptr || w->constant.dim() < 3) return f;
    int64_t groups = 1, transposed = transposed_convs.count(op) ? 1 : 0;
    literal_int(n, "groups", &groups);
    literal_int(n, "transposed", &transposed);
    const auto& ws = w->constant.shape();
    const int64_t channels = transposed ? ws[0] : ws[1] * std::max<int64_t>(groups, 1);
    // conv1d/2d/3d and conv_transposeNd also take an unbatched input (one dim fewer), as
    // in PyTorch; convolution and _convolution (what traces record) do not.
    if (op == "aten::convolution" || op == "aten::_convolution") {
      f.rank = static_cast<int64_t>(ws.size());
      dim(1, channels, w->name);
      f.layout = "conv";
    } else {
      dim(1 - static_cast<int64_t>(ws.size()), channels, w->name);  // the channel dim, from the back
    }
  } else if (op == "aten::linear" && u.position == 0) {
    if (const Value* w = constant_at(g, n, 1); w != nullptr && w->constant.dim() == 2)
      dim(-1, w->constant.shape()[1], w->name);
  } else if ((op == "aten::matmul" || op == "aten::mm") && u.position == 0) {
    if (const Value* w = constant_at(g, n, 1); w != nullptr && w->constant.dim() == 2) {
      dim(-1, w->constant.shape()[0], w->name);
      if (op == "aten::mm") f.rank = 2;
    }
  } else if (op == "aten::addmm" && u.position == 1) {
    if (const Value* w = constant_at(g, n, 2); w != nullptr && w->constant.dim() == 2) {
      f.rank = 2;
      dim(1, w->constant.shape()[0], w->name);
    }
  } else if ((op == "aten::layer_norm" || op == "aten::rms_norm") && u.position == 0) {
    const Attribute* shape = find_attr(n.attrs, "normalized_shape");
    if (shape != nullptr && !shape->bound() && shape->kind == AttrKind::Ints) {
      const Value* w = constant_at(g, n, 1);
      const int64_t k = static_cast<int64_t>(shape->ints.size());
      for (int64_t i = 0; i < k; ++i) dim(i - k, shape->ints[static_cast<size_t>(i)], by(w, n));
    }
  } else if (op == "aten::group_norm" && u.position == 0) {
    if (const Value* w = constant_at(g, n, 1); w != nullptr && w->constant.dim() == 1)
      dim(1, w->constant.shape()[0], w->name);
  } else if ((op == "aten::batch_norm" || op == "aten::instance_norm" ||
              op == "aten::_native_batch_norm_legit_no_training" || op == "aten::native_batch_norm") &&
             u.position == 0) {
    for (size_t i : {size_t{1}, size_t{3}})  // weight, else running_mean
      if (const Value* w = constant_at(g, n, i); w != nullptr && w->constant.dim() == 1) {
        dim(1, w->constant.shape()[0], w->name);
        break;
      }
  } else if ((op == "aten::lstm" || op == "aten::gru" || op == "aten::rnn_tanh" || op == "aten::rnn_relu") &&
             u.position == 0) {
    int64_t hx = op == "aten::lstm" ? 2 : 1, batch_first = 0;
    literal_int(n, "hx.len", &hx);
    literal_int(n, "batch_first", &batch_first);
    if (const Value* w = constant_at(g, n, static_cast<size_t>(1 + hx)); w != nullptr && w->constant.dim() == 2) {
      f.rank = 3;
      dim(2, w->constant.shape()[1], w->name);
      f.layout = batch_first ? "batch_first" : "seq_first";
    }
  } else if ((op == "aten::lstm" || op == "aten::gru" || op == "aten::rnn_tanh" || op == "aten::rnn_relu") &&
             u.position >= 1) {  // an initial state: [layers * directions, B, hidden]
    int64_t hx = op == "aten::lstm" ? 2 : 1, layers = 0, bidirectional = 0;
    literal_int(n, "hx.len", &hx);
    literal_int(n, "num_layers", &layers);
    literal_int(n, "bidirectional", &bidirectional);
    const Value* w_hh = constant_at(g, n, static_cast<size_t>(2 + hx));
    if (u.position <= static_cast<size_t>(hx) && layers > 0 && w_hh != nullptr && w_hh->constant.dim() == 2) {
      f.rank = 3;
      dim(0, layers * (bidirectional ? 2 : 1), n.name);
      dim(2, w_hh->constant.shape()[1], w_hh->name);
      f.layout = "state";
    }
  } else if ((op == "aten::_transformer_encoder_layer_fwd" && u.position == 0) ||
             (op == "aten::_native_multi_head_attention" && u.position <= 2)) {
    int64_t embed = 0;
    if (literal_int(n, "embed_dim", &embed)) dim(-1, embed, n.name);
  }
  return f;
}

std::vector<std::string> names_for(int64_t rank, const std::string& layout) {
  if (layout == "batch_first") return {"B", "S", "F"};
  if (layout == "seq_first") return {"S", "B", "F"};
  if (layout == "conv" && rank == 3) return {"B", "C", "L"};
  if (layout == "state") return {"L", "B", "H"};
  switch (rank) {
    case 0: return {};
    case 1: return {"N"};
    case 2: return {"B", "S"};
    case 3: return {"B", "S", "D"};
    case 4: return {"B", "C", "H", "W"};
    case 5: return {"B", "C", "D", "H", "W"};
    default: {
      std::vector<std::string> names;
      for (int64_t i = 0; i < rank; ++i) names.push_back("d" + std::to_string(i));
      return names;
    }
  }
}

InputSpec derive(const Graph& g, ValueId input) {
  std::unordered_map<ValueId, std::vector<Use>> uses;
  for (const Node& n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (n.inputs[i] != kNoValue) uses[n.inputs[i]].push_back({&n, i});
  InputSpec spec;
  std::string layout;
  std::vector<ValueId> todo{input};
  std::unordered_set<ValueId> seen{input};
  for (size_t k = 0; k < todo.size() && k < 64; ++k) {
    for (const Use& u : uses[todo[k]]) {
      Fix f = fix_of(g, u);
      if (f.rank >= 0 && spec.rank < 0) {
        spec.rank = f.rank;
        spec.rank_by = f.dims.empty() ? u.node->name : f.dims.front().by;
        layout = f.layout;
      }
      for (const InputSpec::Fixed& d : f.dims) {
        bool known = false;
        for (const InputSpec::Fixed& e : spec.fixed) known = known || e.dim == d.dim;
        if (!known) spec.fixed.push_back(d);
      }
      if (keeps_shape(g, *u.node, u.position) && seen.insert(u.node->outputs[0]).second)
        todo.push_back(u.node->outputs[0]);
    }
  }
  if (spec.rank >= 0) {
    for (InputSpec::Fixed& d : spec.fixed)
      if (d.dim < 0) d.dim += spec.rank;
    spec.dim_names = names_for(spec.rank, layout);
  }
  return spec;
}

}  // namespace

InputSpec input_spec(const Graph& graph, size_t input_index) {
  const ValueId id = graph.inputs.at(input_index);
  const Value& value = graph.values[static_cast<size_t>(id)];
  InputSpec spec = derive(graph, id);
  const bool declared_rank = value.rank_known || !value.shape.empty();
  if (declared_rank && spec.rank != static_cast<int64_t>(value.shape.size())) {
    const int64_t rank = static_cast<int64_t>(value.shape.size());
    std::vector<InputSpec::Fixed> fixed;
    for (InputSpec::Fixed d : spec.fixed) {
      if (d.dim < 0 && spec.rank < 0) d.dim += rank;
      if (d.dim >= 0 && d.dim < rank) fixed.push_back(d);
    }
    spec.fixed = std::move(fixed);
    if (spec.rank >= 0) spec.dim_names.clear();  // the graph's use disagrees: the declaration wins
    spec.rank = rank;
    spec.rank_by.clear();
  }
  if (declared_rank)
    for (size_t d = 0; d < value.shape.size(); ++d) {
      if (value.shape[d] < 0) continue;
      bool known = false;
      for (InputSpec::Fixed& e : spec.fixed)
        if (e.dim == static_cast<int64_t>(d)) {
          known = true;
          if (e.size != value.shape[d]) e = {e.dim, value.shape[d], ""};
        }
      if (!known) spec.fixed.push_back({static_cast<int64_t>(d), value.shape[d], ""});
    }
  if (spec.rank >= 0) {
    if (value.dim_names.size() == static_cast<size_t>(spec.rank)) spec.dim_names = value.dim_names;
    if (spec.dim_names.size() != static_cast<size_t>(spec.rank)) spec.dim_names = names_for(spec.rank, "");
    if (value.dim_ranges.size() == static_cast<size_t>(spec.rank)) spec.ranges = value.dim_ranges;
  }
  return spec;
}

void derive_input_specs(Graph& graph) {
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const InputSpec spec = input_spec(graph, i);
    Value& value = graph.values[static_cast<size_t>(graph.inputs[i])];
    if (spec.rank < 0) continue;
    value.shape.assign(static_cast<size_t>(spec.rank), -1);
    for (const InputSpec::Fixed& d : spec.fixed) value.shape[static_cast<size_t>(d.dim)] = d.size;
    value.rank_known = true;
    value.dim_names = spec.dim_names;
  }
}

namespace {

std::string range_string(const DimRange& r) {
  if (r.max == INT64_MAX) return ">= " + std::to_string(r.min);
  return "in " + std::to_string(r.min) + ".." + std::to_string(r.max);
}

std::string format(const InputSpec& spec) {
  std::string s = "[";
  if (spec.rank < 0) {  // "[B, 10, ...]", "[..., 768]", "[...]"
    std::vector<InputSpec::Fixed> lead, tail;
    for (const InputSpec::Fixed& d : spec.fixed) (d.dim < 0 ? tail : lead).push_back(d);
    auto by_dim = [](const auto& a, const auto& b) { return a.dim < b.dim; };
    std::sort(lead.begin(), lead.end(), by_dim);
    std::sort(tail.begin(), tail.end(), by_dim);
    int64_t next = 0;
    for (const InputSpec::Fixed& d : lead) {
      for (; next < d.dim; ++next) s += next == 0 ? "B, " : "?, ";
      s += std::to_string(d.size) + ", ";
      next = d.dim + 1;
    }
    s += "...";
    next = tail.empty() ? 0 : tail.front().dim;
    for (const InputSpec::Fixed& d : tail) {
      for (; next < d.dim; ++next) s += ", ?";
      s += ", " + std::to_string(d.size);
      next = d.dim + 1;
    }
    for (; !tail.empty() && next < 0; ++next) s += ", ?";  // the dims after the last fixed one
    return s + "]";
  }
  std::vector<std::string> ranges, seen;
  for (int64_t d = 0; d < spec.rank; ++d) {
    std::string text = d < static_cast<int64_t>(spec.dim_names.size()) ? spec.dim_names[static_cast<size_t>(d)] : "";
    bool fixed = false;
    for (const InputSpec::Fixed& f : spec.fixed)
      if (f.dim == d) text = std::to_string(f.size), fixed = true;
    s += (d ? ", " : "") + (text.empty() ? std::string("?") : text);
    const bool ranged = d < static_cast<int64_t>(spec.ranges.size()) && spec.ranges[static_cast<size_t>(d)].bounded();
    if (fixed || !ranged || std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    seen.push_back(text);
    ranges.push_back((text.empty() ? "dim " + std::to_string(d) : text) + " " +
                     range_string(spec.ranges[static_cast<size_t>(d)]));
  }
  s += "]";
  for (size_t k = 0; k < ranges.size(); ++k) s += (k ? ", " : " with ") + ranges[k];
  return s;
}

std::string fixed_by(const std::string& who) { return who.empty() ? "the model's declared shape" : who; }

}  // namespace

std::string expected_shape(const Graph& graph, size_t input_index) { return format(input_spec(graph, input_index)); }

std::string check_input_shape(const Graph& graph, size_t input_index, const std::vector<int64_t>& shape) {
  const InputSpec spec = input_spec(graph, input_index);
  const std::string& name = graph.values[static_cast<size_t>(graph.inputs.at(input_index))].name;
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto refuse = [&](const std::string& why) {
    return "input '" + name + "' expects " + format(spec) + " (" + why + "), got " + shape_string(shape);
  };
  if (spec.rank >= 0 && spec.rank != rank)
    return refuse(std::to_string(spec.rank) + (spec.rank == 1 ? " dimension" : " dimensions") +
                  (spec.rank_by.empty() ? " as the model declares" : ", fixed by " + spec.rank_by));
  for (const InputSpec::Fixed& f : spec.fixed) {
    const int64_t d = f.dim < 0 ? f.dim + rank : f.dim;
    if (d < 0 || d >= rank)
      return refuse("at least " + std::to_string(f.dim < 0 ? -f.dim : f.dim + 1) +
                    (f.dim == -1 || f.dim == 0 ? " dimension" : " dimensions") + ", since dim " +
                    std::to_string(f.dim) + " is fixed to " + std::to_string(f.size) + " by " + fixed_by(f.by));
    if (shape[static_cast<size_t>(d)] != f.size)
      return refuse("dim " + std::to_string(d) + " is fixed to " + std::to_string(f.size) + " by " + fixed_by(f.by));
  }
  for (size_t d = 0; d < spec.ranges.size() && d < shape.size(); ++d) {
    const DimRange& r = spec.ranges[d];
    if (r.bounded() && (shape[d] < r.min || shape[d] > r.max)) {
      const std::string& symbol = d < spec.dim_names.size() ? spec.dim_names[d] : "";
      return refuse("dim " + std::to_string(d) + (symbol.empty() ? "" : " (" + symbol + ")") + " must be " +
                    range_string(r) + ", the range the model was exported with");
    }
  }
  return "";
}

}  // namespace switchyard::ir
