// The embedding API's inside: what the host's own parts (the TorchScript bridge, tests,
// benchmarks) use beside the public headers. Nothing here is installed.
#pragma once

#include "ir/graph.hpp"

#include <switchyard/graph.hpp>
#include <switchyard/runtime.hpp>

#include <functional>
#include <memory>
#include <string>

namespace switchyard {

struct Graph::Impl {
  ir::Graph graph;
  bool validated = false;  // by read() or validate(), and not changed since
};

namespace detail {
struct GraphAccess {
  static Graph::Impl& impl(Graph& g) { return *g.impl_; }
  static const Graph::Impl& impl(const Graph& g) { return *g.impl_; }
};
}  // namespace detail

// The IR inside a public Graph, and a public Graph holding an IR graph.
inline ir::Graph& ir_of(Graph& g) { return detail::GraphAccess::impl(g).graph; }
inline const ir::Graph& ir_of(const Graph& g) { return detail::GraphAccess::impl(g).graph; }
Graph to_public(ir::Graph graph);

// Runs an IR graph built in memory (tests, benchmarks): Runtime::load(Graph), which validates.
std::unique_ptr<Model> load_graph(const Runtime& runtime, ir::Graph graph);

// Registers a reader for model files with `extension` (".pt"): Graph::read and
// Runtime::load then accept them. The TorchScript bridge registers one.
using ModelLoader = std::function<void(const std::string& path, ir::Graph& out)>;
void register_model_loader(const std::string& extension, ModelLoader loader);

// A public attribute as the IR holds it.
ir::Attribute to_ir(const Attribute& attribute);

}  // namespace switchyard
