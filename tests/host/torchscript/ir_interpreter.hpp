// A test oracle for the importer: runs an imported ir::Graph directly on LibTorch, node by
// node, with sym:: nodes evaluated by the IR's own eval_sym and every other node called
// through the JIT operator registry by its op name (the overload whose arguments the node's
// inputs and attributes fit). It checks what the importer produced, computing every size
// from the actual inputs, independently of switchyard's executor, plugins and planner.
// Test-only: slow (a registry lookup per node) and without error recovery.
#pragma once

#include "ir/graph.hpp"
#include "ir/sym.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace switchyard::test {

inline at::ScalarType to_at_dtype(DLDataType d) {
  if (d.code == kDLFloat && d.bits == 32) return at::kFloat;
  if (d.code == kDLFloat && d.bits == 64) return at::kDouble;
  if (d.code == kDLInt && d.bits == 64) return at::kLong;
  if (d.code == kDLInt && d.bits == 32) return at::kInt;
  if (d.code == 6 && d.bits == 8) return at::kBool;
  if (d.code == kDLUInt && d.bits == 8) return at::kByte;
  throw std::runtime_error("interpreter: unsupported dtype " + dtype_name(d));
}

inline DLDataType to_dl_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return {kDLFloat, 32, 1};
    case at::kDouble: return {kDLFloat, 64, 1};
    case at::kLong: return {kDLInt, 64, 1};
    case at::kInt: return {kDLInt, 32, 1};
    case at::kBool: return {6, 8, 1};
    case at::kByte: return {kDLUInt, 8, 1};
    default: throw std::runtime_error("interpreter: unsupported dtype");
  }
}

inline at::Tensor to_at_tensor(const Tensor& t) {
  Tensor c = t.contiguous();
  return at::from_blob(c.raw_data(), c.shape(), at::TensorOptions().dtype(to_at_dtype(c.dtype()))).clone();
}

// Shares `t`'s memory for the duration of a sym evaluation.
inline Tensor to_sy_tensor(const at::Tensor& src) {
  at::Tensor t = src.contiguous();
  return Tensor::from_blob(t.data_ptr(), to_dl_dtype(t.scalar_type()), t.sizes().vec(), {}, [t] {});
}

class IrInterpreter {
 public:
  explicit IrInterpreter(const ir::Graph& g) : g_(g) {}

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) {
    tensors_.clear();
    scalars_.clear();
    if (inputs.size() != g_.inputs.size()) throw std::runtime_error("interpreter: wrong number of inputs");
    for (size_t i = 0; i < inputs.size(); ++i) tensors_[g_.inputs[i]] = inputs[i];
    for (size_t v = 0; v < g_.values.size(); ++v)
      if (g_.values[v].kind == ir::ValueKind::Constant)
        tensors_[static_cast<ir::ValueId>(v)] = to_at_tensor(g_.values[v].constant);
    for (const ir::Node& n : g_.nodes) {
      try {
        if (ir::is_sym_op(n.op))
          run_sym(n);
        else
          run_kernel(n);
      } catch (const std::exception& e) {
        throw std::runtime_error("interpreter: node '" + n.name + "' (" + n.op + "): " + e.what());
      }
    }
    std::vector<at::Tensor> out;
    for (ir::ValueId id : g_.outputs) out.push_back(tensors_.at(id));
    return out;
  }

  // Every sym value of the last run, by value name (for tests of the arithmetic itself).
  ir::Attribute scalar(const std::string& name) const { return scalars_.at(g_.find_value(name)); }

 private:
  void run_sym(const ir::Node& n) {
    std::vector<Tensor> held;
    held.reserve(n.inputs.size());
    std::vector<ir::SymArg> args;
    for (ir::ValueId id : n.inputs) {
      ir::SymArg a;
      auto s = scalars_.find(id);
      if (s != scalars_.end()) {
        a.scalar = &s->second;
      } else {
        held.push_back(to_sy_tensor(tensors_.at(id)));
        a.tensor = &held.back();
      }
      args.push_back(a);
    }
    if (n.op == "sym::tensor")
      tensors_[n.outputs[0]] = to_at_tensor(ir::eval_sym_tensor(n, *args.at(0).scalar));
    else
      scalars_[n.outputs[0]] = ir::eval_sym(n, args);
  }

  // The IValue for attribute `a` given to an argument of type `type`.
  static c10::IValue to_ivalue(const ir::Attribute& a, const c10::TypePtr& type) {
    c10::TypePtr t = type;
    if (auto o = t->cast<c10::OptionalType>()) t = o->getElementType();
    switch (a.kind) {
      case ir::AttrKind::None: return c10::IValue();
      case ir::AttrKind::Int:
        if (t->kind() == c10::TypeKind::BoolType) return c10::IValue(a.i != 0);
        if (t->kind() == c10::TypeKind::FloatType) return c10::IValue(static_cast<double>(a.i));
        return c10::IValue(a.i);
      case ir::AttrKind::Float: return c10::IValue(a.f);
      case ir::AttrKind::String:
        if (t->kind() == c10::TypeKind::DeviceObjType) return c10::IValue(c10::Device(a.s));
        return c10::IValue(a.s);
      case ir::AttrKind::Ints: {
        auto l = t->cast<c10::ListType>();
        if (l && l->getElementType()->kind() == c10::TypeKind::BoolType) {
          c10::List<bool> b;
          for (int64_t x : a.ints) b.push_back(x != 0);
          return c10::IValue(b);
        }
        if (l && l->getElementType()->kind() == c10::TypeKind::FloatType)
          return c10::IValue(std::vector<double>(a.ints.begin(), a.ints.end()));
        return c10::IValue(a.ints);
      }
      case ir::AttrKind::Floats: return c10::IValue(a.floats);
      case ir::AttrKind::Tensor: return c10::IValue(to_at_tensor(a.tensor));
    }
    return c10::IValue();
  }

  static bool is_tensor_type(const c10::TypePtr& t) {
    if (t->kind() == c10::TypeKind::TensorType) return true;
    auto o = t->cast<c10::OptionalType>();
    return o && o->getElementType()->kind() == c10::TypeKind::TensorType;
  }
  static bool is_tensor_list_type(const c10::TypePtr& t) {
    auto l = t->cast<c10::ListType>();
    return l && is_tensor_type(l->getElementType());
  }

  // The stack for `schema` from the node's inputs and (resolved) attributes; false if they do not fit.
  bool build_stack(const c10::FunctionSchema& schema, const ir::Node& n, const ir::Attributes& attrs,
                   std::vector<c10::IValue>* stack, std::vector<size_t>* cloned) {
    size_t next = 0, used_attrs = 0;
    const auto& args = schema.arguments();
    for (size_t i = 0; i < args.size(); ++i) {
      const c10::Argument& arg = args[i];
      const ir::Attribute* attr = ir::find_attr(attrs, arg.name());
      if (is_tensor_type(arg.type())) {
        if (attr != nullptr && attr->kind == ir::AttrKind::Tensor) {
          stack->push_back(to_ivalue(*attr, arg.type()));
          ++used_attrs;
        } else if (attr != nullptr) {
          return false;  // a scalar where this overload takes a tensor
        } else if (next < n.inputs.size()) {
          const ir::ValueId id = n.inputs[next++];
          if (id == ir::kNoValue)
            stack->push_back(c10::IValue());
          else {
            at::Tensor t = tensors_.at(id);
            if (arg.alias_info() != nullptr && arg.alias_info()->isWrite())
              t = t.clone(), cloned->push_back(stack->size());
            stack->push_back(t);
          }
        } else if (arg.default_value()) {
          stack->push_back(*arg.default_value());
        } else {
          return false;
        }
      } else if (is_tensor_list_type(arg.type())) {
        size_t count = n.inputs.size() - next;
        if (const ir::Attribute* len = ir::find_attr(attrs, arg.name() + ".len"))
          count = static_cast<size_t>(len->i), ++used_attrs;
        if (next + count > n.inputs.size()) return false;
        const bool optional =
            arg.type()->expectRef<c10::ListType>().getElementType()->kind() == c10::TypeKind::OptionalType;
        if (optional) {
          c10::List<c10::optional<at::Tensor>> list;
          for (size_t k = 0; k < count; ++k, ++next)
            list.push_back(n.inputs[next] == ir::kNoValue ? c10::optional<at::Tensor>() : tensors_.at(n.inputs[next]));
          stack->push_back(c10::IValue(list));
        } else {
          std::vector<at::Tensor> list;
          for (size_t k = 0; k < count; ++k, ++next) {
            if (n.inputs[next] == ir::kNoValue) return false;
            list.push_back(tensors_.at(n.inputs[next]));
          }
          stack->push_back(c10::IValue(list));
        }
      } else if (attr != nullptr) {
        if (attr->kind == ir::AttrKind::Tensor) return false;
        stack->push_back(to_ivalue(*attr, arg.type()));
        ++used_attrs;
      } else if (arg.default_value()) {
        stack->push_back(*arg.default_value());
      } else if (arg.type()->kind() == c10::TypeKind::OptionalType) {
        stack->push_back(c10::IValue());
      } else {
        return false;
      }
    }
    return next == n.inputs.size() && used_attrs == attrs.size();
  }

  void run_kernel(const ir::Node& n) {
    ir::Attributes attrs;
    for (const auto& [name, a] : n.attrs) {
      if (!a.bound())
        attrs.emplace_back(name, a);
      else
        attrs.emplace_back(name, ir::bind_scalar(scalars_.at(a.ref), a.kind, n, name));
    }
    const auto ops = torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(n.op));
    std::string tried;
    for (const auto& op : ops) {
      const c10::FunctionSchema& schema = op->schema();
      if (!schema.overload_name().empty() && schema.overload_name().find("out") != std::string::npos) continue;
      std::vector<c10::IValue> stack;
      std::vector<size_t> cloned;
      if (!build_stack(schema, n, attrs, &stack, &cloned)) {
        tried += " " + schema.overload_name();
        continue;
      }
      try {
        op->getOperation()(stack);
      } catch (const c10::Error& e) {
        tried += " " + schema.overload_name() + " (" + std::string(e.what_without_backtrace()).substr(0, 200) + ")";
        continue;
      }
      std::vector<at::Tensor> outs;
      for (const c10::IValue& v : stack) {
        if (v.isTensor())
          outs.push_back(v.toTensor());
        else if (v.isTensorList())
          for (const at::Tensor& t : v.toTensorVector()) outs.push_back(t);
      }
      if (outs.size() < n.outputs.size()) throw std::runtime_error("fewer results than outputs");
      for (size_t k = 0; k < n.outputs.size(); ++k) tensors_[n.outputs[k]] = outs[k];
      return;
    }
    throw std::runtime_error("no overload fits (tried:" + tried + ")");
  }

  const ir::Graph& g_;
  std::unordered_map<ir::ValueId, at::Tensor> tensors_;
  std::unordered_map<ir::ValueId, ir::Attribute> scalars_;
};

}  // namespace switchyard::test
