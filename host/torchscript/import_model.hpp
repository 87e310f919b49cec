// The TorchScript importer's entry point (importer.cpp), for the bridge's own tests and
// fuzzers; embedders use torchscript::register_loader() and Graph::read. Not installed.
#pragma once

#include "ir/graph.hpp"

#include <string>

namespace switchyard::torchscript {

// torch::jit::load, freeze, inline, then lower every aten:: node into `out` (not validated).
// Weights are shared with the loaded module. Throws Error naming the construct (and its
// source range) for anything it cannot lower, e.g. prim::If or prim::Loop.
void import_model(const std::string& path, ir::Graph& out);

}  // namespace switchyard::torchscript
