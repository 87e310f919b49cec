#include "loader/plugin_manager.hpp"

#include "loader/host_api.hpp"
#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include "loader/library_deps.hpp"

#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

#ifndef SWITCHYARD_INSTALL_PLUGIN_DIR
#define SWITCHYARD_INSTALL_PLUGIN_DIR "lib/switchyard/plugins"
#endif

namespace fs = std::filesystem;

namespace switchyard::loader {
namespace {

constexpr const char* kFilePrefix = "libswitchyard-";
constexpr const char* kFileSuffix = ".so";

std::string version_string(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw Error(ErrorKind::Plugin, "plugin " + path + ": " + message);
}

bool is_plugin_file_name(const std::string& file) {
  return file.size() > std::char_traits<char>::length(kFilePrefix) + 3 && file.rfind(kFilePrefix, 0) == 0 &&
         file.compare(file.size() - 3, 3, kFileSuffix) == 0;
}

// Checks the kernel table once at load time so the hot path can trust it.
void check_kernels(const std::string& path, const SY_Plugin& table) {
  if (table.num_kernels > 0 && table.kernels == nullptr) fail(path, "kernel table is NULL");
  for (size_t i = 0; i < table.num_kernels; ++i) {
    const SY_KernelDef* k = table.kernels[i];
    std::string where = "kernel #" + std::to_string(i);
    if (k == nullptr) fail(path, where + " is NULL");
    if (!SY_STRUCT_HAS(k, SY_KernelDef, destroy))
      fail(path, where + " has struct_size " + std::to_string(k->struct_size) + ", too small for SDK 1.0");
    if (k->op == nullptr || *k->op == '\0') fail(path, where + " has no op name");
    where += " (" + std::string(k->op) + ")";
    if (k->create == nullptr || k->run == nullptr || k->destroy == nullptr)
      fail(path, where + " lacks create, run or destroy");
    if (k->output_mode == SY_OUTPUT_HOST_ALLOCATED && k->infer == nullptr)
      fail(path, where + " writes host-allocated outputs but has no infer function");
    if (k->output_mode != SY_OUTPUT_HOST_ALLOCATED && k->output_mode != SY_OUTPUT_KERNEL_ALLOCATED)
      fail(path, where + " has an unknown output mode " + std::to_string(k->output_mode));
    if (k->num_dtypes > 0 && k->dtypes == nullptr) fail(path, where + " has a NULL dtype list");
  }
}

// One host table per loaded library (and host version), shared by every LoadedPlugin of
// it. Two Runtimes that load one library share its code and globals, and a plugin keeps
// the table of its latest init in a global (sdk/plugin.hpp's host_api()), which it
// uses in tensor deleters: a table per load dangled once that load was gone while an
// older load's tensors were still alive (ASan, test_shape_plugin).
struct SharedHostApis {
  std::mutex mutex;  // held from the lookup through the plugin's init and the relabelling
  std::map<std::tuple<void*, uint32_t, uint32_t>, std::weak_ptr<SY_HostApi>> tables;

  // The live table for `library`, or a new one (*fresh). Call with `mutex` held.
  std::shared_ptr<SY_HostApi> get(void* library, const std::string& label, uint32_t major, uint32_t minor,
                                  bool* fresh) {
    for (auto it = tables.begin(); it != tables.end();) it = it->second.expired() ? tables.erase(it) : std::next(it);
    std::weak_ptr<SY_HostApi>& slot = tables[{library, major, minor}];
    std::shared_ptr<SY_HostApi> api = slot.lock();
    *fresh = api == nullptr;
    if (*fresh) slot = api = make_host_api(label, major, minor);
    return api;
  }
};

SharedHostApis& shared_host_apis() {
  static SharedHostApis apis;
  return apis;
}

// The plugin's SY_Plugin.attributes (SDK 1.3), copied; empty for an older table or a
// failing call (warned about: the attributes only describe, so the load goes on).
std::vector<std::pair<std::string, std::string>> read_attributes(const std::string& path, const SY_Plugin& table) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!SY_STRUCT_HAS(&table, SY_Plugin, attributes) || table.attributes == nullptr) return out;
  SY_CallContext call;
  SY_PluginAttributesArgs args{};
  args.struct_size = SY_PluginAttributesArgs_STRUCT_SIZE;
  args.call = &call;
  const SY_Status status = table.attributes(table.context, &args);
  if (status != SY_OK) {
    log::get().warn("{}: the plugin's attributes call failed: {}", path, describe_failure(status, call));
    return out;
  }
  for (size_t i = 0; i < args.num_attributes && args.attributes != nullptr; ++i) {
    const SY_NamedValue& a = args.attributes[i];
    if (a.struct_size < SY_NamedValue_STRUCT_SIZE || a.name == nullptr) continue;
    out.emplace_back(a.name, a.value != nullptr ? a.value : "");
  }
  return out;
}

// " (built with: build gcc 12.2.0, release; onednn 2.6.3, ...)" for load errors, or "".
std::string built_with(const std::vector<std::pair<std::string, std::string>>& attributes) {
  std::string s;
  for (const auto& [name, value] : attributes) s += (s.empty() ? "" : "; ") + name + " " + value;
  return s.empty() ? s : " (built with: " + s + ")";
}

// SY_EXTENSION_STORAGE_ELEMENTS: one dtype per storage, each the values' own ({0, 0, 0})
// or a narrower floating one.
std::vector<DLDataType> storage_elements(const std::string& path, const SY_Plugin& table, const SY_Extension& e) {
  if (e.struct_size < SY_StorageElements_STRUCT_SIZE)
    fail(path, "its storage elements extension has struct_size " + std::to_string(e.struct_size) + ", smaller than " +
                   std::to_string(SY_StorageElements_STRUCT_SIZE));
  const auto& list = reinterpret_cast<const SY_StorageElements&>(e);
  const size_t storages = SY_STRUCT_HAS(&table, SY_Plugin, num_storages) ? table.num_storages : 0;
  if (list.num_storages != storages || (storages > 0 && list.elements == nullptr))
    fail(path, "its storage elements extension lists " + std::to_string(list.num_storages) +
                   " storage(s), but it declares " + std::to_string(storages));
  std::vector<DLDataType> out(list.elements, list.elements + storages);
  for (size_t k = 0; k < out.size(); ++k) {
    const DLDataType d = out[k];
    const bool exact = d.code == 0 && d.bits == 0 && d.lanes == 0;
    if (!exact && !((d.code == kDLFloat || d.code == kDLBfloat) && d.bits > 0 && d.bits < 64 && d.lanes == 1))
      fail(path, "its storage elements extension gives storage " + std::to_string(k) + " dtype code " +
                     std::to_string(d.code) + " bits " + std::to_string(d.bits) + ", not a narrower float");
  }
  return out;
}

// Walks the plugin's extension chain (SDK 1.3): reads the types this host knows, skips the
// others; a chain that is cut short or runs on forever is a broken plugin.
void read_extensions(const std::string& path, const SY_Plugin& table, std::vector<DLDataType>& elements) {
  if (!SY_STRUCT_HAS(&table, SY_Plugin, extension_start)) return;
  constexpr int kMaxLinks = 256;
  int link = 0;
  for (const SY_Extension* e = table.extension_start; e != nullptr; e = e->next) {
    if (++link > kMaxLinks)
      fail(path, "extension chain longer than " + std::to_string(kMaxLinks) + " links (a cycle?)");
    if (e->struct_size < SY_Extension_STRUCT_SIZE)
      fail(path, "extension " + std::to_string(link) + " has struct_size " + std::to_string(e->struct_size) +
                     ", smaller than SY_Extension's");
    if (e->type == SY_EXTENSION_STORAGE_ELEMENTS)
      elements = storage_elements(path, table, *e);
    else
      log::get().debug("{}: extension type {} is not one this host knows; skipped", path, e->type);
  }
}

}  // namespace

std::string check_version(uint32_t plugin_major, uint32_t plugin_minor, uint32_t host_major, uint32_t host_minor) {
  const std::string plugin = version_string(plugin_major, plugin_minor);
  const std::string host = version_string(host_major, host_minor);
  if (plugin_major != host_major)
    return "built for SDK " + plugin + ", but this host speaks SDK " + host + " (the major version must match)";
  if (plugin_minor > host_minor)
    return "built for SDK " + plugin + ", newer than this host's SDK " + host + " (rebuild the plugin against SDK " +
           host + " or upgrade the host)";
  return "";
}

LoadedPlugin::~LoadedPlugin() {
  if (table_ != nullptr && SY_STRUCT_HAS(table_, SY_Plugin, shutdown) && table_->shutdown != nullptr)
    table_->shutdown(table_->context);
  host_api_.reset();  // before the unload: a table outlives every load of its library
  library_.reset();   // unload only after shutdown returned
}

std::shared_ptr<LoadedPlugin> PluginManager::load_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "file not found");
  if (const std::string clash = library_clash(path); !clash.empty()) fail(path, "not loaded: " + clash);
  auto library = std::make_shared<boost::dll::shared_library>();
  try {
    library->load(path, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    fail(path, std::string("not a loadable shared library: ") + e.what());
  }
  if (!library->has(SY_PLUGIN_ENTRY_SYMBOL))
    fail(path, std::string("no entry symbol '") + SY_PLUGIN_ENTRY_SYMBOL +
                   "': not a switchyard plugin (build it with SY_PLUGIN or export the symbol)");
  auto init = library->get<SY_Status(SY_PluginInitArgs*)>(SY_PLUGIN_ENTRY_SYMBOL);

  auto plugin = std::shared_ptr<LoadedPlugin>(new LoadedPlugin());
  plugin->path_ = path;
  SY_CallContext call;
  SY_PluginInitArgs args{};
  args.struct_size = SY_PluginInitArgs_STRUCT_SIZE;
  args.call = &call;
  SharedHostApis& apis = shared_host_apis();
  std::unique_lock<std::mutex> lock(apis.mutex);  // until the table is relabelled
  bool fresh_table = false;
  plugin->host_api_ =
      apis.get(library->native(), fs::path(path).filename().string(), host_major_, host_minor_, &fresh_table);
  args.host = plugin->host_api_.get();
  SY_Status status = init(&args);
  if (status != SY_OK) fail(path, "initialisation failed: " + describe_failure(status, call));
  const SY_Plugin* table = args.plugin;
  if (table == nullptr) fail(path, "initialisation returned no plugin table");
  if (!SY_STRUCT_HAS(table, SY_Plugin, sdk_version_minor))
    fail(path, "plugin table is too small to carry a version (struct_size " + std::to_string(table->struct_size) + ")");

  std::string version_problem =
      check_version(table->sdk_version_major, table->sdk_version_minor, host_major_, host_minor_);
  // Another major may have moved the field: its attributes are read only for this one.
  if (table->sdk_version_major == host_major_) plugin->attributes_ = read_attributes(path, *table);
  if (!version_problem.empty()) fail(path, "refused: " + version_problem + built_with(plugin->attributes_));
  if (!SY_STRUCT_HAS(table, SY_Plugin, shutdown))
    fail(path, "plugin table struct_size " + std::to_string(table->struct_size) + " is smaller than SDK 1.0's");
  plugin->table_ = table;      // from here on the destructor calls shutdown
  plugin->library_ = library;  // and unloads the library after it
  if (table->name == nullptr || *table->name == '\0') fail(path, "plugin declares no name");
  plugin->name_ = table->name;
  plugin->version_ = table->version != nullptr ? table->version : "";
  plugin->vendor_ = table->vendor != nullptr ? table->vendor : "";
  plugin->sdk_major_ = table->sdk_version_major;
  plugin->sdk_minor_ = table->sdk_version_minor;
  // Log lines carry the plugin's name. A shared table has it already: relabelling it
  // would race with the other loads' use of it.
  if (fresh_table) relabel_host_api(*plugin->host_api_, plugin->name_);
  lock.unlock();
  try {
    check_kernels(path, *table);
    read_extensions(path, *table, plugin->storage_elements_);
  } catch (const Error& e) {
    throw Error(e.kind(), e.what() + built_with(plugin->attributes_));
  }
  if (auto existing = find(plugin->name_))
    fail(path, "a plugin named '" + plugin->name_ + "' is already loaded from " + existing->path());

  log::get().debug("loaded plugin '{}' {} (SDK {}) from {} with {} kernels", plugin->name_, plugin->version_,
                   version_string(plugin->sdk_major_, plugin->sdk_minor_), path, table->num_kernels);
  plugins_.push_back(plugin);
  return plugin;
}

std::vector<std::string> PluginManager::discover(const std::vector<std::string>& dirs) {
  std::vector<std::string> found;
  std::set<std::string> seen_names;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<std::string> here;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string file = entry.path().filename().string();
      if (is_plugin_file_name(file)) here.push_back(file);
    }
    std::sort(here.begin(), here.end());
    for (const std::string& file : here) {
      std::string full = (fs::path(dir) / file).lexically_normal().string();
      if (!seen_names.insert(file).second) {
        log::get().debug("plugin file {} is shadowed by an earlier search path", full);
        continue;
      }
      found.push_back(full);
    }
  }
  return found;
}

void PluginManager::load_all(const std::vector<std::string>& dirs, const std::vector<std::string>& load) {
  if (load.empty()) {
    for (const std::string& path : discover(dirs)) load_file(path);
    return;
  }
  for (const std::string& item : load) {
    bool is_path =
        item.find('/') != std::string::npos || (item.size() > 3 && item.compare(item.size() - 3, 3, kFileSuffix) == 0);
    if (is_path) {
      load_file(item);
      continue;
    }
    std::string file = kFilePrefix + item + kFileSuffix;
    std::string hit;
    for (const std::string& dir : dirs) {
      std::error_code ec;
      if (fs::exists(fs::path(dir) / file, ec)) {
        hit = (fs::path(dir) / file).lexically_normal().string();
        break;
      }
    }
    if (hit.empty()) {
      std::ostringstream where;
      for (size_t i = 0; i < dirs.size(); ++i) where << (i ? ", " : "") << dirs[i];
      throw Error(ErrorKind::Plugin, "plugin '" + item + "' not found: no " + file + " in " +
                                         (dirs.empty() ? std::string("(no search paths)") : where.str()));
    }
    load_file(hit);
  }
}

std::shared_ptr<LoadedPlugin> PluginManager::find(const std::string& name) const {
  for (const auto& p : plugins_)
    if (p->name() == name) return p;
  return nullptr;
}

std::vector<KernelRef> PluginManager::kernels_for(const std::string& op) const {
  std::vector<KernelRef> out;
  for (const auto& p : plugins_) {
    const SY_Plugin& t = p->table();
    for (size_t i = 0; i < t.num_kernels; ++i)
      if (op == t.kernels[i]->op) out.push_back(KernelRef{p, t.kernels[i]});
  }
  return out;
}

std::vector<std::string> PluginManager::default_search_paths() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SWITCHYARD_PLUGIN_PATH")) {
    std::stringstream list(env);
    for (std::string dir; std::getline(list, dir, ':');)
      if (!dir.empty()) dirs.push_back(dir);
  }
  std::error_code ec;
  fs::path exe_dir = boost::dll::program_location(ec).parent_path();
  if (!ec) {
    dirs.push_back((exe_dir / ".." / "plugins").lexically_normal().string());
    dirs.push_back((exe_dir / ".." / SWITCHYARD_INSTALL_PLUGIN_DIR).lexically_normal().string());
  }
  return dirs;
}

}  // namespace switchyard::loader
