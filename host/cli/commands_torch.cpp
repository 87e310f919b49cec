// `convert` and `verify`: the commands that need the LibTorch bridge (built with it only).
// Nothing here includes torch: switchyard/torchscript.hpp is a plain C++ header.
#include "commands.hpp"

#include "tensor_files.hpp"
#include "tensor_json.hpp"

#include <switchyard/torchscript.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

namespace switchyard::cli {
namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string human_bytes(uintmax_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

struct Comparison {
  double max_abs = 0, max_rel = 0, max_ref = 0, allowed = 0;
  std::string problem;         // non-empty: a mismatch that no tolerance excuses
  bool across_dtypes = false;  // floating outputs of two precisions, compared by value
  bool ok() const { return problem.empty() && max_abs <= allowed; }
};

// The criterion our tests use: max|a - b| <= tol * max(1, max|b|), b the reference.
Comparison compare(const Tensor& got, const Tensor& ref, double tolerance) {
  Comparison c;
  if (got.shape() != ref.shape()) {
    c.problem = "shape " + shape_string(got.shape()) + " but the reference has " + shape_string(ref.shape());
    return c;
  }
  auto floating = [](DLDataType d) { return d.code == kDLFloat || d.code == kDLBfloat; };
  c.across_dtypes = !same_dtype(got.dtype(), ref.dtype()) && floating(got.dtype()) && floating(ref.dtype());
  if (!same_dtype(got.dtype(), ref.dtype()) && !c.across_dtypes) {
    c.problem = "dtype " + dtype_name(got.dtype()) + " but the reference has " + dtype_name(ref.dtype());
    return c;
  }
  constexpr double kTiny = 1e-12;
  Tensor a = got.contiguous(), b = ref.contiguous();
  for (int64_t i = 0, n = a.numel(); i < n; ++i) {
    const double x = element(a, i), y = element(b, i);
    double diff;
    if (std::isnan(x) || std::isnan(y))
      diff = std::isnan(x) && std::isnan(y) ? 0.0 : INFINITY;
    else if (x == y)
      diff = 0.0;  // equal infinities too
    else
      diff = std::fabs(x - y);
    if (!std::isnan(y)) c.max_ref = std::max(c.max_ref, std::fabs(y));
    c.max_abs = std::max(c.max_abs, diff);
    c.max_rel = std::max(c.max_rel, diff / std::max(std::isnan(y) ? 0.0 : std::fabs(y), kTiny));
  }
  c.allowed = tolerance * std::max(1.0, c.max_ref);
  return c;
}

}  // namespace

static bool is_pt2(const std::string& path) { return path.find(".pt2") != std::string::npos; }

int cmd_convert(const std::string& model_path, const std::string& out_path) {
  // A .pt2 is read by the core (Graph::read); anything else as TorchScript, whatever its name.
  const Graph graph = is_pt2(model_path) ? Graph::read(model_path) : torchscript::read_model(model_path);
  graph.save(out_path);

  std::map<std::string, int> ops;
  for (const std::string& op : graph.node_ops()) ops[op]++;
  std::vector<std::pair<std::string, int>> by_count(ops.begin(), ops.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string op_list;
  for (const auto& [op, n] : by_count) op_list += (op_list.empty() ? "" : ", ") + op + " " + std::to_string(n);

  const std::string weights = Graph::weights_path_for(out_path);
  std::error_code ec;
  const uintmax_t weight_bytes = std::filesystem::file_size(weights, ec);

  std::printf("converted %s -> %s\n", model_path.c_str(), out_path.c_str());
  for (const ValueInfo& v : graph.inputs())
    std::printf("  input   %s %s %s\n", v.name.c_str(), dtype_name(v.dtype).c_str(), shape_string(v.shape).c_str());
  for (const std::string& name : graph.output_names()) std::printf("  output  %s\n", name.c_str());
  std::printf("  nodes: %zu (%s)\n", graph.num_nodes(), op_list.c_str());
  std::printf("  constants: %zu, weights file %s: %s\n", graph.num_constants(), weights.c_str(),
              ec ? "(missing)" : (human_bytes(weight_bytes) + " (" + std::to_string(weight_bytes) + " bytes)").c_str());
  std::printf("run it with: switchyard run %s\n", out_path.c_str());
  return 0;
}

namespace {

// The outputs verify compares with: --expected's file; else LibTorch's forward of a .pt;
// else (a .pt2, whose torch 2 LibTorch 1.13 cannot run) the aten reference backend's run.
std::vector<Tensor> reference_outputs(const VerifyFlags& flags, const Model& model, const std::vector<Tensor>& inputs,
                                      std::string* what) {
  if (!flags.expected.empty()) {
    *what = flags.expected;
    if (!is_pt_file(flags.expected)) return read_tensors_json(flags.expected, model.output_names());
    return torchscript::load_tensors(flags.expected);
  }
  if (is_pt_file(flags.model)) {
    *what = "LibTorch's forward";
    return torchscript::reference_forward(flags.model, inputs);
  }
  std::string note;
  Options options;
  options.config_path = reference_config(&note);
  Runtime reference(options);
  *what = "the aten reference backend (" + note + ")";
  return reference.load(flags.model)->run(inputs);
}

}  // namespace

int cmd_verify(const CommonFlags& common, const VerifyFlags& flags) {
  if (!is_pt_file(flags.model) && flags.expected.empty() && !is_pt2(flags.model))
    throw Error(ErrorKind::Input, flags.model +
                                      ": verify compares a .pt with LibTorch's forward, and a .pt2 with "
                                      "the aten reference backend; for other files pass --expected OUT");
  Runtime runtime(to_options(common));
  auto model = runtime.load(flags.model);
  // A config that streams node_io needs a sink; verify writes none (the run stays unfused).
  if (runtime.config().capture == "stream") model->set_node_callback([](const NodeEvent&) {});
  std::vector<Tensor> inputs = load_inputs(*model, flags.inputs, flags.model);
  std::printf("verify %s (tolerance %s)\n", flags.model.c_str(), fmt(flags.tolerance).c_str());
  std::string input_list;
  for (size_t i = 0; i < inputs.size(); ++i)
    input_list += (i ? ", " : "") + model->input_names()[i] + " " + dtype_name(inputs[i].dtype()) + " " +
                  shape_string(inputs[i].shape());
  std::printf("inputs: %s (%s)\n", input_list.c_str(),
              flags.inputs.empty() ? "generated sample values; pass --inputs FILE.pt to choose"
                                   : ("from " + flags.inputs).c_str());

  std::vector<Tensor> got = model->run(inputs);
  print_backend_counts(model->plan(inputs));
  std::string reference_name;
  std::vector<Tensor> ref = reference_outputs(flags, *model, inputs, &reference_name);
  std::printf("reference: %s\n", reference_name.c_str());

  std::vector<std::string> failures, notes;
  if (got.size() != ref.size())
    failures.push_back("switchyard produced " + std::to_string(got.size()) + " output(s), the reference " +
                       std::to_string(ref.size()));
  std::vector<std::vector<std::string>> rows{
      {"output", "shape", "dtype", "max_abs", "max_rel", "max|ref|", "allowed", "result"}};
  for (size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    const std::string name = i < model->output_names().size() ? model->output_names()[i] : std::to_string(i);
    Comparison c = compare(got[i], ref[i], flags.tolerance);
    if (!c.problem.empty()) {
      rows.push_back({name, shape_string(got[i].shape()), dtype_name(got[i].dtype()), "-", "-", "-", "-", "MISMATCH"});
      failures.push_back("output " + std::to_string(i) + " '" + name + "': " + c.problem);
      continue;
    }
    if (c.across_dtypes)  // e.g. a bfloat16 model computed in float32 ([precision] compute)
      notes.push_back("output '" + name + "' is " + dtype_name(got[i].dtype()) + ", the reference " +
                      dtype_name(ref[i].dtype()) + ": compared by value");
    rows.push_back({name, shape_string(got[i].shape()), dtype_name(got[i].dtype()), fmt(c.max_abs), fmt(c.max_rel),
                    fmt(c.max_ref), fmt(c.allowed), c.ok() ? "ok" : "FAIL"});
    if (!c.ok())
      failures.push_back("output " + std::to_string(i) + " '" + name + "': max_abs " + fmt(c.max_abs) + " > allowed " +
                         fmt(c.allowed));
  }
  std::printf("\n");
  print_table(rows);
  std::printf("criterion: max_abs <= tolerance x max(1, max|ref|); max_rel = max |a-b| / max(|ref|, 1e-12)\n");
  for (const std::string& note : notes) std::printf("note: %s\n", note.c_str());
  if (failures.empty()) {
    std::printf("verify: PASS, %zu output(s) within tolerance of %s\n", got.size(), reference_name.c_str());
    return 0;
  }
  std::fflush(stdout);
  for (const auto& f : failures) std::fprintf(stderr, "error: verify failed: %s: %s\n", flags.model.c_str(), f.c_str());
  return 1;
}

}  // namespace switchyard::cli
