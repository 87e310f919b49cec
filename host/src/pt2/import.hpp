// The .pt2 importer's entry point: torch.export.save archives as switchyard graphs.
// Graph::read, Runtime::load and everything built on them call it for ".pt2" paths.
#pragma once

#include "ir/graph.hpp"

#include <string>

namespace switchyard::pt2 {

// "m.pt2" or "m.pt2#NAME" (a model other than the default "model" of a PT2 archive).
bool is_pt2_path(const std::string& path);

// Reads the archive and lowers its program into `out` (not validated). Throws Error (Io
// for the file, Unsupported or Graph for the program) naming the file, the schema version,
// or the node and op at fault.
void import_pt2(const std::string& path, ir::Graph& out);

}  // namespace switchyard::pt2
