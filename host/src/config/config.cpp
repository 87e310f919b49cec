// The TOML config loader. Every error cites file:line:column of the offending node;
// unknown keys are warnings (with a near-miss suggestion) so that old configs keep working.
#include "config/config.hpp"

#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

namespace switchyard::config {

std::string SourcePos::str() const {
  std::ostringstream out;
  out << (file.empty() ? "<config>" : file) << ':' << line << ':' << column;
  return out.str();
}

const char* capture_mode_name(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::None: return "none";
    case CaptureMode::Outputs: return "outputs";
    case CaptureMode::All: return "all";
    case CaptureMode::Stream: return "stream";
  }
  return "?";
}

bool glob_match(const std::string& pattern, const std::string& text) {
  // Iterative with one backtrack point: linear memory, no recursion blow-up on "a*a*a*b".
  size_t p = 0, t = 0;
  size_t star = std::string::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (star != std::string::npos) {
      p = star + 1;  // let the last '*' swallow one more character
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& known) {
  // "Close" scales with length so that short typos match but unrelated words do not.
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& candidate : known) {
    size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace

void check_backends(const Config& cfg, const std::vector<std::string>& loaded_plugin_names) {
  auto check_list = [&](const std::vector<std::string>& names, const std::vector<SourcePos>& positions,
                        const SourcePos& fallback, const std::string& where) {
    for (size_t i = 0; i < names.size(); ++i) {
      const auto& name = names[i];
      if (std::find(loaded_plugin_names.begin(), loaded_plugin_names.end(), name) != loaded_plugin_names.end())
        continue;
      const SourcePos& pos = i < positions.size() ? positions[i] : fallback;
      std::string loaded;
      for (const auto& n : loaded_plugin_names) loaded += (loaded.empty() ? "" : ", ") + n;
      std::string message = pos.str() + ": unknown backend '" + name + "' in " + where +
                            " (loaded plugins: " + (loaded.empty() ? "none" : loaded) + ")";
      std::string suggestion = nearest_name(name, loaded_plugin_names);
      if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
      throw Error(ErrorKind::Config, message);
    }
  };
  SourcePos file_pos{cfg.source, 0, 0};
  check_list(cfg.default_backends, cfg.default_backends_pos, file_pos, "[selection] default");
  for (size_t r = 0; r < cfg.rules.size(); ++r) {
    const Rule& rule = cfg.rules[r];
    check_list(rule.backends, rule.backend_pos, rule.pos, "[[rules]] #" + std::to_string(r + 1) + " backends");
  }
}

namespace {

// Walks one parsed document into a Config, throwing at the first error.
class Reader {
 public:
  Reader(Config& cfg, std::string source, bool log_warnings)
      : cfg_(cfg), source_(std::move(source)), log_warnings_(log_warnings) {}

  void read(const toml::table& root) {
    warn_unknown(root, {"plugins", "selection", "rules", "runtime", "precision"}, "the top level");
    if (const toml::node* plugins = root.get("plugins")) read_plugins(table_of(*plugins, "[plugins]"));
    if (const toml::node* selection = root.get("selection")) read_selection(table_of(*selection, "[selection]"));
    if (const toml::node* rules = root.get("rules")) read_rules(*rules);
    if (const toml::node* runtime = root.get("runtime")) read_runtime(table_of(*runtime, "[runtime]"));
    if (const toml::node* precision = root.get("precision")) read_precision(table_of(*precision, "[precision]"));
  }

 private:
  SourcePos pos(const toml::source_region& region) const {
    return SourcePos{source_, static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
  }
  SourcePos pos(const toml::node& node) const { return pos(node.source()); }

  [[noreturn]] void fail(const toml::node& node, const std::string& message) const {
    throw Error(ErrorKind::Config, pos(node).str() + ": " + message);
  }

  static const char* type_name(const toml::node& node) {
    switch (node.type()) {
      case toml::node_type::table: return "a table";
      case toml::node_type::array: return "an array";
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a float";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::date: return "a date";
      case toml::node_type::time: return "a time";
      case toml::node_type::date_time: return "a date-time";
      default: return "nothing";
    }
  }

  const toml::table& table_of(const toml::node& node, const std::string& label) const {
    if (const toml::table* table = node.as_table()) return *table;
    fail(node, label + ": expected a table, got " + type_name(node));
  }

  void warn_unknown(const toml::table& table, const std::vector<std::string>& known, const std::string& where) {
    for (auto&& [key, value] : table) {
      std::string name(key.str());
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      std::string message = pos(key.source()).str() + ": unknown key '" + name + "' in " + where + " (ignored)";
      std::string suggestion = nearest_name(name, known);
      if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
      if (log_warnings_) log::get().warn("{}", message);
      cfg_.warnings.push_back(std::move(message));
    }
  }

  std::string string_of(const toml::node& node, const std::string& label) const {
    if (const auto* value = node.as_string()) return value->get();
    fail(node, label + ": expected a string, got " + type_name(node));
  }

  // Reads `options = { key = value, ... }`: strings, integers, floats and booleans.
  std::vector<RuleOption> options_of(const toml::node& node, const std::string& label) const {
    const toml::table* table = node.as_table();
    if (!table) fail(node, label + ": expected a table such as { precision = \"tf32\" }, got " + type_name(node));
    std::vector<RuleOption> out;
    for (const auto& [key, value] : *table) {
      RuleOption o;
      o.key = std::string(key.str());
      if (const auto* v = value.as_string())
        o.kind = RuleOption::Kind::String, o.s = v->get();
      else if (const auto* v = value.as_integer())
        o.kind = RuleOption::Kind::Int, o.i = v->get();
      else if (const auto* v = value.as_boolean())
        o.kind = RuleOption::Kind::Int, o.i = v->get() ? 1 : 0;
      else if (const auto* v = value.as_floating_point())
        o.kind = RuleOption::Kind::Float, o.f = v->get();
      else
        fail(value, label + " " + o.key + ": expected a string, number or boolean, got " + type_name(value));
      out.push_back(std::move(o));
    }
    return out;
  }

  // Reads an array of strings; `positions` (optional) receives each entry's position.
  std::vector<std::string> strings_of(const toml::node& node, const std::string& label,
                                      std::vector<SourcePos>* positions = nullptr) const {
    const toml::array* array = node.as_array();
    if (!array) fail(node, label + ": expected an array of strings, got " + type_name(node));
    std::vector<std::string> out;
    for (const toml::node& element : *array) {
      const auto* value = element.as_string();
      if (!value) fail(element, label + ": expected an array of strings, but this entry is " + type_name(element));
      out.push_back(value->get());
      if (positions) positions->push_back(pos(element));
    }
    return out;
  }

  int non_negative_int_of(const toml::node& node, const std::string& label) const {
    const auto* value = node.as_integer();
    if (!value) fail(node, label + ": expected an integer, got " + type_name(node));
    int64_t v = value->get();
    if (v < 0) fail(node, label + ": must be >= 0, got " + std::to_string(v));
    if (v > std::numeric_limits<int>::max()) fail(node, label + ": too large: " + std::to_string(v));
    return static_cast<int>(v);
  }

  double fraction_of(const toml::node& node, const std::string& label) const {
    double v = 0;
    if (const auto* f = node.as_floating_point())
      v = f->get();
    else if (const auto* i = node.as_integer())
      v = static_cast<double>(i->get());
    else
      fail(node, label + ": expected a number, got " + type_name(node));
    if (!(v >= 0.0 && v <= 1.0)) fail(node, label + ": must be between 0 and 1, got " + std::to_string(v));
    return v;
  }

  std::string one_of(const toml::node& node, const std::string& label, const std::vector<std::string>& allowed) const {
    std::string value = string_of(node, label);
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(node, label + ": invalid value '" + value + "' (expected one of: " + list + ")");
  }

  // A path relative to the config file's directory, as the schema promises.
  std::string resolve_path(const std::string& path) const {
    namespace fs = std::filesystem;
    fs::path p(path);
    if (p.is_absolute()) return path;
    fs::path base = fs::path(source_).parent_path();
    return (base / p).lexically_normal().string();
  }

  void read_plugins(const toml::table& table) {
    warn_unknown(table, {"paths", "load"}, "[plugins]");
    if (const toml::node* paths = table.get("paths"))
      for (auto& path : strings_of(*paths, "[plugins] paths")) cfg_.plugin_paths.push_back(resolve_path(path));
    if (const toml::node* load = table.get("load"))
      for (auto& entry : strings_of(*load, "[plugins] load"))
        // Names stay names; anything that looks like a path is resolved like `paths`.
        cfg_.load.push_back(entry.find('/') != std::string::npos ? resolve_path(entry) : entry);
  }

  void read_selection(const toml::table& table) {
    warn_unknown(table, {"default", "strict", "fuse", "patterns"}, "[selection]");
    if (const toml::node* list = table.get("default"))
      cfg_.default_backends = strings_of(*list, "[selection] default", &cfg_.default_backends_pos);
    if (const toml::node* strict = table.get("strict")) cfg_.strict = bool_of(*strict, "[selection] strict");
    if (const toml::node* fuse = table.get("fuse")) cfg_.fuse = bool_of(*fuse, "[selection] fuse");
    if (const toml::node* p = table.get("patterns")) cfg_.patterns = bool_of(*p, "[selection] patterns");
  }

  bool bool_of(const toml::node& node, const std::string& label) {
    const auto* value = node.as_boolean();
    if (!value) fail(node, label + ": expected a boolean, got " + type_name(node));
    return value->get();
  }

  void read_rules(const toml::node& node) {
    const toml::array* rules = node.as_array();
    if (!rules || (!rules->empty() && !rules->is_array_of_tables()))
      fail(node, "rules: expected [[rules]] tables, got " + std::string(type_name(node)));
    for (const toml::node& element : *rules) read_rule(*element.as_table(), cfg_.rules.size() + 1);
  }

  void read_rule(const toml::table& table, size_t number) {
    const std::string label = "[[rules]] #" + std::to_string(number);
    warn_unknown(table, {"op", "node", "module", "family", "backends", "options"}, label);
    Rule rule;
    rule.pos = pos(table);
    auto matcher = [&](const char* key, std::string& field) {
      if (const toml::node* value = table.get(key)) field = string_of(*value, label + " " + key);
    };
    matcher("op", rule.op);
    matcher("node", rule.node);
    matcher("module", rule.module);
    matcher("family", rule.family);
    if (rule.op.empty() && rule.node.empty() && rule.module.empty() && rule.family.empty())
      fail(table, label + ": no matcher; give at least one of op, node, module, family");
    const toml::node* backends = table.get("backends");
    if (!backends) fail(table, label + ": missing required key 'backends'");
    rule.backends = strings_of(*backends, label + " backends", &rule.backend_pos);
    if (rule.backends.empty()) fail(*backends, label + " backends: must not be empty");
    if (const toml::node* options = table.get("options")) rule.options = options_of(*options, label + " options");
    cfg_.rules.push_back(std::move(rule));
  }

  static Compute compute_named(const std::string& name) {
    return name == "fp32" ? Compute::Float32 : name == "bf16" ? Compute::BFloat16 : Compute::AsIs;
  }

  void read_precision(const toml::table& table) {
    warn_unknown(table, {"compute", "rules"}, "[precision]");
    if (const toml::node* rules = table.get("rules")) read_precision_rules(*rules);
    const toml::node* n = table.get("compute");
    if (n == nullptr) return;
    cfg_.compute = compute_named(one_of(*n, "[precision] compute", {"as-is", "fp32", "bf16"}));
    cfg_.compute_pos = pos(*n);
  }

  void read_precision_rules(const toml::node& node) {
    const toml::array* rules = node.as_array();
    if (!rules || (!rules->empty() && !rules->is_array_of_tables()))
      fail(node, "[precision] rules: expected [[precision.rules]] tables, got " + std::string(type_name(node)));
    for (const toml::node& element : *rules) {
      const toml::table& table = *element.as_table();
      const std::string label = "[[precision.rules]] #" + std::to_string(cfg_.precision_rules.size() + 1);
      warn_unknown(table, {"op", "node", "module", "family", "compute"}, label);
      PrecisionRule rule;
      rule.pos = pos(table);
      for (auto [key, field] : {std::pair<const char*, std::string*>{"op", &rule.op},
                                {"node", &rule.node},
                                {"module", &rule.module},
                                {"family", &rule.family}})
        if (const toml::node* value = table.get(key)) *field = string_of(*value, label + " " + key);
      if (rule.op.empty() && rule.node.empty() && rule.module.empty() && rule.family.empty())
        fail(table, label + ": no matcher; give at least one of op, node, module, family");
      const toml::node* compute = table.get("compute");
      if (!compute) fail(table, label + ": missing required key 'compute'");
      const std::string name = one_of(*compute, label + " compute", {"as-is", "fp32", "bf16"});
      if (name == "as-is")
        fail(*compute, label +
                           " compute = \"as-is\": a rule chooses \"fp32\" or \"bf16\" per node; whether a "
                           "half-precision model keeps its dtypes is [precision] compute, for the whole model");
      rule.compute = compute_named(name);
      cfg_.precision_rules.push_back(std::move(rule));
    }
  }

  void read_runtime(const toml::table& table) {
    warn_unknown(table,
                 {"intra_op_threads", "inter_op_threads", "deterministic", "memory_planner", "join_in_place", "node_io",
                  "log_level", "plan_cache", "copy_warning_share", "preflight", "prefer_storage"},
                 "[runtime]");
    if (const toml::node* n = table.get("plan_cache")) {
      cfg_.plan_cache = non_negative_int_of(*n, "[runtime] plan_cache");
      if (cfg_.plan_cache < 1) fail(*n, "[runtime] plan_cache: must be >= 1, got 0");
    }
    if (const toml::node* n = table.get("copy_warning_share"))
      cfg_.copy_warning_share = fraction_of(*n, "[runtime] copy_warning_share");
    if (const toml::node* n = table.get("intra_op_threads"))
      cfg_.intra_op_threads = non_negative_int_of(*n, "[runtime] intra_op_threads");
    if (const toml::node* n = table.get("inter_op_threads"))
      cfg_.inter_op_threads = non_negative_int_of(*n, "[runtime] inter_op_threads");
    if (const toml::node* n = table.get("deterministic")) cfg_.deterministic = bool_of(*n, "[runtime] deterministic");
    if (const toml::node* n = table.get("memory_planner"))
      cfg_.memory_planner = bool_of(*n, "[runtime] memory_planner");
    if (const toml::node* n = table.get("join_in_place")) cfg_.join_in_place = bool_of(*n, "[runtime] join_in_place");
    if (const toml::node* n = table.get("preflight")) cfg_.preflight = bool_of(*n, "[runtime] preflight");
    if (const toml::node* n = table.get("prefer_storage")) {
      const auto* s = n->as_string();
      if (s == nullptr)
        fail(*n, "[runtime] prefer_storage: expected a string \"plugin/storage\", e.g. \"conv/nChw16c\"");
      cfg_.prefer_storage = s->get();
      cfg_.prefer_storage_pos = pos(*n);
    }
    if (const toml::node* n = table.get("node_io")) {
      std::string mode = one_of(*n, "[runtime] node_io", {"none", "outputs", "all", "stream"});
      cfg_.capture = mode == "all"       ? CaptureMode::All
                     : mode == "outputs" ? CaptureMode::Outputs
                     : mode == "stream"  ? CaptureMode::Stream
                                         : CaptureMode::None;
    }
    if (const toml::node* n = table.get("log_level"))
      cfg_.log_level = one_of(*n, "[runtime] log_level", {"trace", "debug", "info", "warn", "error", "off"});
  }

  Config& cfg_;
  std::string source_;
  bool log_warnings_;
};

}  // namespace

Config parse_config(const std::string& toml_text, const std::string& source_name, bool log_warnings) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(toml_text), std::string_view(source_name));
  } catch (const toml::parse_error& e) {
    SourcePos at{source_name, static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column)};
    throw Error(ErrorKind::Config, at.str() + ": " + std::string(e.description()));
  }
  Config cfg;
  cfg.source = source_name;
  Reader(cfg, source_name, log_warnings).read(root);
  return cfg;
}

Config load_config(const std::string& path, bool log_warnings) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Config, path + ":0:0: cannot open config file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path, log_warnings);
}

std::vector<std::string> builtin_routing(const std::vector<std::string>& loaded) {
  static const std::vector<std::string> kFirst = {"cuda", "linalg", "conv", "attention", "elementwise", "shape"};
  static const std::vector<std::string> kLast = {"aten", "example"};
  auto has = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  std::vector<std::string> order;
  for (const std::string& name : kFirst)
    if (has(loaded, name)) order.push_back(name);
  for (const std::string& name : loaded)
    if (!has(kFirst, name) && !has(kLast, name)) order.push_back(name);
  for (const std::string& name : kLast)
    if (has(loaded, name)) order.push_back(name);
  return order;
}

}  // namespace switchyard::config
