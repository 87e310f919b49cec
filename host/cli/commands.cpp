#include "commands.hpp"

#include "plan_shapes.hpp"
#include "tensor_files.hpp"
#include "tensor_json.hpp"

#include <switchyard/runtime.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

namespace switchyard::cli {

Options to_options(const CommonFlags& common, const std::string& capture) {
  Options o;
  o.config_path = common.config;
  o.plugin_paths = common.plugin_paths;
  o.capture = capture;
  o.strict = common.strict;
  o.check_finite = common.check_finite;
  o.no_preflight = common.no_preflight;
  o.log_level = common.log_level;
  return o;
}

// Prints rows as left-aligned columns under a header.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (size_t c = 0; c < rows[i].size(); ++c) {
      line += rows[i][c];
      if (c + 1 < rows[i].size()) line += std::string(width[c] - rows[i][c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
    if (i == 0) {
      size_t total = 0;
      for (size_t w : width) total += w + 2;
      std::printf("%s\n", std::string(total - 2, '-').c_str());
    }
  }
}

std::vector<Tensor> load_inputs(const Model& model, const std::string& path, const std::string& model_path) {
  if (!path.empty()) return read_inputs(path, model);
  const auto shapes = model.input_shapes();
  for (size_t i = 0; i < shapes.size(); ++i)
    if (shapes[i].empty())  // not declared (e.g. a traced model saved without its input shapes)
      throw Error(ErrorKind::Input,
                  model_path + ": the model does not declare the shape of input " + std::to_string(i) + " '" +
                      model.input_names()[i] +
                      "', so no sample values can be made: pass --inputs IN.pt "
                      "(torch.save of a tuple of example inputs). For TorchScript, save the shapes with the model: "
                      "torch.jit.save(traced, path, _extra_files={\"switchyard_inputs.json\": "
                      "'[{\"shape\": [1, 8]}]'})");
  return sample_inputs(model);
}

void print_backend_counts(const std::vector<PlanEntry>& plan) {
  std::map<std::string, int> counts;
  for (const auto& e : plan) counts[e.backend]++;
  std::string line = "nodes per backend:";
  for (const auto& [backend, n] : counts) line += " " + backend + "=" + std::to_string(n);
  std::printf("%s\n", line.c_str());
}

// "row 0: 281 (9.81), 285 (9.02), ..." for the k largest values of each row (first dim).
void print_top(const Tensor& t, int k) {
  if (t.dim() == 0 || t.numel() == 0) return;
  Tensor c = t.contiguous();
  const int64_t rows = c.shape()[0], width = c.numel() / rows;
  for (int64_t r = 0; r < std::min<int64_t>(rows, 8); ++r) {
    std::vector<int64_t> idx(static_cast<size_t>(width));
    for (int64_t i = 0; i < width; ++i) idx[i] = i;
    const int64_t n = std::min<int64_t>(k, width);
    std::partial_sort(idx.begin(), idx.begin() + n, idx.end(),
                      [&](int64_t a, int64_t b) { return element(c, r * width + a) > element(c, r * width + b); });
    std::string line = "    row " + std::to_string(r) + " top " + std::to_string(n) + ":";
    for (int64_t i = 0; i < n; ++i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %lld (%.4g)", static_cast<long long>(idx[i]), element(c, r * width + idx[i]));
      line += buf;
    }
    std::printf("%s\n", line.c_str());
  }
}

std::string config_capture(const std::string& config_path) {
  if (config_path.empty()) return "none";
  try {
    return read_config(config_path).capture;
  } catch (const Error&) {
    return "";  // the Runtime reads the file again and reports it, with its warnings
  }
}

int cmd_run(const CommonFlags& common, const RunFlags& flags) {
  std::string capture = flags.capture;
  // --save-node-io alone implies "all", unless the config streams.
  const bool stream = capture == "stream" || (capture.empty() && config_capture(common.config) == "stream");
  if (stream && flags.save_node_io.empty())
    throw Error(ErrorKind::Config,
                std::string(capture.empty() ? "the config's node_io = \"stream\"" : "--node-io stream") +
                    " writes each node's record to a file as the node runs: "
                    "pass --save-node-io FILE.pt");
  if (capture.empty() && !flags.save_node_io.empty()) capture = stream ? "stream" : "all";
  Runtime runtime(to_options(common, capture));
  auto model = runtime.load(flags.model);
  std::vector<Tensor> inputs = load_inputs(*model, flags.inputs, flags.model);
  if (flags.inputs.empty())
    std::printf("inputs: generated sample values for %zu input(s) (pass --inputs FILE.pt|FILE.json to choose)\n",
                inputs.size());
  else
    std::printf("inputs: %zu tensor(s) from %s\n", inputs.size(), flags.inputs.c_str());
  std::unique_ptr<NodeIoStream> node_io_stream;
  if (stream) {
    node_io_stream = open_node_io_stream(flags.save_node_io);
    model->set_node_callback([&](const NodeEvent& e) { node_io_stream->write(e); });
  }
  std::vector<Tensor> outputs;
  size_t streamed = 0;
  try {
    outputs = model->run(inputs);
    if (node_io_stream) streamed = node_io_stream->finish();
  } catch (const Error&) {
    if (node_io_stream) {  // what ran before the failure is often what one wants to see
      try {
        streamed = node_io_stream->finish();
        std::fprintf(stderr, "node_io (%zu records, the nodes before the failure) streamed to %s\n", streamed,
                     flags.save_node_io.c_str());
      } catch (const Error& e) {
        std::fprintf(stderr, "node_io: %s\n", e.what());
      }
    }
    throw;
  }
  // Later runs (--repeat, --profile) need a sink too; they stream nowhere.
  if (node_io_stream) model->set_node_callback([](const NodeEvent&) {});

  std::printf("\noutputs of %s:\n", flags.model.c_str());
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::printf("  %s  %s %s  %s\n", model->output_names()[i].c_str(), dtype_name(outputs[i].dtype()).c_str(),
                shape_string(outputs[i].shape()).c_str(), preview(outputs[i], flags.show).c_str());
    if (flags.top > 0) print_top(outputs[i], flags.top);
  }

  if (!flags.quiet_table) {
    auto plan = model->plan(inputs);
    std::printf("\nbackend per node:\n");
    std::vector<std::vector<std::string>> rows{{"node", "op", "module", "backend"}};
    for (const auto& e : plan) rows.push_back({e.node, e.op, e.module_path, e.backend});
    print_table(rows);
    print_backend_counts(plan);
  }
  const RunStats& stats = model->last_stats();
  std::printf("ran %zu nodes; peak live tensors %zu (%zu bytes)\n", stats.nodes_run, stats.peak_live_tensors,
              stats.peak_live_bytes);
  if (flags.memory) report_memory(*model, inputs);
  if (flags.repeat > 0 || flags.profile || !flags.trace.empty())
    report_timing(*model, inputs, flags, runtime, node_io_stream != nullptr);
  if (!flags.save_outputs.empty()) {
    write_outputs(flags.save_outputs, model->output_names(), outputs);
    std::printf("outputs written to %s\n", flags.save_outputs.c_str());
  }
  if (node_io_stream) {
    std::printf("node_io (%zu records) streamed to %s\n", streamed, flags.save_node_io.c_str());
  } else if (!flags.save_node_io.empty()) {
    write_node_io(flags.save_node_io, model->node_io());
    std::printf("node_io (%zu records) written to %s\n", model->node_io().size(), flags.save_node_io.c_str());
  }
  return 0;
}

namespace {

std::string dims_text(const std::vector<int64_t>& shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(std::to_string(d));
  return joined_dims(dims);
}

// "[2, 1000]" for one output; "[2, 5, 8], [1, 2, 8]" for several.
std::string outputs_text(const std::vector<std::vector<std::string>>& outputs) {
  std::string text;
  for (const auto& dims : outputs) text += (text.empty() ? "" : ", ") + joined_dims(dims);
  return text;
}

// [precision]: each node whose compute differs from its tensors' dtype, or was asked to,
// with the bytes its kernel converts; then the totals.
void print_compute(const std::vector<PlanEntry>& plan) {
  size_t asked = 0, converted = 0, per_run = 0, once = 0;
  size_t islands = 0, island_per_run = 0, island_once = 0;
  for (const PlanEntry& e : plan) {
    if (!e.island.empty()) {
      ++islands;
      island_per_run += e.compute_converted_bytes;
      island_once += e.compute_constant_bytes;
      std::printf(
          "compute: '%s' in float32, an island in a %s model (%s): %zu bytes converted per run, %zu bytes "
          "of weights once\n",
          e.node.c_str(), e.island.c_str(), e.compute_note.c_str(), e.compute_converted_bytes,
          e.compute_constant_bytes);
      continue;
    }
    if (e.compute_asked.empty() && e.compute.empty()) continue;
    asked += e.compute_asked.empty() ? 0 : 1;
    if (!e.compute.empty() && e.compute != "float32") {
      ++converted;
      per_run += e.compute_converted_bytes;
      once += e.compute_constant_bytes;
      std::printf("compute: '%s' in %s: %zu bytes converted per run, %zu bytes of weights once\n", e.node.c_str(),
                  e.compute.c_str(), e.compute_converted_bytes, e.compute_constant_bytes);
    } else {
      std::printf("compute: '%s' asked %s, computes float32: %s\n", e.node.c_str(), e.compute_asked.c_str(),
                  !e.compute_note.empty() ? e.compute_note.c_str()
                  : e.compute.empty()     ? ("plugin '" + e.backend + "' has no bfloat16 kernel for it").c_str()
                                          : "its kernel says so");
    }
  }
  if (asked > 0)
    std::printf("precision conversions: %zu of %zu asked node(s) compute in bfloat16, %zu bytes per run, %zu once\n",
                converted, asked, per_run, once);
  if (islands > 0)
    std::printf("float32 islands: %zu node(s), %zu bytes converted per run, %zu once\n", islands, island_per_run,
                island_once);
}

}  // namespace

int cmd_plan(const CommonFlags& common, const std::string& model_path, const std::string& inputs_path, bool memory,
             int top, const std::string& dot, const std::string& svg) {
  Runtime runtime(to_options(common));
  auto model = runtime.load(model_path);
  std::vector<PlanEntry> plan;
  std::vector<std::vector<std::vector<std::string>>> shapes;  // per node, per output, per dim
  std::vector<Tensor> inputs;
  const std::vector<std::string> specs = model->input_specs();
  const bool picture = !dot.empty() || !svg.empty();
  if (inputs_path.empty() && !memory && !picture) {  // symbolic shapes: [B, 197, 768]
    SymbolicPlan sym = plan_symbolically(*model);
    for (size_t i = 0; i < specs.size(); ++i)
      std::printf("input '%s': %s (planned at %s)\n", model->input_names()[i].c_str(), specs[i].c_str(),
                  dims_text(sym.sample_shapes[i]).c_str());
    for (const std::string& name : sym.fixed_names)
      std::printf("note: the model takes %s only at the sampled size; pass --inputs for others\n", name.c_str());
    plan = std::move(sym.plan);
    shapes = std::move(sym.symbolic);
  } else {
    inputs = load_inputs(*model, inputs_path, model_path);
    if (memory) {
      print_memory_plan(model->memory_plan(inputs), top);
      return 0;
    }
    if (picture) return write_plan_picture(*model, inputs, model_path, dot, svg);
    for (size_t i = 0; i < specs.size(); ++i)
      std::printf("input '%s': %s, given %s\n", model->input_names()[i].c_str(), specs[i].c_str(),
                  dims_text(inputs[i].shape()).c_str());
    plan = model->plan(inputs);
    for (const PlanEntry& e : plan) {
      shapes.emplace_back();
      for (const auto& s : e.output_shapes) {
        std::vector<std::string> dims;
        for (int64_t d : s) dims.push_back(std::to_string(d));
        shapes.back().push_back(dims);
      }
    }
  }
  std::vector<std::vector<std::string>> rows{{"node", "op", "module", "backend", "output shape", "why"}};
  size_t fused = 0;
  for (size_t n = 0; n < plan.size(); ++n) {
    const PlanEntry& e = plan[n];
    rows.push_back(
        {e.node, e.op, e.module_path, e.backend, n < shapes.size() ? outputs_text(shapes[n]) : "", e.reason});
    if (!e.fused_from.empty()) {
      std::string originals;
      for (const auto& name : e.fused_from) originals += (originals.empty() ? "" : ", ") + name;
      rows.push_back({"", "", "", "  fused", "", "replaces nodes " + originals});
      ++fused;
    }
    // Backends without a kernel for the op are listed on one line; real refusals each get theirs.
    std::string not_offered;
    for (const auto& r : e.rejected) {
      if (r.reason.rfind("no kernel for ", 0) == 0)
        not_offered += (not_offered.empty() ? "" : ", ") + r.backend;
      else
        rows.push_back({"", "", "", "  rejected: " + r.backend, "", r.reason});
    }
    if (!not_offered.empty()) rows.push_back({"", "", "", "  no kernel in", "", not_offered});
  }
  print_table(rows);
  if (fused > 0) std::printf("%zu fused node(s) ([selection] fuse = false turns fusion off)\n", fused);
  print_backend_counts(plan);
  print_compute(plan);
  if (!inputs.empty()) {  // where values cross between storages (devices, layouts)
    const std::vector<StorageCopy> copies = model->storage_copies(inputs);
    size_t bytes = 0;
    for (const StorageCopy& c : copies) {
      std::printf("copy: '%s' %s -> %s for %s, %zu bytes%s\n", c.value.c_str(), c.from.c_str(), c.to.c_str(),
                  c.reader.empty() ? "a constant" : ("'" + c.reader + "'").c_str(), c.bytes,
                  c.once ? " (once, when planned)" : "");
      bytes += c.bytes;
    }
    std::printf("storage copies: %zu (%zu bytes per run)\n", copies.size(), bytes);
    // Values that stay in a plugin's storage (a device, oneDNN's own layouts) between nodes.
    std::map<std::string, size_t> stored;
    for (const StoredValue& v : model->stored_values(inputs)) ++stored[v.storage];
    std::string per_storage;
    size_t total = 0;
    for (const auto& [storage, count] : stored) {
      per_storage += (per_storage.empty() ? " (" : ", ") + storage + " " + std::to_string(count);
      total += count;
    }
    std::printf("values kept in plugin storages: %zu%s\n", total,
                per_storage.empty() ? "" : (per_storage + ")").c_str());
  }
  return 0;
}

int cmd_plugins(const CommonFlags& common, bool verbose) {
  Runtime runtime(to_options(common));
  auto plugins = runtime.plugins();
  if (plugins.empty()) std::printf("no plugins loaded\n");
  for (const auto& p : plugins) {
    std::printf("%s %s (vendor: %s, SDK %u.%u) %s\n  %zu kernels\n", p.name.c_str(), p.version.c_str(),
                p.vendor.c_str(), p.sdk_major, p.sdk_minor, p.path.c_str(), p.kernels.size());
    if (!p.storages.empty()) {
      std::string names;
      for (size_t k = 0; k < p.storages.size(); ++k) {
        const std::string& holds = k < p.storage_elements.size() ? p.storage_elements[k] : "";
        names += (names.empty() ? "" : ", ") + p.storages[k] + (holds.empty() ? "" : " (holds " + holds + ")");
      }
      std::printf("  storages: %s\n", names.c_str());
    }
    for (const auto& [name, value] : p.attributes) std::printf("  %s: %s\n", name.c_str(), value.c_str());
    std::vector<std::vector<std::string>> rows{{"  op", "family", "device", "dtypes", "outputs"}};
    for (const auto& k : p.kernels) {
      std::string dtypes;
      for (const auto& d : k.dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
      rows.push_back({"  " + k.op, k.family, k.device, dtypes.empty() ? "any" : dtypes,
                      k.host_allocated_outputs ? "host" : "kernel"});
    }
    if (verbose) print_table(rows);
  }
  return 0;
}

}  // namespace switchyard::cli
