// Test harness for the aten plugin (see aten_harness.hpp).
#include "aten_harness.hpp"

#include <switchyard/aten_dtype.hpp>

#include <c10/util/accumulate.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

struct SY_Attributes {
  std::vector<std::pair<std::string, sy_test::AttrValue>> items;
};

namespace sy_test {
namespace {

// ---- the test host's API ------------------------------------------------------------------
std::mutex g_log_mutex;
std::vector<std::string> g_log;
std::atomic<int64_t> g_deleted{0};
std::map<std::string, std::set<at::ScalarType>> g_seen;  // guarded by g_log_mutex

const AttrValue* find(const SY_Attributes* a, const char* name) {
  if (a == nullptr || name == nullptr) return nullptr;
  for (const auto& [n, v] : a->items)
    if (n == name) return &v;
  return nullptr;
}

void h_report(SY_CallContext* call, SY_Status status, const char* message) {
  if (call == nullptr) return;
  call->status = status;
  call->message = message ? message : "";
  ++call->reports;
}
void h_log(void*, SY_LogLevel level, const char* message) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.push_back(std::to_string(static_cast<int>(level)) + ": " + (message ? message : ""));
}
void* h_alloc(void*, size_t size, size_t alignment) {
  if (alignment < 64) alignment = 64;
  return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}
void h_free(void*, void* p) { std::free(p); }
size_t h_attr_count(const SY_Attributes* a) { return a ? a->items.size() : 0; }
const char* h_attr_name(const SY_Attributes* a, size_t i) {
  return a && i < a->items.size() ? a->items[i].first.c_str() : nullptr;
}
SY_AttrKind h_attr_kind(const SY_Attributes* a, const char* name) {
  const AttrValue* v = find(a, name);
  return v ? v->kind : SY_ATTR_MISSING;
}
SY_Status h_attr_int(const SY_Attributes* a, const char* name, int64_t* out) {
  const AttrValue* v = find(a, name);
  if (!v || v->kind != SY_ATTR_INT) return SY_ERROR_INVALID_ARGUMENT;
  *out = v->i;
  return SY_OK;
}
SY_Status h_attr_float(const SY_Attributes* a, const char* name, double* out) {
  const AttrValue* v = find(a, name);
  if (!v || v->kind != SY_ATTR_FLOAT) return SY_ERROR_INVALID_ARGUMENT;
  *out = v->f;
  return SY_OK;
}
SY_Status h_attr_string(const SY_Attributes* a, const char* name, const char** out) {
  const AttrValue* v = find(a, name);
  if (!v || v->kind != SY_ATTR_STRING) return SY_ERROR_INVALID_ARGUMENT;
  *out = v->s.c_str();
  return SY_OK;
}
SY_Status h_attr_ints(const SY_Attributes* a, const char* name, const int64_t** out, size_t* n) {
  const AttrValue* v = find(a, name);
  if (!v || v->kind != SY_ATTR_INTS) return SY_ERROR_INVALID_ARGUMENT;
  *out = v->ints.data();
  *n = v->ints.size();
  return SY_OK;
}
SY_Status h_attr_floats(const SY_Attributes* a, const char* name, const double** out, size_t* n) {
  const AttrValue* v = find(a, name);
  if (!v || v->kind != SY_ATTR_FLOATS) return SY_ERROR_INVALID_ARGUMENT;
  *out = v->floats.data();
  *n = v->floats.size();
  return SY_OK;
}
SY_Status h_attr_tensor(const SY_Attributes* a, const char* name, const DLTensor** out) {
  const AttrValue* v = find(a, name);
  if (!v || v->kind != SY_ATTR_TENSOR) return SY_ERROR_INVALID_ARGUMENT;
  *out = &v->dl;
  return SY_OK;
}

SY_HostApi make_host_api() {
  SY_HostApi h{};
  h.struct_size = SY_HostApi_STRUCT_SIZE;
  h.version_major = SY_SDK_VERSION_MAJOR;
  h.version_minor = SY_SDK_VERSION_MINOR;
  h.host_context = nullptr;
  h.report = h_report;
  h.log = h_log;
  h.alloc = h_alloc;
  h.free = h_free;
  h.attr_count = h_attr_count;
  h.attr_name = h_attr_name;
  h.attr_kind = h_attr_kind;
  h.attr_int = h_attr_int;
  h.attr_float = h_attr_float;
  h.attr_string = h_attr_string;
  h.attr_ints = h_attr_ints;
  h.attr_floats = h_attr_floats;
  h.attr_tensor = h_attr_tensor;
  return h;
}

// Re-points a tensor attribute's DLTensor at its own (copied) shape arrays.
void fix_dl(AttrValue& v) {
  if (v.kind != SY_ATTR_TENSOR) return;
  v.dl.shape = v.dl_shape.data();
  v.dl.strides = v.tensor.is_contiguous() ? nullptr : v.dl_strides.data();
}

}  // namespace

// ---- Attrs ---------------------------------------------------------------------------------
Attrs::Attrs() : impl_(new SY_Attributes) {}
Attrs::Attrs(const Attrs& other) : impl_(new SY_Attributes(*other.impl_)) {
  for (auto& item : impl_->items) fix_dl(item.second);
}
Attrs& Attrs::operator=(const Attrs& other) {
  if (this != &other) {
    *impl_ = *other.impl_;
    for (auto& item : impl_->items) fix_dl(item.second);
  }
  return *this;
}
Attrs::~Attrs() { delete impl_; }
const SY_Attributes* Attrs::raw() const { return impl_; }

static AttrValue& slot(SY_Attributes* a, const std::string& name) {
  for (auto& item : a->items)
    if (item.first == name) return item.second = AttrValue{};
  a->items.emplace_back(name, AttrValue{});
  return a->items.back().second;
}
Attrs& Attrs::i(const std::string& name, int64_t v) {
  AttrValue& x = slot(impl_, name);
  x.kind = SY_ATTR_INT, x.i = v;
  return *this;
}
Attrs& Attrs::f(const std::string& name, double v) {
  AttrValue& x = slot(impl_, name);
  x.kind = SY_ATTR_FLOAT, x.f = v;
  return *this;
}
Attrs& Attrs::s(const std::string& name, const std::string& v) {
  AttrValue& x = slot(impl_, name);
  x.kind = SY_ATTR_STRING, x.s = v;
  return *this;
}
Attrs& Attrs::ints(const std::string& name, std::vector<int64_t> v) {
  AttrValue& x = slot(impl_, name);
  x.kind = SY_ATTR_INTS, x.ints = std::move(v);
  return *this;
}
Attrs& Attrs::floats(const std::string& name, std::vector<double> v) {
  AttrValue& x = slot(impl_, name);
  x.kind = SY_ATTR_FLOATS, x.floats = std::move(v);
  return *this;
}
Attrs& Attrs::none(const std::string& name) {
  slot(impl_, name).kind = SY_ATTR_NONE;
  return *this;
}
Attrs& Attrs::tensor(const std::string& name, const at::Tensor& t) {
  AttrValue& x = slot(impl_, name);
  DLInput in;
  to_dl(t, &in);
  x.kind = SY_ATTR_TENSOR;
  x.tensor = t;
  x.dl = in.dl;
  x.dl_shape = in.shape;
  x.dl_strides = in.strides;
  fix_dl(x);
  return *this;
}

// ---- the plugin ----------------------------------------------------------------------------
const SY_HostApi& host_api() {
  static const SY_HostApi api = make_host_api();
  return api;
}

std::vector<std::string> host_log() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return g_log;
}

std::string plugin_file() {
  const char* dir = std::getenv("SWITCHYARD_PLUGIN_PATH");
  if (dir != nullptr && *dir != '\0') return std::string(dir) + "/libswitchyard-aten.so";
  return SY_ATEN_PLUGIN_FILE;
}

SY_PluginInitFn plugin_init_fn() {
  static SY_PluginInitFn fn = [] {
    std::string file = plugin_file();
    void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed
    if (h == nullptr) throw std::runtime_error("dlopen " + file + ": " + dlerror());
    auto f = reinterpret_cast<SY_PluginInitFn>(dlsym(h, SY_PLUGIN_ENTRY_SYMBOL));
    if (f == nullptr) throw std::runtime_error(file + " has no " SY_PLUGIN_ENTRY_SYMBOL);
    return f;
  }();
  return fn;
}

const SY_Plugin& plugin() {
  static const SY_Plugin* p = [] {
    SY_CallContext call;
    SY_PluginInitArgs args{};
    args.struct_size = SY_PluginInitArgs_STRUCT_SIZE;
    args.call = &call;
    args.host = &host_api();
    SY_Status s = plugin_init_fn()(&args);
    if (s != SY_OK || args.plugin == nullptr) throw std::runtime_error("aten plugin init failed: " + call.message);
    return args.plugin;
  }();
  return *p;
}

const SY_KernelDef* kernel(const std::string& op) {
  const SY_Plugin& p = plugin();
  for (size_t i = 0; i < p.num_kernels; ++i)
    if (op == p.kernels[i]->op) return p.kernels[i];
  return nullptr;
}

int64_t deleter_calls() { return g_deleted.load(); }

// ---- tensors -------------------------------------------------------------------------------
DLDataType dl_dtype(at::ScalarType t) {
  DLDataType d;
  if (!sy::to_dl_dtype(t, &d)) throw std::runtime_error("test: no DLPack dtype for " + dtype_name(t));
  return d;
}

bool from_dl_dtype(DLDataType d, at::ScalarType* out) { return sy::to_scalar_type(d, out); }

std::string dtype_name(at::ScalarType t) { return c10::toString(t); }

void to_dl(const at::Tensor& t, DLInput* out) {
  out->keep = t;
  out->shape = t.sizes().vec();
  out->strides = t.strides().vec();
  DLTensor& d = out->dl;
  // Base pointer plus byte_offset, so the plugin's byte_offset handling is exercised.
  d.data = t.numel() == 0 ? t.data_ptr() : static_cast<char*>(t.data_ptr()) - t.storage_offset() * t.element_size();
  d.byte_offset = t.numel() == 0 ? 0 : static_cast<uint64_t>(t.storage_offset() * t.element_size());
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = static_cast<int32_t>(t.dim());
  d.dtype = dl_dtype(t.scalar_type());
  d.shape = out->shape.data();
  d.strides = t.is_contiguous() ? nullptr : out->strides.data();
}

namespace {

at::Tensor adopt(DLManagedTensor* m, DLDataType* dtype_out) {
  DLTensor& d = m->dl_tensor;
  *dtype_out = d.dtype;
  at::ScalarType st;
  if (!from_dl_dtype(d.dtype, &st)) {
    ADD_FAILURE() << "produced tensor has an unknown dtype code " << int(d.dtype.code);
    m->deleter(m);
    ++g_deleted;
    return at::Tensor();
  }
  EXPECT_EQ(d.device.device_type, kDLCPU);
  std::vector<int64_t> sizes(d.shape, d.shape + d.ndim);
  std::vector<int64_t> strides;
  if (d.strides != nullptr) {
    strides.assign(d.strides, d.strides + d.ndim);
  } else {
    strides.resize(d.ndim);
    int64_t s = 1;
    for (int i = d.ndim - 1; i >= 0; --i) strides[i] = s, s *= sizes[i];
  }
  EXPECT_NE(d.data, nullptr) << "produced tensor without a data pointer";
  if (c10::multiply_integers(sizes) == 0) {  // from_blob would never run the deleter
    ++g_deleted;
    m->deleter(m);
    return at::empty(sizes, at::TensorOptions().dtype(st));
  }
  void* p = static_cast<char*>(d.data) + d.byte_offset;
  return at::from_blob(
      p, sizes, strides,
      [m](void*) {
        ++g_deleted;
        m->deleter(m);
      },
      at::TensorOptions().dtype(st));
}

Result call_kernel(const std::string& op, const std::vector<at::Tensor>& inputs, const Attrs& attrs, size_t num_outputs,
                   DLDevice device, bool supports_only) {
  Result res;
  const SY_KernelDef* k = kernel(op);
  if (k == nullptr) {
    res.status = SY_ERROR_UNSUPPORTED, res.stage = "lookup", res.message = "no kernel for " + op;
    return res;
  }
  std::vector<std::unique_ptr<DLInput>> holders;
  std::vector<const DLTensor*> ptrs;
  for (const at::Tensor& t : inputs) {
    if (!t.defined()) {
      ptrs.push_back(nullptr);
      continue;
    }
    holders.push_back(std::make_unique<DLInput>());
    to_dl(t, holders.back().get());
    holders.back()->dl.device = device;
    ptrs.push_back(&holders.back()->dl);
  }
  auto failed = [&](const char* stage, SY_Status s, const SY_CallContext& call) {
    res.status = s;
    res.stage = stage;
    res.message = call.message;
    EXPECT_GT(call.reports, 0) << op << ": " << stage << " failed without a reported message";
    EXPECT_EQ(call.status, s) << op << ": reported status differs from the returned one";
    return res;
  };

  if (k->supports != nullptr) {
    SY_CallContext call;
    SY_SupportsArgs a{};
    a.struct_size = SY_SupportsArgs_STRUCT_SIZE;
    a.call = &call;
    a.node_name = "test_node";
    a.attributes = attrs.raw();
    a.inputs = ptrs.data();
    a.num_inputs = ptrs.size();
    a.num_outputs = num_outputs;
    SY_Status s = k->supports(k->context, &a);
    if (s != SY_OK) return failed("supports", s, call);
  }
  if (supports_only) return res;

  SY_CallContext create_call;
  SY_KernelCreateArgs c{};
  c.struct_size = SY_KernelCreateArgs_STRUCT_SIZE;
  c.call = &create_call;
  c.node_name = "test_node";
  c.attributes = attrs.raw();
  c.inputs = ptrs.data();
  c.num_inputs = ptrs.size();
  c.num_outputs = num_outputs;
  SY_Status s = k->create(k->context, &c);
  if (s != SY_OK) return failed("create", s, create_call);
  EXPECT_EQ(k->output_mode, SY_OUTPUT_KERNEL_ALLOCATED);

  SY_CallContext run_call;
  std::vector<DLManagedTensor*> produced(num_outputs, nullptr);
  SY_KernelRunArgs r{};
  r.struct_size = SY_KernelRunArgs_STRUCT_SIZE;
  r.call = &run_call;
  r.instance = c.instance;
  r.inputs = ptrs.data();
  r.num_inputs = ptrs.size();
  r.outputs = nullptr;
  r.produced = produced.data();
  r.num_outputs = num_outputs;
  s = k->run(k->context, &r);
  k->destroy(k->context, c.instance);  // produced tensors must outlive their kernel
  if (s != SY_OK) {
    for (DLManagedTensor* m : produced) EXPECT_EQ(m, nullptr) << op << ": failed run left a produced tensor";
    return failed("run", s, run_call);
  }
  EXPECT_EQ(run_call.reports, 0) << op << ": successful run reported: " << run_call.message;
  for (DLManagedTensor* m : produced) {
    if (m == nullptr) {
      ADD_FAILURE() << op << ": run returned OK but left an output slot empty";
      res.outputs.emplace_back();
      res.dtypes.push_back(DLDataType{0, 0, 0});
      continue;
    }
    DLDataType dt{};
    res.outputs.push_back(adopt(m, &dt));
    res.dtypes.push_back(dt);
  }
  return res;
}

}  // namespace

Result run(const std::string& op, const std::vector<at::Tensor>& inputs, const Attrs& attrs, size_t num_outputs,
           DLDevice device) {
  return call_kernel(op, inputs, attrs, num_outputs, device, false);
}

Result supports(const std::string& op, const std::vector<at::Tensor>& inputs, const Attrs& attrs, size_t num_outputs,
                DLDevice device) {
  return call_kernel(op, inputs, attrs, num_outputs, device, true);
}

// ---- comparing -----------------------------------------------------------------------------
::testing::AssertionResult same(const at::Tensor& got, const at::Tensor& want) {
  if (!got.defined()) return ::testing::AssertionFailure() << "no output";
  if (got.scalar_type() != want.scalar_type())
    return ::testing::AssertionFailure() << "dtype " << dtype_name(got.scalar_type()) << ", expected "
                                         << dtype_name(want.scalar_type());
  if (got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << "shape " << got.sizes() << ", expected " << want.sizes();
  if (got.numel() == 0) return ::testing::AssertionSuccess();
  if (at::isFloatingType(got.scalar_type())) {
    bool low = got.scalar_type() == at::kHalf || got.scalar_type() == at::kBFloat16;
    double rtol = low ? 1e-2 : 1e-5, atol = low ? 1e-2 : 1e-6;
    at::Tensor g = got.to(at::kDouble), w = want.to(at::kDouble);
    if (at::allclose(g, w, rtol, atol, /*equal_nan=*/true)) return ::testing::AssertionSuccess();
    at::Tensor diff = (g - w).abs().nan_to_num(0, 0, 0);
    return ::testing::AssertionFailure() << "max abs diff " << diff.max().item<double>();
  }
  if (at::equal(got, want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "values differ";
}

void check(const std::string& op, const std::vector<at::Tensor>& inputs, const Attrs& attrs,
           const std::vector<at::Tensor>& want) {
  Result r = run(op, inputs, attrs, want.size());
  ASSERT_TRUE(r.ok()) << op << " failed in " << r.stage << ": " << r.message;
  ASSERT_EQ(r.outputs.size(), want.size());
  bool all_same = true;
  for (size_t i = 0; i < want.size(); ++i) {
    bool ok = same(r.outputs[i], want[i]);
    all_same = all_same && ok;
    EXPECT_TRUE(same(r.outputs[i], want[i])) << op << " output " << i;
    if (want[i].defined()) {  // the DLPack dtype code the plugin wrote
      at::ScalarType st;
      ASSERT_TRUE(from_dl_dtype(r.dtypes[i], &st));
      EXPECT_EQ(st, want[i].scalar_type());
    }
  }
  if (!all_same) return;
  std::lock_guard<std::mutex> lock(g_log_mutex);
  bool any_input = false;
  for (const at::Tensor& t : inputs)
    if (t.defined()) g_seen[op].insert(t.scalar_type()), any_input = true;
  if (!any_input)
    for (const at::Tensor& t : r.outputs) g_seen[op].insert(t.scalar_type());
}

std::map<std::string, std::set<at::ScalarType>> seen_dtypes() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return g_seen;
}

at::Tensor rnd(at::ScalarType dt, at::IntArrayRef shape) {
  if (at::isFloatingType(dt)) return at::randn(shape, at::kFloat).to(dt);
  if (dt == at::kBool) return at::rand(shape) > 0.5;
  if (dt == at::kByte) return at::randint(0, 9, shape, at::kLong).to(dt);
  return at::randint(-4, 5, shape, at::kLong).to(dt);
}

at::Tensor rnd_pos(at::ScalarType dt, at::IntArrayRef shape) {
  at::Tensor t = rnd(dt, shape);
  return dt == at::kBool ? t : t.abs();
}

// ---- cases ---------------------------------------------------------------------------------
std::vector<OpCase>& op_cases() {
  static std::vector<OpCase> cases;
  return cases;
}

bool register_case(const char* op, const char* label, std::vector<at::ScalarType> dtypes,
                   void (*body)(at::ScalarType)) {
  op_cases().push_back(OpCase{op, label, std::move(dtypes), body});
  return true;
}

}  // namespace sy_test
