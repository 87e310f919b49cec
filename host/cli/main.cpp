// switchyard: run models through plugin backends. See `switchyard --help`.
#include "check_plugin.hpp"
#include "commands.hpp"
#include "roofline.hpp"

#include <switchyard/error.hpp>
#include <switchyard/runtime.hpp>
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
#include <switchyard/torchscript.hpp>
#endif

#include <CLI/CLI.hpp>

#include <cstdio>
#include <new>
#include <string>

namespace {
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
const char* kModelHelp =
    "model: portable graph file (.json), TorchScript (.pt) or torch.export archive (.pt2; m.pt2#NAME picks a model other than the default \"model\")";
#else
const char* kModelHelp = "model: portable graph file (.json); .pt needs a build with LibTorch";
#endif
}  // namespace

int main(int argc, char** argv) {
  using namespace switchyard;
  CLI::App app{
      "switchyard: an inference host whose ops run in dynamically loaded plugins.\n"
      "Plugins are found next to the binary (../plugins), in $SWITCHYARD_PLUGIN_PATH\n"
      "and in --plugin-path; a TOML config (--config) routes nodes to backends."};
  app.require_subcommand(1);
  app.fallthrough();  // subcommands inherit it: `run MODEL --config C` works like `--config C run MODEL`
  cli::CommonFlags common;
  app.add_option("-c,--config", common.config, "TOML config (e.g. configs/default.toml)")->check(CLI::ExistingFile);
  app.add_option("--plugin-path", common.plugin_paths, "extra plugin directory (repeatable)");
  app.add_option("--log-level", common.log_level, "trace|debug|info|warn|error|off (or $SWITCHYARD_LOG_LEVEL)");
  app.add_flag("--strict", common.strict, "a backend rejection is an error, not a fallback");
  app.add_flag("--check-finite", common.check_finite, "fail at the first node that produces a NaN or Inf, naming it");
  app.add_flag("--no-preflight", common.no_preflight,
               "skip the memory pre-flight that refuses new input shapes whose estimated need exceeds the memory "
               "this process may use (docs/reliability.md)");

  // "--repeat 0" and "--repeat -2" are refused with a reason (CLI11 prefixes the option).
  const CLI::Validator at_least_one(
      [](std::string& s) {
        try {
          size_t used = 0;
          long v = std::stol(s, &used);
          if (used == s.size() && v >= 1) return std::string();
        } catch (const std::exception&) {}
        return "'" + s + "' is not a whole number >= 1";
      },
      "INT>=1");
  cli::RunFlags run;
  auto* run_cmd = app.add_subcommand("run", "run a model and print its outputs and which backend ran each node");
  run_cmd->add_option("model", run.model, kModelHelp)->required();
  run_cmd->add_option("--inputs", run.inputs,
                      "inputs: .pt (torch.save of a tensor or a tuple, in input order) or "
                      ".json {name: {dtype, shape, data}}; default: sample values");
  run_cmd->add_option("--save-outputs", run.save_outputs,
                      "write the outputs: .pt (a tuple; torch.load reads it) or .json");
  run_cmd
      ->add_option("--node-io", run.capture,
                   "node_io capture: none|outputs|all|stream (overrides the config); stream writes each "
                   "node's record to the --save-node-io .pt file as the node runs and keeps none in memory")
      ->check(CLI::IsMember({"none", "outputs", "all", "stream"}));
  run_cmd->add_option("--save-node-io", run.save_node_io,
                      "write node_io (implies --node-io all, unless the config says stream): .pt holds every "
                      "node's input and output tensors, .json their dtypes and shapes");
  run_cmd->add_option("--show", run.show, "values printed per output")->capture_default_str();
  run_cmd->add_option("--top", run.top, "print the K largest values (with their indices) of each output row")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_flag("--no-table", run.quiet_table, "do not print the per-node backend table");
  run_cmd
      ->add_option("--repeat", run.repeat,
                   "after the first run (the warm-up), N timed runs; prints "
                   "'median_ms: X' (one forward, in ms) and min/max")
      ->check(at_least_one);
  run_cmd
      ->add_option("--warmup", run.warmup,
                   "untimed runs between the first run and the --repeat runs (caches, "
                   "pages and threads settle; benchmarks give every contender the same)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_flag("--profile", run.profile,
                    "print per-node and per-backend time tables (over the --repeat runs), with each "
                    "node's MFLOP, MB (its kernel's own cost where the plugin reports one, "
                    "else the host's formulas: column 'cost by'), GFLOP/s, GB/s and "
                    "roofline verdict (compute, bandwidth or overhead) against "
                    "`switchyard calibrate`'s peaks");
  run_cmd->add_option("--profile-top", run.profile_top, "nodes listed in the --profile table")
      ->check(at_least_one)
      ->capture_default_str();
  run_cmd->add_option("--trace", run.trace, "write a Chrome trace (.json; opens in Perfetto) of the last run");
  run_cmd->add_flag("--memory", run.memory,
                    "one more run that measures its peak activation memory (malloc's bytes "
                    "in use after each node) and prints it beside the plan's estimate");
  cli::DatasetFlags dataset;
  auto* dir_opt = run_cmd->add_option("--inputs-dir", dataset.dir,
                                      "a dataset: run every .pt/.json input file in DIR (sorted by name); "
                                      "--save-outputs is then a folder with one output file per sample");
  auto* list_opt = run_cmd->add_option("--inputs-list", dataset.list,
                                       "a dataset: run the input files listed in FILE, one per line "
                                       "(relative to FILE's folder; # comments)");
  dir_opt->excludes(list_opt);
  run_cmd->get_option("--inputs")->excludes(dir_opt)->excludes(list_opt);
  run_cmd->add_flag("--resume", dataset.resume, "dataset: skip samples whose output file already exists");
  run_cmd
      ->add_option("--on-error", dataset.on_error,
                   "dataset: at a bad sample, stop (exit 1) or skip it "
                   "(reported, exit 1 at the end)")
      ->check(CLI::IsMember({"stop", "skip"}))
      ->capture_default_str();
  run_cmd->add_flag("--no-progress", dataset.no_progress,
                    "dataset: no progress line (shown only when stderr is a terminal)");
  run_cmd->add_option("--output-format", dataset.format, "dataset: pt or json (default pt with LibTorch, else json)")
      ->check(CLI::IsMember({"pt", "json"}));
  run_cmd->footer(
      "Files are chosen by extension (.pt needs a build with LibTorch). Example:\n"
      "  switchyard run model.pt --inputs in.pt --save-outputs out.pt --save-node-io io.pt\n"
      "  /usr/bin/python3 -c 'import torch; io = torch.load(\"io.pt\"); print(list(io))'\n"
      "A big model's node_io, written as it runs and read one node at a time:\n"
      "  switchyard run model.pt --node-io stream --save-node-io io.pt\n"
      "  /usr/bin/python3 tools/node_io_stream.py io.pt\n"
      "A dataset, one output (and node_io) file per sample, resumable:\n"
      "  switchyard run model.pt --inputs-dir samples/ --save-outputs out/ --node-io stream --resume");

  cli::DiffFlags diff;
  auto* diff_cmd = app.add_subcommand(
      "diff", "run a model under two configs and compare every node's outputs; names the first node that differs");
  diff_cmd->add_option("model", diff.model, kModelHelp)->required();
  diff_cmd->add_option("--inputs", diff.inputs, "inputs, .pt or .json; default: sample values");
  diff_cmd
      ->add_option("--against", diff.against,
                   "the reference config B (default: configs/reference.toml, every "
                   "node on aten); A is --config")
      ->check(CLI::ExistingFile);
  diff_cmd->add_option("--tolerance", diff.tolerance, "per node: pass when max_abs <= tolerance x max(1, max|B|)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  diff_cmd->add_flag("-v,--verbose", diff.verbose, "list every node, and those that cannot be compared");
  diff_cmd->add_flag("--added", diff.added,
                     "per node, the error it adds: its output under A against B's kernel run on A's own inputs "
                     "(the graph unfused), beside the error it carries from the nodes before it");
  diff_cmd->footer(
      "Exit code 0 when every node compared is within the tolerance, 1 otherwise. Example, after\n"
      "writing a kernel: switchyard diff model.pt --inputs in.pt --config mine.toml");

  std::string plan_model, plan_inputs;
  auto* plan_cmd = app.add_subcommand("plan", "show per node: op, module path, chosen backend and why, rejections");
  plan_cmd->add_option("model", plan_model, kModelHelp)->required();
  plan_cmd->add_option("--inputs", plan_inputs,
                       "inputs, .pt or .json (selection depends on shapes); default: sample values");
  bool plan_memory = false;
  int plan_top = 10;
  plan_cmd->add_flag("--memory", plan_memory,
                     "print the memory plan instead: the activation arena, which values "
                     "share it, and the estimated peak activation memory");
  std::string plan_dot_path, plan_svg_path;
  plan_cmd->add_option("--dot", plan_dot_path,
                       "write the plan as a Graphviz DOT picture: nodes coloured by backend, "
                       "fused kernels as clusters, edges with dtype and shape, storage "
                       "conversions as red edges with their bytes (runs the model once)");
  plan_cmd->add_option("--svg", plan_svg_path, "render that picture to SVG (needs Graphviz's `dot` on PATH)");
  plan_cmd->add_option("--top", plan_top, "values listed by --memory, largest first")
      ->check(at_least_one)
      ->capture_default_str();

  bool calibrate_force = false;
  auto* calibrate_cmd =
      app.add_subcommand("calibrate",
                         "measure this machine's peak GEMM GFLOP/s and copy GB/s for the config's intra_op_threads "
                         "(the roofline of run --profile); cached in ~/.cache/switchyard/calibration.json");
  calibrate_cmd->add_flag("--force", calibrate_force, "measure again even when cached");

  bool verbose = false;
  auto* plugins_cmd = app.add_subcommand("plugins", "list loaded plugins, their versions and kernels");
  plugins_cmd->add_flag("-k,--kernels", verbose, "list every kernel");

  cli::CheckPluginFlags check;
  auto* check_cmd = app.add_subcommand(
      "check-plugin", "conformance kit: run every kernel of a plugin on generated cases and compare with aten");
  check_cmd->add_option("plugin", check.plugin, "the plugin's shared library (.so)")->required();
  check_cmd->add_option("--reference", check.reference, "reference plugin (name or .so path)")->capture_default_str();
  check_cmd->add_option("--op", check.op, "check only the kernels of this op, e.g. aten::linear");
  check_cmd->add_flag("-v,--verbose", check.verbose, "print a line per case");
  check_cmd->add_flag("--require-all", check.require_all,
                      "fail when a kernel has no case that ran (no generator, or all rejected)");
  check_cmd->footer(
      "Prints PASS/FAIL/SKIP with the max error per kernel and dtype; exit code 1 on any failure.\n"
      "A kernel 'A+B' is a fused pair: the reference runs A then B. Cases: host/conformance/.\n"
      "Example: switchyard check-plugin build/plugins/libswitchyard-plugin-linalg.so");

#ifdef SWITCHYARD_WITH_TORCHSCRIPT
  std::string convert_model, convert_out;
  auto* convert_cmd = app.add_subcommand(
      "convert", "convert a TorchScript .pt or torch.export .pt2 model to the portable graph format");
  convert_cmd
      ->add_option("model", convert_model,
                   "TorchScript file (torch.jit.trace(...).save) or torch.export file "
                   "(torch.export.save; m.pt2#NAME for a model other than 'model')")
      ->required();
  convert_cmd->add_option("out", convert_out, "graph file to write (.json; the weights go beside it in .bin)")
      ->required();
  convert_cmd->footer(
      "The graph file runs without LibTorch (e.g. on a machine with plugins only). Example:\n"
      "  switchyard convert resnet18.pt resnet18.json && switchyard run resnet18.json");

  cli::VerifyFlags verify;
  auto* verify_cmd =
      app.add_subcommand("verify", "run a model through switchyard and a reference, and compare the outputs");
  verify_cmd
      ->add_option("model", verify.model,
                   "TorchScript file (torch.jit.trace(...).save; reference: LibTorch's forward) or torch.export "
                   "file (.pt2; reference: the aten backend, or --expected)")
      ->required();
  verify_cmd->add_option("--inputs", verify.inputs,
                         "inputs: .pt (torch.save of a tensor or a tuple) or .json; default: sample values "
                         "from the model's declared input shapes");
  verify_cmd
      ->add_option("--expected", verify.expected,
                   "reference outputs (.pt or .json, in output order), e.g. what torch 2 computed for --inputs")
      ->check(CLI::ExistingFile);
  verify_cmd->add_option("--tolerance", verify.tolerance, "pass when max_abs <= tolerance x max(1, max|reference|)")
      ->check(CLI::Validator(
          [](std::string& s) {
            try {
              size_t used = 0;
              double v = std::stod(s, &used);
              if (used == s.size() && v >= 0) return std::string();
            } catch (const std::exception&) {}
            return "'" + s + "' is not a number >= 0";
          },
          "FLOAT>=0"))
      ->capture_default_str();
  verify_cmd->footer(
      "Prints per output the max absolute and relative differences. Exit code 0 when every output\n"
      "is within tolerance; 1 when one is not, or the output counts, shapes or dtypes differ.\n"
      "Route nodes with --config to verify a backend, e.g. switchyard verify m.pt --config C.toml");
#endif

  CLI11_PARSE(app, argc, argv);
  if (!common.log_level.empty() && !set_log_level(common.log_level)) {
    std::fprintf(stderr, "error: --log-level '%s' is not one of trace|debug|info|warn|error|off\n",
                 common.log_level.c_str());
    return 2;
  }
  try {
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
    torchscript::register_loader();  // Runtime::load accepts TorchScript .pt files
#endif
    int rc = 0;
    if (*run_cmd && (!dataset.dir.empty() || !dataset.list.empty()))
      rc = cli::cmd_run_dataset(common, run, dataset);
    else if (*run_cmd)
      rc = cli::cmd_run(common, run);
    else if (*diff_cmd)
      rc = cli::cmd_diff(common, diff);
    else if (*plan_cmd)
      rc = cli::cmd_plan(common, plan_model, plan_inputs, plan_memory, plan_top, plan_dot_path, plan_svg_path);
    else if (*calibrate_cmd)
      rc = cli::cmd_calibrate(common, calibrate_force);
    else if (*plugins_cmd)
      rc = cli::cmd_plugins(common, verbose);
    else if (*check_cmd)
      rc = cli::cmd_check_plugin(common, check);
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
    else if (*convert_cmd)
      rc = cli::cmd_convert(convert_model, convert_out);
    else if (*verify_cmd)
      rc = cli::cmd_verify(common, verify);
#endif
    return rc;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory (std::bad_alloc outside any node)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: unexpected: %s\n", e.what());
    return 1;
  }
}
