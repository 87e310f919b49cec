// The cuda plugin as the host loads it: its table (kernels on kDLCUDA with storage and cost
// functions, the "cuda" storage), the no-GPU path (it loads, and every kernel declines with
// the probe's reason, so selection falls through and `plan` says why), and, with a GPU, the
// storage's allocator and host <-> device conversions called through the SDK table.
#include "api/internal.hpp"
#include "cuda_test_util.hpp"
#include "loader/host_api.hpp"
#include "loader/plugin_manager.hpp"

#include <set>

namespace {

using namespace cudatest;
using switchyard::loader::LoadedPlugin;
using switchyard::loader::PluginManager;

// Where the host finds it ($SWITCHYARD_PLUGIN_PATH, then beside the binary's build tree).
std::string plugin_file() {
  const std::string name = "/libswitchyard-cuda.so";
  for (const std::string& f : PluginManager::discover(PluginManager::default_search_paths()))
    if (f.size() >= name.size() && f.compare(f.size() - name.size(), name.size(), name) == 0) return f;
  ADD_FAILURE() << "libswitchyard-cuda.so is not in the host's plugin search path";
  return "libswitchyard-cuda.so";
}

// One plugin manager for the binary, never destroyed: the plugin keeps the host API table
// of the last host that initialised it (plugin.hpp), which must outlive every later call.
const LoadedPlugin& loaded() {
  static PluginManager* pm = new PluginManager();
  static std::shared_ptr<LoadedPlugin> plugin = pm->load_file(plugin_file());
  return *plugin;
}

const SY_StorageDef& cuda_storage() {
  const SY_Plugin& t = loaded().table();
  EXPECT_TRUE(SY_STRUCT_HAS(&t, SY_Plugin, num_storages));
  return *t.storages[0];
}

TEST(CudaPlugin, LoadsWithItsKernelsAndTheCudaStorage) {
  const LoadedPlugin& p = loaded();
  EXPECT_EQ(p.name(), "cuda");
  EXPECT_EQ(p.sdk_major(), 1u);
  EXPECT_EQ(p.sdk_minor(), static_cast<uint32_t>(SY_SDK_VERSION_MINOR)) << "built with this SDK (storages: 1.1)";
  const SY_Plugin& t = p.table();
  ASSERT_TRUE(SY_STRUCT_HAS(&t, SY_Plugin, num_storages));
  ASSERT_EQ(t.num_storages, 1u);
  const SY_StorageDef& s = *t.storages[0];
  EXPECT_STREQ(s.name, "cuda");
  EXPECT_EQ(s.device.device_type, kDLCUDA);
  EXPECT_EQ(s.device.device_id, 0);
  EXPECT_NE(s.alloc, nullptr);
  EXPECT_NE(s.free, nullptr);
  EXPECT_NE(s.to_host, nullptr);
  EXPECT_NE(s.from_host, nullptr);
  EXPECT_NE(s.synchronize, nullptr);

  std::set<std::string> ops;
  for (size_t i = 0; i < t.num_kernels; ++i) {
    const SY_KernelDef& k = *t.kernels[i];
    ops.insert(k.op);
    EXPECT_EQ(k.device_type, kDLCUDA) << k.op;
    EXPECT_NE(k.supports, nullptr) << k.op << ": without supports() it could not decline for want of a GPU";
    ASSERT_TRUE(SY_STRUCT_HAS(&k, SY_KernelDef, cost)) << k.op;
    EXPECT_NE(k.storage, nullptr) << k.op;
    EXPECT_NE(k.cost, nullptr) << k.op;
    EXPECT_EQ(k.output_mode, SY_OUTPUT_HOST_ALLOCATED) << k.op;
  }
  for (const char* op : {"aten::linear",
                         "aten::linear+aten::gelu",
                         "aten::linear+aten::relu",
                         "aten::matmul",
                         "aten::bmm",
                         "aten::addmm",
                         "aten::mm",
                         "aten::baddbmm",
                         "aten::add",
                         "aten::sub",
                         "aten::mul",
                         "aten::div",
                         "aten::relu",
                         "aten::gelu",
                         "aten::silu",
                         "aten::sigmoid",
                         "aten::tanh",
                         "aten::hardswish",
                         "aten::softmax",
                         "aten::layer_norm",
                         "aten::scaled_dot_product_attention",
                         "aten::_scaled_dot_product_attention",
                         "aten::adaptive_avg_pool2d",
                         "aten::view",
                         "aten::transpose",
                         "aten::cat",
                         "aten::embedding",
                         "aten::masked_fill"})
    EXPECT_TRUE(ops.count(op)) << op << " is not in the cuda plugin's table";
#ifdef SY_TEST_CUDA_WITH_CUDNN
  for (const char* op :
       {"aten::conv2d", "aten::_convolution", "aten::_convolution+aten::relu", "aten::max_pool2d", "aten::avg_pool2d"})
    EXPECT_TRUE(ops.count(op)) << op << " is not in the cuda plugin's table (built with cuDNN)";
#endif
}

// ---- without a GPU ------------------------------------------------------------------------------

TEST(CudaPluginWithoutGpu, EveryKernelDeclinesWithTheProbesReason) {
  if (gpu().usable) GTEST_SKIP() << "missing resource: a usable GPU is present; this checks the path without one";
  ASSERT_TRUE(gpu().reason.rfind("no CUDA device", 0) == 0 || gpu().reason.rfind("no usable CUDA device", 0) == 0)
      << gpu().reason;
  // Straight through the SDK: supports() of every kernel says no, with the same reason.
  const SY_Plugin& t = loaded().table();
  ir::Attributes attrs;
  for (size_t i = 0; i < t.num_kernels; ++i) {
    const SY_KernelDef& k = *t.kernels[i];
    SY_CallContext call;
    SY_SupportsArgs args{};
    args.struct_size = SY_SupportsArgs_STRUCT_SIZE;
    args.call = &call;
    args.node_name = "n";
    args.attributes = switchyard::loader::as_sdk(attrs);
    args.num_outputs = 1;
    EXPECT_EQ(k.supports(k.context, &args), SY_ERROR_UNSUPPORTED) << k.op;
    EXPECT_NE(call.message.find(gpu().reason), std::string::npos) << k.op << ": " << call.message;
  }
}

TEST(CudaPluginWithoutGpu, SelectionFallsThroughAndPlanSaysWhy) {
  if (gpu().usable) GTEST_SKIP() << "missing resource: a usable GPU is present; this checks the path without one";
  // cuda first, then the CPU family plugins this build has (a config may not name others).
  std::set<std::string> loaded_plugins;
  for (const auto& p : switchyard::Runtime(switchyard::Options{}).plugins()) loaded_plugins.insert(p.name);
  std::string backends = "\"cuda\"";
  for (const char* p : {"linalg", "conv", "attention", "elementwise", "shape", "example", "aten"})
    if (loaded_plugins.count(p)) backends += std::string(", \"") + p + "\"";
  switchyard::Runtime rt(
      switchyard::Options{sytest::write_config("cuda_then_cpu", "[selection]\ndefault = [" + backends + "]\n")});
  struct Case {
    std::string op, fallback;
    std::vector<Arg> args;
    ir::Attributes attrs;
  };
  const std::vector<Case> cases = {
      {"aten::relu", "elementwise", {in(random({2, 3}, 1))}, {}},
      {"aten::linear", "linalg", {in(random({2, 4}, 2)), weight(random({3, 4}, 3))}, {}},
      {"aten::view", "shape", {in(random({2, 6}, 4))}, {{"size", list({3, 4})}}},
  };
  int checked = 0;
  for (const Case& c : cases) {
    if (!loaded_plugins.count(c.fallback)) continue;  // not in this build
    Built b = chain({{c.op, c.attrs, {}}}, c.args);
    auto model = load_graph(rt, std::move(b.graph));
    const std::vector<switchyard::PlanEntry> plan = model->plan(b.feeds);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].backend, c.fallback) << c.op;
    bool said = false;
    for (const switchyard::Rejected& r : plan[0].rejected)
      if (r.backend == "cuda") said = r.reason.find(gpu().reason) != std::string::npos;
    EXPECT_TRUE(said) << c.op << ": the plan does not quote the cuda plugin's reason";
    model->run(b.feeds);  // and it runs on the fallback
    ++checked;
  }
  if (checked == 0)
    GTEST_SKIP() << "missing resource: no CPU plugin to fall back to in this build (example, linalg, shape)";
}

TEST(CudaPluginWithoutGpu, StrictSelectionFailsNamingTheReason) {
  if (gpu().usable) GTEST_SKIP() << "missing resource: a usable GPU is present; this checks the path without one";
  const std::string err = cuda_error({{"aten::softmax", {{"dim", i64(-1)}}, {}}}, {in(random({2, 3}, 1))});
  EXPECT_NE(err.find("cuda"), std::string::npos) << err;
  EXPECT_NE(err.find(gpu().reason), std::string::npos) << err;
}

TEST(CudaPluginWithoutGpu, StorageCallsFailCleanly) {
  if (gpu().usable) GTEST_SKIP() << "missing resource: a usable GPU is present; this checks the path without one";
  const SY_StorageDef& s = cuda_storage();
  SY_CallContext call;
  SY_StorageAllocArgs a{};
  a.struct_size = SY_StorageAllocArgs_STRUCT_SIZE;
  a.call = &call;
  a.nbytes = 1024;
  EXPECT_NE(s.alloc(s.context, &a), SY_OK);
  EXPECT_NE(call.message.find(gpu().reason), std::string::npos) << call.message;
  s.free(s.context, nullptr);  // a no-op, never a crash
  SY_CallContext sync;
  EXPECT_EQ(s.synchronize(s.context, &sync), SY_OK);  // nothing was queued
}

// ---- with a GPU: the storage through the SDK ------------------------------------------------------

void* storage_alloc(uint64_t bytes, SY_Status* status = nullptr, std::string* message = nullptr) {
  const SY_StorageDef& s = cuda_storage();
  SY_CallContext call;
  SY_StorageAllocArgs a{};
  a.struct_size = SY_StorageAllocArgs_STRUCT_SIZE;
  a.call = &call;
  a.nbytes = bytes;
  const SY_Status st = s.alloc(s.context, &a);
  if (status) *status = st;
  if (message) *message = call.message;
  if (!status) EXPECT_EQ(st, SY_OK) << call.message;
  return a.data;
}

SY_Status convert(bool to_host, const DLTensor& src, DLTensor& dst, std::string* message) {
  const SY_StorageDef& s = cuda_storage();
  SY_CallContext call;
  SY_StorageCopyArgs c{};
  c.struct_size = SY_StorageCopyArgs_STRUCT_SIZE;
  c.call = &call;
  c.src = &src;
  c.dst = &dst;
  const SY_Status st = to_host ? s.to_host(s.context, &c) : s.from_host(s.context, &c);
  *message = call.message;
  return st;
}

TEST(CudaStorage, RoundTripsCompactAndStridedTensorsOfEveryWidth) {
  REQUIRE_GPU();
  // Sizes around the pinned staging chunk (8 MiB), dtypes of 1, 2, 4 and 8 bytes.
  for (DLDataType dt : {DLDataType{kDLUInt, 8, 1}, kF16, kF32, kI64}) {
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{(8 << 20) / 4 + 17}, int64_t{3 << 20}}) {
      SCOPED_TRACE(switchyard::dtype_name(dt) + " x " + std::to_string(n));
      const size_t es = dt.bits / 8;
      Tensor host = Tensor::uninitialized(dt, {n});
      auto* bytes = static_cast<uint8_t*>(host.raw_data());
      for (size_t i = 0; i < static_cast<size_t>(n) * es; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 7);
      void* dev = storage_alloc(static_cast<uint64_t>(n) * es);
      ASSERT_NE(dev, nullptr);
      int64_t shape[1] = {n};
      DLTensor d{};
      d.data = dev;
      d.device = {kDLCUDA, 0};
      d.ndim = 1;
      d.dtype = dt;
      d.shape = shape;
      std::string msg;
      ASSERT_EQ(convert(false, host.dl(), d, &msg), SY_OK) << msg;
      Tensor back = Tensor::empty(dt, {n});
      DLTensor bd = back.dl();
      ASSERT_EQ(convert(true, d, bd, &msg), SY_OK) << msg;
      EXPECT_EQ(std::memcmp(back.raw_data(), host.raw_data(), static_cast<size_t>(n) * es), 0);
      cuda_storage().free(cuda_storage().context, dev);
    }
  }
  // A strided host source: a transposed [300, 500] view.
  Tensor base = random({500, 300}, 9);
  Tensor view = Tensor::from_blob(base.raw_data(), kF32, {300, 500}, {1, 300});
  void* dev = storage_alloc(300 * 500 * 4);
  int64_t shape[2] = {300, 500};
  DLTensor d{};
  d.data = dev;
  d.device = {kDLCUDA, 0};
  d.ndim = 2;
  d.dtype = kF32;
  d.shape = shape;
  std::string msg;
  ASSERT_EQ(convert(false, view.dl(), d, &msg), SY_OK) << msg;
  Tensor back = Tensor::empty(kF32, {300, 500});
  DLTensor bd = back.dl();
  ASSERT_EQ(convert(true, d, bd, &msg), SY_OK) << msg;
  const Tensor want = view.contiguous();
  EXPECT_EQ(std::memcmp(back.raw_data(), want.raw_data(), 300 * 500 * 4), 0);
  cuda_storage().free(cuda_storage().context, dev);
}

TEST(CudaStorage, ZeroBytesAndReuseAndSynchronize) {
  REQUIRE_GPU();
  void* a = storage_alloc(0);
  void* b = storage_alloc(0);
  EXPECT_NE(a, nullptr);
  EXPECT_NE(a, b);  // distinct blocks
  cuda_storage().free(cuda_storage().context, a);
  void* c = storage_alloc(0);
  EXPECT_EQ(c, a);  // the cache hands the freed block out again
  cuda_storage().free(cuda_storage().context, b);
  cuda_storage().free(cuda_storage().context, c);
  SY_CallContext call;
  EXPECT_EQ(cuda_storage().synchronize(cuda_storage().context, &call), SY_OK) << call.message;
}

TEST(CudaStorage, OutOfMemoryNamesTheBytesAsked) {
  REQUIRE_GPU();
  SY_Status st = SY_OK;
  std::string msg;
  const uint64_t huge = uint64_t{1} << 50;  // 1 PiB
  void* p = storage_alloc(huge, &st, &msg);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(st, SY_ERROR_OUT_OF_MEMORY) << msg;
  EXPECT_NE(msg.find(std::to_string(huge)), std::string::npos) << msg;
  // And the device is still usable afterwards.
  void* q = storage_alloc(4096);
  EXPECT_NE(q, nullptr);
  cuda_storage().free(cuda_storage().context, q);
}

TEST(CudaStorage, ConversionsRejectMismatchedTensors) {
  REQUIRE_GPU();
  void* dev = storage_alloc(64);
  int64_t shape[1] = {16}, other[1] = {8};
  DLTensor d{};
  d.data = dev;
  d.device = {kDLCUDA, 0};
  d.ndim = 1;
  d.dtype = kF32;
  d.shape = shape;
  Tensor host = random({8}, 1);
  DLTensor h = host.dl();
  h.shape = other;
  std::string msg;
  EXPECT_NE(convert(false, h, d, &msg), SY_OK);
  EXPECT_NE(msg.find("differ"), std::string::npos) << msg;
  cuda_storage().free(cuda_storage().context, dev);
}

}  // namespace
