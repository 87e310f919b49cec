#include "exec/storage.hpp"

#include "loader/host_api.hpp"
#include "util/host_alloc.hpp"

#include <switchyard/error.hpp>

#include <cstdlib>

namespace switchyard::exec {
namespace {

uint64_t dense_bytes(DLDataType dtype, const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d < 0 ? 0 : d);
  return n * dtype_size(dtype);
}

}  // namespace

StorageTable::StorageTable(const loader::PluginManager& plugins) {
  for (const auto& p : plugins.plugins()) {
    const SY_Plugin& t = p->table();
    if (!SY_STRUCT_HAS(&t, SY_Plugin, num_storages) || t.storages == nullptr) continue;
    for (size_t k = 0; k < t.num_storages && k < SY_MAX_STORAGES; ++k) {
      const SY_StorageDef* def = t.storages[k];
      if (def == nullptr) continue;
      kinds_.push_back(StorageKind{p, def, static_cast<SY_StorageIndex>(k),
                                   p->name() + "/" + (def->name != nullptr ? def->name : "?"), p->storage_element(k)});
    }
  }
}

int32_t StorageTable::id_of(const loader::LoadedPlugin* plugin, SY_StorageIndex local) const {
  if (local == SY_STORAGE_HOST) return kHost;
  for (size_t i = 0; i < kinds_.size(); ++i)
    if (kinds_[i].plugin.get() == plugin && kinds_[i].local == local) return static_cast<int32_t>(i);
  throw Error(ErrorKind::Plugin,
              "plugin '" + plugin->name() + "' named storage " + std::to_string(local) + ", which it does not declare");
}

int32_t StorageTable::find(const std::string& name) const {
  if (name == "host") return kHost;
  for (size_t i = 0; i < kinds_.size(); ++i)
    if (kinds_[i].name == name) return static_cast<int32_t>(i);
  return -2;
}

std::string StorageTable::names() const {
  std::string out = "host";
  for (const StorageKind& k : kinds_) out += ", " + k.name;
  return out;
}

SY_StorageIndex StorageTable::local_of(int32_t id, const loader::LoadedPlugin* plugin) const {
  if (id == kHost) return SY_STORAGE_HOST;
  const StorageKind& k = kind(id);
  return k.plugin.get() == plugin ? k.local : -2;
}

uint64_t StorageTable::nbytes(int32_t id, DLDataType dtype, const std::vector<int64_t>& shape) const {
  if (id == kHost || kind(id).def->nbytes == nullptr) return dense_bytes(dtype, shape);
  const StorageKind& k = kind(id);
  SY_CallContext call;
  SY_StorageSizeArgs args{};
  args.struct_size = SY_StorageSizeArgs_STRUCT_SIZE;
  args.call = &call;
  args.dtype = dtype;
  args.ndim = static_cast<int32_t>(shape.size());
  args.shape = shape.data();
  const SY_Status s = k.def->nbytes(k.def->context, &args);
  if (s != SY_OK)
    throw Error(ErrorKind::Kernel, "storage '" + k.name + "' could not size a " + dtype_name(dtype) + " " +
                                       shape_string(shape) + " tensor: " + loader::describe_failure(s, call));
  return args.nbytes;
}

std::shared_ptr<void> StorageTable::allocate_bytes(int32_t id, uint64_t bytes, void** data) const {
  if (id == kHost || kind(id).def->alloc == nullptr) {
    void* p = host_aligned_alloc(64, bytes);
    if (p == nullptr) throw Error(ErrorKind::OutOfMemory, out_of_memory_message(name_of(id) + " memory", bytes));
    *data = p;
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  }
  const StorageKind& k = kind(id);
  SY_CallContext call;
  SY_StorageAllocArgs args{};
  args.struct_size = SY_StorageAllocArgs_STRUCT_SIZE;
  args.call = &call;
  args.nbytes = bytes;
  const SY_Status s = k.def->alloc(k.def->context, &args);
  if (s == SY_ERROR_OUT_OF_MEMORY || (s == SY_OK && args.data == nullptr))
    throw Error(ErrorKind::OutOfMemory, out_of_memory_message("storage '" + k.name + "'", bytes) + " (" +
                                            (s != SY_OK ? loader::describe_failure(s, call) : "it returned no memory") +
                                            ")");
  if (s != SY_OK)
    throw Error(ErrorKind::Kernel, "storage '" + k.name + "' could not allocate " + std::to_string(bytes) +
                                       " bytes: " + loader::describe_failure(s, call));
  *data = args.data;
  // The plugin stays loaded while its memory is alive (sdk.h, unload policy).
  return std::shared_ptr<void>(args.data, [def = k.def, keep = k.plugin](void* q) { def->free(def->context, q); });
}

Tensor StorageTable::place(int32_t id, void* data, DLDataType dtype, std::vector<int64_t> shape,
                           std::shared_ptr<void> owner) const {
  // No release: the memory is the owner's (none for arena memory: the run holds the arena).
  Tensor t = id == kHost ? Tensor::from_blob(data, dtype, std::move(shape), {}, nullptr)
                         : Tensor::in_storage(data, kind(id).def->device, dtype, std::move(shape), nullptr);
  t.keep_alive(std::move(owner));
  return t;
}

Tensor StorageTable::allocate(int32_t id, DLDataType dtype, const std::vector<int64_t>& shape) const {
  if (id == kHost) return Tensor::uninitialized(dtype, shape);
  void* data = nullptr;
  std::shared_ptr<void> owner = allocate_bytes(id, nbytes(id, dtype, shape), &data);
  return place(id, data, dtype, std::vector<int64_t>(shape), std::move(owner));
}

namespace {

// One copy through a storage's to_host or from_host; `direction` is "to" or "from".
void storage_copy(const StorageKind& k, SY_Status (*copy)(void*, SY_StorageCopyArgs*), const Tensor& src,
                  const Tensor& dst, const std::string& what, const char* direction) {
  SY_CallContext call;
  SY_StorageCopyArgs args{};
  args.struct_size = SY_StorageCopyArgs_STRUCT_SIZE;
  args.call = &call;
  args.src = &src.dl();
  args.dst = const_cast<DLTensor*>(&dst.dl());
  const SY_Status s = copy(k.def->context, &args);
  if (s != SY_OK)
    throw Error(ErrorKind::Kernel, "storage '" + k.name + "' failed to copy " + what + " " + direction +
                                       " host memory: " + loader::describe_failure(s, call));
}

}  // namespace

Tensor StorageTable::to_host(int32_t from, const Tensor& src, const std::string& what, Tensor dst) const {
  if (from == kHost) return src;
  const StorageKind& k = kind(from);
  if (!dst.defined()) dst = Tensor::uninitialized(src.dtype(), src.shape());
  storage_copy(k, k.def->to_host, src, dst, what, "to");
  return dst;
}

Tensor StorageTable::from_host(int32_t to, const Tensor& src, const std::string& what, Tensor dst) const {
  if (to == kHost) return src;
  const StorageKind& k = kind(to);
  if (!dst.defined()) dst = allocate(to, src.dtype(), src.shape());
  storage_copy(k, k.def->from_host, src, dst, what, "from");
  return dst;
}

}  // namespace switchyard::exec
