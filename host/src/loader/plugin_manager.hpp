// Finds, loads and version-negotiates plugin libraries (Boost.DLL), and lists their
// kernels. Unload policy (see sdk.h): a library stays loaded while any kernel instance
// or produced tensor of it is alive; then shutdown() runs once and the library unloads.
#pragma once

#include <switchyard/sdk.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::loader {

// One loaded plugin. Kernel instances and adopted tensors hold a shared_ptr to it.
class LoadedPlugin {
 public:
  ~LoadedPlugin();  // calls shutdown, then unloads the library
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& vendor() const { return vendor_; }
  const std::string& path() const { return path_; }
  uint32_t sdk_major() const { return sdk_major_; }
  uint32_t sdk_minor() const { return sdk_minor_; }
  const SY_Plugin& table() const { return *table_; }
  // What it was built with and runs on (SDK 1.3 SY_Plugin.attributes), copied at load.
  const std::vector<std::pair<std::string, std::string>>& attributes() const { return attributes_; }
  const SY_HostApi& host_api() const { return *host_api_; }
  // What storage `k`'s bytes hold where narrower than its values (SY_EXTENSION_STORAGE_
  // ELEMENTS), e.g. bfloat16; {0, 0, 0}: the values' own dtype.
  DLDataType storage_element(size_t k) const {
    return k < storage_elements_.size() ? storage_elements_[k] : DLDataType{0, 0, 0};
  }

 private:
  friend class PluginManager;
  LoadedPlugin() = default;
  std::string name_, version_, vendor_, path_;
  uint32_t sdk_major_ = 0, sdk_minor_ = 0;
  std::vector<std::pair<std::string, std::string>> attributes_;
  std::vector<DLDataType> storage_elements_;  // empty: every storage exact
  const SY_Plugin* table_ = nullptr;
  std::shared_ptr<SY_HostApi> host_api_;  // per plugin: log lines carry its name
  std::shared_ptr<void> library_;         // the boost::dll::shared_library
};

// The negotiation rule: same major, and a minor no newer than the host's. Returns "" if
// a plugin built for plugin_major.plugin_minor may load, else the reason.
std::string check_version(uint32_t plugin_major, uint32_t plugin_minor, uint32_t host_major, uint32_t host_minor);

struct KernelRef {
  std::shared_ptr<LoadedPlugin> plugin;
  const SY_KernelDef* def = nullptr;
};

class PluginManager {
 public:
  // The SDK version this host speaks; tests pretend to be a newer host to load older plugins.
  explicit PluginManager(uint32_t host_major = SY_SDK_VERSION_MAJOR, uint32_t host_minor = SY_SDK_VERSION_MINOR)
      : host_major_(host_major), host_minor_(host_minor) {}

  // Loads one library. Throws Error(ErrorKind::Plugin) naming the file and, for version
  // problems, both versions: not a shared library, no entry symbol, init failed,
  // another SDK major, a newer minor than the host's, or a duplicate plugin name.
  std::shared_ptr<LoadedPlugin> load_file(const std::string& path);

  // The plugin files (libswitchyard-<name>.so) in `dirs`, sorted by name.
  static std::vector<std::string> discover(const std::vector<std::string>& dirs);

  // Loads what `load` asks for: plugin names (looked up in `dirs`) or .so paths. With an
  // empty `load`, loads every plugin found in `dirs`.
  void load_all(const std::vector<std::string>& dirs, const std::vector<std::string>& load);

  const std::vector<std::shared_ptr<LoadedPlugin>>& plugins() const { return plugins_; }
  std::shared_ptr<LoadedPlugin> find(const std::string& name) const;
  std::vector<KernelRef> kernels_for(const std::string& op) const;

  // The directories searched by default: <exe dir>/../plugins (the build tree),
  // <exe dir>/../<libdir>/switchyard/plugins (an install), then $SWITCHYARD_PLUGIN_PATH
  // (colon-separated) in front of both.
  static std::vector<std::string> default_search_paths();

 private:
  uint32_t host_major_, host_minor_;
  std::vector<std::shared_ptr<LoadedPlugin>> plugins_;
};

}  // namespace switchyard::loader
