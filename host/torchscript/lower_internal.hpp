// TorchScript importer, internal: what the importer, the lowering and the evaluator share.
// Included only by this library's own .cpp files (it pulls in the JIT IR headers).
//
// Terms used throughout:
//   * "static" value: a value the lowering resolves at import time rather than as a node:
//     constants, lists and tuples of them, and arithmetic on tensor sizes
//     (aten::size -> prim::NumToTensor -> aten::mul -> aten::Int -> prim::ListConstruct).
//   * Dep: what a JIT value depends on. Const: constants only. Shape: also tensor sizes
//     (resolvable only when the traced input shapes are known). Data: tensor values,
//     computed by graph nodes at run time.
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
  bool known_shape = false;   // complete shape from the trace (type or switchyard_inputs.json)
  std::vector<int64_t> shape;
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

// Equal values (tensors: same dtype, sizes and elements).
bool same_value(const c10::IValue& a, const c10::IValue& b);

enum class Dep { Const = 0, Shape = 1, Data = 2 };

// Classifies JIT values and computes static ones, running the producing nodes on example
// inputs built from the traced input shapes where sizes are needed.
class Evaluator {
 public:
  // `examples`: per graph input (incl. self), tensors of the traced shapes (or none);
  // `other_batch`: the same with dimension 0 one larger (empty if there is none).
  Evaluator(std::string path, std::vector<std::optional<at::Tensor>> examples,
            std::vector<std::optional<at::Tensor>> other_batch)
      : path_(std::move(path)) {
    worlds_[0].examples = std::move(examples);
    worlds_[1].examples = std::move(other_batch);
  }

  Dep dep(const torch::jit::Value* v);
  // The value of `v` at the traced shapes; `user` and `arg` are named in errors.
  c10::IValue eval(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);
  // The value of `v` with every input's dimension 0 one larger: `traced` itself if equal
  // (the value does not depend on the batch size), nullopt if unknown (the graph cannot
  // be evaluated at another batch size).
  std::optional<c10::IValue> eval_other_batch(const torch::jit::Value* v, const c10::IValue& traced);

 private:
  struct World {
    std::vector<std::optional<at::Tensor>> examples;
    std::unordered_map<const torch::jit::Value*, c10::IValue> values;
    bool broken = false;
  };
  c10::IValue eval_in(World& w, const torch::jit::Value* v, const torch::jit::Node* user,
                      const std::string& arg);
  c10::IValue run(World& w, const torch::jit::Node* n, const torch::jit::Node* user, const std::string& arg);

  std::string path_;
  std::unordered_map<const torch::jit::Value*, Dep> deps_;
  World worlds_[2];
  std::unordered_set<std::string> meta_fallbacks_;  // ops logged as lacking a meta kernel
};

}  // namespace switchyard::torchscript
