// TorchScript importer: lowers a frozen forward graph into switchyard's IR.
//
// Rules (the aten plugin's argument convention, see plugins/aten/aten_ops.hpp):
//   * every aten:: node whose result depends on run-time data becomes one IR node with
//     op = the node's qualified kind ("aten::linear"). Its tensor arguments (by its own
//     FunctionSchema) are inputs in schema order: an absent optional tensor is kNoValue, a
//     Tensor[] argument (cat, stack, index) contributes one input per list element. Every
//     other argument is an attribute named as in the schema.
//   * static values are resolved at import: constants (tensor constants become graph
//     constants sharing the module's memory), lists and tuples (aliases of their
//     elements), and size arithmetic (aten::size -> NumToTensor -> mul -> Int -> view).
//     Size arithmetic is evaluated (eval.cpp) on meta tensors of the traced input shapes
//     (switchyard_inputs.json, see importer.cpp), and again one batch larger: a value that
//     does not change is baked into an attribute or constant; one that follows the batch
//     is rewritten to be batch-free where possible (below), else the inputs keep exactly
//     their traced shapes. Without recorded shapes such an argument is an error naming it.
//   * a node returning Tensor[] (chunk, split, unbind) takes its prim::ListUnpack's outputs.
//   * in-place ops that RemoveMutation left are run out of place: later uses of the
//     mutated value are rewired to the node's output. Writing through a view (or into a
//     tensor a later-used view aliases) cannot be made functional and is an error.
//   * sizes that follow the batch are kept free of it where possible (rewrites.cpp):
//     view(x, [x.size(0), -1]) -> flatten(x, 1); a view entry such as B * H -> -1;
//     class_token.expand(x.size(0), -1, -1) -> expand_as a template cut out of x.
//     Otherwise the inputs are pinned to the traced shapes.
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

bool is_tensor(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::TensorType; }
bool is_none(const jit::Value* v) { return v->type()->kind() == c10::TypeKind::NoneType; }
bool is_optional_tensor(const c10::TypePtr& t) {
  auto o = t->cast<c10::OptionalType>();
  return o && is_tensor(o->getElementType());
}
bool is_tensor_list(const c10::TypePtr& t) {
  auto l = t->cast<c10::ListType>();
  return l && (is_tensor(l->getElementType()) || is_optional_tensor(l->getElementType()));
}

// Nodes resolved on demand by their consumers (aliases and static values).
bool is_lazy_prim(c10::Symbol k) {
  return k == c10::prim::Constant || k == c10::prim::ListConstruct ||
         k == c10::prim::TupleConstruct || k == c10::prim::ListUnpack ||
         k == c10::prim::TupleUnpack || k == c10::prim::TupleIndex ||
         k == c10::prim::NumToTensor;
}

// An aten op whose result is a view of its first argument (`Tensor(a) self -> Tensor(a)`).
bool is_view_op(const jit::Node* n) {
  const c10::FunctionSchema* s = n->maybeSchema();
  if (s == nullptr || s->is_mutable() || s->returns().empty()) return false;
  const c10::AliasInfo* a = s->returns()[0].alias_info();
  return a != nullptr && !a->isWrite();
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

ir::ValueId Lowerer::constant(const at::Tensor& t, const std::string& base, bool baked) {
  ir::ValueId id = g_.add_constant(unique_value_name(base.empty() ? "const" : base),
                                   share(t, "constant '" + base + "'"));
  if (baked)
    log::get().debug("torchscript: {}: baked size-dependent value '{}' {} into a constant", path_,
                     g_.values[id].name, shape_string(t.sizes().vec()));
  return id;
}

ir::ValueId Lowerer::tensor(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  auto it = tensors_.find(v);
  if (it != tensors_.end()) {
    if (nested_.count(v))
      fail(user, "argument '" + arg + "' is a nested tensor (from aten::_nested_tensor_from_mask); "
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
    if (src->kind() == c10::prim::TupleConstruct || src->kind() == c10::prim::ListConstruct) {
      int64_t i = eval_.eval(p->input(1), user, arg).toInt();
      if (i < 0) i += static_cast<int64_t>(src->inputs().size());
      if (i >= 0 && i < static_cast<int64_t>(src->inputs().size()))
        return tensor(src->input(static_cast<size_t>(i)), user, arg);
    }
  }
  const Dep d = eval_.dep(v);
  if (d == Dep::Data)
    fail(user, "argument '" + arg + "' comes from " + where(p) + ", which was not lowered");
  c10::IValue value = eval_.eval(v, user, arg);
  at::Tensor t;
  if (value.isTensor()) t = value.toTensor();
  else if (value.isInt()) t = at::scalar_tensor(value.toInt(), at::kLong);
  else if (value.isDouble()) t = at::scalar_tensor(value.toDouble(), at::kDouble);
  else if (value.isBool()) t = at::scalar_tensor(value.toBool(), at::kBool);
  else fail(user, "argument '" + arg + "' is not a tensor");
  if (d == Dep::Shape && !pin_shapes_) {
    ir::ValueId id = expand_by_size(v, user, arg);
    if (id != ir::kNoValue) return tensors_[v] = id;
    check_batch_free(v, value, user, arg, nullptr);
  }
  ir::ValueId id = constant(t, constant_name(v, user, arg), d == Dep::Shape);
  tensors_[v] = id;
  return id;
}

std::vector<ir::ValueId> Lowerer::tensor_list(const jit::Value* v, const jit::Node* user,
                                               const std::string& arg) {
  std::vector<ir::ValueId> ids;
  const jit::Node* p = v->node();
  if (p->kind() == c10::prim::ListConstruct) {
    for (size_t i = 0; i < p->inputs().size(); ++i) {
      const jit::Value* e = p->input(i);
      ids.push_back(is_none(e) ? ir::kNoValue : tensor(e, user, arg + "[" + std::to_string(i) + "]"));
    }
    return ids;
  }
  if (eval_.dep(v) == Dep::Data)
    fail(user, "tensor-list argument '" + arg + "' comes from " + where(p) +
                   ", not from prim::ListConstruct");
  c10::IValue list = eval_.eval(v, user, arg);
  if (eval_.dep(v) == Dep::Shape) check_batch_free(v, list, user, arg, nullptr);
  std::string base = constant_name(v, user, arg);
  size_t i = 0;
  for (const c10::IValue& e : list.toListRef()) {
    std::string name = base + "." + std::to_string(i++);
    ids.push_back(e.isNone() ? ir::kNoValue : constant(e.toTensor(), name, eval_.dep(v) == Dep::Shape));
  }
  return ids;
}

ir::Attribute Lowerer::attribute(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  if (is_none(v)) return ir::Attribute::none();
  const Dep d = eval_.dep(v);
  if (d == Dep::Data)
    fail(user, "argument '" + arg + "' is computed from tensor values at run time (by " +
                   where(v->node()) + "); switchyard needs it when the model is loaded");
  c10::IValue value = eval_.eval(v, user, arg);
  ir::Attribute a;
  if (!to_attribute(value, &a))
    fail(user, "argument '" + arg + "' (" + value.tagKind() + ") has no switchyard attribute form");
  if (d == Dep::Shape) {
    log::get().debug("torchscript: {}: {}: baked size-dependent argument '{}'", path_, where(user), arg);
    check_batch_free(v, value, user, arg, &a);
  }
  return a;
}

void Lowerer::check_batch_free(const jit::Value* v, const c10::IValue& traced, const jit::Node* user,
                               const std::string& arg, ir::Attribute* list) {
  if (pin_shapes_) return;
  std::optional<c10::IValue> other = eval_.eval_other_batch(v, traced);
  if (other && same_value(*other, traced)) return;
  // view/reshape(x, [T, B * H, D]): the one entry that follows the batch becomes -1.
  const std::string op = user->kind().toQualString();
  if (other && list != nullptr && list->kind == ir::AttrKind::Ints && other->isIntList() &&
      (op == "aten::view" || op == "aten::reshape" || op == "aten::_unsafe_view")) {
    std::vector<int64_t> b = other->toIntVector();
    std::vector<size_t> differ;
    bool has_free = false;
    for (size_t i = 0; i < list->ints.size() && i < b.size(); ++i) {
      if (list->ints[i] != b[i]) differ.push_back(i);
      if (list->ints[i] == -1) has_free = true;
    }
    if (b.size() == list->ints.size() && differ.size() == 1 && !has_free) {
      list->ints[differ[0]] = -1;
      return;
    }
  }
  log::get().debug("torchscript: {}: {}: argument '{}' depends on the batch size; the inputs keep "
                   "their traced shapes", path_, where(user), arg);
  pin_shapes_ = true;
}

// ---- emitting nodes ----------------------------------------------------------------------

int32_t Lowerer::emit(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                      size_t num_outputs, const std::string& path) {
  int32_t idx = g_.add_node("", op, std::move(inputs), std::vector<std::string>(num_outputs),
                            std::move(attrs), path);
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
      for (ir::ValueId id : tensor_list(v, n, a.name())) inputs.push_back(id);
    } else {
      bool overridden = false;
      for (const auto& [name, attr] : over.attrs)
        if (name == a.name()) attrs.emplace_back(name, attr), overridden = true;
      if (!overridden) attrs.emplace_back(a.name(), attribute(v, n, a.name()));
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
        fail(n, "its tensor-list result is used other than by one prim::ListUnpack, so the "
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
  if (schema->is_mutable()) rewire_mutation(n, *schema, node.outputs.empty() ? ir::kNoValue : node.outputs[0]);
}

// The values that share memory with `m` through view ops (its bases and its views).
static std::vector<const jit::Value*> view_group(const jit::Value* m) {
  std::vector<const jit::Value*> group{m}, todo{m};
  std::unordered_set<const jit::Value*> seen{m};
  auto add = [&](const jit::Value* v) {
    if (seen.insert(v).second) group.push_back(v), todo.push_back(v);
  };
  while (!todo.empty()) {
    const jit::Value* v = todo.back();
    todo.pop_back();
    if (is_view_op(v->node()) && !v->node()->inputs().empty()) add(v->node()->input(0));
    for (const jit::Use& u : v->uses()) {
      if (u.offset != 0 || !is_view_op(u.user)) continue;
      for (const jit::Value* out : u.user->outputs()) {
        add(out);
        for (const jit::Use& uu : out->uses())
          if (uu.user->kind() == c10::prim::ListUnpack)
            for (const jit::Value* piece : uu.user->outputs()) add(piece);
      }
    }
  }
  return group;
}

void Lowerer::rewire_mutation(const jit::Node* n, const c10::FunctionSchema& schema, ir::ValueId result) {
  const jit::Node* ret = graph_->return_node();
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::AliasInfo* a = schema.arguments()[i].alias_info();
    if (a == nullptr || !a->isWrite()) continue;
    const jit::Value* m = n->input(i);
    for (const jit::Value* w : view_group(m)) {
      if (w == m) continue;
      for (const jit::Use& u : w->uses())
        if (u.user == ret || n->isBefore(u.user))
          fail(n, "it writes in place into '" + m->debugName() + "', which shares memory with '" +
                      w->debugName() + "' (a view) used afterwards; switchyard runs in-place ops "
                      "out of place and cannot make this write functional");
    }
    if (result == ir::kNoValue) fail(n, "an in-place op without a result");
    tensors_[m] = result;  // later uses see the written value
  }
}

// ---- driver ----------------------------------------------------------------------------

void Lowerer::lower_node(const jit::Node* n) {
  const c10::Symbol k = n->kind();
  if (is_lazy_prim(k)) return;
  if (k == c10::aten::__getitem__ && (n->input(0)->node()->kind() == c10::prim::ListConstruct ||
                                      n->input(0)->node()->kind() == c10::prim::TupleConstruct))
    return;  // an element of a list built here: resolved by its users
  if (!n->blocks().empty() || k == c10::prim::CallMethod || k == c10::prim::CallFunction ||
      k == c10::prim::PythonOp || k == c10::prim::GetAttr || k == c10::prim::SetAttr)
    fail(n, "");
  bool nested_input = false;
  for (const jit::Value* in : n->inputs()) nested_input = nested_input || nested_.count(in) > 0;
  if (nested_input || k == c10::aten::_nested_tensor_from_mask) return lower_nested(n);
  bool data = false;
  for (const jit::Value* out : n->outputs()) data = data || eval_.dep(out) == Dep::Data;
  if (!data) return;  // static: resolved where it is used
  if (!k.is_aten()) fail(n, "");
  if (lower_batch_view(n)) return;
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
  std::vector<ir::ValueId> input_ids;
  for (size_t i = 1; i < graph_inputs.size(); ++i) {
    const jit::Value* v = graph_inputs[i];
    const InputInfo& info = inputs_.at(i - 1);
    if (!is_tensor(v->type()))
      throw Error(ErrorKind::Unsupported, path_ + ": input '" + info.name + "' is a " +
                                              v->type()->repr_str() + "; only tensor inputs are supported");
    ir::ValueId id = g_.add_input(unique_value_name(info.name), info.dtype, {});
    tensors_[v] = id;
    input_ids.push_back(id);
  }
  // Constructs that cannot be lowered are reported first, before anything that uses them.
  for (const jit::Node* n : graph_->nodes()) {
    const c10::Symbol k = n->kind();
    if (!n->blocks().empty() || k == c10::prim::CallMethod || k == c10::prim::CallFunction ||
        k == c10::prim::PythonOp || k == c10::prim::GetAttr || k == c10::prim::SetAttr ||
        k == c10::prim::RaiseException)
      fail(n, k == c10::prim::GetAttr ? "a module attribute survived freezing" : "");
  }
  for (const jit::Node* n : graph_->nodes()) lower_node(n);
  for (const jit::Value* v : graph_->outputs()) collect_outputs(v, g_.outputs);

  // Declared input shapes: the traced ones, with a free batch dimension unless a baked
  // size depends on it.
  for (size_t i = 0; i < input_ids.size(); ++i) {
    const InputInfo& info = inputs_[i];
    if (!info.known_shape) continue;
    std::vector<int64_t> shape = info.shape;
    if (!pin_shapes_ && !shape.empty()) shape[0] = -1;
    g_.values[static_cast<size_t>(input_ids[i])].shape = shape;
  }
  name_nodes();
}

void lower_graph(const std::string& path, const std::shared_ptr<jit::Graph>& graph,
                 const c10::ClassTypePtr& root, const std::vector<InputInfo>& inputs, ir::Graph& out) {
  // Example inputs for evaluating sizes: the traced shapes, and the same one batch larger.
  std::vector<InputInfo> infos = inputs;
  for (size_t i = 0; i < infos.size() && i + 1 < graph->inputs().size(); ++i)
    if (!infos[i].known_dtype) infos[i].dtype = infer_input_dtype(graph->inputs()[i + 1]);
  std::vector<std::optional<at::Tensor>> examples(graph->inputs().size()), other(examples.size());
  bool other_ok = true;
  for (size_t i = 0; i < infos.size() && i + 1 < examples.size(); ++i) {
    const InputInfo& info = infos[i];
    at::ScalarType st = at::kFloat;
    if (!info.known_shape || !to_scalar_type(info.dtype, &st)) {
      other_ok = false;
      continue;
    }
    // Meta tensors: sizes without data, so evaluating sizes costs no arithmetic.
    const auto options = at::TensorOptions().dtype(st).device(at::kMeta);
    examples[i + 1] = at::empty(info.shape, options);
    std::vector<int64_t> bigger = info.shape;
    // A second example one batch larger (no room above INT64_MAX: then none).
    if (bigger.empty() || bigger[0] == std::numeric_limits<int64_t>::max()) other_ok = false;
    else ++bigger[0];
    other[i + 1] = at::empty(bigger, options);
  }
  if (!other_ok) other.clear();
  Lowerer lowerer(path, graph, root, std::move(infos), out,
                  Evaluator(path, std::move(examples), std::move(other)));
  lowerer.run();
}

}  // namespace switchyard::torchscript
