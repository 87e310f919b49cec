// The TOML run configuration: where plugins live, which to load, how nodes are routed
// to backends, threads, node_io capture and logging. Errors cite file:line:column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace switchyard::config {

struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column"
};

// One `options = { key = value }` entry of a rule: reaches each node the rule routes as
// the attribute "@key" (sdk.h, "Options").
struct RuleOption {
  enum class Kind { Int, Float, String } kind = Kind::String;  // booleans are ints 0/1
  std::string key;
  int64_t i = 0;
  double f = 0.0;
  std::string s;
};

// One [[rules]] entry. Exactly the fields that are non-empty must all match a node.
struct Rule {
  std::string op;                      // exact op name, e.g. "aten::linear"
  std::string node;                    // glob on the node name, e.g. "layer1.*"
  std::string module;                  // glob on the module path, e.g. "encoder.layers.*"
  std::string family;                  // op family as the plugins declare it, e.g. "linalg"
  std::vector<std::string> backends;   // ordered plugin names
  std::vector<RuleOption> options;     // options for the kernels of the nodes it routes
  SourcePos pos;                       // where the rule starts, for messages
  std::vector<SourcePos> backend_pos;  // where each `backends` entry is, for check_backends
};

// [precision] compute: a model's own dtypes; float32 for a model that holds float16 or
// bfloat16 (its weights converted once, when it loads); or bfloat16 products (accumulated
// in float32) in the kernels that have them, float32 elsewhere.
enum class Compute { AsIs, Float32, BFloat16 };

// One [[precision.rules]] entry: the compute of the nodes it matches (first match wins;
// the matchers are [[rules]]'s). Per node, only "fp32" and "bf16": "as-is" and the
// float32 conversion of a half-precision model apply to the whole model.
struct PrecisionRule {
  std::string op, node, module, family;  // as Rule's
  Compute compute = Compute::Float32;
  SourcePos pos;
};

// Stream: each node's record goes to a sink (a node callback) as the node runs, and
// nothing is kept; a run without a sink is an error.
enum class CaptureMode { None, Outputs, All, Stream };
const char* capture_mode_name(CaptureMode mode);

struct Config {
  std::string source;                           // the file it came from ("" for defaults)
  std::vector<std::string> plugin_paths;        // [plugins] paths, resolved against the file's dir
  std::vector<std::string> load;                // [plugins] load: names or .so paths; empty = all found
  std::vector<std::string> default_backends;    // [selection] default (empty: builtin_routing())
  bool builtin_default = false;                 // default_backends is the built-in routing
  bool strict = false;                          // [selection] strict
  bool fuse = true;                             // [selection] fuse: fused kernels where offered
  bool patterns = true;                         // [selection] patterns: recognised layers (ir/patterns.hpp)
  std::vector<Rule> rules;                      // [[rules]], first match wins
  int intra_op_threads = 0;                     // [runtime] 0 = leave the library default
  int inter_op_threads = 1;                     // [runtime] > 1: independent nodes run at once; 0 = all cores
  bool deterministic = false;                   // [runtime] bit-identical across runs and schedules
  bool memory_planner = true;                   // [runtime] host-allocated activations share one arena
  bool join_in_place = true;                    // [runtime] a cat's inputs are written into its output
  std::optional<Compute> compute;               // [precision] unset: as-is, float32 for half-precision models
  SourcePos compute_pos;                        // where compute is set
  std::vector<PrecisionRule> precision_rules;   // [[precision.rules]], first match wins
  int plan_cache = 16;                          // [runtime] plans kept, one per input-shape signature
  bool preflight = true;                        // [runtime] memory pre-flight before planning a new signature
  double copy_warning_share = 0.25;             // [runtime] warn when conversions move more of a run's bytes
  std::string prefer_storage;                   // [runtime] "plugin/storage": keep values there wherever kernels allow
  SourcePos prefer_storage_pos;                 // where prefer_storage is set, for errors
  CaptureMode capture = CaptureMode::None;      // [runtime] node_io = "none" | "outputs" | "all" | "stream"
  std::string log_level = "info";               // [runtime] trace|debug|info|warn|error|off
  std::vector<std::string> warnings;            // unknown keys, "file:line:column: ..." (also logged)
  std::vector<SourcePos> default_backends_pos;  // where each [selection] default entry is
};

// Parses a config file. Throws switchyard::Error(ErrorKind::Config) with
// "file:line:column: message" on syntax errors, wrong types, unknown values.
// Unknown keys are warnings (naming the nearest known key), not errors: in
// Config::warnings, and logged as they are found unless `log_warnings` is false.
Config load_config(const std::string& path, bool log_warnings = true);
Config parse_config(const std::string& toml_text, const std::string& source_name, bool log_warnings = true);

// Throws a Config error, citing the entry's file:line:column, for the first backend named
// in [selection] default or a rule's `backends` that is not among the loaded plugins.
// Separate from parsing because plugins load after the config is read.
void check_backends(const Config& cfg, const std::vector<std::string>& loaded_plugin_names);

// Shell-style glob: '*' any run of characters (dots included), '?' one character.
bool glob_match(const std::string& pattern, const std::string& text);

// The backend order used when a config gives no [selection] default: the op-family
// plugins first (cuda, linalg, conv, attention, elementwise, shape), then any other plugin, then the
// aten reference plugin, then the teaching plugin `example`; only those loaded.
std::vector<std::string> builtin_routing(const std::vector<std::string>& loaded);

}  // namespace switchyard::config
