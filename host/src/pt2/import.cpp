// .pt2 archive -> IR: read the archive (archive.cpp), lower the program (lower.cpp).
#include "pt2/import.hpp"
#include "ir/input_spec.hpp"
#include "pt2/archive.hpp"
#include "pt2/lower.hpp"

#include <switchyard/error.hpp>

#include <nlohmann/json.hpp>

namespace switchyard::pt2 {

namespace {

// Splits "m.pt2#encoder" into the file and the model.
std::pair<std::string, std::string> split_model(const std::string& path) {
  const size_t at = path.rfind(".pt2#");
  if (at == std::string::npos) return {path, kDefaultModel};
  return {path.substr(0, at + 4), path.substr(at + 5)};
}

}  // namespace

bool is_pt2_path(const std::string& path) {
  const std::string file = split_model(path).first;
  return file.size() >= 4 && file.compare(file.size() - 4, 4, ".pt2") == 0;
}

void import_pt2(const std::string& path, ir::Graph& out) {
  const auto [file, model] = split_model(path);
  try {
    const Archive archive = read_archive(file, model.empty() ? kDefaultModel : model);
    ir::Graph graph;
    lower_program(archive, graph);
    ir::derive_input_specs(graph);
    out = std::move(graph);
  } catch (const nlohmann::json::exception& e) {
    // A check the lowering missed (a field of an unexpected type, read with get<>()):
    // still an Error, as ir::read_graph_file does, never an exception of another type.
    throw Error(ErrorKind::Io, file + ": malformed program: " + e.what());
  }
}

}  // namespace switchyard::pt2
