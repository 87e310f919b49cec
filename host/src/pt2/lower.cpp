// Lowering a torch.export program, part 1: the program's version, its signature (inputs,
// lifted weights, outputs), range constraints and names. Nodes: lower_node.cpp.
#include "pt2/lower_internal.hpp"
#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <cctype>
#include <functional>
#include <limits>

namespace switchyard::pt2 {

namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

// "Symbol('s0', positive=True, integer=True)" (torch's srepr) or "s0" -> "s0"; "" for an
// expression of several symbols ("2*s0").
std::string symbol_of(const std::string& expr) {
  const std::string prefix = "Symbol('";
  if (expr.rfind(prefix, 0) == 0) {
    const size_t end = expr.find('\'', prefix.size());
    return end == std::string::npos ? "" : expr.substr(prefix.size(), end - prefix.size());
  }
  if (expr.empty() || !(std::isalpha(static_cast<unsigned char>(expr[0])) || expr[0] == '_')) return "";
  for (char c : expr)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return "";
  return expr;
}

int64_t bound(const Json& j, int64_t if_absent) {
  if (j.is_number_unsigned()) return j.get<uint64_t>() > uint64_t(kUnbounded) ? kUnbounded : j.get<int64_t>();
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_float()) {
    const double v = j.get<double>();
    return v >= 9.2e18 ? kUnbounded : v <= -9.2e18 ? 0 : static_cast<int64_t>(v);
  }
  return if_absent;  // null: unbounded
}

// Python's json writes NaN, Infinity and -Infinity bare (a float argument such as a
// mask's fill value); JSON has no such literals, so they become strings, which the
// attribute reader turns back into floats.
std::string quote_python_literals(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const char* literal : {"-Infinity", "Infinity", "NaN"}) {
      const size_t n = std::char_traits<char>::length(literal);
      if (text.compare(i, n, literal) == 0) {
        out += '"' + std::string(literal) + '"';
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

// One union value of the schema ({"as_tensor": {...}}): its tag and value.
std::pair<std::string, const Json*> tagged(const Json& j) {
  if (!j.is_object() || j.size() != 1) return {"", nullptr};
  return {j.begin().key(), &j.begin().value()};
}

}  // namespace

void Lowerer::run() {
  const Json root = parse_json(quote_python_literals(archive_.program));
  if (!root.is_object()) fail_io("the program must be a JSON object");
  check_version(root);
  read_ranges(root);
  const Json& module = field(root, "graph_module", "the program");
  const Json& graph = field(module, "graph", "graph_module");
  count_uses(graph);
  read_signature(module, graph);
  for (const Json& node : as_array(field(graph, "nodes", "graph"), "graph: field 'nodes'")) {
    NodeView n;
    n.json = &node;
    n.target = as_string(field(node, "target", "a node"), "a node's target");
    n.name = node_name(node, n.target);
    n.path = module_path(node);
    lower_node(n);
  }
  read_outputs(module);
  relax_input_dtypes();
  log::get().debug("pt2: {}: {} nodes, {} values ({})", archive_.path, g_.nodes.size(), g_.values.size(),
                   archive_.layout);
}

// The program records each input's dtype at export, but PyTorch promotes types, and torch
// 2 runs an exported program on other dtypes too (`mask == 0`, `1.0 - mask`, `h * mask`
// all take an int64 mask). As for TorchScript, an input keeps its dtype only where an op
// refuses others: indices (embedding, gather) are int64, masks of masked_fill / where are
// bool, the data input of an op with weights has the weights' dtype. Otherwise any dtype
// goes (kAnyDtype). The walk follows views and stops at conversions.
void Lowerer::relax_input_dtypes() {
  static const std::map<std::string, size_t> kPins = {
      // op -> the IR input it pins
      {"aten::embedding", 1}, {"aten::embedding_bag", 1}, {"aten::index_select", 1}, {"aten::gather", 1},
      {"aten::one_hot", 0},   {"aten::masked_fill", 1},   {"aten::where", 0}};
  static const std::set<std::string> kWeighted = {"aten::convolution",
                                                  "aten::conv1d",
                                                  "aten::conv2d",
                                                  "aten::conv3d",
                                                  "aten::conv_transpose1d",
                                                  "aten::conv_transpose2d",
                                                  "aten::linear",
                                                  "aten::matmul",
                                                  "aten::mm",
                                                  "aten::bmm",
                                                  "aten::addmm",
                                                  "aten::batch_norm",
                                                  "aten::layer_norm",
                                                  "aten::group_norm",
                                                  "aten::instance_norm",
                                                  "aten::lstm",
                                                  "aten::gru",
                                                  "aten::rnn_tanh",
                                                  "aten::rnn_relu",
                                                  "aten::prelu"};
  static const std::set<std::string> kViews = {
      "aten::reshape",   "aten::slice",  "aten::select",  "aten::unsqueeze",  "aten::squeeze", "aten::permute",
      "aten::transpose", "aten::expand", "aten::flatten", "aten::contiguous", "aten::clone",   "aten::alias"};
  std::vector<std::vector<std::pair<size_t, size_t>>> readers(g_.values.size());  // value -> (node, input)
  for (size_t k = 0; k < g_.nodes.size(); ++k)
    for (size_t i = 0; i < g_.nodes[k].inputs.size(); ++i)
      if (g_.nodes[k].inputs[i] >= 0) readers[static_cast<size_t>(g_.nodes[k].inputs[i])].emplace_back(k, i);
  for (ir::ValueId input : g_.inputs) {
    bool pinned = false;
    std::vector<ir::ValueId> todo{input};
    for (size_t step = 0; step < todo.size() && step < 64 && !pinned; ++step)
      for (const auto& [k, i] : readers[static_cast<size_t>(todo[step])]) {
        const ir::Node& node = g_.nodes[k];
        auto pin = kPins.find(node.op);
        pinned = pinned || (pin != kPins.end() && pin->second == i) || (kWeighted.count(node.op) && i == 0);
        if (i == 0 && kViews.count(node.op) && !node.outputs.empty()) todo.push_back(node.outputs[0]);
      }
    if (!pinned) g_.values[static_cast<size_t>(input)].dtype = kAnyDtype;
  }
}

void Lowerer::check_version(const Json& root) {
  const Json& v = field(root, "schema_version", "the program");
  const int64_t major = as_int(field(v, "major", "schema_version"), "schema_version.major");
  const int64_t minor = as_int(field(v, "minor", "schema_version"), "schema_version.minor");
  if (major != kSchemaMajor || minor < kSchemaMinorMin || minor > kSchemaMinorMax) {
    std::string torch;
    if (auto it = root.find("torch_version"); it != root.end() && it->is_string())
      torch = ", written by torch " + it->get<std::string>();
    fail_io("ExportedProgram schema version " + std::to_string(major) + "." + std::to_string(minor) + torch +
            " is not supported; switchyard reads " + std::to_string(kSchemaMajor) + "." +
            std::to_string(kSchemaMinorMin) + " to " + std::to_string(kSchemaMajor) + "." +
            std::to_string(kSchemaMinorMax) + " (torch 2.6 to 2.15)");
  }
}

void Lowerer::read_ranges(const Json& root) {
  auto it = root.find("range_constraints");
  if (it == root.end() || !it->is_object()) return;
  for (const auto& [expr, range] : it->items()) {
    if (!range.is_object()) fail_io("range_constraints: '" + expr + "' must be an object");
    const std::string symbol = symbol_of(expr);
    if (symbol.empty()) continue;
    const int64_t lo = range.contains("min_val") ? bound(range["min_val"], 0) : 0;
    const int64_t hi = range.contains("max_val") ? bound(range["max_val"], kUnbounded) : kUnbounded;
    ranges_[symbol] = {std::max<int64_t>(lo, 0), hi};
  }
}

void Lowerer::count_uses(const Json& graph) {
  // Every tensor name a node reads or the graph returns, to tell used outputs from unused.
  std::function<void(const Json&)> walk = [&](const Json& j) {
    if (j.is_object()) {
      for (const auto& [key, value] : j.items()) {
        if (key == "as_tensor" && value.is_object() && value.contains("name") && value["name"].is_string())
          ++uses_[value["name"].get<std::string>()];
        else if (key != "metadata")
          walk(value);
      }
    } else if (j.is_array()) {
      for (const Json& e : j) walk(e);
    }
  };
  for (const Json& node : as_array(field(graph, "nodes", "graph"), "graph: field 'nodes'"))
    if (auto in = node.find("inputs"); in != node.end()) walk(*in);
  if (auto out = graph.find("outputs"); out != graph.end()) walk(*out);
}

void Lowerer::read_signature(const Json& module, const Json& graph) {
  const Json& signature = field(module, "signature", "graph_module");
  for (const Json& spec : as_array(field(signature, "input_specs", "signature"), "signature: input_specs")) {
    const auto [kind, value] = tagged(spec);
    if (value == nullptr) fail_io("signature: an input spec that is not a tagged union");
    const Json& v = *value;
    if (kind == "user_input") {
      add_user_input(v, graph);
    } else if (kind == "parameter") {
      add_lifted(as_string(field(field(v, "arg", kind), "name", kind), kind),
                 as_string(field(v, "parameter_name", kind), kind), "parameter", false);
    } else if (kind == "buffer") {
      const bool persistent = !v.contains("persistent") || !v["persistent"].is_boolean() || v["persistent"].get<bool>();
      add_lifted(as_string(field(field(v, "arg", kind), "name", kind), kind),
                 as_string(field(v, "buffer_name", kind), kind), "buffer", !persistent);
    } else if (kind == "tensor_constant") {
      add_lifted(as_string(field(field(v, "arg", kind), "name", kind), kind),
                 as_string(field(v, "tensor_constant_name", kind), kind), "constant", true);
    } else if (kind == "constant_input") {
      // A Python constant the program was called with (None, an int): nodes that read it
      // carry the value inline, so there is nothing to bind.
      continue;
    } else {
      throw Error(ErrorKind::Unsupported,
                  path_ + ": the program takes a " + kind + " input (tokens and script objects are not supported)");
    }
  }
}

void Lowerer::add_user_input(const Json& spec, const Json& graph) {
  const auto [kind, value] = tagged(field(spec, "arg", "user_input"));
  if (kind != "as_tensor")
    throw Error(ErrorKind::Unsupported, path_ + ": user input " + (value ? value->dump() : "?") + " is a " + kind +
                                            "; switchyard models take tensor inputs only");
  const std::string name = as_string(field(*value, "name", "user_input"), "user input name");
  const Json& metas = field(graph, "tensor_values", "graph");
  const Json& meta = field(metas, name.c_str(), "tensor_values");
  DLDataType dtype{};
  const int64_t code = as_int(field(meta, "dtype", "input '" + name + "'"), "input '" + name + "': dtype");
  if (!dtype_from_schema(code, &dtype))
    throw Error(ErrorKind::Unsupported, path_ + ": input '" + name + "' has dtype code " + std::to_string(code) +
                                            ", which switchyard does not support");
  const ir::ValueId id = g_.add_input(unique_value_name(name), dtype, {});
  ir::Value& input = g_.values[static_cast<size_t>(id)];
  input.rank_known = true;
  const Json& sizes = as_array(field(meta, "sizes", "input '" + name + "'"), "input '" + name + "': sizes");
  for (size_t d = 0; d < sizes.size(); ++d) {
    const auto [how, size] = tagged(sizes[d]);
    if (how == "as_int") {
      input.shape.push_back(as_int(*size, "input '" + name + "' size"));
      input.dim_names.emplace_back();
      input.dim_ranges.push_back(ir::DimRange{});
      input.example_shape.push_back(input.shape.back());
      continue;
    }
    if (how != "as_expr")
      fail_io("input '" + name + "': dim " + std::to_string(d) + " is neither an int nor an expression");
    const std::string symbol = symbol_of(as_string(field(*size, "expr_str", "size"), "expr_str"));
    input.shape.push_back(-1);
    input.dim_names.push_back(symbol);
    ir::DimRange range;
    if (auto r = ranges_.find(symbol); r != ranges_.end()) range = {r->second.first, r->second.second};
    input.dim_ranges.push_back(range);
    int64_t hint = range.min > 0 ? range.min : 1;
    if (auto h = size->find("hint");
        h != size->end() && h->is_object() && h->contains("as_int") && (*h)["as_int"].is_number_integer())
      hint = (*h)["as_int"].get<int64_t>();
    input.example_shape.push_back(hint);
    if (!symbol.empty()) symbol_dims_.emplace(symbol, std::make_pair(id, static_cast<int64_t>(d)));
  }
  tensors_[name] = id;
}

void Lowerer::add_lifted(const std::string& placeholder, const std::string& fqn, const char* kind,
                         bool prefer_constants) {
  const std::map<std::string, Tensor>* first = prefer_constants ? &archive_.constants : &archive_.weights;
  const std::map<std::string, Tensor>* second = prefer_constants ? &archive_.weights : &archive_.constants;
  auto it = first->find(fqn);
  if (it == first->end()) it = second->find(fqn);
  if (it == second->end() || it == first->end()) {
    if (uses_.count(placeholder) == 0) return;  // e.g. num_batches_tracked, never read
    throw Error(ErrorKind::Io, archive_.path + ": " + kind + " '" + fqn + "' (graph input '" + placeholder +
                                   "') is not in the archive's " + (prefer_constants ? "constants" : "weights"));
  }
  const std::string name = value_names_.count(fqn) ? unique_value_name(placeholder) : unique_value_name(fqn);
  tensors_[placeholder] = g_.add_constant(name, it->second);
}

void Lowerer::read_outputs(const Json& module) {
  const Json& signature = field(module, "signature", "graph_module");
  for (const Json& spec : as_array(field(signature, "output_specs", "signature"), "signature: output_specs")) {
    const auto [kind, value] = tagged(spec);
    if (value == nullptr) fail_io("signature: an output spec that is not a tagged union");
    std::string arg = value->contains("arg") ? (*value)["arg"].dump() : "";
    if (kind == "buffer_mutation" || kind == "user_input_mutation") {
      const char* key = kind == "buffer_mutation" ? "buffer_name" : "user_input_name";
      const std::string target =
          value->contains(key) && (*value)[key].is_string() ? (*value)[key].get<std::string>() : "?";
      throw Error(ErrorKind::Unsupported,
                  path_ + ": the program mutates " + (kind == "buffer_mutation" ? "buffer '" : "input '") + target +
                      "'; switchyard runs programs without mutated state (export the model in eval mode, "
                      "and without in-place writes to its inputs)");
    }
    if (kind != "user_output")
      throw Error(ErrorKind::Unsupported,
                  path_ + ": the program has a " + kind + " output; switchyard runs inference programs");
    const auto [how, out] = tagged(field(*value, "arg", "user_output"));
    if (how != "as_tensor")
      throw Error(ErrorKind::Unsupported,
                  path_ + ": output " + arg + " is not a tensor; switchyard models return tensors");
    const std::string name = as_string(field(*out, "name", "output"), "output name");
    auto it = tensors_.find(name);
    if (it == tensors_.end()) fail_io("output '" + name + "' is not computed by the graph");
    g_.outputs.push_back(it->second);
  }
}

std::string Lowerer::node_name(const Json& node, const std::string& target) {
  if (auto it = node.find("name"); it != node.end() && it->is_string() && !it->get<std::string>().empty())
    return unique_node_name(it->get<std::string>());
  // torch 2.6 does not store a node's name: it is its output's, or for several outputs the
  // one FX gives the op (what the "<name>_unused_<i>" outputs start with).
  std::vector<std::string> outs;
  if (auto it = node.find("outputs"); it != node.end() && it->is_array())
    for (const Json& o : *it) {
      const auto [how, v] = tagged(o);
      if ((how == "as_tensor" || how == "as_sym_int" || how == "as_sym_float" || how == "as_sym_bool") &&
          v->is_object())
        outs.push_back(v->contains("name")      ? (*v)["name"].get<std::string>()
                       : v->contains("as_name") ? (*v)["as_name"].get<std::string>()
                                                : "");
    }
  if (outs.size() == 1 && !outs[0].empty()) return unique_node_name(outs[0]);
  for (const std::string& o : outs)
    if (size_t u = o.rfind("_unused_"); u != std::string::npos) return unique_node_name(o.substr(0, u));
  std::string base = target;
  if (base.rfind("torch.ops.", 0) == 0) {
    base = base.substr(base.find('.', 10) + 1);  // drop "torch.ops.<namespace>."
    base = base.substr(0, base.find('.'));       // drop the overload
  }
  return unique_node_name(base.substr(base.rfind('.') + 1));
}

// The last entry of nn_module_stack ("key,path,type;..."), with dynamo's spellings made
// plain: "L['self'].layer1[0].conv1" -> "layer1.0.conv1".
std::string Lowerer::module_path(const Json& node) const {
  auto meta = node.find("metadata");
  if (meta == node.end() || !meta->is_object()) return "";
  auto stack = meta->find("nn_module_stack");
  if (stack == meta->end() || !stack->is_string()) return "";
  const std::string s = stack->get<std::string>();
  const std::string last = s.substr(s.rfind(';') == std::string::npos ? 0 : s.rfind(';') + 1);
  const size_t first = last.find(','), final = last.rfind(',');
  if (first == std::string::npos || final == first) return "";
  std::string raw = last.substr(first + 1, final - first - 1), path;
  if (raw.rfind("L['", 0) == 0) {
    const size_t close = raw.find("']");
    raw = close == std::string::npos ? raw : raw.substr(close + 2);
  }
  for (size_t i = 0; i < raw.size();) {
    if (raw.compare(i, 10, "._modules[") == 0) {
      i += 9;
      continue;
    }
    if (raw[i] == '[') {
      const size_t close = raw.find(']', i);
      if (close == std::string::npos) break;
      std::string key = raw.substr(i + 1, close - i - 1);
      if (key.size() >= 2 && (key[0] == '\'' || key[0] == '"')) key = key.substr(1, key.size() - 2);
      path += (path.empty() ? "" : ".") + key;
      i = close + 1;
      continue;
    }
    if (raw[i] == '.') {
      ++i;
      if (!path.empty() && i < raw.size() && raw[i] != '[') path += '.';
      continue;
    }
    path += raw[i++];
  }
  if (path.rfind("self.", 0) == 0) path = path.substr(5);
  return path == "self" ? "" : path;
}

static std::string unique_in(std::set<std::string>& taken, std::map<std::string, int>& counts,
                             const std::string& base) {
  std::string name = base.empty() ? "value" : base;
  while (!taken.insert(name).second) name = base + "_" + std::to_string(++counts[base]);
  return name;
}

std::string Lowerer::unique_value_name(const std::string& base) { return unique_in(value_names_, value_counts_, base); }
std::string Lowerer::unique_node_name(const std::string& base) { return unique_in(node_names_, node_counts_, base); }

[[noreturn]] void Lowerer::fail_node(const NodeView& n, ErrorKind kind, const std::string& why) const {
  throw Error(kind, path_ + ": node '" + n.name + "' (" + n.target + "): " + why);
}

void lower_program(const Archive& archive, ir::Graph& out) { Lowerer(archive, out).run(); }

}  // namespace switchyard::pt2
