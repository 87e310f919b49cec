// The portable graph file, format version 2 (docs/graph-format.md): a JSON description
// (`model.json`) beside one binary weights file (`model.bin`) holding every constant.
#pragma once

#include "ir/graph.hpp"

#include <string>

namespace switchyard::ir {

// The newest format version this build reads and the one it writes. Version 2 added
// attributes bound to scalar values (sym nodes) and input specs; version 1 still reads.
inline constexpr int kGraphFormatVersion = 2;
// Every tensor in the weights file starts at a multiple of this many bytes.
inline constexpr size_t kWeightsAlignment = 64;

// Reads `path` and the weights file it names, and validates the graph (its nodes come back
// topologically sorted). All constants share one 64-byte aligned buffer holding the whole
// weights file, read with a single read and kept alive by the tensors themselves.
// Throws switchyard::Error naming the file: ErrorKind::Io for a file that cannot be read
// or is malformed (with line:column for JSON syntax errors), ErrorKind::Graph for a
// well-formed file describing a bad graph (naming the node or value at fault).
Graph read_graph_file(const std::string& path);

// Writes `graph` to `path` (JSON) and its constants and tensor attributes to the weights
// file beside it: `path` with `.json` replaced by `.bin` (or `.bin` appended). Constants
// sharing the same memory are stored once. Throws switchyard::Error (ErrorKind::Io).
void write_graph_file(const Graph& graph, const std::string& path);

// The weights file path write_graph_file uses for `json_path`.
std::string weights_path_for(const std::string& json_path);

}  // namespace switchyard::ir
