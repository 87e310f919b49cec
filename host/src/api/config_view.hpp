// The public view of a parsed config (RuntimeConfig), for Runtime::config() and read_config().
#pragma once

#include "config/config.hpp"

#include <switchyard/runtime.hpp>

namespace switchyard {

RuntimeConfig to_public(const config::Config& cfg);

}  // namespace switchyard
