// TorchScript importer, internal: the lowering's state, shared by lower.cpp (values, generic
// aten nodes, in-place ops, outputs) and rewrites.cpp (nested tensors, batch-sized values,
// names, input dtypes).
#pragma once

#include "lower_internal.hpp"

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace switchyard::torchscript {

// The dtype a graph input must have, read from how it is used (rewrites.cpp).
DLDataType infer_input_dtype(const torch::jit::Value* v);

class Lowerer {
 public:
  Lowerer(const std::string& path, std::shared_ptr<torch::jit::Graph> graph, c10::ClassTypePtr root,
          std::vector<InputInfo> inputs, ir::Graph& out, Evaluator eval)
      : path_(path), graph_(std::move(graph)), root_(std::move(root)), inputs_(std::move(inputs)), g_(out),
        eval_(std::move(eval)) {}
  void run();

 private:
  // Replacements for one generic aten lowering: inputs by schema argument index,
  // attributes by name, and the op name.
  struct Overrides {
    std::unordered_map<size_t, ir::ValueId> inputs;
    ir::Attributes attrs;
    std::string op;
  };
  struct NodeMeta {
    std::string path, short_name;
  };
  // A nested tensor kept dense: its padded values live in tensors_, plus these masks.
  struct Nested {
    ir::ValueId valid = ir::kNoValue;     // bool [B, S]: position < length of its row
    ir::ValueId pad = ir::kNoValue;       // bool [B, S]: the padding positions
    ir::ValueId pad_rows = ir::kNoValue;  // bool [B, S, 1]
  };

  // "layer1.0.conv1": the module instance names along a node's inlined call stack.
  std::string path_of(const torch::jit::Node* n);
  std::string path_step(const c10::ClassTypePtr& parent, const std::string& name,
                        const c10::ClassTypePtr& child);
  std::string constant_name(const torch::jit::Value* v, const torch::jit::Node* user,
                            const std::string& arg);
  [[noreturn]] void fail(const torch::jit::Node* n, const std::string& why) const;
  ir::ValueId tensor(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);
  std::vector<ir::ValueId> tensor_list(const torch::jit::Value* v, const torch::jit::Node* user,
                                       const std::string& arg);
  ir::Attribute attribute(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);
  ir::ValueId constant(const at::Tensor& t, const std::string& base, bool baked);
  // Checks that a value baked from the traced shapes holds at other batch sizes too;
  // `list` (a view/reshape size) may be made batch-free by a -1. Otherwise pins the inputs'
  // shapes.
  void check_batch_free(const torch::jit::Value* v, const c10::IValue& traced,
                        const torch::jit::Node* user, const std::string& arg, ir::Attribute* list);

  int32_t emit(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
               size_t num_outputs, const std::string& path);
  ir::ValueId emit1(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                    const std::string& path);
  void lower_node(const torch::jit::Node* n);
  void lower_aten(const torch::jit::Node* n, const Overrides& over);
  void rewire_mutation(const torch::jit::Node* n, const c10::FunctionSchema& schema, ir::ValueId result);
  void collect_outputs(const torch::jit::Value* v, std::vector<ir::ValueId>& outs);

  // rewrites.cpp
  void lower_nested(const torch::jit::Node* n);
  // expand(constant, [size(t, j), ...]) built from t at run time; kNoValue if not of that form.
  ir::ValueId expand_by_size(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);
  // view/reshape(x, [x.size(0), c...]) as flatten(x, 1) (+ unflatten); false if not of that form.
  bool lower_batch_view(const torch::jit::Node* n);
  std::string unique_value_name(const std::string& base);
  void name_nodes();

  const std::string& path_;
  std::shared_ptr<torch::jit::Graph> graph_;
  c10::ClassTypePtr root_;  // the module's type (before freezing), for module paths
  const std::vector<InputInfo> inputs_;  // dtypes filled in
  ir::Graph& g_;
  Evaluator eval_;
  std::unordered_map<const torch::jit::Value*, ir::ValueId> tensors_;
  std::unordered_map<const torch::jit::Value*, Nested> nested_;
  std::vector<NodeMeta> meta_;  // per IR node
  bool pin_shapes_ = false;     // a baked size depends on the batch: inputs take only the traced shapes
  std::unordered_set<std::string> value_names_;
  std::map<std::pair<const c10::ClassType*, std::string>, std::string> steps_;
};

}  // namespace switchyard::torchscript
