// switchyard SDK: header-only C++17 helpers for writing plugins on top of sdk.h.
//
// A kernel is a class K with
//   explicit K(const sy::Node& node);        // create: read attributes, prepare weights
//   void run(sy::Run& run);                   // compute
//   void infer(sy::Infer& infer);             // output shapes: makes outputs host-allocated
//   static constexpr SY_OutputMode output_mode = SY_OUTPUT_KERNEL_ALLOCATED;  // optional
//   static void supports(const sy::Node&);    // optional: throw sy::Unsupported("why")
//   void storage(sy::StorageQuery& q);        // optional (1.1): storages read/written, in-place
//   void cost(sy::Cost& c);                   // optional (1.1): FLOPs, bytes, scratch of a run
// and a plugin lists its kernels once:
//   SY_PLUGIN("example", "1.0.0", "switchyard",
//             sy::kernel<Relu>("aten::relu", "elementwise", {sy::kFloat32}))
// Every exception thrown by kernel code is caught here and turned into a status plus
// message, so nothing crosses the C boundary. Build plugins with -fvisibility=hidden
// (switchyard_add_plugin does) so each plugin keeps its own copy of these helpers.
#ifndef SWITCHYARD_PLUGIN_HPP
#define SWITCHYARD_PLUGIN_HPP

#include <switchyard/sdk.h>
#include <switchyard/dltensor.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sy {

inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kFloat64{kDLFloat, 64, 1};
inline constexpr DLDataType kFloat16{kDLFloat, 16, 1};
inline constexpr DLDataType kBFloat16{kDLBfloat, 16, 1};
inline constexpr DLDataType kInt64{kDLInt, 64, 1};
inline constexpr DLDataType kInt32{kDLInt, 32, 1};
inline constexpr DLDataType kInt8{kDLInt, 8, 1};
inline constexpr DLDataType kUInt8{kDLUInt, 8, 1};
inline constexpr DLDataType kBool{SY_DL_BOOL, 8, 1};

// DLDataType is a global C struct, so operators in sy:: would not be found: use this.
inline constexpr bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// Thrown by kernel code; the helpers turn it into its status and message.
struct Error : std::runtime_error {
  SY_Status status;
  explicit Error(const std::string& message, SY_Status s = SY_ERROR_INVALID_ARGUMENT)
      : std::runtime_error(message), status(s) {}
};
// Thrown from supports() (or create()) to decline a node, with the reason.
struct Unsupported : Error {
  explicit Unsupported(const std::string& reason) : Error(reason, SY_ERROR_UNSUPPORTED) {}
};

// The host API this plugin was initialised with (one per plugin library).
inline const SY_HostApi*& host_api() {
  static const SY_HostApi* api = nullptr;
  return api;
}

inline void log(SY_LogLevel level, const std::string& message) {
  if (const SY_HostApi* h = host_api()) h->log(h->host_context, level, message.c_str());
}

// Runs f while a node is checked (supports(), the kernel's constructor): an sy::Error it
// throws, a shape or attribute the kernel cannot take, becomes sy::Unsupported, a reason
// to decline the node rather than a failure.
template <typename F>
auto declining(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Unsupported&) {
    throw;
  } catch (const Error& e) {
    throw Unsupported(e.what());
  }
}

// Runs f in run(): an sy::Unsupported found only then is a plain error, since the node
// was accepted.
template <typename F>
auto failing(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Unsupported& e) {
    throw Error(e.what());
  }
}

// ---- attributes ----------------------------------------------------------------

class Attrs {
 public:
  explicit Attrs(const SY_Attributes* attrs) : attrs_(attrs) {}

  SY_AttrKind kind(const char* name) const { return api().attr_kind(attrs_, name); }
  bool has(const char* name) const {
    SY_AttrKind k = kind(name);
    return k != SY_ATTR_MISSING && k != SY_ATTR_NONE;
  }
  // An int or a float (a Python number in the model): what f() reads.
  bool is_number(const char* name) const {
    SY_AttrKind k = kind(name);
    return k == SY_ATTR_INT || k == SY_ATTR_FLOAT;
  }
  int64_t i(const char* name) const {
    int64_t v = 0;
    check(api().attr_int(attrs_, name, &v), name, "an int");
    return v;
  }
  int64_t i(const char* name, int64_t fallback) const { return has(name) ? i(name) : fallback; }
  double f(const char* name) const {
    double v = 0;
    if (kind(name) == SY_ATTR_INT) return static_cast<double>(i(name));
    check(api().attr_float(attrs_, name, &v), name, "a float");
    return v;
  }
  double f(const char* name, double fallback) const { return has(name) ? f(name) : fallback; }
  std::string s(const char* name) const {
    const char* v = nullptr;
    check(api().attr_string(attrs_, name, &v), name, "a string");
    return v;
  }
  std::string s(const char* name, const std::string& fallback) const { return has(name) ? s(name) : fallback; }
  std::vector<int64_t> ints(const char* name) const {
    const int64_t* v = nullptr;
    size_t n = 0;
    if (kind(name) == SY_ATTR_INT) return {i(name)};
    check(api().attr_ints(attrs_, name, &v, &n), name, "an int list");
    return std::vector<int64_t>(v, v + n);
  }
  std::vector<double> floats(const char* name) const {
    const double* v = nullptr;
    size_t n = 0;
    check(api().attr_floats(attrs_, name, &v, &n), name, "a float list");
    return std::vector<double>(v, v + n);
  }
  const DLTensor* tensor(const char* name) const {
    const DLTensor* v = nullptr;
    check(api().attr_tensor(attrs_, name, &v), name, "a tensor");
    return v;
  }
  const SY_Attributes* raw() const { return attrs_; }

 private:
  static const SY_HostApi& api() {
    if (host_api() == nullptr) throw Error("plugin used before initialisation", SY_ERROR_INTERNAL);
    return *host_api();
  }
  static void check(SY_Status s, const char* name, const char* what) {
    if (s != SY_OK) throw Error(std::string("attribute '") + name + "' is missing or not " + what);
  }
  const SY_Attributes* attrs_;
};

// ---- the views a kernel sees -----------------------------------------------------

// A node as seen by supports() and the kernel constructor.
struct Node {
  const char* op;    // the op this kernel was registered for
  const char* name;  // the node's name, for messages
  Attrs attrs;
  const DLTensor* const* inputs;
  size_t num_inputs;
  size_t num_outputs;
  const void* user_data;  // what was passed to sy::kernel(), or nullptr

  // Input i's metadata; throws if i is out of range or the optional input is absent.
  const DLTensor& input(size_t i) const {
    if (i >= num_inputs || inputs[i] == nullptr)
      throw Error(std::string("node '") + name + "': input " + std::to_string(i) + " is missing");
    return *inputs[i];
  }
  bool has_input(size_t i) const { return i < num_inputs && inputs[i] != nullptr; }
};

namespace detail {
inline const char* call_name(const SY_KernelInferArgs*) { return "infer"; }
inline const char* call_name(const SY_KernelRunArgs*) { return "run"; }
inline const char* call_name(const SY_KernelStorageArgs*) { return "storage"; }
inline const char* call_name(const SY_KernelCostArgs*) { return "cost"; }
}  // namespace detail

// What the views of infer, run, storage and cost share: the call's arguments and its
// inputs (metadata, or tensors in run).
template <typename Args>
struct CallInputs {
  Args* args;
  // Input i; throws if i is out of range or the optional input is absent.
  const DLTensor& input(size_t i) const {
    if (i >= args->num_inputs || args->inputs[i] == nullptr)
      throw Error(std::string(detail::call_name(args)) + ": input " + std::to_string(i) + " is missing");
    return *args->inputs[i];
  }
  bool has_input(size_t i) const { return i < args->num_inputs && args->inputs[i] != nullptr; }
  size_t num_inputs() const { return args->num_inputs; }
  size_t num_outputs() const { return args->num_outputs; }
};

struct Infer : CallInputs<SY_KernelInferArgs> {
  void set_output(size_t i, DLDataType dtype, const std::vector<int64_t>& shape) {
    if (i >= args->num_outputs) throw Error("infer: output index out of range", SY_ERROR_INTERNAL);
    if (shape.size() > SY_MAX_DIMS) throw Error("infer: too many dimensions");
    SY_TensorDesc& d = args->outputs[i];
    d.dtype = dtype;
    d.ndim = static_cast<int32_t>(shape.size());
    for (size_t k = 0; k < shape.size(); ++k) d.shape[k] = shape[k];
  }
};

struct Run : CallInputs<SY_KernelRunArgs> {
  // SY_OUTPUT_HOST_ALLOCATED kernels write here.
  DLTensor& output(size_t i) const {
    if (args->outputs == nullptr || i >= args->num_outputs)
      throw Error("run: no host-allocated output " + std::to_string(i), SY_ERROR_INTERNAL);
    return *args->outputs[i];
  }
  // SY_OUTPUT_KERNEL_ALLOCATED kernels hand their results over here.
  void produce(size_t i, DLManagedTensor* t) const {
    if (args->produced == nullptr || i >= args->num_outputs)
      throw Error("run: no produced-output slot " + std::to_string(i), SY_ERROR_INTERNAL);
    args->produced[i] = t;
  }
  // Where the host keeps input i / output o (SDK 1.1): SY_STORAGE_HOST or an index into
  // this plugin's storages. A 1.0 host, or a kernel without storage(), gets host memory.
  SY_StorageIndex input_storage(size_t i) const {
    if (!SY_STRUCT_HAS(args, SY_KernelRunArgs, input_storage) || args->input_storage == nullptr) return SY_STORAGE_HOST;
    return i < args->num_inputs ? args->input_storage[i] : SY_STORAGE_HOST;
  }
  SY_StorageIndex output_storage(size_t o) const {
    if (!SY_STRUCT_HAS(args, SY_KernelRunArgs, output_storage) || args->output_storage == nullptr)
      return SY_STORAGE_HOST;
    return o < args->num_outputs ? args->output_storage[o] : SY_STORAGE_HOST;
  }
  // True when the host let output o take input i's buffer (in-place, SDK 1.1).
  bool in_place(size_t o, size_t i) const {
    return args->outputs != nullptr && i < args->num_inputs && o < args->num_outputs && args->inputs[i] != nullptr &&
           args->outputs[o]->data == args->inputs[i]->data &&
           args->outputs[o]->byte_offset == args->inputs[i]->byte_offset;
  }
  // True when input i's bytes overlap output o's (in place at the output's end, SDK 1.2).
  bool overlaps(size_t o, size_t i) const {
    if (args->outputs == nullptr || i >= args->num_inputs || o >= args->num_outputs || args->inputs[i] == nullptr)
      return false;
    const char* out = data<const char>(*args->outputs[o]);
    const char* in = data<const char>(*args->inputs[i]);
    return in < out + byte_size(*args->outputs[o]) && out < in + byte_size(*args->inputs[i]);
  }
};

// What K::storage() fills (SDK 1.1): per input the storages it reads, per output those it
// writes (preferred storage first), and outputs that may take an input's buffer.
struct StorageQuery : CallInputs<SY_KernelStorageArgs> {
  void reads(size_t i, SY_StorageMask mask) const {
    if (i >= args->num_inputs) throw Error("storage: input index out of range", SY_ERROR_INTERNAL);
    args->input_reads[i] = mask;
  }
  void writes(size_t o, SY_StorageMask mask) const {
    if (o >= args->num_outputs) throw Error("storage: output index out of range", SY_ERROR_INTERNAL);
    args->output_writes[o] = mask;
  }
  void in_place(size_t o, size_t i) const {
    if (o >= args->num_outputs || i >= args->num_inputs)
      throw Error("storage: in-place index out of range", SY_ERROR_INTERNAL);
    args->output_inplace[o] = static_cast<int32_t>(i);
  }
  // Output o may be written over a buffer that ends with input i (SDK 1.2); a no-op on an
  // older host, which does not offer it.
  void in_place_tail(size_t o, size_t i) const {
    if (o >= args->num_outputs || i >= args->num_inputs)
      throw Error("storage: in-place index out of range", SY_ERROR_INTERNAL);
    if (SY_STRUCT_HAS(args, SY_KernelStorageArgs, output_inplace_tail) && args->output_inplace_tail != nullptr)
      args->output_inplace_tail[o] = static_cast<int32_t>(i);
  }
  // Says what the instance multiplies in (SY_ComputeReport); a no-op on a host that does
  // not ask. `note` (optional) says why, e.g. why a requested dtype is not used.
  void computes_in(DLDataType dtype, uint64_t converted_bytes, uint64_t constant_bytes,
                   const char* note = nullptr) const {
    if (!SY_STRUCT_HAS(args, SY_KernelStorageArgs, extension_start)) return;
    for (SY_Extension* e = args->extension_start; e != nullptr; e = e->next) {
      if (e->type != SY_EXTENSION_COMPUTE_REPORT || e->struct_size < SY_ComputeReport_STRUCT_SIZE) continue;
      auto* report = reinterpret_cast<SY_ComputeReport*>(e);
      report->dtype = dtype;
      report->converted_bytes = converted_bytes;
      report->constant_bytes = constant_bytes;
      report->note = note;
    }
  }
};

// What K::cost() fills (SDK 1.1) for the input metadata it is given.
struct Cost : CallInputs<SY_KernelCostArgs> {
  void flops(double f) const { args->flops = f; }
  void bytes(double b) const { args->bytes = b; }
  void scratch(uint64_t b) const { args->scratch_bytes = b; }
};

// ---- glue: exceptions -> statuses --------------------------------------------------

template <typename F>
SY_Status guarded(SY_CallContext* call, F&& f) noexcept {
  auto report = [call](SY_Status s, const char* msg) {
    if (host_api() != nullptr) host_api()->report(call, s, msg);
    return s;
  };
  try {
    f();
    return SY_OK;
  } catch (const Error& e) {
    return report(e.status, e.what());
  } catch (const std::bad_alloc&) {
    return report(SY_ERROR_OUT_OF_MEMORY, "a C++ allocation in the plugin failed (std::bad_alloc)");
  } catch (const std::exception& e) {
    return report(SY_ERROR_INTERNAL, e.what());
  } catch (...) {
    return report(SY_ERROR_INTERNAL, "unknown C++ exception in plugin");
  }
}

namespace detail {
template <typename K, typename = void>
struct has_supports : std::false_type {};
template <typename K>
struct has_supports<K, std::void_t<decltype(K::supports(std::declval<const Node&>()))>> : std::true_type {};
template <typename K, typename = void>
struct has_infer : std::false_type {};
template <typename K>
struct has_infer<K, std::void_t<decltype(std::declval<K&>().infer(std::declval<Infer&>()))>> : std::true_type {};
// A kernel may set `static constexpr SY_OutputMode output_mode` to produce its outputs and
// still offer infer() (the host then checks what it produced); else infer() implies
// host-allocated outputs.
template <typename K, typename = void>
struct declared_mode {
  static constexpr SY_OutputMode value = has_infer<K>::value ? SY_OUTPUT_HOST_ALLOCATED : SY_OUTPUT_KERNEL_ALLOCATED;
};
template <typename K>
struct declared_mode<K, std::void_t<decltype(K::output_mode)>> {
  static constexpr SY_OutputMode value = K::output_mode;
};
template <typename K, typename = void>
struct has_storage : std::false_type {};
template <typename K>
struct has_storage<K, std::void_t<decltype(std::declval<K&>().storage(std::declval<StorageQuery&>()))>>
    : std::true_type {};
template <typename K, typename = void>
struct has_cost : std::false_type {};
template <typename K>
struct has_cost<K, std::void_t<decltype(std::declval<K&>().cost(std::declval<Cost&>()))>> : std::true_type {};
}  // namespace detail

// One registered kernel: owns its SY_KernelDef and dtype list.
struct KernelEntry {
  SY_KernelDef def{};
  std::vector<DLDataType> dtypes;
  std::string op, family;
  const void* user_data = nullptr;
};

template <typename K>
struct Trampolines {
  static const KernelEntry& entry(void* ctx) { return *static_cast<const KernelEntry*>(ctx); }
  static Node node(void* ctx, const char* name, const SY_Attributes* attrs, const DLTensor* const* in, size_t n_in,
                   size_t n_out) {
    const KernelEntry& e = entry(ctx);
    return Node{e.op.c_str(), name, Attrs(attrs), in, n_in, n_out, e.user_data};
  }
  static SY_Status supports(void* ctx, SY_SupportsArgs* a) {
    return guarded(a->call, [&] {
      if constexpr (detail::has_supports<K>::value)
        K::supports(node(ctx, a->node_name, a->attributes, a->inputs, a->num_inputs, a->num_outputs));
    });
  }
  static SY_Status create(void* ctx, SY_KernelCreateArgs* a) {
    return guarded(a->call, [&] {
      Node n = node(ctx, a->node_name, a->attributes, a->inputs, a->num_inputs, a->num_outputs);
      a->instance = reinterpret_cast<SY_KernelInstance*>(new K(n));
    });
  }
  static SY_Status infer(void* /*ctx*/, SY_KernelInferArgs* a) {
    return guarded(a->call, [&] {
      Infer view{{a}};
      reinterpret_cast<K*>(a->instance)->infer(view);
    });
  }
  static SY_Status run(void* /*ctx*/, SY_KernelRunArgs* a) {
    return guarded(a->call, [&] {
      Run view{{a}};
      reinterpret_cast<K*>(a->instance)->run(view);
    });
  }
  static void destroy(void* /*ctx*/, SY_KernelInstance* instance) { delete reinterpret_cast<K*>(instance); }
  static SY_Status storage(void* /*ctx*/, SY_KernelStorageArgs* a) {
    return guarded(a->call, [&] {
      StorageQuery view{{a}};
      if constexpr (detail::has_storage<K>::value) reinterpret_cast<K*>(a->instance)->storage(view);
    });
  }
  static SY_Status cost(void* /*ctx*/, SY_KernelCostArgs* a) {
    return guarded(a->call, [&] {
      Cost view{{a}};
      if constexpr (detail::has_cost<K>::value) reinterpret_cast<K*>(a->instance)->cost(view);
    });
  }
};

// Registers kernel class K for `op`. Its output mode follows from whether K has infer().
// `device`: what SY_KernelDef.device_type shows (informational; storages say where
// tensors live).
template <typename K>
std::shared_ptr<KernelEntry> kernel(std::string op, std::string family, std::vector<DLDataType> dtypes,
                                    const void* user_data = nullptr, DLDeviceType device = kDLCPU) {
  auto e = std::make_shared<KernelEntry>();
  e->op = std::move(op);
  e->family = std::move(family);
  e->dtypes = std::move(dtypes);
  e->user_data = user_data;
  SY_KernelDef& d = e->def;
  d.struct_size = SY_KernelDef_STRUCT_SIZE;
  d.op = e->op.c_str();
  d.family = e->family.c_str();
  d.device_type = device;
  d.dtypes = e->dtypes.data();
  d.num_dtypes = e->dtypes.size();
  d.output_mode = detail::declared_mode<K>::value;
  static_assert(detail::declared_mode<K>::value != SY_OUTPUT_HOST_ALLOCATED || detail::has_infer<K>::value,
                "a kernel with host-allocated outputs needs infer()");
  d.context = e.get();
  d.supports = detail::has_supports<K>::value ? &Trampolines<K>::supports : nullptr;
  d.create = &Trampolines<K>::create;
  if constexpr (detail::has_infer<K>::value) d.infer = &Trampolines<K>::infer;
  d.run = &Trampolines<K>::run;
  d.destroy = &Trampolines<K>::destroy;
  d.storage = detail::has_storage<K>::value ? &Trampolines<K>::storage : nullptr;
  d.cost = detail::has_cost<K>::value ? &Trampolines<K>::cost : nullptr;
  return e;
}

}  // namespace sy

#include <switchyard/plugin_storage.hpp>  // sy::storage<S>(): the storages a plugin declares

namespace sy {

// A plugin: its identity and kernel table, and the init handshake.
class PluginDef {
 public:
  PluginDef(std::string name, std::string version, std::string vendor,
            std::vector<std::shared_ptr<KernelEntry>> kernels = {})
      : name_(std::move(name)),
        version_(std::move(version)),
        vendor_(std::move(vendor)),
        entries_(std::move(kernels)) {}

  void add(std::shared_ptr<KernelEntry> k) { entries_.push_back(std::move(k)); }
  void add(std::vector<std::shared_ptr<KernelEntry>> ks) {
    for (auto& k : ks) entries_.push_back(std::move(k));
  }
  // Storages keep their order: the first added is SY_STORAGE_MASK(0), index 0.
  void add_storage(std::shared_ptr<StorageEntry> st) { storages_.push_back(std::move(st)); }
  // One of SY_Plugin.attributes (SDK 1.3): what the plugin was built with or runs on,
  // e.g. attribute("onednn", "2.6.3, isa avx512_core_bf16"). "build" is filled already.
  void attribute(std::string name, std::string value) {
    for (auto& [n, v] : attributes_)
      if (n == name) {
        v = std::move(value);
        return;
      }
    attributes_.emplace_back(std::move(name), std::move(value));
  }

  SY_Status init(SY_PluginInitArgs* args) noexcept {
    if (args == nullptr || args->host == nullptr) return SY_ERROR_INVALID_ARGUMENT;
    if (args->host->version_major != SY_SDK_VERSION_MAJOR) {
      // Report through the offered table only: it is not adopted as this plugin's host.
      std::string msg = "plugin '" + name_ + "' needs SDK major " + std::to_string(SY_SDK_VERSION_MAJOR) +
                        ", host has " + std::to_string(args->host->version_major);
      if (args->host->report != nullptr) args->host->report(args->call, SY_ERROR_VERSION_MISMATCH, msg.c_str());
      return SY_ERROR_VERSION_MISMATCH;
    }
    host_api() = args->host;
    return guarded(args->call, [&] {
      defs_.clear();
      for (auto& e : entries_) defs_.push_back(&e->def);
      plugin_ = SY_Plugin{};
      plugin_.struct_size = SY_Plugin_STRUCT_SIZE;
      plugin_.sdk_version_major = SY_SDK_VERSION_MAJOR;
      plugin_.sdk_version_minor = SY_SDK_VERSION_MINOR;
      plugin_.name = name_.c_str();
      plugin_.version = version_.c_str();
      plugin_.vendor = vendor_.c_str();
      plugin_.kernels = defs_.data();
      plugin_.num_kernels = defs_.size();
      storage_defs_.clear();
      for (auto& st : storages_) storage_defs_.push_back(&st->def);
      if (storage_defs_.size() > SY_MAX_STORAGES)
        throw Error("plugin '" + name_ + "' declares " + std::to_string(storage_defs_.size()) +
                        " storages, more than " + std::to_string(SY_MAX_STORAGES),
                    SY_ERROR_INTERNAL);
      plugin_.storages = storage_defs_.empty() ? nullptr : storage_defs_.data();
      plugin_.num_storages = storage_defs_.size();
      elements_.clear();  // SY_EXTENSION_STORAGE_ELEMENTS, where a storage narrows
      for (auto& st : storages_) elements_.push_back(st->element);
      plugin_.extension_start = nullptr;
      if (std::any_of(elements_.begin(), elements_.end(), [](DLDataType d) { return d.bits != 0; })) {
        storage_elements_ = SY_StorageElements{};
        storage_elements_.header = {SY_StorageElements_STRUCT_SIZE, SY_EXTENSION_STORAGE_ELEMENTS, nullptr};
        storage_elements_.num_storages = elements_.size();
        storage_elements_.elements = elements_.data();
        plugin_.extension_start = &storage_elements_.header;
      }
      named_.clear();  // built at init, so that the pointers the host holds stay put
      for (const auto& [n, v] : attributes_)
        named_.push_back(SY_NamedValue{SY_NamedValue_STRUCT_SIZE, n.c_str(), v.c_str()});
      plugin_.context = this;
      plugin_.attributes = &PluginDef::list_attributes;
      args->plugin = &plugin_;
    });
  }

 private:
  std::string name_, version_, vendor_;
  std::vector<std::shared_ptr<KernelEntry>> entries_;
  std::vector<const SY_KernelDef*> defs_;
  std::vector<std::shared_ptr<StorageEntry>> storages_;
  std::vector<const SY_StorageDef*> storage_defs_;
  std::vector<DLDataType> elements_;
  SY_StorageElements storage_elements_{};
  SY_Plugin plugin_{};
  std::vector<std::pair<std::string, std::string>> attributes_{{"build", build_attribute()}};
  std::vector<SY_NamedValue> named_;

  static std::string build_attribute() {
    std::string b;
#if defined(__clang__)
    b = "clang " __clang_version__;
#elif defined(__GNUC__)
    b = "gcc " __VERSION__;
#endif
#ifdef NDEBUG
    b += ", release";
#else
    b += ", debug";
#endif
#ifdef __AVX512F__
    b += ", -mavx512f";
#elif defined(__AVX2__)
    b += ", -mavx2";
#endif
    return b + ", SDK headers " + std::to_string(SY_SDK_VERSION_MAJOR) + "." + std::to_string(SY_SDK_VERSION_MINOR);
  }

  static SY_Status list_attributes(void* context, SY_PluginAttributesArgs* args) {
    auto* self = static_cast<PluginDef*>(context);
    return guarded(args->call, [&] {
      args->attributes = self->named_.data();
      args->num_attributes = self->named_.size();
    });
  }
};

}  // namespace sy

// Defines the plugin's one exported entry symbol from a name, version, vendor and a
// list of sy::kernel<...>(...) entries.
#define SY_PLUGIN(NAME, VERSION, VENDOR, ...)                                      \
  extern "C" SY_EXPORT SY_Status switchyard_plugin_init(SY_PluginInitArgs* args) { \
    static ::sy::PluginDef plugin_def(NAME, VERSION, VENDOR, {__VA_ARGS__});       \
    return plugin_def.init(args);                                                  \
  }

// Same, for plugins that build their table in a function `::sy::PluginDef& FN()`.
// Building the table may throw; that is caught here too.
#define SY_PLUGIN_FROM(FN)                                                                 \
  extern "C" SY_EXPORT SY_Status switchyard_plugin_init(SY_PluginInitArgs* args) {         \
    ::sy::PluginDef* def = nullptr;                                                        \
    if (args == nullptr || args->host == nullptr) return SY_ERROR_INVALID_ARGUMENT;        \
    try {                                                                                  \
      def = &FN();                                                                         \
    } catch (const std::exception& e) {                                                    \
      if (args->host->report) args->host->report(args->call, SY_ERROR_INTERNAL, e.what()); \
      return SY_ERROR_INTERNAL;                                                            \
    } catch (...) {                                                                        \
      return SY_ERROR_INTERNAL;                                                            \
    }                                                                                      \
    return def->init(args);                                                                \
  }

#endif  // SWITCHYARD_PLUGIN_HPP
