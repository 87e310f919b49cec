// `switchyard diff`: run one model under two configs with node_io capture and compare every
// node's outputs, naming the first node whose error is over the tolerance.
#include "commands.hpp"
#include "tensor_json.hpp"

#include <switchyard/runtime.hpp>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

namespace switchyard::cli {

std::string reference_config(std::string* note) {
  if (std::filesystem::exists("configs/reference.toml")) {
    *note = "configs/reference.toml";
    return "configs/reference.toml";
  }
  std::string path =
      (std::filesystem::temp_directory_path() / ("switchyard-reference-" + std::to_string(getpid()) + ".toml"))
          .string();
  std::ofstream(path) << "[plugins]\nload = [\"aten\"]\n[selection]\ndefault = [\"aten\"]\n";
  *note = "the built-in reference (every node on aten; configs/reference.toml is not in this folder)";
  return path;
}

namespace {

// One side's outputs per graph node. A fused record is named after its first node and holds
// the last one's outputs, so it is filed under the last; the others have none on that side.
struct Side {
  std::string config;
  std::map<std::string, const NodeIO*> by_node;
  std::map<std::string, std::string> fused_into;  // node -> the fused kernel that ran it
  // Node -> the value its first output is, and back. A batch norm folded into its
  // convolution on one side only (a half-precision model as-is against its float32
  // policy) leaves the convolution making the batch norm's value there: nodes are
  // matched by the value they make.
  std::map<std::string, std::string> output_of, maker_of;
};

Side index_side(const std::string& config, const std::vector<NodeIO>& records, const std::vector<PlanEntry>& plan) {
  Side side;
  side.config = config;
  std::map<std::string, const PlanEntry*> entries;
  for (const auto& e : plan) {
    entries[e.node] = &e;
    if (e.outputs.empty()) continue;
    side.output_of[e.node] = e.outputs[0];
    side.maker_of[e.outputs[0]] = e.node;
  }
  for (const auto& r : records) {
    auto it = entries.find(r.node);
    if (it != entries.end() && it->second->fused_from.size() > 1) {
      const auto& group = it->second->fused_from;
      side.by_node[group.back()] = &r;
      for (size_t i = 0; i + 1 < group.size(); ++i) side.fused_into[group[i]] = r.op + " on " + r.backend;
    } else {
      side.by_node[r.node] = &r;
    }
  }
  return side;
}

struct Compared {
  double max_abs = 0, max_ref = 0, rel = 0;
  std::string problem;  // a shape, dtype or count mismatch; "" when compared
  std::string across;   // "bfloat16 vs float32": floating outputs of two precisions, compared by value
};

bool floating(DLDataType d) { return d.code == kDLFloat || d.code == kDLBfloat; }

Compared compare(const std::vector<Tensor>& a, const std::vector<Tensor>& ref) {
  Compared c;
  if (a.size() != ref.size()) {
    c.problem = std::to_string(a.size()) + " vs " + std::to_string(ref.size()) + " outputs";
    return c;
  }
  for (size_t k = 0; k < a.size(); ++k) {
    if (!a[k].defined() || !ref[k].defined()) continue;
    if (a[k].shape() != ref[k].shape()) {
      c.problem = "output " + std::to_string(k) + " shape " + shape_string(a[k].shape()) + " vs " +
                  shape_string(ref[k].shape());
      return c;
    }
    if (!same_dtype(a[k].dtype(), ref[k].dtype()) && floating(a[k].dtype()) && floating(ref[k].dtype())) {
      c.across = dtype_name(a[k].dtype()) + " vs " + dtype_name(ref[k].dtype());  // e.g. as-is against fp32
    } else if (!same_dtype(a[k].dtype(), ref[k].dtype())) {
      c.problem =
          "output " + std::to_string(k) + " dtype " + dtype_name(a[k].dtype()) + " vs " + dtype_name(ref[k].dtype());
      return c;
    }
    const Tensor x = a[k].contiguous(), y = ref[k].contiguous();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double u = element(x, i), v = element(y, i);
      if (std::isnan(u) != std::isnan(v)) {
        c.max_abs = INFINITY;
      } else if (!std::isnan(u)) {
        const double d = (std::isinf(u) || std::isinf(v)) ? (u == v ? 0.0 : INFINITY) : std::fabs(u - v);
        c.max_abs = std::max(c.max_abs, d);
      }
      if (std::isfinite(v)) c.max_ref = std::max(c.max_ref, std::fabs(v));
    }
  }
  c.rel = c.max_abs / std::max(1.0, c.max_ref);
  return c;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

namespace {

// --added: every node of A's graph (unfused, node_io "all") beside B's kernel for the same
// node run on A's own inputs: the error the node adds, apart from what reaches it.
int diff_added(const CommonFlags& common, const DiffFlags& flags, const std::string& against,
               const std::string& against_note) {
  Runtime runtime_a(to_options(common, "all"));
  CommonFlags common_b = common;
  common_b.config = against;
  Runtime runtime_b(to_options(common_b, "all"));
  auto model_a = runtime_a.load(flags.model);
  auto model_b = runtime_b.load(flags.model);
  const std::vector<Tensor> inputs = load_inputs(*model_a, flags.inputs, flags.model);
  model_a->run(inputs);
  model_b->run(inputs);
  std::map<std::string, const NodeIO*> carried;
  for (const NodeIO& r : model_b->node_io()) carried[r.node] = &r;
  const std::string name_a = common.config.empty() ? "built-in defaults" : common.config;
  std::printf("diff --added of %s: A = %s, B (reference) = %s, both unfused\n", flags.model.c_str(), name_a.c_str(),
              against_note.c_str());
  std::printf(
      "added: A's node against B's kernel on A's inputs; carried: A against B's whole run; rel = max_abs / "
      "max(1, max|B|); over: added rel > %g\n\n",
      flags.tolerance);
  std::vector<std::vector<std::string>> rows{{"node", "op", "backend A", "added rel", "carried rel", ""}};
  size_t compared = 0, over = 0, skipped = 0;
  for (const NodeIO& a : model_a->node_io()) {
    std::vector<Tensor> reference;
    try {
      reference = model_b->run_node(a.node, a.inputs);
    } catch (const Error& e) {
      ++skipped;
      if (flags.verbose) rows.push_back({a.node, a.op, a.backend, "-", "-", std::string("skipped: ") + e.what()});
      continue;
    }
    const Compared added = compare(a.outputs, reference);
    auto b = carried.find(a.node);
    const Compared whole = b != carried.end() ? compare(a.outputs, b->second->outputs) : Compared{0, 0, 0, "-", ""};
    ++compared;
    const bool bad = !added.problem.empty() || !(added.rel <= flags.tolerance);
    over += bad ? 1 : 0;
    if (bad || flags.verbose)
      rows.push_back({a.node, a.op, a.backend, added.problem.empty() ? num(added.rel) : added.problem,
                      whole.problem.empty() ? num(whole.rel) : whole.problem, bad ? "over" : "ok"});
  }
  print_table(rows);
  std::printf("\ncompared %zu node(s), %zu adding more than the tolerance, %zu not run alone%s\n", compared, over,
              skipped, flags.verbose || skipped == 0 ? "" : "; -v lists them");
  return compared == 0 || over > 0 ? 1 : 0;
}

}  // namespace

int cmd_diff(const CommonFlags& common, const DiffFlags& flags) {
  std::string against_note = flags.against;
  const std::string against = flags.against.empty() ? reference_config(&against_note) : flags.against;
  if (flags.added) {
    const int rc = diff_added(common, flags, against, against_note);
    if (flags.against.empty() && against != "configs/reference.toml") std::filesystem::remove(against);
    return rc;
  }
  struct Run {
    std::unique_ptr<Runtime> runtime;
    std::unique_ptr<Model> model;
    std::vector<PlanEntry> plan;
  } run_a, run_b;
  CommonFlags common_b = common;
  common_b.config = against;
  std::vector<Tensor> inputs;
  for (auto* r : {&run_a, &run_b}) {
    const CommonFlags& c = r == &run_a ? common : common_b;
    r->runtime = std::make_unique<Runtime>(to_options(c, "outputs"));
    r->model = r->runtime->load(flags.model);
    if (inputs.empty()) inputs = load_inputs(*r->model, flags.inputs, flags.model);
    r->model->run(inputs);
    r->plan = r->model->plan(inputs);
  }
  if (flags.against.empty() && against != "configs/reference.toml") std::filesystem::remove(against);
  const std::string name_a = common.config.empty() ? "built-in defaults" : common.config;
  std::printf("diff of %s: A = %s, B (reference) = %s; inputs: %s\n", flags.model.c_str(), name_a.c_str(),
              against_note.c_str(), flags.inputs.empty() ? "generated sample values" : flags.inputs.c_str());
  std::printf("tolerance: max_abs <= %g x max(1, max|B|) per node\n\n", flags.tolerance);

  const Side a = index_side(name_a, run_a.model->node_io(), run_a.plan);
  const Side b = index_side(against_note, run_b.model->node_io(), run_b.plan);
  std::vector<std::vector<std::string>> rows{{"node", "op", "backend A", "backend B", "max_abs", "max|B|", "rel", ""}};
  std::string first_bad;
  size_t compared = 0, bad = 0, skipped = 0;
  std::map<std::string, size_t> across;  // "bfloat16 vs float32" -> nodes compared by value
  // Graph order: the reference's plan lists every node (a fused one under its first name).
  std::vector<std::string> order;
  for (const auto& e : run_b.plan) order.push_back(e.node);
  for (const auto& node : order) {
    // A's record of the node that makes the value B's node makes (the same node but where
    // a fold differs between the two).
    auto value = b.output_of.find(node);
    auto maker = value == b.output_of.end() ? a.maker_of.end() : a.maker_of.find(value->second);
    const std::string& node_a = maker == a.maker_of.end() ? node : maker->second;
    auto ia = a.by_node.find(node_a), ib = b.by_node.find(node);
    const std::string shown = node_a == node ? node : node + " (A: " + node_a + ")";
    if (ia == a.by_node.end() || ib == b.by_node.end()) {
      auto fa = a.fused_into.find(node), fb = b.fused_into.find(node);
      const std::string why = fa != a.fused_into.end()   ? "A: inside fused " + fa->second
                              : fb != b.fused_into.end() ? "B: inside fused " + fb->second
                                                         : "not recorded on one side";
      if (flags.verbose) rows.push_back({node, "", "", "", "", "", "", "skipped (" + why + ")"});
      ++skipped;
      continue;
    }
    const NodeIO& ra = *ia->second;
    const NodeIO& rb = *ib->second;
    const Compared c = compare(ra.outputs, rb.outputs);
    ++compared;
    if (!c.across.empty()) ++across[c.across];
    const bool over = !c.problem.empty() || !(c.rel <= flags.tolerance);
    if (over) {
      ++bad;
      if (first_bad.empty()) {
        first_bad = node;
        std::string detail = c.problem.empty() ? "max_abs " + num(c.max_abs) + ", rel " + num(c.rel) : c.problem;
        rows.push_back({shown, ra.op, ra.backend, rb.backend, c.problem.empty() ? num(c.max_abs) : "-", num(c.max_ref),
                        c.problem.empty() ? num(c.rel) : "-", "FIRST OVER TOLERANCE"});
        first_bad = "first node over the tolerance: '" + shown + "' (op " + ra.op + ", module " + ra.module_path +
                    "): backend A '" + ra.backend + "' vs backend B '" + rb.backend + "', " + detail;
        continue;
      }
    }
    if (over || flags.verbose || first_bad.empty())
      rows.push_back({shown, ra.op, ra.backend, rb.backend, c.problem.empty() ? num(c.max_abs) : "-", num(c.max_ref),
                      c.problem.empty() ? num(c.rel) : c.problem, over ? "over" : "ok"});
  }
  print_table(rows);
  std::printf("\ncompared %zu node(s), %zu over the tolerance, %zu not comparable (fused on one side)%s\n", compared,
              bad, skipped, flags.verbose || skipped == 0 ? "" : "; -v lists them");
  for (const auto& [dtypes, nodes] : across)  // a half-precision model as-is against its float32 policy
    std::printf("%zu node(s) with outputs of two precisions (%s, A vs B), compared by value\n", nodes, dtypes.c_str());
  if (compared == 0) {
    std::fprintf(stderr, "error: no node could be compared between the two configs\n");
    return 1;
  }
  if (!first_bad.empty()) {
    std::printf("FAIL: %s\n", first_bad.c_str());
    return 1;
  }
  std::printf("PASS: every compared node is within the tolerance\n");
  return 0;
}

}  // namespace switchyard::cli
