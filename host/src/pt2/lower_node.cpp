// Lowering a torch.export program, part 2: nodes. ATen ops become IR nodes in the aten
// plugin's argument convention; size arithmetic becomes sym:: nodes; runtime assertions
// go (the input ranges are checked before any kernel runs).
#include "ir/sym.hpp"
#include "pt2/lower_internal.hpp"

#include <switchyard/error.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace switchyard::pt2 {

namespace {

constexpr const char* kAtenPrefix = "torch.ops.aten.";

std::pair<std::string, const Json*> tagged(const Json& j) {
  if (!j.is_object() || j.size() != 1) return {"", nullptr};
  return {j.begin().key(), &j.begin().value()};
}

// Targets that only check what the input ranges already guarantee, or that annotate.
bool is_assertion(const std::string& op) {
  static const char* kOps[] = {"_assert_scalar",      "_assert_tensor_metadata",
                               "sym_constrain_range", "sym_constrain_range_for_size",
                               "_assert_async",       "_print"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* k) { return op == k; });
}

// Python operators and torch's sym functions on SymInts/SymFloats, as sym:: ops.
const char* sym_op_for(const std::string& target) {
  static const std::pair<const char*, const char*> kOps[] = {{"_operator.add", "sym::add"},
                                                             {"_operator.sub", "sym::sub"},
                                                             {"_operator.mul", "sym::mul"},
                                                             {"_operator.floordiv", "sym::floordiv"},
                                                             {"_operator.mod", "sym::mod"},
                                                             {"_operator.truediv", "sym::div"},
                                                             {"_operator.pow", "sym::pow"},
                                                             {"_operator.neg", "sym::neg"},
                                                             {"_operator.eq", "sym::eq"},
                                                             {"_operator.ne", "sym::ne"},
                                                             {"_operator.lt", "sym::lt"},
                                                             {"_operator.le", "sym::le"},
                                                             {"_operator.gt", "sym::gt"},
                                                             {"_operator.ge", "sym::ge"},
                                                             {"_operator.and_", "sym::and"},
                                                             {"_operator.or_", "sym::or"},
                                                             {"_operator.abs", "sym::abs"},
                                                             {"torch.sym_max", "sym::max"},
                                                             {"torch.sym_min", "sym::min"},
                                                             {"torch.sym_float", "sym::float"},
                                                             {"torch.sym_int", "sym::int"},
                                                             {"torch.sym_not", "sym::not"},
                                                             {"torch.sym_sqrt", "sym::sqrt"},
                                                             {"math.ceil", "sym::ceil"},
                                                             {"math.floor", "sym::floor"},
                                                             {"math.sqrt", "sym::sqrt"},
                                                             {"builtins.round", "sym::round"},
                                                             {"torch.ops.aten.sym_numel.default", "sym::numel"},
                                                             {"torch.ops.aten.sym_size.int", "sym::size"}};
  std::string t = target;
  if (t.rfind("operator.", 0) == 0) t = "_" + t;
  for (const auto& [name, op] : kOps)
    if (t == name) return op;
  return nullptr;
}

// Ops whose result aliases their first argument.
bool is_view_op(const std::string& op) {
  static const char* kOps[] = {"view",      "reshape",    "_unsafe_view", "slice",      "select",
                               "transpose", "permute",    "expand",       "expand_as",  "unsqueeze",
                               "squeeze",   "narrow",     "as_strided",   "t",          "alias",
                               "unflatten", "flatten",    "diagonal",     "split",      "split_with_sizes",
                               "chunk",     "unbind",     "view_as",      "reshape_as", "unfold",
                               "detach",    "contiguous", "movedim",      "swapaxes",   "lift_fresh"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* k) { return op == k; });
}

// In-place ops whose functional form the plugins run (the family plugins know only those).
bool has_functional_form(const std::string& op) {
  static const char* kOps[] = {"relu",          "relu6",   "add",        "sub",      "mul",       "div",
                               "masked_fill",   "sigmoid", "tanh",       "hardtanh", "hardswish", "hardsigmoid",
                               "gelu",          "silu",    "leaky_relu", "clamp",    "dropout",   "feature_dropout",
                               "alpha_dropout", "neg",     "exp",        "sqrt",     "rsqrt",     "pow",
                               "abs",           "elu",     "mish"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* k) { return op == k; });
}

// Optional tensor arguments that may come as None in the middle of a schema's tensors.
bool is_optional_tensor_arg(const std::string& name) {
  static const char* kNames[] = {"weight",
                                 "bias",
                                 "running_mean",
                                 "running_var",
                                 "attn_mask",
                                 "pos_weight",
                                 "b_ih",
                                 "b_hh",
                                 "key_padding_mask",
                                 "mask",
                                 "scale_grad_by_freq_tensor",
                                 "per_sample_weights",
                                 "offsets",
                                 "indices"};
  return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* k) { return name == k; });
}

// The program's codes (torch/_export/serde/schema.py) as c10's, which ATen attributes use.
bool c10_scalar_type(int64_t code, int64_t* out) {
  if (code >= 1 && code <= 12) return *out = code - 1, true;  // BYTE..BOOL follow c10's order
  if (code == 13) return *out = 15, true;                     // BFLOAT16
  return false;
}
bool c10_memory_format(int64_t code, int64_t* out) {
  static const int64_t kMap[] = {-1, 0, 2, 3, 1};  // Unknown, Contiguous, ChannelsLast, ChannelsLast3d, Preserve
  if (code < 1 || code > 4) return false;
  return *out = kMap[code], true;
}

}  // namespace

void Lowerer::lower_node(const NodeView& n) {
  if (lower_sym_op(n)) return;
  if (n.target.rfind(kAtenPrefix, 0) == 0) {
    const std::string rest = n.target.substr(std::string(kAtenPrefix).size());
    const size_t dot = rest.find('.');
    const std::string op = rest.substr(0, dot), overload = dot == std::string::npos ? "" : rest.substr(dot + 1);
    if (is_assertion(op)) return;
    return lower_aten(n, op, overload);
  }
  if (n.target == "_operator.getitem" || n.target == "operator.getitem") {
    // Serialized programs name a multi-output op's pieces directly; a getitem left over
    // indexes a list of tensors.
    const Json& inputs = field(*n.json, "inputs", "node");
    if (inputs.size() == 2) {
      const auto [tag, list] = tagged(field(inputs[0], "arg", "getitem"));
      const auto [itag, index] = tagged(field(inputs[1], "arg", "getitem"));
      const auto [otag, out] = tagged(field(*n.json, "outputs", "getitem").at(0));
      if (tag == "as_tensors" && itag == "as_int" && otag == "as_tensor") {
        int64_t i = index->get<int64_t>();
        if (i < 0) i += static_cast<int64_t>(list->size());
        if (i < 0 || i >= static_cast<int64_t>(list->size())) fail_node(n, ErrorKind::Graph, "index out of range");
        const std::string src = as_string(field((*list)[static_cast<size_t>(i)], "name", "getitem"), "getitem");
        tensors_[as_string(field(*out, "name", "getitem"), "getitem")] = tensor(n, src, "a");
        return;
      }
    }
    fail_node(n, ErrorKind::Unsupported, "a getitem that does not pick a tensor from a list of tensors");
  }
  fail_node(n, ErrorKind::Unsupported,
            "switchyard runs ATen ops (torch.ops.aten.*) and arithmetic on sizes; this target is neither "
            "(custom ops and higher-order ops such as cond and map are not supported)");
}

bool Lowerer::lower_sym_op(const NodeView& n) {
  const char* op = sym_op_for(n.target);
  if (op == nullptr) return false;
  const Json& inputs = field(*n.json, "inputs", "node");
  std::vector<ir::ValueId> args;
  ir::Attributes attrs;
  for (const Json& input : inputs) {
    const std::string arg = as_string(field(input, "name", "an input"), "an input's name");
    const Json& value = field(input, "arg", "input '" + arg + "'");
    const auto [tag, v] = tagged(value);
    if (tag == "as_tensor") {
      args.push_back(tensor(n, as_string(field(*v, "name", arg), arg), arg));
    } else if (std::string(op) == "sym::size" && tag == "as_int") {
      attrs.emplace_back("dim", ir::Attribute::of_int(v->get<int64_t>()));
    } else {
      args.push_back(sym(n, value, "argument '" + arg + "'"));
    }
  }
  const Json& outputs = field(*n.json, "outputs", "node");
  const auto [tag, out] = outputs.empty() ? std::pair<std::string, const Json*>{"", nullptr} : tagged(outputs[0]);
  if (out == nullptr || !out->is_object() || !out->contains("as_name"))
    fail_node(n, ErrorKind::Graph, "its result is not a named SymInt, SymFloat or SymBool");
  const std::string name = (*out)["as_name"].get<std::string>();
  syms_[name] = g_.add_sym(n.name, op, std::move(args), std::move(attrs), unique_value_name(name));
  return true;
}

void Lowerer::lower_aten(const NodeView& n, std::string op, const std::string& overload) {
  std::vector<std::pair<std::string, const Json*>> args;
  for (const Json& input : field(*n.json, "inputs", "node"))
    args.emplace_back(as_string(field(input, "name", "an input"), "an input's name"), &field(input, "arg", "an input"));
  std::vector<std::string> outputs;
  for (const Json& o : field(*n.json, "outputs", "node")) {
    const auto [tag, v] = tagged(o);
    if (tag == "as_tensor") {
      outputs.push_back(as_string(field(*v, "name", "output"), "output name"));
    } else if (tag == "as_tensors") {
      for (const Json& t : *v) outputs.push_back(as_string(field(t, "name", "output"), "output name"));
    } else if (tag == "as_none") {
      outputs.emplace_back();
    } else if (tag.rfind("as_", 0) != 0) {  // ("" when not a one-key object)
      fail_node(n, ErrorKind::Graph, "an output that is not a tagged value");
    } else {
      fail_node(n, ErrorKind::Unsupported,
                "it returns a " + tag.substr(3) +
                    " computed from tensor values at run time; switchyard computes sizes "
                    "from input shapes only");
    }
  }
  if (rewrite_op(n, op, args, outputs)) return;
  (void)overload;  // the aten plugin tells overloads apart by their arguments
  lower_call(n, op, args, outputs);
}

// Ops that Debian's LibTorch 1.13 or the family plugins know by another name or form.
bool Lowerer::rewrite_op(const NodeView& /*n*/, std::string& op, std::vector<std::pair<std::string, const Json*>>& args,
                         std::vector<std::string>& outputs) {
  auto literal = [&](Json j) { return &literals_.emplace_back(std::move(j)); };
  auto unused_after = [&](size_t first) {
    for (size_t i = first; i < outputs.size(); ++i)
      if (!outputs[i].empty() && uses_.count(outputs[i])) return false;
    return true;
  };
  if (op == "_native_batch_norm_legit_no_training" && unused_after(1)) {
    op = "batch_norm";  // the eval-mode batch norm of core ATen, as one output
    args.emplace_back("training", literal({{"as_bool", false}}));
    args.emplace_back("cudnn_enabled", literal({{"as_bool", false}}));
    outputs.resize(1);
  } else if (op == "max_pool2d_with_indices" && unused_after(1)) {
    op = "max_pool2d";
    outputs.resize(1);
  } else if (op == "native_layer_norm" && unused_after(1)) {
    op = "layer_norm";
    outputs.resize(1);
  } else if (op == "view" || op == "_unsafe_view") {
    // A program's view assumes the strides torch 2's kernels give; switchyard's may differ
    // (a kernel's output in its own layout), and with no writes through views (refused
    // in note_write) a reshape computes the same values, as a view wherever one exists.
    op = "reshape";
    for (auto& a : args)
      if (a.first == "size") a.first = "shape";
  } else if (op == "lift_fresh_copy") {
    op = "clone";
  } else if (op == "scaled_dot_product_attention") {
    // torch >= 2.5's enable_gqa=False is the only behaviour LibTorch 1.13's schema has.
    args.erase(std::remove_if(args.begin(), args.end(),
                              [](const auto& a) {
                                return a.first == "enable_gqa" && a.second->contains("as_bool") &&
                                       !(*a.second)["as_bool"].template get<bool>();
                              }),
               args.end());
  }
  return false;
}

void Lowerer::lower_call(const NodeView& n, const std::string& op,
                         const std::vector<std::pair<std::string, const Json*>>& args,
                         const std::vector<std::string>& outputs) {
  const bool in_place = op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_';
  const std::string functional = in_place ? op.substr(0, op.size() - 1) : op;
  // dropout_ in eval mode changes nothing; other in-place ops run out of place, under the
  // functional name where the family plugins know it (the aten plugin knows both).
  bool is_identity = false;
  for (const auto& [name, arg] : args)
    if ((name == "train" || name == "training") && arg->contains("as_bool") && !(*arg)["as_bool"].get<bool>())
      is_identity = functional.find("dropout") != std::string::npos;
  const std::string ir_op = "aten::" + (in_place && has_functional_form(functional) ? functional : op);
  size_t last_list = args.size();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string tag = tagged(*args[i].second).first;
    if (tag == "as_tensors" || tag == "as_optional_tensors") last_list = i;
  }
  std::vector<ir::ValueId> inputs;
  ir::Attributes attrs;
  std::string first_tensor;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& name = args[i].first;
    const auto [tag, v] = tagged(*args[i].second);
    if (v == nullptr) fail_node(n, ErrorKind::Graph, "argument '" + name + "' is not a tagged value");
    if (tag == "as_tensor") {
      const std::string src = as_string(field(*v, "name", name), name);
      if (first_tensor.empty()) first_tensor = src;
      inputs.push_back(tensor(n, src, name));
    } else if (tag == "as_tensors" || tag == "as_optional_tensors") {
      size_t count = 0;
      for (const Json& e : *v) {
        const auto [etag, ev] = tagged(e);
        const Json* t = tag == "as_tensors" ? &e : etag == "as_tensor" ? ev : nullptr;
        inputs.push_back(t == nullptr ? ir::kNoValue : tensor(n, as_string(field(*t, "name", name), name), name));
        ++count;
      }
      if (i != last_list) attrs.emplace_back(name + ".len", ir::Attribute::of_int(static_cast<int64_t>(count)));
    } else if (tag == "as_none" && is_optional_tensor_arg(name)) {
      inputs.push_back(ir::kNoValue);
    } else {
      attrs.emplace_back(name, attribute(n, name, tag, *v));
    }
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i)
    names.push_back(unique_value_name(outputs[i].empty() ? n.name + "." + std::to_string(i) : outputs[i]));
  // A program names each value once; an output that redefines one (its own input, say)
  // could link views in a cycle, which note_write would follow forever.
  for (const std::string& o : outputs)
    if (!o.empty() && (tensors_.count(o) || syms_.count(o)))
      fail_node(n, ErrorKind::Graph, "its output '" + o + "' names a value defined before");
  if (is_view_op(op) && !first_tensor.empty()) note_view(op, first_tensor, outputs, attrs);
  const int32_t idx = g_.add_node(n.name, ir_op, std::move(inputs), names, std::move(attrs), n.path);
  const ir::Node& node = g_.nodes[static_cast<size_t>(idx)];
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].empty()) tensors_[outputs[i]] = node.outputs[i];
  if (in_place && !first_tensor.empty())
    note_write(n, first_tensor, node.outputs.empty() ? ir::kNoValue : node.outputs[0], !is_identity);
}

ir::ValueId Lowerer::tensor(const NodeView& n, const std::string& name, const std::string& arg) {
  if (auto stale = stale_.find(name); stale != stale_.end())
    fail_node(n, ErrorKind::Unsupported,
              "argument '" + arg + "' reads '" + name + "', a view taken before node '" + stale->second +
                  "' wrote into its base in place; save the program after ep.run_decompositions()");
  auto it = tensors_.find(name);
  if (it != tensors_.end()) return it->second;
  if (syms_.count(name))
    fail_node(n, ErrorKind::Unsupported,
              "argument '" + arg + "' is the number '" + name + "' where a tensor is expected");
  fail_node(n, ErrorKind::Graph, "argument '" + arg + "' reads '" + name + "', which no earlier node or input defines");
}

ir::ValueId Lowerer::sym_const(const ir::Attribute& value) {
  const std::string key = std::to_string(static_cast<int>(value.kind)) + ":" + ir::scalar_string(value);
  auto it = sym_consts_.find(key);
  if (it != sym_consts_.end()) return it->second;
  return sym_consts_[key] = g_.add_sym(unique_node_name("sym_const"), "sym::const", {}, {{"value", value}},
                                       unique_value_name("sym_const"));
}

ir::ValueId Lowerer::symbol(const NodeView& n, const std::string& name, const std::string& what) {
  auto it = syms_.find(name);
  if (it != syms_.end()) return it->second;
  auto dim = symbol_dims_.find(name);
  if (dim == symbol_dims_.end())
    fail_node(n, ErrorKind::Unsupported,
              what + " reads '" + name +
                  "', a number that neither a node nor an input's "
                  "shape defines (data-dependent sizes are not supported)");
  return syms_[name] = g_.add_sym(unique_node_name(name), "sym::size", {dim->second.first},
                                  {{"dim", ir::Attribute::of_int(dim->second.second)}}, unique_value_name(name));
}

ir::ValueId Lowerer::sym(const NodeView& n, const Json& arg, const std::string& what) {
  const auto [tag, v] = tagged(arg);
  if (tag == "as_int" || tag == "as_bool")
    return sym_const(ir::Attribute::of_int(v->is_boolean() ? v->get<bool>() : v->get<int64_t>()));
  if (tag == "as_float") return sym_const(ir::Attribute::of_float(v->get<double>()));
  if (tag == "as_sym_int" || tag == "as_sym_float" || tag == "as_sym_bool") {
    const auto [how, inner] = tagged(*v);
    if (how == "as_name") return symbol(n, inner->get<std::string>(), what);
    if (how == "as_int" || how == "as_bool")
      return sym_const(ir::Attribute::of_int(inner->is_boolean() ? inner->get<bool>() : inner->get<int64_t>()));
    if (how == "as_float") return sym_const(ir::Attribute::of_float(inner->get<double>()));
  }
  fail_node(n, ErrorKind::Unsupported, what + " is a " + tag + ", not a number");
}

ir::Attribute Lowerer::attribute(const NodeView& n, const std::string& arg, const std::string& tag, const Json& v) {
  auto floats = [&](const Json& j) {
    if (j.is_string()) {
      const std::string s = j.get<std::string>();
      if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
      if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
    }
    if (!j.is_number()) fail_node(n, ErrorKind::Graph, "argument '" + arg + "' is not a number");
    return j.get<double>();
  };
  if (tag == "as_none") return ir::Attribute::none();
  if (tag == "as_int") return ir::Attribute::of_int(as_int(v, "argument '" + arg + "'"));
  if (tag == "as_bool") return ir::Attribute::of_int(v.get<bool>() ? 1 : 0);
  if (tag == "as_float") return ir::Attribute::of_float(floats(v));
  if (tag == "as_string") return ir::Attribute::of_string(v.get<std::string>());
  if (tag == "as_ints" || tag == "as_bools") {
    std::vector<int64_t> out;
    for (const Json& e : v) out.push_back(e.is_boolean() ? e.get<bool>() : as_int(e, "argument '" + arg + "'"));
    return ir::Attribute::of_ints(std::move(out));
  }
  if (tag == "as_floats") {
    std::vector<double> out;
    for (const Json& e : v) out.push_back(floats(e));
    return ir::Attribute::of_floats(std::move(out));
  }
  if (tag == "as_scalar_type" || tag == "as_memory_format") {
    int64_t code = 0;
    if (!(tag == "as_scalar_type" ? c10_scalar_type(v.get<int64_t>(), &code)
                                  : c10_memory_format(v.get<int64_t>(), &code)))
      fail_node(n, ErrorKind::Unsupported,
                "argument '" + arg + "' has code " + v.dump() + ", which switchyard does not support");
    return ir::Attribute::of_int(code);
  }
  if (tag == "as_layout") {
    if (v.get<int64_t>() != 7)
      fail_node(n, ErrorKind::Unsupported, "argument '" + arg + "' asks for a non-strided layout");
    return ir::Attribute::of_int(0);  // c10::kStrided
  }
  if (tag == "as_device") return ir::Attribute::of_string("cpu");  // placement is the host's choice
  if (tag == "as_sym_int" || tag == "as_sym_float" || tag == "as_sym_bool") {
    const auto [how, inner] = tagged(v);
    if (inner == nullptr) fail_node(n, ErrorKind::Graph, "argument '" + arg + "' is not a tagged value");
    if (how != "as_name") return attribute(n, arg, how, *inner);
    return ir::Attribute::of_ref(symbol(n, inner->get<std::string>(), "argument '" + arg + "'"),
                                 tag == "as_sym_float" ? ir::AttrKind::Float : ir::AttrKind::Int);
  }
  if (tag == "as_sym_ints" || tag == "as_sym_floats") {
    const bool is_float = tag == "as_sym_floats";
    bool literal = true;
    for (const Json& e : v) literal = literal && tagged(e).first != "as_name";
    if (literal) {
      std::vector<int64_t> ints;
      std::vector<double> fs;
      for (const Json& e : v) {
        const auto [how, x] = tagged(e);
        if (x == nullptr)
          fail_node(n, ErrorKind::Graph, "argument '" + arg + "' has an element that is not a tagged value");
        if (is_float)
          fs.push_back(floats(*x));
        else
          ints.push_back(as_int(*x, "argument '" + arg + "'"));
      }
      return is_float ? ir::Attribute::of_floats(std::move(fs)) : ir::Attribute::of_ints(std::move(ints));
    }
    std::vector<ir::ValueId> items;
    for (const Json& e : v)
      items.push_back(sym(n, Json{{is_float ? "as_sym_float" : "as_sym_int", e}}, "argument '" + arg + "'"));
    const ir::ValueId list = g_.add_sym(unique_node_name(n.name + "." + arg), "sym::list", std::move(items), {},
                                        unique_value_name(n.name + "." + arg));
    return ir::Attribute::of_ref(list, is_float ? ir::AttrKind::Floats : ir::AttrKind::Ints);
  }
  fail_node(n, ErrorKind::Unsupported,
            "argument '" + arg + "' is a " + tag.substr(tag.rfind("as_") == 0 ? 3 : 0) +
                ", which switchyard does not support");
}

}  // namespace switchyard::pt2
