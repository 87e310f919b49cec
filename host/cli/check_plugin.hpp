// `switchyard check-plugin`: the conformance kit's command (check_plugin.cpp).
#pragma once

#include "commands.hpp"

#include <string>

namespace switchyard::cli {

struct CheckPluginFlags {
  std::string plugin;              // the plugin's .so file
  std::string reference = "aten";  // --reference: the plugin whose results count as right
  std::string op;                  // --op: check only this op's kernels
  bool verbose = false;            // --verbose: a line per case
  bool require_all = false;        // --require-all: a kernel with no case run is a failure
};

int cmd_check_plugin(const CommonFlags& common, const CheckPluginFlags& flags);

}  // namespace switchyard::cli
