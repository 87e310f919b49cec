// Lowering a torch.export program, part 3: in-place writes. The training IR torch.export
// saves by default keeps them (relu_, masked_fill_, and `mask[a:b, c:d] = v` as slice,
// slice, fill_). switchyard's values are immutable, so a write is run out of place and:
//   * readers of the written tensor after the write read the result;
//   * a write into a view made by slice or select is scattered back into its base
//     (slice_scatter, select_scatter, link by link up to the root), so that readers of
//     the base see it, as ATen's functionalization does;
//   * a view of the written tensor made before the write and read after it would need
//     its view taken again: that read is refused naming both nodes.
#include "pt2/lower_internal.hpp"

#include <switchyard/error.hpp>

#include <algorithm>

namespace switchyard::pt2 {

std::string Lowerer::root_of(const std::string& name) const {
  std::string root = name;
  for (auto it = view_links_.find(root); it != view_links_.end(); it = view_links_.find(root)) root = it->second.parent;
  return root;
}

void Lowerer::note_view(const std::string& op, const std::string& base, const std::vector<std::string>& outputs,
                        const ir::Attributes& attrs) {
  const std::string root = root_of(base);
  for (const std::string& o : outputs) {
    if (o.empty()) continue;
    view_links_[o] = ViewLink{base, op, attrs};
    views_of_root_[root].push_back(o);
  }
}

void Lowerer::note_write(const NodeView& n, const std::string& written, ir::ValueId result, bool changes_values) {
  tensors_[written] = result;
  if (!changes_values) return;
  // Scatter the new value up the chain of views, to the root.
  std::vector<std::string> chain{written};
  ir::ValueId value = result;
  for (std::string child = written; view_links_.count(child);) {
    const ViewLink& link = view_links_.at(child);
    if (link.op != "slice" && link.op != "select")
      fail_node(n, ErrorKind::Unsupported,
                "it writes in place into '" + written + "', a view (by " + link.op + ") of '" + link.parent +
                    "'; switchyard scatters writes through slice and select views only: save the program after "
                    "ep.run_decompositions(), which makes such writes functional");
    ir::Attributes attrs = link.attrs;  // slice's dim, start, end, step; select's dim, index
    const std::string name = unique_value_name(link.parent + ".written");
    const int32_t idx = g_.add_node(unique_node_name(n.name + ".scatter"),
                                    link.op == "select" ? "aten::select_scatter" : "aten::slice_scatter",
                                    {tensor(n, link.parent, "self"), value}, {name}, std::move(attrs), n.path);
    value = g_.nodes[static_cast<size_t>(idx)].outputs[0];
    tensors_[link.parent] = value;
    chain.push_back(link.parent);
    child = link.parent;
  }
  // Every other view of the root now shows an old value.
  const std::string root = chain.back();
  for (const std::string& view : views_of_root_[root])
    if (std::find(chain.begin(), chain.end(), view) == chain.end()) stale_[view] = n.name;
  for (const std::string& name : chain) stale_.erase(name);
}

}  // namespace switchyard::pt2
