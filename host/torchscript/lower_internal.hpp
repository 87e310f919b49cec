// TorchScript importer, internal: what the importer, the lowering and the evaluator share.
// Included only by this library's own .cpp files (it pulls in the JIT IR headers).
//
// Terms used throughout:
//   * Dep: what a JIT value depends on. Const: constants only (folded at import). Shape:
//     also tensor sizes (computed at run time from the actual input shapes, by sym:: nodes
//     or by kernels with bound attributes; see docs/shapes.md). Data: tensor values.
//   * sym value: a Dep::Shape int, float, bool or list of them, or a 0-D "shape tensor"
//     (prim::NumToTensor and arithmetic on it), lowered to ir sym:: nodes (lower_sym.cpp).
#pragma once

#include "ir/graph.hpp"

#include <switchyard/error.hpp>
#include <switchyard/tensor.hpp>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/ir/ir.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace switchyard::torchscript {

// What the importer knows about a graph input (beside `self`).
struct InputInfo {
  std::string name;
  bool known_dtype = false;
  DLDataType dtype{kDLFloat, 32, 1};
  // A shape the model was traced with (tensor types, or switchyard_inputs.json): only a
  // hint for `plan` and sample inputs, never a constraint.
  std::vector<int64_t> example_shape;
};

// Lowers a frozen, inlined forward graph (input 0 = self) into `out`. Throws Error.
// `root` is the module's class type, read for module paths through uncalled containers.
void lower_graph(const std::string& path, const std::shared_ptr<torch::jit::Graph>& graph,
                 const c10::ClassTypePtr& root, const std::vector<InputInfo>& inputs, ir::Graph& out);

// ---- helpers (eval.cpp) ---------------------------------------------------------------

// "file.py:12:8 `text`" for the Python source a node came from, or "<unknown location>".
std::string source_location(const torch::jit::Node* node);
// "<op> at <location>".
std::string where(const torch::jit::Node* node);
// First line of a c10::Error / exception message.
std::string first_line(const std::string& message);

bool to_dl_dtype(at::ScalarType type, DLDataType* out);
bool to_scalar_type(DLDataType dtype, at::ScalarType* out);
// A switchyard tensor sharing `t`'s memory (the release keeps `t` alive). Throws for
// dtypes DLPack can't name and for non-CPU or non-strided tensors.
Tensor share(const at::Tensor& t, const std::string& what);

// The attribute for a non-tensor schema argument's value; false if it has no IR form.
bool to_attribute(const c10::IValue& value, ir::Attribute* out);

inline bool is_tensor(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::TensorType; }
inline bool is_none(const torch::jit::Value* v) { return v->type()->kind() == c10::TypeKind::NoneType; }
inline bool is_optional_tensor(const c10::TypePtr& t) {
  auto o = t->cast<c10::OptionalType>();
  return o && is_tensor(o->getElementType());
}
inline bool is_tensor_list(const c10::TypePtr& t) {
  auto l = t->cast<c10::ListType>();
  return l && (is_tensor(l->getElementType()) || is_optional_tensor(l->getElementType()));
}

// An aten op whose result is a view of its first argument (`Tensor(a) self -> Tensor(a)`).
bool is_view_op(const torch::jit::Node* n);
// An op that writes into one of its arguments (`Tensor(a!)`).
bool is_write_op(const torch::jit::Node* n);

enum class Dep { Const = 0, Shape = 1, Data = 2 };

// Classifies JIT values and computes Dep::Const ones at import.
class Evaluator {
 public:
  explicit Evaluator(std::string path) : path_(std::move(path)) {}

  // Values written in place (through any alias): never folded, since their value changes
  // after they are made. Set before the first dep() call.
  void set_written(std::unordered_set<const torch::jit::Value*> written) { written_ = std::move(written); }
  bool written(const torch::jit::Value* v) const { return written_.count(v) > 0; }

  Dep dep(const torch::jit::Value* v);
  // The value of a Dep::Const `v`; `user` and `arg` are named in errors.
  c10::IValue eval(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);

 private:
  void run(const torch::jit::Node* n, const torch::jit::Node* user, const std::string& arg);

  std::string path_;
  std::unordered_map<const torch::jit::Value*, Dep> deps_;
  std::unordered_map<const torch::jit::Value*, c10::IValue> values_;
  std::unordered_set<const torch::jit::Value*> written_;
};

}  // namespace switchyard::torchscript
