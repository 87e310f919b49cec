// `plan --dot FILE` / `--svg FILE`: the plan as a Graphviz picture. Nodes are coloured by
// backend, fused kernels are clusters, edges carry the value's dtype and shape, and
// conversions between storages are their own marked edges with their bytes.
#include "commands.hpp"

#include <switchyard/runtime.hpp>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace switchyard::cli {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Light fills that keep black text readable; backends take them in order of first use.
const char* kPalette[] = {"#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#fb9a99",
                          "#ffff99", "#8dd3c7", "#bebada", "#fccde5", "#d9d9d9"};

std::string human_bytes(size_t b) {
  char buf[32];
  if (b >= (1u << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  else if (b >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%zu B", b);
  return buf;
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool have_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace

std::string plan_dot(Model& model, const std::vector<Tensor>& inputs, const std::string& model_path) {
  // One run to learn every value's dtype and shape (a fused kernel reports its last node's).
  std::map<std::string, std::string> value_type;  // value -> "float32[1, 64]"
  const auto plan = model.plan(inputs);
  std::map<std::string, const PlanEntry*> entry_of;
  for (const auto& e : plan) entry_of[e.node] = &e;
  model.set_node_callback([&](const NodeEvent& ev) {
    // A fused kernel's outputs are its last member's.
    auto it = entry_of.find(ev.fused_members != nullptr ? ev.fused_members->back() : ev.node);
    if (it == entry_of.end()) return;
    const PlanEntry* e = it->second;
    for (size_t k = 0; k < ev.outputs.size() && k < e->outputs.size(); ++k)
      if (ev.outputs[k].defined())
        value_type[e->outputs[k]] = dtype_name(ev.outputs[k].dtype()) + shape_string(ev.outputs[k].shape());
  });
  model.run(inputs);
  model.set_node_callback(nullptr);
  for (size_t i = 0; i < inputs.size(); ++i)
    value_type[model.input_names()[i]] = dtype_name(inputs[i].dtype()) + shape_string(inputs[i].shape());

  std::map<std::string, std::string> producer;  // value -> node
  for (const auto& e : plan)
    for (const auto& v : e.outputs) producer[v] = e.node;
  std::map<std::string, std::string> colour;
  for (const auto& e : plan)
    if (!colour.count(e.backend)) colour[e.backend] = kPalette[colour.size() % (sizeof kPalette / sizeof *kPalette)];

  std::ostringstream dot;
  dot << "digraph switchyard {\n  label=" << quoted("switchyard plan of " + model_path) << "; labelloc=t;\n"
      << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  dot << "  subgraph cluster_legend {\n    label=\"backends\"; style=dashed;\n";
  for (const auto& [backend, fill] : colour)
    dot << "    " << quoted("legend:" + backend) << " [label=" << quoted(backend.empty() ? "(none)" : backend)
        << ", fillcolor=" << quoted(fill) << "];\n";
  dot << "  }\n";
  for (const auto& name : model.input_names())
    dot << "  " << quoted("value:" + name)
        << " [shape=ellipse, style=solid, label=" << quoted(name + "\n" + value_type[name]) << "];\n";

  std::set<std::string> in_cluster;
  int clusters = 0;
  for (const auto& e : plan) {
    if (e.fused_from.size() < 2) continue;
    dot << "  subgraph cluster_fused_" << clusters++
        << " {\n    label=" << quoted("fused: " + e.op + " on " + e.backend)
        << "; style=\"rounded,bold\"; color=\"#444444\";\n";
    for (const auto& n : e.fused_from) {
      dot << "    " << quoted("node:" + n) << ";\n";
      in_cluster.insert(n);
    }
    dot << "  }\n";
  }
  for (const auto& e : plan) {
    // A node folded into a fused kernel keeps its own op name; the cluster names the kernel.
    std::string op = e.op;
    if (e.fused_from.size() > 1) op = e.op.substr(0, e.op.find('+'));
    const std::string backend = e.backend.empty() ? "(none)" : e.backend;
    dot << "  " << quoted("node:" + e.node) << " [label=" << quoted(e.node + "\n" + op + "\n[" + backend + "]")
        << ", fillcolor=" << quoted(colour[e.backend]) << ", tooltip=" << quoted(e.module_path) << "];\n";
  }
  // Conversions between storages, keyed by value and reader: drawn instead of the plain edge.
  std::map<std::pair<std::string, std::string>, std::vector<const StorageCopy*>> copies;
  const auto storage = model.storage_copies(inputs);
  for (const auto& c : storage) copies[{c.value, c.reader}].push_back(&c);
  for (const auto& e : plan) {
    std::set<std::string> drawn;
    for (const auto& v : e.inputs) {
      if (v.empty() || !drawn.insert(v).second) continue;
      auto p = producer.find(v);
      const bool graph_input = value_type.count(v) && p == producer.end();
      if (p == producer.end() && !graph_input) continue;  // a constant (weight): not drawn
      const std::string from = p != producer.end() ? "node:" + p->second : "value:" + v;
      auto c = copies.find({v, e.node});
      if (c != copies.end()) {
        for (const StorageCopy* sc : c->second)
          dot << "  " << quoted(from) << " -> " << quoted("node:" + e.node) << " [color=\"#d62728\", penwidth=2, "
              << "style=bold, label="
              << quoted(value_type[v] + "\nconvert " + sc->from + " -> " + sc->to + "\n" + human_bytes(sc->bytes))
              << ", fontcolor=\"#d62728\"];\n";
        continue;
      }
      dot << "  " << quoted(from) << " -> " << quoted("node:" + e.node) << " [label=" << quoted(value_type[v])
          << "];\n";
    }
  }
  for (const auto& out : model.output_names()) {
    dot << "  " << quoted("output:" + out)
        << " [shape=ellipse, style=solid, label=" << quoted(out + "\n" + value_type[out]) << "];\n";
    auto p = producer.find(out);
    if (p != producer.end()) dot << "  " << quoted("node:" + p->second) << " -> " << quoted("output:" + out) << ";\n";
  }
  size_t once = 0;
  for (const auto& c : storage) once += c.once;
  if (once > 0) dot << "  // " << once << " constant(s) converted once when planning are not drawn\n";
  dot << "}\n";
  return dot.str();
}

int write_plan_picture(Model& model, const std::vector<Tensor>& inputs, const std::string& model_path,
                       const std::string& dot_path, const std::string& svg_path) {
  const std::string dot = plan_dot(model, inputs, model_path);
  std::string dot_file = dot_path;
  if (dot_file.empty())
    dot_file =
        (std::filesystem::temp_directory_path() / ("switchyard-plan-" + std::to_string(getpid()) + ".dot")).string();
  std::ofstream(dot_file) << dot;
  if (!std::ifstream(dot_file)) throw Error(ErrorKind::Io, dot_file + ": cannot be written");
  if (!dot_path.empty()) std::printf("plan picture (Graphviz DOT) written to %s\n", dot_path.c_str());
  if (svg_path.empty()) return 0;
  if (!have_program("dot")) {
    if (dot_path.empty()) std::filesystem::remove(dot_file);
    throw Error(ErrorKind::Config,
                "--svg needs Graphviz's `dot` on PATH (Debian: apt-get install graphviz); "
                "--dot FILE writes the picture's source without it");
  }
  const std::string cmd = "dot -Tsvg " + shell_quoted(dot_file) + " -o " + shell_quoted(svg_path);
  const int rc = std::system(cmd.c_str());
  if (dot_path.empty()) std::filesystem::remove(dot_file);
  if (rc != 0) throw Error(ErrorKind::Io, "`" + cmd + "` failed (exit status " + std::to_string(rc) + ")");
  std::printf("plan picture (SVG) written to %s\n", svg_path.c_str());
  return 0;
}

}  // namespace switchyard::cli
