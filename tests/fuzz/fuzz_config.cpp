// libFuzzer target: the TOML config loader. Every input must give a Config or a
// switchyard::Error; anything else escaping (another exception type, a crash, a sanitizer
// report, a hang) is a bug the fuzzer reports.
#include "config/config.hpp"
#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

// SWITCHYARD_FUZZ_VERBOSE=1 prints each input's outcome (for checking seeds by hand).
static const bool g_verbose = std::getenv("SWITCHYARD_FUZZ_VERBOSE") != nullptr;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  switchyard::log::set_level("off");  // unknown keys are logged as warnings: keep quiet
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    switchyard::config::Config cfg = switchyard::config::parse_config(text, "fuzz.toml");
    // Touch what a caller would: positions, globs over the rules, backend checks.
    for (const auto& rule : cfg.rules) {
      (void)rule.pos.str();
      if (!rule.node.empty()) (void)switchyard::config::glob_match(rule.node, "layer1.0.conv1");
      if (!rule.module.empty()) (void)switchyard::config::glob_match(rule.module, rule.node);
    }
    try {
      switchyard::config::check_backends(cfg, {"aten", "example"});
    } catch (const switchyard::Error&) {}
  } catch (const switchyard::Error& e) {
    // the expected way to refuse bad input
    if (g_verbose) std::fprintf(stderr, "switchyard::Error: %s\n", e.what());
    return 0;
  }
  if (g_verbose) std::fprintf(stderr, "accepted\n");
  return 0;
}
