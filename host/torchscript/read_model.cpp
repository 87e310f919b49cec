// torchscript::read_model: the importer's graph, as the public Graph.
#include "api/internal.hpp"
#include "import_model.hpp"

#include <switchyard/torchscript.hpp>

namespace switchyard::torchscript {

Graph read_model(const std::string& path) {
  ir::Graph imported;
  import_model(path, imported);
  Graph graph = to_public(std::move(imported));
  graph.validate();
  return graph;
}

}  // namespace switchyard::torchscript
