// switchyard: run models through plugin backends. See `switchyard --help`.
#include "commands.hpp"
#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  using namespace switchyard;
  CLI::App app{"switchyard: an inference host whose ops run in dynamically loaded plugins.\n"
               "Plugins are found next to the binary (../plugins), in $SWITCHYARD_PLUGIN_PATH\n"
               "and in --plugin-path; a TOML config (--config) routes nodes to backends."};
  app.require_subcommand(1);
  app.fallthrough();  // subcommands inherit it: `run MODEL --config C` works like `--config C run MODEL`
  cli::CommonOptions common;
  app.add_option("-c,--config", common.config, "TOML config (e.g. configs/default.toml)")->check(CLI::ExistingFile);
  app.add_option("--plugin-path", common.plugin_paths, "extra plugin directory (repeatable)");
  app.add_option("--log-level", common.log_level, "trace|debug|info|warn|error|off (or $SWITCHYARD_LOG_LEVEL)");
  app.add_flag("--strict", common.strict, "a backend rejection is an error, not a fallback");

  cli::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "run a model and print its outputs and which backend ran each node");
  run_cmd->add_option("model", run.model, "graph file (.json portable format)")->required();
  run_cmd->add_option("--inputs", run.inputs, "inputs as JSON {name: {dtype, shape, data}}; default: sample values");
  run_cmd->add_option("--save-outputs", run.save_outputs, "write outputs as JSON");
  run_cmd->add_option("--node-io", run.capture, "node_io capture: none|outputs|all (overrides the config)")
      ->check(CLI::IsMember({"none", "outputs", "all"}));
  run_cmd->add_option("--save-node-io", run.save_node_io, "write the node_io summary as JSON (implies --node-io all)");
  run_cmd->add_option("--show", run.show, "values printed per output")->capture_default_str();
  run_cmd->add_flag("--no-table", run.quiet_table, "do not print the per-node backend table");

  std::string plan_model, plan_inputs;
  auto* plan_cmd = app.add_subcommand("plan", "show per node: op, module path, chosen backend and why, rejections");
  plan_cmd->add_option("model", plan_model, "graph file")->required();
  plan_cmd->add_option("--inputs", plan_inputs, "inputs as JSON (selection depends on shapes); default: sample values");

  bool verbose = false;
  auto* plugins_cmd = app.add_subcommand("plugins", "list loaded plugins, their versions and kernels");
  plugins_cmd->add_flag("-k,--kernels", verbose, "list every kernel");

  CLI11_PARSE(app, argc, argv);
  if (!common.log_level.empty() && !log::set_level(common.log_level)) {
    std::fprintf(stderr, "error: --log-level '%s' is not one of trace|debug|info|warn|error|off\n",
                 common.log_level.c_str());
    return 2;
  }
  try {
    int rc = 0;
    if (*run_cmd) rc = cli::cmd_run(common, run);
    else if (*plan_cmd) rc = cli::cmd_plan(common, plan_model, plan_inputs);
    else if (*plugins_cmd) rc = cli::cmd_plugins(common, verbose);
    return rc;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: unexpected: %s\n", e.what());
    return 1;
  }
}
