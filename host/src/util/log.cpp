#include "util/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>

namespace switchyard::log {

spdlog::logger& get() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_color_mt("switchyard");
    l->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
    l->set_level(spdlog::level::info);
    return l;
  }();
  return *logger;
}

bool set_level(const std::string& name) {
  auto level = spdlog::level::from_str(name);
  // from_str answers "off" for anything it does not know; only accept a real "off".
  if (level == spdlog::level::off && name != "off") return false;
  get().set_level(level);
  return true;
}

std::string level_name() {
  const spdlog::level::level_enum level = get().level();
  return level == spdlog::level::warn ? "warn" : std::string(spdlog::level::to_string_view(level).data());
}

void apply_env_level() {
  if (const char* env = std::getenv("SWITCHYARD_LOG_LEVEL")) {
    if (!set_level(env)) get().warn("SWITCHYARD_LOG_LEVEL='{}' is not a log level; ignored", env);
  }
}

}  // namespace switchyard::log
