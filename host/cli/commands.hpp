// The CLI's subcommands, each a function over the embedding API. Return the exit code.
#pragma once

#include <string>
#include <vector>

namespace switchyard::cli {

struct CommonOptions {
  std::string config;                      // --config
  std::vector<std::string> plugin_paths;   // --plugin-path (repeatable)
  std::string log_level;                   // --log-level (wins over env and config)
  bool strict = false;                     // --strict
};

struct RunOptions {
  std::string model;
  std::string inputs;        // --inputs FILE.json (default: generated sample inputs)
  std::string save_outputs;  // --save-outputs FILE.json
  std::string capture;       // --node-io none|outputs|all
  std::string save_node_io;  // --save-node-io FILE.json
  int show = 8;              // --show: values printed per output
  bool quiet_table = false;  // --no-table
};

int cmd_run(const CommonOptions& common, const RunOptions& options);
int cmd_plan(const CommonOptions& common, const std::string& model, const std::string& inputs);
int cmd_plugins(const CommonOptions& common, bool verbose);

}  // namespace switchyard::cli
