// The public view of a config (RuntimeConfig), and the public log level.
#include "api/config_view.hpp"

#include "util/log.hpp"

namespace switchyard {

RuntimeConfig to_public(const config::Config& cfg) {
  RuntimeConfig out;
  out.source = cfg.source;
  out.plugin_paths = cfg.plugin_paths;
  out.load = cfg.load;
  out.default_backends = cfg.default_backends;
  out.builtin_default = cfg.builtin_default;
  out.strict = cfg.strict;
  out.fuse = cfg.fuse;
  for (const config::Rule& r : cfg.rules)
    out.rules.push_back(ConfigRule{r.op, r.node, r.module, r.family, r.backends, r.pos.str()});
  out.intra_op_threads = cfg.intra_op_threads;
  out.inter_op_threads = cfg.inter_op_threads;
  out.deterministic = cfg.deterministic;
  out.memory_planner = cfg.memory_planner;
  out.plan_cache = cfg.plan_cache;
  out.preflight = cfg.preflight;
  out.copy_warning_share = cfg.copy_warning_share;
  out.capture = config::capture_mode_name(cfg.capture);
  out.log_level = cfg.log_level;
  out.warnings = cfg.warnings;
  return out;
}

RuntimeConfig read_config(const std::string& path) {
  return to_public(config::load_config(path, /*log_warnings=*/false));
}

bool set_log_level(const std::string& level) { return log::set_level(level); }

}  // namespace switchyard
