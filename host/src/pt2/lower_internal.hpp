// The .pt2 lowering's state, shared by lower.cpp (program, signature, outputs, names) and
// lower_node.cpp (nodes, arguments, sym arithmetic, op rewrites). Private to host/src/pt2.
#pragma once

#include "ir/graph_file_json.hpp"
#include "pt2/lower.hpp"

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace switchyard::pt2 {

using Json = ir::graph_file_detail::Json;

class Lowerer : private ir::graph_file_detail::JsonFieldReader {
 public:
  Lowerer(const Archive& archive, ir::Graph& out)
      : JsonFieldReader(archive.path + ": " + archive.program_entry), archive_(archive), g_(out) {}
  void run();

 private:
  // One node of the program being lowered, for messages and naming.
  struct NodeView {
    const Json* json = nullptr;
    std::string target;  // "torch.ops.aten.conv2d.default", "_operator.mul"
    std::string name;    // FX name
    std::string path;    // module path
  };

  // lower.cpp
  void check_version(const Json& root);
  void read_ranges(const Json& root);
  void read_signature(const Json& module, const Json& graph);
  void add_user_input(const Json& spec, const Json& graph);
  void add_lifted(const std::string& placeholder, const std::string& fqn, const char* kind, bool prefer_constants);
  void read_outputs(const Json& module);
  void relax_input_dtypes();
  void count_uses(const Json& graph);
  std::string node_name(const Json& node, const std::string& target);
  std::string module_path(const Json& node) const;
  std::string unique_value_name(const std::string& base);
  std::string unique_node_name(const std::string& base);
  [[noreturn]] void fail_node(const NodeView& n, ErrorKind kind, const std::string& why) const;

  // lower_node.cpp
  void lower_node(const NodeView& n);
  bool lower_sym_op(const NodeView& n);
  void lower_aten(const NodeView& n, std::string op, const std::string& overload);
  bool rewrite_op(const NodeView& n, std::string& op, std::vector<std::pair<std::string, const Json*>>& args,
                  std::vector<std::string>& outputs);
  void lower_call(const NodeView& n, const std::string& op,
                  const std::vector<std::pair<std::string, const Json*>>& args,
                  const std::vector<std::string>& outputs);
  ir::ValueId tensor(const NodeView& n, const std::string& name, const std::string& arg);
  ir::ValueId sym(const NodeView& n, const Json& arg, const std::string& what);
  ir::ValueId sym_const(const ir::Attribute& value);
  ir::ValueId symbol(const NodeView& n, const std::string& name, const std::string& what);
  ir::Attribute attribute(const NodeView& n, const std::string& arg, const std::string& kind, const Json& value);

  // lower_write.cpp: views and in-place writes.
  struct ViewLink {
    std::string parent;    // the tensor the view was taken of
    std::string op;        // "slice", "select", or another view op
    ir::Attributes attrs;  // the view's arguments (dim, start, end, step / dim, index)
  };
  void note_view(const std::string& op, const std::string& base, const std::vector<std::string>& outputs,
                 const ir::Attributes& attrs);
  void note_write(const NodeView& n, const std::string& written, ir::ValueId result, bool changes_values);
  std::string root_of(const std::string& name) const;

  const Archive& archive_;
  ir::Graph& g_;
  std::map<std::string, std::pair<int64_t, int64_t>> ranges_;           // symbol -> [min, max]
  std::unordered_map<std::string, ir::ValueId> tensors_;                // FX name -> tensor value
  std::unordered_map<std::string, ir::ValueId> syms_;                   // FX name or symbol -> scalar value
  std::map<std::string, std::pair<ir::ValueId, int64_t>> symbol_dims_;  // "s0" -> (input, dim)
  std::map<std::string, ir::ValueId> sym_consts_;
  std::unordered_map<std::string, int> uses_;                                // FX name -> readers (nodes and outputs)
  std::unordered_map<std::string, ViewLink> view_links_;                     // a view -> how it was taken
  std::unordered_map<std::string, std::vector<std::string>> views_of_root_;  // a base -> views taken of it
  std::unordered_map<std::string, std::string> stale_;  // a view made before its base was written -> the writer
  std::set<std::string> value_names_, node_names_;      // names taken
  std::map<std::string, int> value_counts_, node_counts_;
  std::deque<Json> literals_;  // argument values rewrite_op adds
};

}  // namespace switchyard::pt2
