// Storages (SDK 1.1): where a value lives. Plain host memory is storage kHost; every
// storage a loaded plugin declares (a device, or its own format) gets an id here. The
// table allocates in a storage and converts to and from plain host tensors through the
// plugin's functions; the host never reads a non-host storage's bytes itself.
#pragma once

#include "loader/plugin_manager.hpp"

#include <switchyard/tensor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace switchyard::exec {

inline constexpr int32_t kHost = -1;  // plain host memory: a strided DLTensor on kDLCPU

struct StorageKind {
  std::shared_ptr<loader::LoadedPlugin> plugin;
  const SY_StorageDef* def = nullptr;
  SY_StorageIndex local = 0;    // its index among the plugin's storages
  std::string name;             // "plugin/storage", e.g. "cuda/cuda"
  DLDataType element{0, 0, 0};  // what its bytes hold where narrower than its values (bfloat16)
};

class StorageTable {
 public:
  explicit StorageTable(const loader::PluginManager& plugins);

  const StorageKind& kind(int32_t id) const { return kinds_[static_cast<size_t>(id)]; }
  size_t size() const { return kinds_.size(); }
  // The global id of `plugin`'s storage `local` (SY_STORAGE_HOST gives kHost).
  int32_t id_of(const loader::LoadedPlugin* plugin, SY_StorageIndex local) const;
  // The plugin-local index of storage `id` as seen by a kernel of `plugin`: SY_STORAGE_HOST
  // for host memory; -2 if `plugin` does not own it (its kernels cannot read it).
  SY_StorageIndex local_of(int32_t id, const loader::LoadedPlugin* plugin) const;
  std::string name_of(int32_t id) const { return id == kHost ? "host" : kind(id).name; }
  // True for a storage whose bytes hold a narrower dtype than its values (SY_EXTENSION_
  // STORAGE_ELEMENTS): a value goes there only where every reader reads it there.
  bool narrows(int32_t id) const { return id != kHost && kind(id).element.bits != 0; }
  // The storage a kernel of `plugin` takes from a mask of those it reads or writes: host
  // memory where the mask has it, else the plugin's lowest storage in it.
  int32_t first_in(SY_StorageMask mask, const loader::LoadedPlugin* plugin) const {
    if (mask & SY_STORAGE_MASK_HOST) return kHost;
    for (SY_StorageIndex k = 0; k < SY_MAX_STORAGES; ++k)
      if (mask & SY_STORAGE_MASK(k)) return id_of(plugin, k);
    return kHost;
  }
  // True when a mask of storages a kernel reads has the plugin-local storage `local`.
  static bool mask_has(SY_StorageMask mask, SY_StorageIndex local) {
    if (local == SY_STORAGE_HOST) return (mask & SY_STORAGE_MASK_HOST) != 0;
    return local >= 0 && (mask & SY_STORAGE_MASK(local)) != 0;
  }
  // Where a kernel of `plugin` that reads `reads` takes a value living in storage `from`:
  // `preferred` where it reads that ([runtime] prefer_storage; kHost: none), else `from`
  // itself, else the first storage in `reads`. The one rule both the planning run and the
  // final plan route inputs by.
  struct InputPlace {
    int32_t storage = kHost;                  // where the kernel reads it
    SY_StorageIndex local = SY_STORAGE_HOST;  // the same, as `plugin` names it
    bool converted = false;                   // storage != from: a converted copy
  };
  InputPlace input_place(int32_t from, SY_StorageMask reads, const loader::LoadedPlugin* plugin,
                         int32_t preferred) const {
    const SY_StorageIndex local = local_of(from, plugin);
    const SY_StorageIndex pref = preferred == kHost ? -2 : local_of(preferred, plugin);
    if (pref >= 0 && from != preferred && mask_has(reads, pref)) return {preferred, pref, true};
    if (local != -2 && mask_has(reads, local)) return {from, local, false};
    const int32_t to = first_in(reads, plugin);
    return {to, local_of(to, plugin), to != from};
  }
  // The id of the storage named "plugin/storage" ("host" gives kHost); -2 if none is.
  int32_t find(const std::string& name) const;
  std::string names() const;  // every storage's name, comma-separated, for messages
  // True for plain host memory and host formats (kDLCPU without an allocator of their own):
  // their values share the host arena.
  bool in_host_memory(int32_t id) const {
    return id == kHost || (kind(id).def->device.device_type == kDLCPU && kind(id).def->alloc == nullptr);
  }

  // Bytes a tensor takes in storage `id`.
  uint64_t nbytes(int32_t id, DLDataType dtype, const std::vector<int64_t>& shape) const;
  // A tensor of storage `id` (host: plain host memory) in memory of its own.
  Tensor allocate(int32_t id, DLDataType dtype, const std::vector<int64_t>& shape) const;
  // One buffer of `bytes` in storage `id` (for an arena), freed when the result goes.
  std::shared_ptr<void> allocate_bytes(int32_t id, uint64_t bytes, void** data) const;
  // A tensor of storage `id` at `data` (inside a buffer `owner` keeps alive).
  Tensor place(int32_t id, void* data, DLDataType dtype, std::vector<int64_t> shape, std::shared_ptr<void> owner) const;
  // Conversions. `what` names the value in errors. `dst` (optional) is where to write;
  // otherwise a tensor of its own is allocated.
  Tensor to_host(int32_t from, const Tensor& src, const std::string& what, Tensor dst = {}) const;
  Tensor from_host(int32_t to, const Tensor& src, const std::string& what, Tensor dst = {}) const;

 private:
  std::vector<StorageKind> kinds_;
};

}  // namespace switchyard::exec
