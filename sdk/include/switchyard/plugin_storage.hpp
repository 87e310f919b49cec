// switchyard SDK: storages a plugin declares (SDK 1.1), each with its conversions to and
// from host memory. Part of plugin.hpp, which includes it after its glue (sy::guarded);
// include plugin.hpp, not this file.
#ifndef SWITCHYARD_PLUGIN_STORAGE_HPP
#define SWITCHYARD_PLUGIN_STORAGE_HPP

#ifndef SWITCHYARD_PLUGIN_HPP
#error "include <switchyard/plugin.hpp>, which includes this header"
#endif

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sy {

// One storage a plugin declares: owns its SY_StorageDef and name.
struct StorageEntry {
  SY_StorageDef def{};
  std::string name;
  DLDataType element{0, 0, 0};  // what its bytes hold, where narrower than the values (S::kElement)
};

namespace detail {
template <typename S, typename = void>
struct has_nbytes : std::false_type {};
template <typename S>
struct has_nbytes<
    S, std::void_t<decltype(S::nbytes(std::declval<DLDataType>(), std::declval<const std::vector<int64_t>&>()))>>
    : std::true_type {};
template <typename S, typename = void>
struct has_alloc : std::false_type {};
template <typename S>
struct has_alloc<S, std::void_t<decltype(S::alloc(uint64_t{})), decltype(S::free(nullptr))>> : std::true_type {};
template <typename S, typename = void>
struct has_element : std::false_type {};
template <typename S>
struct has_element<S, std::void_t<decltype(DLDataType{S::kElement})>> : std::true_type {};
template <typename S, typename = void>
struct has_synchronize : std::false_type {};
template <typename S>
struct has_synchronize<S, std::void_t<decltype(S::synchronize())>> : std::true_type {};
}  // namespace detail

// Declares storage S under `name` on `device`. S has static members:
//   static void to_host(const DLTensor& src, DLTensor& dst);    // required
//   static void from_host(const DLTensor& src, DLTensor& dst);  // required
//   static uint64_t nbytes(DLDataType, const std::vector<int64_t>& shape);  // optional
//   static void* alloc(uint64_t nbytes); static void free(void*);          // optional pair
//   static void synchronize();                                              // optional
//   static constexpr DLDataType kElement;  // optional: its bytes hold this narrower dtype
//                                          // (SY_EXTENSION_STORAGE_ELEMENTS)
// Kernels name it by its position among the plugin's storages: SY_STORAGE_MASK(k).
template <typename S>
std::shared_ptr<StorageEntry> storage(std::string name, DLDevice device) {
  auto e = std::make_shared<StorageEntry>();
  e->name = std::move(name);
  SY_StorageDef& d = e->def;
  d.struct_size = SY_StorageDef_STRUCT_SIZE;
  d.name = e->name.c_str();
  d.device = device;
  d.context = nullptr;
  if constexpr (detail::has_nbytes<S>::value)
    d.nbytes = [](void*, SY_StorageSizeArgs* a) {
      return guarded(a->call,
                     [&] { a->nbytes = S::nbytes(a->dtype, std::vector<int64_t>(a->shape, a->shape + a->ndim)); });
    };
  if constexpr (detail::has_alloc<S>::value) {
    d.alloc = [](void*, SY_StorageAllocArgs* a) { return guarded(a->call, [&] { a->data = S::alloc(a->nbytes); }); };
    d.free = [](void*, void* p) {
      try {
        S::free(p);
      } catch (...) {  // nothing may cross the boundary; a failed free has no one to tell
      }
    };
  }
  d.to_host = [](void*, SY_StorageCopyArgs* a) { return guarded(a->call, [&] { S::to_host(*a->src, *a->dst); }); };
  d.from_host = [](void*, SY_StorageCopyArgs* a) { return guarded(a->call, [&] { S::from_host(*a->src, *a->dst); }); };
  if constexpr (detail::has_element<S>::value) e->element = S::kElement;
  if constexpr (detail::has_synchronize<S>::value)
    d.synchronize = [](void*, SY_CallContext* call) { return guarded(call, [&] { S::synchronize(); }); };
  return e;
}

}  // namespace sy

#endif  // SWITCHYARD_PLUGIN_STORAGE_HPP
