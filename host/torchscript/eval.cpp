// TorchScript importer: source locations, dtype and tensor conversion, attributes, and the
// evaluator that resolves static values (constants and size arithmetic) at import time.
#include "lower_internal.hpp"
#include "util/log.hpp"

#include <switchyard/aten_dtype.hpp>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <unordered_set>

namespace switchyard::torchscript {

namespace jit = torch::jit;

// ---- messages ---------------------------------------------------------------------------

std::string first_line(const std::string& message) {
  std::string m = message;
  size_t nl = m.find('\n');
  if (nl != std::string::npos) m.resize(nl);
  if (m.size() > 300) m = m.substr(0, 297) + "...";
  return m;
}

std::string source_location(const jit::Node* node) {
  jit::SourceRange range = node->sourceRange();
  if (auto original = range.findSourceRangeThatGenerated()) range = *original;
  if (!range.source()) return "<unknown location>";
  std::string loc, file;
  if (auto flc = range.file_line_col()) {
    file = std::get<0>(*flc);
    loc = (file.empty() ? std::string("<source>") : file) + ":" + std::to_string(std::get<1>(*flc)) + ":" +
          std::to_string(std::get<2>(*flc));
  }
  std::string text = first_line(range.text().str());
  text.erase(0, std::min(text.find_first_not_of(" \t"), text.size()));
  // Traced code points at a "file.py(12): forward" comment: the location says it all.
  if (!file.empty() && text.find(file) != std::string::npos) text.clear();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  if (loc.empty() && text.empty()) return "<unknown location>";
  if (text.empty()) return loc;
  return loc.empty() ? "`" + text + "`" : loc + " `" + text + "`";
}

std::string where(const jit::Node* node) {
  return std::string(node->kind().toQualString()) + " at " + source_location(node);
}

// ---- dtypes and tensors -------------------------------------------------------------------

bool to_dl_dtype(at::ScalarType type, DLDataType* out) { return sy::to_dl_dtype(type, out); }

bool to_scalar_type(DLDataType dtype, at::ScalarType* out) { return sy::to_scalar_type(dtype, out); }

Tensor share(const at::Tensor& tensor, const std::string& what) {
  if (!tensor.defined()) throw Error(ErrorKind::Graph, what + " is an undefined tensor");
  if (tensor.is_nested() || tensor.layout() != at::kStrided || !tensor.device().is_cpu())
    throw Error(ErrorKind::Unsupported, what + " is not a dense CPU tensor");
  at::Tensor t = tensor;
  if (t.is_conj() || t.is_neg()) t = t.resolve_conj().resolve_neg();
  DLDataType dtype;
  if (!to_dl_dtype(t.scalar_type(), &dtype))
    throw Error(ErrorKind::Unsupported,
                what + " has dtype " + std::string(c10::toString(t.scalar_type())) + ", which DLPack cannot describe");
  static char empty_data[64];
  void* data = t.numel() == 0 || t.data_ptr() == nullptr ? empty_data : t.data_ptr();
  return Tensor::from_blob(data, dtype, t.sizes().vec(), t.strides().vec(), [t]() mutable { t.reset(); });
}

bool to_attribute(const c10::IValue& v, ir::Attribute* out) {
  if (v.isNone()) return *out = ir::Attribute::none(), true;
  if (v.isBool()) return *out = ir::Attribute::of_int(v.toBool() ? 1 : 0), true;
  if (v.isInt()) return *out = ir::Attribute::of_int(v.toInt()), true;
  if (v.isDouble()) return *out = ir::Attribute::of_float(v.toDouble()), true;
  if (v.isString()) return *out = ir::Attribute::of_string(v.toStringRef()), true;
  if (v.isDevice()) return *out = ir::Attribute::of_string(v.toDevice().str()), true;
  if (v.isIntList()) return *out = ir::Attribute::of_ints(v.toIntVector()), true;
  if (v.isDoubleList()) return *out = ir::Attribute::of_floats(v.toDoubleVector()), true;
  if (v.isBoolList()) {
    std::vector<int64_t> ints;
    for (bool b : v.toBoolList()) ints.push_back(b ? 1 : 0);
    return *out = ir::Attribute::of_ints(std::move(ints)), true;
  }
  if (v.isList()) {  // a generic list: ints (or bools), or numbers
    std::vector<int64_t> ints;
    std::vector<double> floats;
    bool all_int = true;
    for (const c10::IValue& e : v.toListRef()) {
      if (e.isInt() || e.isBool()) {
        int64_t i = e.isInt() ? e.toInt() : (e.toBool() ? 1 : 0);
        ints.push_back(i);
        floats.push_back(static_cast<double>(i));
      } else if (e.isDouble()) {
        all_int = false;
        floats.push_back(e.toDouble());
      } else {
        return false;
      }
    }
    *out = all_int ? ir::Attribute::of_ints(std::move(ints)) : ir::Attribute::of_floats(std::move(floats));
    return true;
  }
  return false;
}

// ---- the evaluator ------------------------------------------------------------------------

namespace {

// Ops that read only a tensor's metadata: their result depends on sizes, not values.
bool reads_metadata_only(const jit::Node* n) {
  static const std::unordered_set<std::string> kOps = {
      "aten::size",       "aten::dim",    "aten::numel", "aten::len",    "aten::sym_size", "aten::is_floating_point",
      "aten::is_complex", "prim::device", "prim::dtype", "prim::layout", "prim::is_cuda",  "prim::shape",
      "aten::stride"};
  return kOps.count(n->kind().toQualString()) > 0;
}

bool is_tensor_type(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::TensorType; }

}  // namespace

bool is_view_op(const jit::Node* n) {
  const c10::FunctionSchema* s = n->maybeSchema();
  if (s == nullptr || s->is_mutable() || s->returns().empty()) return false;
  const c10::AliasInfo* a = s->returns()[0].alias_info();
  return a != nullptr && !a->isWrite();
}

bool is_write_op(const jit::Node* n) {
  const c10::FunctionSchema* s = n->maybeSchema();
  return s != nullptr && s->is_mutable();
}

Dep Evaluator::dep(const jit::Value* v) {
  auto it = deps_.find(v);
  if (it != deps_.end()) return it->second;
  // Iterative: collect the unclassified producers, then classify them in graph order.
  std::vector<const jit::Node*> todo;
  std::unordered_set<const jit::Node*> seen;
  std::vector<const jit::Value*> stack{v};
  while (!stack.empty()) {
    const jit::Value* x = stack.back();
    stack.pop_back();
    if (deps_.count(x)) continue;
    const jit::Node* n = x->node();
    if (n->kind() == c10::prim::Param) {
      deps_[x] = Dep::Data;
      continue;
    }
    if (!seen.insert(n).second) continue;
    todo.push_back(n);
    for (const jit::Value* in : n->inputs())
      if (!deps_.count(in)) stack.push_back(in);
  }
  std::sort(todo.begin(), todo.end(), [](const jit::Node* a, const jit::Node* b) { return a->isBefore(b); });
  for (const jit::Node* n : todo) {
    Dep d = Dep::Const;
    if (n->kind() == c10::prim::Constant) {
      d = Dep::Const;
    } else if (!n->blocks().empty() || n->isNondeterministic() || n->hasSideEffects()) {
      d = Dep::Data;
    } else if (reads_metadata_only(n)) {
      d = Dep::Shape;
      for (const jit::Value* in : n->inputs())
        if (!is_tensor_type(in->type())) d = std::max(d, deps_.at(in));
    } else {
      for (const jit::Value* in : n->inputs()) d = std::max(d, deps_.at(in));
    }
    // A value written in place later is computed at run time, never folded.
    for (const jit::Value* out : n->outputs()) deps_[out] = written(out) ? std::max(d, Dep::Shape) : d;
  }
  return deps_.at(v);
}

c10::IValue Evaluator::eval(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  auto it = values_.find(v);
  if (it != values_.end()) return it->second;
  if (dep(v) != Dep::Const)
    throw Error(ErrorKind::Internal,
                path_ + ": " + where(user) + ": argument '" + arg + "' is not a constant, but was asked for at import");
  std::vector<const jit::Node*> todo;
  std::unordered_set<const jit::Node*> seen;
  std::vector<const jit::Value*> stack{v};
  while (!stack.empty()) {
    const jit::Value* x = stack.back();
    stack.pop_back();
    if (values_.count(x)) continue;
    const jit::Node* n = x->node();
    if (!seen.insert(n).second) continue;
    todo.push_back(n);
    for (const jit::Value* in : n->inputs())
      if (!values_.count(in)) stack.push_back(in);
  }
  std::sort(todo.begin(), todo.end(), [](const jit::Node* a, const jit::Node* b) { return a->isBefore(b); });
  for (const jit::Node* n : todo) run(n, user, arg);
  return values_.at(v);
}

void Evaluator::run(const jit::Node* n, const jit::Node* user, const std::string& arg) {
  auto fail = [&](const std::string& why) {
    throw Error(ErrorKind::Graph, path_ + ": cannot lower " + where(user) + ": argument '" + arg + "' needs " +
                                      where(n) + ", which " + why);
  };
  if (n->kind() == c10::prim::Constant) {
    auto value = jit::toIValue(n->output());
    if (!value) fail("has no constant value");
    values_[n->output()] = *value;
    return;
  }
  if (!n->blocks().empty()) fail("has sub-blocks (control flow) and cannot be evaluated");
  try {
    jit::Stack stack;
    for (const jit::Value* in : n->inputs()) {
      c10::IValue x = values_.at(in);
      if (is_write_op(n) && x.isTensor()) x = x.toTensor().clone();  // never write into weights
      stack.push_back(std::move(x));
    }
    const c10::Symbol k = n->kind();
    if (k == c10::prim::ListConstruct) {  // interpreter instructions, not operators
      c10::impl::GenericList list(n->output()->type()->expectRef<c10::ListType>().getElementType());
      for (c10::IValue& x : stack) list.push_back(std::move(x));
      stack.assign(1, c10::IValue(std::move(list)));
    } else if (k == c10::prim::TupleConstruct) {
      std::vector<c10::IValue> elems(stack.begin(), stack.end());
      stack.assign(1, c10::IValue(c10::ivalue::Tuple::create(std::move(elems))));
    } else if (k == c10::prim::ListUnpack || k == c10::prim::TupleUnpack) {
      c10::IValue x = stack.at(0);
      stack.clear();
      if (x.isTuple())
        for (const c10::IValue& e : x.toTupleRef().elements()) stack.push_back(e);
      else
        for (const c10::IValue& e : x.toListRef()) stack.push_back(e);
    } else {
      n->getOperation()(stack);
    }
    if (stack.size() != n->outputs().size())
      fail("returned " + std::to_string(stack.size()) + " values for " + std::to_string(n->outputs().size()) +
           " outputs");
    for (size_t i = 0; i < stack.size(); ++i) values_[n->outputs()[i]] = std::move(stack[i]);
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    std::string m = e.what_without_backtrace();
    m.erase(0, std::min(m.find_first_not_of(" \t\n"), m.size()));
    fail("failed: " + first_line(m));
  } catch (const std::exception& e) {
    fail("failed: " + first_line(e.what()));
  }
}

}  // namespace switchyard::torchscript
