// TorchScript importer: lowers a frozen forward graph into switchyard's IR.
//
// Rules (the aten plugin's argument convention, see plugins/aten/aten_ops.hpp):
//   * every aten:: node whose result is computed at run time becomes one IR node with
//     op = the node's qualified kind ("aten::linear"). Its tensor arguments (by its own
//     FunctionSchema) are inputs in schema order: an absent optional tensor is kNoValue, a
//     Tensor[] argument (cat, stack, index) contributes one input per list element, and
//     every Tensor[] argument but the schema's last one also gets an int attribute
//     "<arg>.len" (lstm's `hx.len`), so that the lists can be told apart. Every other
//     argument is an attribute named as in the schema.
//   * constants are folded at import: tensor constants become graph constants sharing the
//     module's memory; lists and tuples are aliases of their elements.
//   * size arithmetic stays in the graph (docs/shapes.md): aten::size -> NumToTensor ->
//     mul -> Int -> ListConstruct becomes sym:: nodes (lower_sym.cpp), and a kernel
//     argument computed that way is an attribute bound to the sym value, resolved from the
//     actual input shapes on each new input-shape signature. Nothing is frozen to the
//     traced shapes, which a plain trace does not even record.
//   * a node returning Tensor[] (chunk, split, unbind) takes its prim::ListUnpack's outputs.
//   * in-place ops that RemoveMutation left are run out of place, and their writes made
//     functional (lower_write.cpp): a write through a view is scattered back into its base,
//     and later readers of the base or its views read the new value.
//   * nested tensors (TransformerEncoder's fast path): see rewrites.cpp.
//   * any other construct (prim::If, prim::Loop, prim::PythonOp, leftover method calls)
//     is an error naming it and its Python source location.
#include "lower_internal.hpp"
#include "lower_state.hpp"
#include "util/log.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <unordered_set>

namespace switchyard::torchscript {

namespace jit = torch::jit;

namespace {

// Nodes resolved on demand by their consumers (aliases and static values).
bool is_lazy_prim(c10::Symbol k) {
  return k == c10::prim::Constant || k == c10::prim::ListConstruct || k == c10::prim::TupleConstruct ||
         k == c10::prim::ListUnpack || k == c10::prim::TupleUnpack || k == c10::prim::TupleIndex ||
         k == c10::prim::NumToTensor;
}

std::string strip_self(std::string name) {
  if (name.rfind("self.", 0) == 0) name = name.substr(5);
  return name;
}

}  // namespace

// One step of a module path: `name` is an attribute of `parent`, or of a container inside
// it that is never called itself (nn.ModuleList: "layers.0"), so not on the call stack.
std::string Lowerer::path_step(const c10::ClassTypePtr& parent, const std::string& name,
                               const c10::ClassTypePtr& child) {
  if (!parent || parent->findAttributeSlot(name)) return name;
  auto key = std::make_pair(parent.get(), name);
  auto it = steps_.find(key);
  if (it != steps_.end()) return it->second;
  std::string step = name;
  for (int typed = 1; typed >= 0 && step == name; --typed) {
    for (size_t slot = 0; slot < parent->numAttributes(); ++slot) {
      auto box = parent->getAttribute(slot)->cast<c10::ClassType>();
      if (!box || !box->is_module()) continue;
      auto s = box->findAttributeSlot(name);
      if (s && (!typed || (child && box->getAttribute(*s) == child))) {
        step = parent->getAttributeName(slot) + "." + name;
        break;
      }
    }
  }
  steps_[key] = step;
  return step;
}

std::string Lowerer::path_of(const jit::Node* n) {
  auto cs = n->callstack();
  if (!cs) return "";
  std::string path;
  c10::ClassTypePtr parent = root_;
  for (const auto& entry : (*cs)->vec()) {
    const auto& info = std::get<2>(entry);
    if (!info || info->instance_name().empty()) continue;
    path += (path.empty() ? "" : ".") + path_step(parent, info->instance_name(), info->class_type());
    parent = info->class_type();
  }
  return path;
}

// A constant's name: its attribute path ("layer1.0.conv1.weight"), else the user's module
// path and argument ("layer1.0.conv1.bias" for a folded batch-norm bias).
std::string Lowerer::constant_name(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  if (v->hasDebugName()) {
    std::string name = strip_self(v->debugName());
    if (!name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]))) return name;
  }
  std::string path = user->kind() == c10::prim::Return ? std::string() : path_of(user);
  return path.empty() ? arg : path + "." + arg;
}

// ---- resolving values ----------------------------------------------------------------

[[noreturn]] void Lowerer::fail(const jit::Node* n, const std::string& why) const {
  throw Error(ErrorKind::Graph, path_ + ": cannot lower " + where(n) + (why.empty() ? "" : ": " + why));
}

ir::ValueId Lowerer::constant(const at::Tensor& t, const std::string& base) {
  return g_.add_constant(unique_value_name(base.empty() ? "const" : base), share(t, "constant '" + base + "'"));
}

ir::ValueId Lowerer::tensor(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  auto it = tensors_.find(v);
  if (it != tensors_.end()) {
    if (nested_.count(v))
      fail(user, "argument '" + arg +
                     "' is a nested tensor (from aten::_nested_tensor_from_mask); "
                     "only aten::_transformer_encoder_layer_fwd and aten::to_padded_tensor may use it");
    return it->second;
  }
  const jit::Node* p = v->node();
  const c10::Symbol k = p->kind();
  if ((k == c10::prim::ListUnpack || k == c10::prim::TupleUnpack) &&
      (p->input()->node()->kind() == c10::prim::ListConstruct ||
       p->input()->node()->kind() == c10::prim::TupleConstruct))
    return tensor(p->input()->node()->input(v->offset()), user, arg);
  if (k == c10::prim::TupleIndex || k == c10::aten::__getitem__) {
    const jit::Node* src = p->input(0)->node();
    if ((src->kind() == c10::prim::TupleConstruct || src->kind() == c10::prim::ListConstruct) &&
        eval_.dep(p->input(1)) == Dep::Const) {
      int64_t i = eval_.eval(p->input(1), user, arg).toInt();
      if (i < 0) i += static_cast<int64_t>(src->inputs().size());
      if (i >= 0 && i < static_cast<int64_t>(src->inputs().size()))
        return tensor(src->input(static_cast<size_t>(i)), user, arg);
    }
  }
  const Dep d = eval_.dep(v);
  if (k == c10::prim::Constant || d == Dep::Const) {
    c10::IValue value = eval_.eval(v, user, arg);
    if (!value.isTensor()) fail(user, "argument '" + arg + "' is a " + value.tagKind() + ", not a tensor");
    return tensors_[v] = constant(value.toTensor(), constant_name(v, user, arg));
  }
  if (d == Dep::Shape)
    if (auto s = shape_scalar(v)) return tensors_[v] = sym_tensor(*s, path_of(p));
  if (k == c10::prim::NumToTensor)
    fail(user, "argument '" + arg + "' is a number computed from tensor values at run time (by " +
                   where(p->input(0)->node()) + "); switchyard computes numbers from sizes and constants only");
  fail(user, "argument '" + arg + "' comes from " + where(p) + ", which was not lowered");
}

std::vector<ir::ValueId> Lowerer::tensor_list(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  std::vector<ir::ValueId> ids;
  const jit::Node* p = v->node();
  if (p->kind() == c10::prim::ListConstruct) {
    for (size_t i = 0; i < p->inputs().size(); ++i) {
      const jit::Value* e = p->input(i);
      ids.push_back(is_none(e) ? ir::kNoValue : tensor(e, user, arg + "[" + std::to_string(i) + "]"));
    }
    return ids;
  }
  if (eval_.dep(v) != Dep::Const)
    fail(user, "tensor-list argument '" + arg + "' comes from " + where(p) + ", not from prim::ListConstruct");
  c10::IValue list = eval_.eval(v, user, arg);
  std::string base = constant_name(v, user, arg);
  size_t i = 0;
  for (const c10::IValue& e : list.toListRef()) {
    std::string name = base + "." + std::to_string(i++);
    ids.push_back(e.isNone() ? ir::kNoValue : constant(e.toTensor(), name));
  }
  return ids;
}

ir::Attribute Lowerer::attribute(const jit::Value* v, const jit::Node* user, const std::string& arg,
                                 const c10::TypePtr& type) {
  if (is_none(v)) return ir::Attribute::none();
  const Dep d = eval_.dep(v);
  if (d == Dep::Data)
    fail(user, "argument '" + arg + "' is computed from tensor values at run time (by " + where(v->node()) +
                   "); switchyard computes arguments from input sizes and constants only");
  if (d == Dep::Shape) return bind(sym(v, user, arg), type, user, arg);
  c10::IValue value = eval_.eval(v, user, arg);
  ir::Attribute a;
  if (!to_attribute(value, &a))
    fail(user, "argument '" + arg + "' (" + value.tagKind() + ") has no switchyard attribute form");
  return a;
}

// ---- emitting nodes ----------------------------------------------------------------------

int32_t Lowerer::emit(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs, size_t num_outputs,
                      const std::string& path) {
  int32_t idx = g_.add_node("", op, std::move(inputs), std::vector<std::string>(num_outputs), std::move(attrs), path);
  std::string short_name = op.substr(op.find("::") == std::string::npos ? 0 : op.find("::") + 2);
  while (short_name.size() > 1 && short_name.back() == '_') short_name.pop_back();
  meta_.push_back(NodeMeta{path, short_name});
  return idx;
}

ir::ValueId Lowerer::emit1(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                           const std::string& path) {
  int32_t idx = emit(op, std::move(inputs), std::move(attrs), 1, path);
  return g_.nodes[static_cast<size_t>(idx)].outputs[0];
}

void Lowerer::lower_aten(const jit::Node* n, const Overrides& over) {
  const c10::FunctionSchema* schema = n->maybeSchema();
  if (schema == nullptr) fail(n, "no operator schema matches this node");
  const auto& args = schema->arguments();
  if (args.size() != n->inputs().size()) fail(n, "vararg operators are not supported");
  size_t last_list = args.size();
  for (size_t i = 0; i < args.size(); ++i)
    if (is_tensor_list(args[i].type())) last_list = i;
  std::vector<ir::ValueId> inputs;
  ir::Attributes attrs;
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::Argument& a = args[i];
    const jit::Value* v = n->input(i);
    auto o = over.inputs.find(i);
    if (o != over.inputs.end()) {
      inputs.push_back(o->second);
    } else if (is_tensor(a.type()) || is_optional_tensor(a.type())) {
      inputs.push_back(is_none(v) ? ir::kNoValue : tensor(v, n, a.name()));
    } else if (is_tensor_list(a.type())) {
      std::vector<ir::ValueId> list = tensor_list(v, n, a.name());
      if (i != last_list)
        attrs.emplace_back(a.name() + ".len", ir::Attribute::of_int(static_cast<int64_t>(list.size())));
      inputs.insert(inputs.end(), list.begin(), list.end());
    } else {
      bool overridden = false;
      for (const auto& [name, attr] : over.attrs)
        if (name == a.name()) attrs.emplace_back(name, attr), overridden = true;
      if (!overridden) attrs.emplace_back(a.name(), attribute(v, n, a.name(), a.type()));
    }
  }

  // Outputs: tensors; a Tensor[] result takes its ListUnpack's outputs.
  std::vector<const jit::Value*> outs;
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    const jit::Value* o = n->output(i);
    if (is_tensor(o->type())) {
      outs.push_back(o);
    } else if (is_tensor_list(o->type()) && n->outputs().size() == 1) {
      if (o->uses().size() != 1 || o->uses()[0].user->kind() != c10::prim::ListUnpack)
        fail(n,
             "its tensor-list result is used other than by one prim::ListUnpack, so the "
             "number of pieces is unknown");
      for (const jit::Value* piece : o->uses()[0].user->outputs()) outs.push_back(piece);
    } else if (o->uses().empty() && i + 1 == n->outputs().size()) {
      break;  // an unused trailing non-tensor result
    } else {
      fail(n, "result #" + std::to_string(i) + " is a " + o->type()->repr_str() +
                  " computed at run time; only tensors can flow between switchyard nodes");
    }
  }
  const std::string op = over.op.empty() ? std::string(n->kind().toQualString()) : over.op;
  int32_t idx = emit(op, std::move(inputs), std::move(attrs), outs.size(), path_of(n));
  const ir::Node& node = g_.nodes[static_cast<size_t>(idx)];
  for (size_t k = 0; k < outs.size(); ++k) tensors_[outs[k]] = node.outputs[k];
  if (schema->is_mutable()) functionalize_write(n, *schema, node.outputs.empty() ? ir::kNoValue : node.outputs[0]);
}

// ---- driver ----------------------------------------------------------------------------

void Lowerer::lower_node(const jit::Node* n) {
  const c10::Symbol k = n->kind();
  if (is_lazy_prim(k)) return;
  if (k == c10::aten::__getitem__ && (n->input(0)->node()->kind() == c10::prim::ListConstruct ||
                                      n->input(0)->node()->kind() == c10::prim::TupleConstruct))
    return;  // an element of a list built here: resolved by its users
  if (!n->blocks().empty() || k == c10::prim::CallMethod || k == c10::prim::CallFunction || k == c10::prim::PythonOp ||
      k == c10::prim::GetAttr || k == c10::prim::SetAttr)
    fail(n, "");
  bool nested_input = false;
  for (const jit::Value* in : n->inputs()) nested_input = nested_input || nested_.count(in) > 0;
  if (nested_input || k == c10::aten::_nested_tensor_from_mask) return lower_nested(n);
  // A kernel runs the node unless every result is a constant (folded) or a number, list or
  // shape scalar (sym values, lowered where they are used).
  bool kernel = false;
  for (const jit::Value* out : n->outputs()) {
    const Dep d = eval_.dep(out);
    if (d == Dep::Const) continue;
    if (is_tensor(out->type()))
      kernel = kernel || d == Dep::Data || !lowered_as_sym(out);
    else if (is_tensor_list(out->type()))
      kernel = true;
  }
  if (!kernel) return;
  if (!k.is_aten()) fail(n, "");
  lower_aten(n, Overrides{});
}

void Lowerer::collect_outputs(const jit::Value* v, std::vector<ir::ValueId>& outs) {
  const jit::Node* p = v->node();
  const jit::Node* ret = graph_->return_node();
  if (p->kind() == c10::prim::TupleConstruct || p->kind() == c10::prim::ListConstruct) {
    for (const jit::Value* e : p->inputs()) collect_outputs(e, outs);
  } else if (is_tensor(v->type())) {
    outs.push_back(tensor(v, ret, "output"));
  } else {
    throw Error(ErrorKind::Graph, path_ + ": the model returns a " + v->type()->repr_str() +
                                      "; switchyard models return tensors (or tuples of tensors)");
  }
}

void Lowerer::run() {
  const auto& graph_inputs = graph_->inputs();
  for (size_t i = 1; i < graph_inputs.size(); ++i) {
    const jit::Value* v = graph_inputs[i];
    const InputInfo& info = inputs_.at(i - 1);
    if (!is_tensor(v->type()))
      throw Error(ErrorKind::Unsupported, path_ + ": input '" + info.name + "' is a " + v->type()->repr_str() +
                                              "; only tensor inputs are supported");
    ir::ValueId id = g_.add_input(unique_value_name(info.name), info.dtype, {});
    g_.values[static_cast<size_t>(id)].example_shape = info.example_shape;
    tensors_[v] = id;
  }
  // Constructs that cannot be lowered are reported first, before anything that uses them.
  for (const jit::Node* n : graph_->nodes()) {
    const c10::Symbol k = n->kind();
    if (!n->blocks().empty() || k == c10::prim::CallMethod || k == c10::prim::CallFunction ||
        k == c10::prim::PythonOp || k == c10::prim::GetAttr || k == c10::prim::SetAttr ||
        k == c10::prim::RaiseException)
      fail(n, k == c10::prim::GetAttr ? "a module attribute survived freezing" : "");
  }
  eval_.set_written(written_values());
  for (const jit::Node* n : graph_->nodes()) lower_node(n);
  for (const jit::Value* v : graph_->outputs()) collect_outputs(v, g_.outputs);
  for (const auto& [param, rank] : unpacked_ranks_) {
    ir::Value& input = g_.values[static_cast<size_t>(g_.inputs.at(param->offset() - 1))];
    input.shape.assign(static_cast<size_t>(rank), -1);
    input.rank_known = true;
  }
  name_nodes();
}

void lower_graph(const std::string& path, const std::shared_ptr<jit::Graph>& graph, const c10::ClassTypePtr& root,
                 const std::vector<InputInfo>& inputs, ir::Graph& out) {
  std::vector<InputInfo> infos = inputs;
  for (size_t i = 0; i < infos.size() && i + 1 < graph->inputs().size(); ++i)
    if (!infos[i].known_dtype) infos[i].dtype = infer_input_dtype(graph->inputs()[i + 1]);
  Lowerer lowerer(path, graph, root, std::move(infos), out);
  lowerer.run();
}

}  // namespace switchyard::torchscript
