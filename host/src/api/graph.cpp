// The public Graph over the IR, and the registry of model file readers.
#include "api/internal.hpp"

#include "ir/graph_file.hpp"
#include "pt2/import.hpp"

#include <filesystem>
#include <map>
#include <mutex>

namespace switchyard {
namespace {

std::map<std::string, ModelLoader>& loaders() {
  static std::map<std::string, ModelLoader> registry;
  return registry;
}
std::mutex& loaders_mutex() {
  static std::mutex m;
  return m;
}

// Reads a model file by its extension; the graph comes back validated.
ir::Graph read_model_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".json") return ir::read_graph_file(path);
  if (pt2::is_pt2_path(path)) {  // torch.export archives: read by the core, no LibTorch
    ir::Graph graph;
    pt2::import_pt2(path, graph);
    try {
      ir::validate(graph);
    } catch (const Error& e) {
      throw Error(e.kind(), path + ": " + e.what());
    }
    return graph;
  }
  ModelLoader loader;
  bool any_loader = false;
  {
    std::lock_guard<std::mutex> lock(loaders_mutex());
    auto it = loaders().find(ext);
    if (it != loaders().end()) loader = it->second;
    any_loader = !loaders().empty();
  }
  if (!loader)
    throw Error(ErrorKind::Io, path + ": unknown model format '" + ext + "' (expected a .json portable graph" +
                                   (any_loader ? ", or a registered format)" : std::string(")")));
  ir::Graph graph;
  loader(path, graph);
  ir::validate(graph);
  return graph;
}

}  // namespace

void register_model_loader(const std::string& extension, ModelLoader loader) {
  std::lock_guard<std::mutex> lock(loaders_mutex());
  loaders()[extension] = std::move(loader);
}

ir::Attribute to_ir(const Attribute& attribute) {
  struct Convert {
    ir::Attribute operator()(std::monostate) const { return ir::Attribute::none(); }
    ir::Attribute operator()(int64_t v) const { return ir::Attribute::of_int(v); }
    ir::Attribute operator()(double v) const { return ir::Attribute::of_float(v); }
    ir::Attribute operator()(const std::string& v) const { return ir::Attribute::of_string(v); }
    ir::Attribute operator()(const std::vector<int64_t>& v) const { return ir::Attribute::of_ints(v); }
    ir::Attribute operator()(const std::vector<double>& v) const { return ir::Attribute::of_floats(v); }
    ir::Attribute operator()(const Tensor& v) const { return ir::Attribute::of_tensor(v); }
  };
  return std::visit(Convert{}, attribute);
}

Graph to_public(ir::Graph graph) {
  Graph g;
  ir_of(g) = std::move(graph);
  return g;
}

std::unique_ptr<Model> load_graph(const Runtime& runtime, ir::Graph graph) {
  return runtime.load(to_public(std::move(graph)));
}

// ---- Graph -------------------------------------------------------------------------

Graph::Graph() : impl_(std::make_unique<Impl>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::Graph(const Graph& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Graph& Graph::operator=(const Graph& other) {
  if (this != &other) *impl_ = *other.impl_;
  return *this;
}

Graph Graph::read(const std::string& path) {
  Graph g = to_public(read_model_file(path));
  g.impl_->validated = true;
  return g;
}

void Graph::save(const std::string& json_path) const {
  if (!impl_->validated) {
    ir::Graph copy = impl_->graph;  // validate() sorts; the caller's graph stays as built
    ir::validate(copy);
    ir::write_graph_file(copy, json_path);
    return;
  }
  ir::write_graph_file(impl_->graph, json_path);
}

std::string Graph::weights_path_for(const std::string& json_path) { return ir::weights_path_for(json_path); }

Graph::ValueId Graph::add_input(std::string name, DLDataType dtype, std::vector<int64_t> shape) {
  impl_->validated = false;
  return impl_->graph.add_input(std::move(name), dtype, std::move(shape));
}

Graph::ValueId Graph::add_constant(std::string name, Tensor weight) {
  impl_->validated = false;
  return impl_->graph.add_constant(std::move(name), std::move(weight));
}

std::vector<Graph::ValueId> Graph::add_node(std::string name, std::string op, std::vector<ValueId> inputs,
                                            std::vector<std::string> output_names, Attributes attrs,
                                            std::string module_path) {
  impl_->validated = false;
  ir::Attributes ir_attrs;
  ir_attrs.reserve(attrs.size());
  for (auto& [attr_name, value] : attrs) ir_attrs.emplace_back(std::move(attr_name), to_ir(value));
  ir::Graph& g = impl_->graph;
  const int32_t n = g.add_node(std::move(name), std::move(op), std::move(inputs), std::move(output_names),
                               std::move(ir_attrs), std::move(module_path));
  return g.nodes[static_cast<size_t>(n)].outputs;
}

void Graph::add_output(ValueId value) {
  impl_->validated = false;
  impl_->graph.outputs.push_back(value);
}

Graph::ValueId Graph::find_value(const std::string& name) const { return impl_->graph.find_value(name); }

void Graph::validate() {
  ir::validate(impl_->graph);
  impl_->validated = true;
}

std::vector<ValueInfo> Graph::inputs() const {
  std::vector<ValueInfo> out;
  for (ir::ValueId v : impl_->graph.inputs) {
    const ir::Value& value = impl_->graph.values[static_cast<size_t>(v)];
    out.push_back(ValueInfo{value.name, value.dtype, value.shape});
  }
  return out;
}

std::vector<std::string> Graph::output_names() const {
  std::vector<std::string> out;
  for (ir::ValueId v : impl_->graph.outputs)
    out.push_back(v >= 0 && static_cast<size_t>(v) < impl_->graph.values.size() ? impl_->graph.values[v].name : "");
  return out;
}

std::vector<std::string> Graph::node_ops() const {
  std::vector<std::string> out;
  for (const ir::Node& n : impl_->graph.nodes) out.push_back(n.op);
  return out;
}

size_t Graph::num_nodes() const { return impl_->graph.nodes.size(); }

size_t Graph::num_constants() const {
  size_t n = 0;
  for (const ir::Value& v : impl_->graph.values) n += v.kind == ir::ValueKind::Constant;
  return n;
}

}  // namespace switchyard
