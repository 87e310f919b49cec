// The host's logger: one spdlog logger named "switchyard", writing to stderr.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace switchyard::log {

spdlog::logger& get();
// Sets the level from a name (trace|debug|info|warn|error|off). Returns false if unknown.
bool set_level(const std::string& name);
// The current level's name, as set_level takes it.
std::string level_name();
// Applies $SWITCHYARD_LOG_LEVEL if set; it wins over the config but not over the CLI flag.
void apply_env_level();

}  // namespace switchyard::log
