// TorchScript importer, internal: the lowering's state, shared by lower.cpp (values, generic
// aten nodes, outputs), lower_sym.cpp (size arithmetic as sym:: nodes), lower_write.cpp
// (in-place writes made functional) and rewrites.cpp (nested tensors, names, input dtypes).
#pragma once

#include "lower_internal.hpp"

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace switchyard::torchscript {

// The dtype a graph input must have, read from how it is used (rewrites.cpp); kAnyDtype
// where no op pins it.
DLDataType infer_input_dtype(const torch::jit::Value* v);

// A Dep::Shape (or constant) number, list or 0-D shape tensor, as an IR scalar value.
struct SymVal {
  ir::ValueId id = ir::kNoValue;
  // Int, Float, Ints or Floats; None: a number whose kind is known only at run time.
  ir::AttrKind kind = ir::AttrKind::None;
  bool tensor = false;               // a 0-D tensor in the trace (prim::NumToTensor, ...)
  at::ScalarType dtype = at::kLong;  // numbers: Long, Double or Bool; tensors: their dtype
  c10::IValue stand_in;              // a value of this type, to learn result dtypes by running ops
};

class Lowerer {
 public:
  Lowerer(const std::string& path, std::shared_ptr<torch::jit::Graph> graph, c10::ClassTypePtr root,
          std::vector<InputInfo> inputs, ir::Graph& out)
      : path_(path),
        graph_(std::move(graph)),
        root_(std::move(root)),
        inputs_(std::move(inputs)),
        g_(out),
        eval_(path) {}
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
    bool sym = false;
  };
  // A nested tensor kept dense: its padded values live in tensors_, plus these masks.
  struct Nested {
    ir::ValueId valid = ir::kNoValue;     // bool [B, S]: position < length of its row
    ir::ValueId pad = ir::kNoValue;       // bool [B, S]: the padding positions
    ir::ValueId pad_rows = ir::kNoValue;  // bool [B, S, 1]
  };

  // "layer1.0.conv1": the module instance names along a node's inlined call stack.
  std::string path_of(const torch::jit::Node* n);
  std::string path_step(const c10::ClassTypePtr& parent, const std::string& name, const c10::ClassTypePtr& child);
  std::string constant_name(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);
  [[noreturn]] void fail(const torch::jit::Node* n, const std::string& why) const;
  ir::ValueId tensor(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);
  std::vector<ir::ValueId> tensor_list(const torch::jit::Value* v, const torch::jit::Node* user,
                                       const std::string& arg);
  // A non-tensor argument of type `type`: a literal, or bound to a sym value.
  ir::Attribute attribute(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg,
                          const c10::TypePtr& type);
  ir::ValueId constant(const at::Tensor& t, const std::string& base);

  int32_t emit(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs, size_t num_outputs,
               const std::string& path);
  ir::ValueId emit1(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                    const std::string& path);
  void lower_node(const torch::jit::Node* n);
  void lower_aten(const torch::jit::Node* n, const Overrides& over);
  void collect_outputs(const torch::jit::Value* v, std::vector<ir::ValueId>& outs);

  // lower_sym.cpp: size arithmetic.
  // The sym value of a constant or Dep::Shape number, list or 0-D shape tensor; throws
  // naming `user` and `arg` when `v` has none (data-dependent, or an unsupported op).
  SymVal sym(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);
  // The same for a tensor, or nullopt where it is not a 0-D shape tensor.
  std::optional<SymVal> shape_scalar(const torch::jit::Value* v);
  SymVal lower_sym(const torch::jit::Value* v, const torch::jit::Node* user, const std::string& arg);
  SymVal sym_const(const c10::IValue& value, const torch::jit::Node* user, const std::string& arg);
  SymVal sym_node(const std::string& op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                  const std::string& path);
  // `s` converted to what the trace's type says: an int (Int), a float (Float) or as is.
  SymVal sym_convert(SymVal s, ir::AttrKind want, const std::string& path);
  ir::ValueId sym_tensor(const SymVal& s, const std::string& path);
  // The bound attribute reading `s` for a schema argument of type `type`.
  ir::Attribute bind(const SymVal& s, const c10::TypePtr& type, const torch::jit::Node* user, const std::string& arg);
  // Is `v` (Dep::Shape) lowered as a sym value rather than by a kernel?
  bool lowered_as_sym(const torch::jit::Value* v);

  // lower_write.cpp: an in-place write made functional.
  void functionalize_write(const torch::jit::Node* n, const c10::FunctionSchema& schema, ir::ValueId result);
  // The value `parent` becomes when its view `link` (made by `op`, piece `piece` of a
  // multi-output view) takes the value `child`: slice_scatter, select_scatter, ...
  ir::ValueId scatter(const torch::jit::Node* op, size_t piece, ir::ValueId parent, ir::ValueId child,
                      const torch::jit::Node* writer, const std::string& why_not);
  // Re-derives the views of `root` made before `writer` and read after it.
  void replay_views(const torch::jit::Value* root, const torch::jit::Value* written, const torch::jit::Node* writer);
  // A non-tensor argument of `n` by schema name.
  ir::Attribute arg_attr(const torch::jit::Node* n, const std::string& name);
  std::unordered_set<const torch::jit::Value*> written_values() const;

  // rewrites.cpp
  void lower_nested(const torch::jit::Node* n);
  std::string unique_value_name(const std::string& base);
  void name_nodes();

  const std::string& path_;
  std::shared_ptr<torch::jit::Graph> graph_;
  c10::ClassTypePtr root_;               // the module's type (before freezing), for module paths
  const std::vector<InputInfo> inputs_;  // dtypes filled in
  ir::Graph& g_;
  Evaluator eval_;
  std::unordered_map<const torch::jit::Value*, ir::ValueId> tensors_;
  std::unordered_map<const torch::jit::Value*, Nested> nested_;
  std::unordered_map<const torch::jit::Value*, SymVal> syms_;
  std::unordered_map<const torch::jit::Value*, bool> not_sym_;      // tensors found not to be shape scalars
  std::map<std::string, SymVal> sym_consts_;                        // by kind and value
  std::map<std::pair<ir::ValueId, int>, ir::ValueId> sym_tensors_;  // (sym value, dtype) -> sym::tensor
  std::unordered_map<ir::ValueId, ir::AttrKind> sym_kinds_;         // static kinds of sym values
  // Graph inputs whose shape the trace unpacks (`b, s = ids.shape`): their rank.
  std::unordered_map<const torch::jit::Value*, int64_t> unpacked_ranks_;
  std::vector<NodeMeta> meta_;  // per IR node
  std::unordered_set<std::string> value_names_;
  std::map<std::pair<const c10::ClassType*, std::string>, std::string> steps_;
};

}  // namespace switchyard::torchscript
