// The CLI's subcommands, each a function over the embedding API. Return the exit code.
#pragma once

#include <switchyard/runtime.hpp>

#include <string>
#include <vector>

namespace switchyard::cli {

// Each command's parsed command-line flags (`*Flags`); to_options() turns the common ones
// into the embedding API's Options.
struct CommonFlags {
  std::string config;                     // --config
  std::vector<std::string> plugin_paths;  // --plugin-path (repeatable)
  std::string log_level;                  // --log-level (wins over env and config)
  bool strict = false;                    // --strict
  bool check_finite = false;              // --check-finite
  bool no_preflight = false;              // --no-preflight
};

// Tensor files are chosen by extension: .pt (torch.save/torch.load) or .json.
struct RunFlags {
  std::string model;         // .json graph file, or .pt TorchScript (with LibTorch)
  std::string inputs;        // --inputs FILE.pt|FILE.json (default: generated sample inputs)
  std::string save_outputs;  // --save-outputs FILE.pt|FILE.json
  std::string capture;       // --node-io none|outputs|all|stream
  std::string save_node_io;  // --save-node-io FILE.pt|FILE.json
  int show = 8;              // --show: values printed per output
  int top = 0;               // --top K: the K largest values (and indices) per row
  bool quiet_table = false;  // --no-table
  int repeat = 0;            // --repeat N: timed runs after the first (0 = none)
  int warmup = 0;            // --warmup N: untimed runs before those (besides the first)
  bool profile = false;      // --profile: per-node and per-backend time tables
  int profile_top = 20;      // --profile-top N: nodes listed in the per-node table
  std::string trace;         // --trace FILE.json: a Chrome trace of the last timed run
  bool memory = false;       // --memory: one more run, measuring its peak activation memory
};

struct VerifyFlags {
  std::string model;        // a TorchScript .pt file, or a torch.export .pt2
  std::string inputs;       // --inputs FILE.pt|FILE.json (default: generated sample inputs)
  std::string expected;     // --expected FILE.pt|FILE.json: reference outputs (e.g. torch 2's)
  double tolerance = 1e-4;  // --tolerance: max_abs <= tolerance * max(1, max|reference|)
};

// The reference config `diff` and `verify` use by default: configs/reference.toml from the
// working folder, else the same routing written to a temporary file (`note` says which).
std::string reference_config(std::string* note);

struct DiffFlags {
  std::string model;        // .json graph file, or .pt TorchScript (with LibTorch)
  std::string inputs;       // --inputs FILE.pt|FILE.json (default: generated sample inputs)
  std::string against;      // --against B.toml (default: configs/reference.toml)
  double tolerance = 1e-4;  // --tolerance: per node, max_abs <= tolerance * max(1, max|B|)
  bool verbose = false;     // -v: every node, and those not comparable
  bool added = false;       // --added: per node, the error it adds (B's kernel on A's inputs)
};

// Dataset runs (`run --inputs-dir DIR` or `--inputs-list FILE`), in dataset.cpp.
struct DatasetFlags {
  std::string dir;                // --inputs-dir: every .pt/.json file in it, sorted by name
  std::string list;               // --inputs-list: one input file per line
  bool resume = false;            // --resume: skip samples whose output file exists
  std::string on_error = "stop";  // --on-error stop|skip
  bool no_progress = false;       // --no-progress
  std::string format;             // --output-format pt|json (default pt with LibTorch, else json)
};

int cmd_run(const CommonFlags& common, const RunFlags& flags);
// `memory`: print the memory plan (its `top` largest values) instead of the selection.
// `dot`/`svg` non-empty: write the plan's picture there instead of the table.
int cmd_plan(const CommonFlags& common, const std::string& model, const std::string& inputs, bool memory = false,
             int top = 10, const std::string& dot = "", const std::string& svg = "");
// A whole dataset through one model; `flags.save_outputs` is then a folder.
int cmd_run_dataset(const CommonFlags& common, const RunFlags& flags, const DatasetFlags& dataset);
// plan_dot.cpp: `plan --dot/--svg` (runs the model once to learn every value's shape).
std::string plan_dot(Model& model, const std::vector<Tensor>& inputs, const std::string& model_path);
int write_plan_picture(Model& model, const std::vector<Tensor>& inputs, const std::string& model_path,
                       const std::string& dot_path, const std::string& svg_path);
int cmd_diff(const CommonFlags& common, const DiffFlags& flags);
int cmd_plugins(const CommonFlags& common, bool verbose);
// timing.cpp: the --repeat, --profile and --trace part of `run`, after its first run
// (which planned the model and is the warm-up).
// `streaming`: node_io is captured as `stream`, whose runs need a node callback (a sink
// that drops the records); otherwise the timed runs have none, as a plain run has.
void report_timing(Model& model, const std::vector<Tensor>& inputs, const RunFlags& flags, const Runtime& runtime,
                   bool streaming);
// memory_report.cpp: `plan --memory`, and `run --memory`'s measured run.
void print_memory_plan(const MemoryReport& report, int top);
void report_memory(Model& model, const std::vector<Tensor>& inputs);
// commands_torch.cpp, built with LibTorch only:
int cmd_convert(const std::string& model, const std::string& out);
int cmd_verify(const CommonFlags& common, const VerifyFlags& flags);

// Shared by the command files.
Options to_options(const CommonFlags& common, const std::string& capture = "");
void print_table(const std::vector<std::vector<std::string>>& rows);  // rows[0] is the header
void print_backend_counts(const std::vector<PlanEntry>& plan);
// The config's [runtime] node_io ("none" without a config; "" if it does not parse), read
// quietly: the Runtime reads the file again and reports its warnings and errors.
std::string config_capture(const std::string& config_path);
// From `path` (.pt or .json), or sample values from the declared shapes when `path` is
// empty (an error naming `model_path` if a shape is not declared).
std::vector<Tensor> load_inputs(const Model& model, const std::string& path, const std::string& model_path);

}  // namespace switchyard::cli
