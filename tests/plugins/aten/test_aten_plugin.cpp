// aten plugin: the plugin as a whole (init, capability answers, errors, ownership) and the
// runner for the per-op conformance cases in test_ops_*.cpp.
#include "aten_harness.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>

using namespace sy_test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

SY_Status init_with(const SY_HostApi* host, std::string* message) {
  SY_CallContext call;
  SY_PluginInitArgs args{};
  args.struct_size = SY_PluginInitArgs_STRUCT_SIZE;
  args.call = &call;
  args.host = host;
  SY_Status s = plugin_init_fn()(&args);
  if (message) *message = call.message;
  return s;
}

}  // namespace

// ---- init ----------------------------------------------------------------------------------

TEST(AtenPlugin, InitDeclaresItself) {
  const SY_Plugin& p = plugin();
  EXPECT_EQ(p.struct_size, SY_Plugin_STRUCT_SIZE);
  EXPECT_EQ(p.sdk_version_major, static_cast<uint32_t>(SY_SDK_VERSION_MAJOR));
  EXPECT_STREQ(p.name, "aten");
  EXPECT_GE(p.num_kernels, 150u);
  RecordProperty("kernels", static_cast<int>(p.num_kernels));
  std::set<std::string> ops;
  for (size_t i = 0; i < p.num_kernels; ++i) {
    const SY_KernelDef* k = p.kernels[i];
    EXPECT_TRUE(ops.insert(k->op).second) << "duplicate kernel " << k->op;
    EXPECT_EQ(k->device_type, kDLCPU);
    EXPECT_EQ(k->output_mode, SY_OUTPUT_KERNEL_ALLOCATED) << k->op;
    EXPECT_GT(k->num_dtypes, 0u) << k->op;
    EXPECT_NE(k->supports, nullptr) << k->op;
    const std::string op = k->op;  // ATen's ops, and the host's pattern ops (ir/patterns.hpp)
    EXPECT_TRUE(op.rfind("aten::", 0) == 0 || op.rfind("switchyard::", 0) == 0) << op;
  }
  for (const char* op : {"aten::add",        "aten::sub",         "aten::mul",
                         "aten::div",        "aten::relu",        "aten::gelu",
                         "aten::sigmoid",    "aten::tanh",        "aten::silu",
                         "aten::linear",     "aten::matmul",      "aten::mm",
                         "aten::bmm",        "aten::addmm",       "aten::conv2d",
                         "aten::softmax",    "aten::log_softmax", "aten::layer_norm",
                         "aten::batch_norm", "aten::max_pool2d",  "aten::adaptive_avg_pool2d",
                         "aten::flatten",    "aten::reshape",     "aten::view",
                         "aten::permute",    "aten::transpose",   "aten::contiguous",
                         "aten::cat",        "aten::mean",        "aten::sum",
                         "aten::embedding",  "aten::dropout",     "aten::t",
                         "aten::unsqueeze",  "aten::squeeze"})
    EXPECT_TRUE(ops.count(op)) << "missing " << op;
}

TEST(AtenPlugin, RefusesAnotherMajorVersion) {
  plugin();
  {
    SY_HostApi future = host_api();
    future.version_major = SY_SDK_VERSION_MAJOR + 1;
    std::string message;
    EXPECT_EQ(init_with(&future, &message), SY_ERROR_VERSION_MISMATCH);
    EXPECT_TRUE(contains(message, "major")) << message;
    std::memset(&future, 0, sizeof(future));
  }  // the refused host table is gone: the plugin must not have kept it
  at::Tensor x = rnd(at::kFloat, {2, 3});
  check("aten::softmax", {x}, Attrs().i("dim", 1), at::softmax(x, 1));
}

TEST(AtenPlugin, IntraOpThreadsFromTheHost) {
  plugin();
  const int before = at::get_num_threads();
  // A host with a pool of 3 (SDK 1.1 num_threads): ATen's team follows it, not the environment.
  static SY_HostApi with_pool = host_api();
  with_pool.num_threads = [](void*) -> int32_t { return 3; };
  with_pool.parallel_for = [](void*, int64_t b, int64_t e, int64_t, SY_ParallelBody body, void* ctx) {
    if (e > b) body(ctx, b, e, 0);
  };
  setenv("SWITCHYARD_INTRA_OP_THREADS", "2", 1);  // the old side channel: ignored now
  std::string message;
  ASSERT_EQ(init_with(&with_pool, &message), SY_OK) << message;
  EXPECT_EQ(at::get_num_threads(), 3);
  auto log = host_log();
  EXPECT_TRUE(std::any_of(log.begin(), log.end(),
                          [](const std::string& l) { return contains(l, "intra-op threads set to 3"); }));
  unsetenv("SWITCHYARD_INTRA_OP_THREADS");
  // A host without a pool (the test host, or any 1.0 host): one thread.
  ASSERT_EQ(init_with(&host_api(), &message), SY_OK) << message;
  EXPECT_EQ(at::get_num_threads(), 1);
  at::set_num_threads(before);
}

// ---- capability answers --------------------------------------------------------------------

TEST(AtenSupports, DeclinesWithReasons) {
  at::Tensor x = rnd(at::kFloat, {2, 3}), w = rnd(at::kFloat, {4, 3});
  struct Case {
    const char* what;
    Result r;
    const char* reason;
  } cases[] = {
      {"missing input", supports("aten::linear", {x}), "weight"},
      {"missing attribute", supports("aten::softmax", {x}), "'dim'"},
      {"attribute of the wrong kind", supports("aten::softmax", {x}, Attrs().s("dim", "1")), "dim"},
      {"unsupported dtype", supports("aten::gelu", {rnd(at::kInt, {2})}), "int32"},
      {"non-CPU device", supports("aten::relu", {x}, {}, 1, DLDevice{kDLCUDA, 0}), "CPU"},
      {"too many inputs", supports("aten::relu", {x, x}), "inputs"},
      {"too many outputs", supports("aten::relu", {x}, {}, 2), "outputs"},
      {"index dtype", supports("aten::embedding", {w, rnd(at::kFloat, {3})}), "float32"},
      {"non-CPU device attribute", supports("aten::zeros", {}, Attrs().ints("size", {2}).s("device", "cuda:0")),
       "cuda"},
      {"no overload matches", supports("aten::max", {x}, Attrs().s("dim", "x")), "overload"},
      {"None for a required attribute", supports("aten::softmax", {x}, Attrs().none("dim")), "None"},
      {"dtype attribute ATen can't do", supports("aten::softmax", {x}, Attrs().i("dim", 1).dtype("dtype", at::kHalf)),
       "float16"},
      {"NULL in a tensor list", supports("aten::cat", {x, at::Tensor(), x}), "missing"},
      {"empty tensor list", supports("aten::cat", {}), "empty"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.r.status, SY_ERROR_UNSUPPORTED) << c.what;
    EXPECT_TRUE(contains(c.r.message, c.reason)) << c.what << ": " << c.r.message;
    EXPECT_TRUE(contains(c.r.message, "test_node")) << c.what << ": " << c.r.message;
  }
}

TEST(AtenSupports, AcceptsWhatTheConventionAllows) {
  at::Tensor x = rnd(at::kFloat, {2, 3}), w = rnd(at::kFloat, {4, 3});
  // Optional inputs: left off the end, or a NULL entry.
  EXPECT_TRUE(supports("aten::linear", {x, w}).ok());
  EXPECT_TRUE(supports("aten::linear", {x, w, at::Tensor()}).ok());
  // Defaults; None for an optional attribute; a ScalarType by name.
  EXPECT_TRUE(supports("aten::softmax", {x}, Attrs().i("dim", 1).none("dtype")).ok());
  EXPECT_TRUE(supports("aten::softmax", {x}, Attrs().i("dim", 1).s("dtype", "float64")).ok());
  // An attribute the schema doesn't name: fine if None, declined otherwise.
  EXPECT_TRUE(supports("aten::relu", {x}, Attrs().none("not_in_schema")).ok());
  Result r = supports("aten::relu", {x}, Attrs().i("not_in_schema", 1));
  EXPECT_EQ(r.status, SY_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(r.message, "not_in_schema")) << r.message;
  // Fewer outputs than the schema returns.
  EXPECT_TRUE(supports("aten::max", {x}, Attrs().i("dim", 1), 1).ok());
}

// SDK 1.1: '@' attributes are config options; a kernel ignores those it doesn't know.
TEST(AtenSupports, IgnoresOptionAttributes) {
  at::Tensor x = rnd(at::kFloat, {2, 3});
  Attrs opts = Attrs().s("@precision", "float16").i("@threads", 2).floats("@whatever", {1.0});
  EXPECT_TRUE(supports("aten::relu", {x}, opts).ok());
  check("aten::softmax", {x}, Attrs(opts).i("dim", 1), at::softmax(x, 1));
  // ... but a plain unknown attribute next to them is still declined.
  Result r = supports("aten::relu", {x}, Attrs(opts).i("not_in_schema", 1));
  EXPECT_EQ(r.status, SY_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(r.message, "not_in_schema")) << r.message;
  EXPECT_FALSE(contains(r.message, "@")) << r.message;
}

// Tensor lists: the last one takes the remaining inputs less one per tensor argument after
// it (index_put: indices..., values); an earlier one takes `<name>.len` inputs (lstm's hx).
TEST(AtenSupports, SplitsTensorListsByLenAttribute) {
  at::Tensor x = rnd(at::kFloat, {4, 3}), i = at::tensor({3, 0}, at::kLong), v = rnd(at::kFloat, {2, 3});
  using L = c10::List<c10::optional<at::Tensor>>;
  check("aten::index_put", {x, i, v}, {}, at::index_put(x, L({i}), v));
  // `.len` is accepted on the last list too, and must agree with the inputs.
  check("aten::index_put", {x, i, v}, Attrs().i("indices.len", 1), at::index_put(x, L({i}), v));
  check("aten::cat", {x, x, x}, Attrs().i("tensors.len", 3).i("dim", 0), at::cat({x, x, x}));
  Result r = supports("aten::cat", {x, x, x}, Attrs().i("tensors.len", 2));
  EXPECT_EQ(r.status, SY_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(r.message, "inputs")) << r.message;
  r = supports("aten::cat", {x, x}, Attrs().i("tensors.len", -1));
  EXPECT_EQ(r.status, SY_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(r.message, "tensors.len")) << r.message;
  // A `.len` for an argument that is not a tensor list is an unknown attribute.
  r = supports("aten::relu", {x}, Attrs().i("self.len", 1));
  EXPECT_EQ(r.status, SY_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(r.message, "self.len")) << r.message;
}

// ---- conventions at run time ---------------------------------------------------------------

TEST(AtenRun, ScalarTypeAttributeByCodeOrName) {
  at::Tensor x = rnd(at::kFloat, {2, 3});
  check("aten::softmax", {x}, Attrs().i("dim", 1).dtype("dtype", at::kDouble), at::softmax(x, 1, at::kDouble));
  check("aten::softmax", {x}, Attrs().i("dim", 1).s("dtype", "float64"), at::softmax(x, 1, at::kDouble));
}

TEST(AtenRun, ConstantTensorAsAttribute) {
  at::Tensor x = rnd(at::kFloat, {2, 3}), w = rnd(at::kFloat, {4, 3}), b = rnd(at::kFloat, {4});
  check("aten::linear", {x}, Attrs().tensor("weight", w).tensor("bias", b), at::linear(x, w, b));
  check("aten::linear", {x, at::Tensor()}, Attrs().tensor("weight", w.t().contiguous().t()), at::linear(x, w));
  at::Tensor y = rnd(at::kFloat, {3});
  check("aten::add", {x}, Attrs().tensor("other", y), at::add(x, y));  // Tensor|Scalar
}

TEST(AtenRun, BoolOutputsUseTheSwitchyardBoolCode) {
  at::Tensor a = rnd(at::kFloat, {5}), b = rnd(at::kFloat, {5});
  Result r = run("aten::lt", {a, b});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.dtypes[0].code, SY_DL_BOOL);
  EXPECT_EQ(r.dtypes[0].bits, 8);
  EXPECT_EQ(r.dtypes[0].lanes, 1);
  EXPECT_TRUE(same(r.outputs[0], at::lt(a, b)));
  // and bool inputs are read as bool
  at::Tensor m = rnd(at::kBool, {5});
  check("aten::logical_not", {m}, {}, at::logical_not(m));
}

TEST(AtenRun, ByteOffsetAndStridesHonoured) {
  at::Tensor base = rnd(at::kFloat, {6, 8});
  at::Tensor view = base.slice(0, 2, 5).slice(1, 1, 7, 2);  // storage offset, strides (8, 2)
  ASSERT_FALSE(view.is_contiguous());
  ASSERT_GT(view.storage_offset(), 0);
  check("aten::relu", {view}, {}, at::relu(view));
  at::Tensor other = base.slice(0, 0, 3).slice(1, 5, 8).t();  // (3, 3), strides (1, 8), offset 5
  check("aten::mm", {view, other}, {}, at::mm(view, other));
}

TEST(AtenRun, ViewResultsAreZeroCopyViewsOfHostInputs) {
  // The SDK lets a produced output view an input; the host keeps that input alive.
  at::Tensor x = rnd(at::kFloat, {4, 6});
  for (const char* op : {"aten::reshape", "aten::view"}) {
    Result r = run(op, {x}, Attrs().ints(std::string(op) == "aten::view" ? "size" : "shape", {6, 4}));
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_TRUE(same(r.outputs[0], x.reshape({6, 4})));
    EXPECT_EQ(r.outputs[0].data_ptr(), x.data_ptr()) << op << " copied instead of viewing";
  }
  Result r = run("aten::dropout", {x}, Attrs().f("p", 0.5).b("train", false));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(same(r.outputs[0], x));
  EXPECT_EQ(r.outputs[0].data_ptr(), x.data_ptr());
}

TEST(AtenRun, AtenErrorsBecomeStatuses) {
  at::Tensor a = rnd(at::kFloat, {2, 3}), b = rnd(at::kFloat, {4, 5});
  Result r = run("aten::mm", {a, b});
  EXPECT_EQ(r.status, SY_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(r.stage, "run");
  EXPECT_TRUE(contains(r.message, "aten::mm")) << r.message;
  EXPECT_TRUE(contains(r.message, "test_node")) << r.message;
  EXPECT_TRUE(contains(r.message, "cannot be multiplied")) << r.message;
  EXPECT_FALSE(contains(r.message, "Exception raised from")) << r.message;
  EXPECT_FALSE(contains(r.message, "\n")) << r.message;
  // The plugin keeps working afterwards.
  check("aten::mm", {a, b.slice(0, 0, 3)}, {}, at::mm(a, b.slice(0, 0, 3)));
}

TEST(AtenRun, DeleterRunsOncePerOutput) {
  at::Tensor x = rnd(at::kFloat, {3, 4});
  int64_t before = deleter_calls();
  {
    Result r = run("aten::max", {x}, Attrs().i("dim", 1), 2);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(deleter_calls(), before);  // still held
    EXPECT_TRUE(same(r.outputs[0], std::get<0>(at::max(x, 1))));
    EXPECT_TRUE(same(r.outputs[1], std::get<1>(at::max(x, 1))));
  }
  EXPECT_EQ(deleter_calls(), before + 2);
}

TEST(AtenRun, ListOutputsMustMatchTheNode) {
  at::Tensor x = rnd(at::kFloat, {6, 2});
  Result r = run("aten::split", {x}, Attrs().i("split_size", 2), 2);  // makes 3 pieces
  EXPECT_EQ(r.status, SY_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(r.message, "3")) << r.message;
}

// Run with --gtest_also_run_disabled_tests: the plugin's cost per node on top of ATen's.
TEST(AtenRun, DISABLED_PerNodeOverhead) {
  at::Tensor x = rnd(at::kFloat, {8});
  const SY_KernelDef* k = kernel("aten::relu");
  ASSERT_NE(k, nullptr);
  DLInput in;
  to_dl(x, &in);
  const DLTensor* inputs[] = {&in.dl};
  Attrs attrs;
  SY_CallContext call;
  SY_KernelCreateArgs c{sizeof(c), &call, "bench", attrs.raw(), inputs, 1, 1, nullptr};
  ASSERT_EQ(k->create(k->context, &c), SY_OK) << call.message;
  const int n = 20000;
  DLManagedTensor* produced = nullptr;
  SY_KernelRunArgs r{sizeof(r), &call, c.instance, inputs, 1, nullptr, &produced, 1};
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    k->run(k->context, &r);
    produced->deleter(produced);
  }
  auto t1 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) at::relu(x);
  auto t2 = std::chrono::steady_clock::now();
  k->destroy(k->context, c.instance);
  auto us = [&](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count() / n; };
  std::cout << "aten::relu on 8 floats: plugin " << us(t0, t1) << " us/node, direct ATen " << us(t1, t2)
            << " us/call\n";
}

// ---- the conformance cases -----------------------------------------------------------------

class AtenOpConformance : public ::testing::TestWithParam<size_t> {};

TEST_P(AtenOpConformance, MatchesLibTorch) {
  const OpCase& c = op_cases()[GetParam()];
  const SY_KernelDef* k = kernel(c.op);
  ASSERT_NE(k, nullptr) << "the plugin has no kernel for " << c.op;
  std::vector<at::ScalarType> claimed;
  for (size_t i = 0; i < k->num_dtypes; ++i) {
    at::ScalarType st;
    ASSERT_TRUE(from_dl_dtype(k->dtypes[i], &st));
    claimed.push_back(st);
  }
  std::vector<at::ScalarType> dtypes = c.dtypes.empty() ? claimed : c.dtypes;
  for (at::ScalarType dt : dtypes) {
    SCOPED_TRACE(c.op + " [" + c.label + "] " + dtype_name(dt));
    EXPECT_NE(std::find(claimed.begin(), claimed.end(), dt), claimed.end())
        << "the case uses a dtype the kernel doesn't claim";
    at::manual_seed(1234);
    c.body(dt);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, AtenOpConformance, ::testing::Range<size_t>(0, op_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           const OpCase& c = op_cases()[info.param];
                           std::string name = c.op.substr(c.op.find("::") + 2) + "_" + c.label;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name + "_" + std::to_string(info.param);
                         });

// Every kernel has at least one conformance case.
TEST(AtenOpCoverage, EveryKernelHasACase) {
  std::set<std::string> covered, known;
  for (const OpCase& c : op_cases()) covered.insert(c.op);
  const SY_Plugin& p = plugin();
  std::string missing;
  for (size_t i = 0; i < p.num_kernels; ++i) {
    known.insert(p.kernels[i]->op);
    if (!covered.count(p.kernels[i]->op)) missing += std::string(" ") + p.kernels[i]->op;
  }
  EXPECT_TRUE(missing.empty()) << "kernels without a conformance case:" << missing;
  for (const OpCase& c : op_cases()) EXPECT_TRUE(known.count(c.op)) << "case for unknown " << c.op;
  std::printf("aten conformance: %zu distinct ATen ops covered by %zu cases\n", covered.size(), op_cases().size());
  EXPECT_GE(covered.size(), 300u) << "the reference plugin must cover at least 300 distinct ATen ops";
}

// The op count docs/ops.md states is counted here, not by hand: distinct kernel op names.
TEST(AtenOpCoverage, AtLeast300DistinctOps) {
  const SY_Plugin& p = plugin();
  std::set<std::string> ops;
  for (size_t i = 0; i < p.num_kernels; ++i) ops.insert(p.kernels[i]->op);
  EXPECT_EQ(ops.size(), p.num_kernels) << "two kernels for one op name";
  std::printf("aten plugin: %zu distinct ATen ops\n", ops.size());
  EXPECT_GE(ops.size(), 300u);
}

// After a full run: every dtype a kernel claims was seen on an input (or, for creation
// ops, an output) of a successful check. Claims are tested, not assumed.
class DtypeCoverage : public ::testing::Environment {
 public:
  void TearDown() override {
    if (::testing::GTEST_FLAG(filter) != "*") return;  // partial run: nothing to conclude
    const SY_Plugin& p = plugin();
    auto seen = seen_dtypes();
    for (size_t i = 0; i < p.num_kernels; ++i) {
      const SY_KernelDef* k = p.kernels[i];
      std::string missing;
      for (size_t d = 0; d < k->num_dtypes; ++d) {
        at::ScalarType st;
        if (!from_dl_dtype(k->dtypes[d], &st) || !seen[k->op].count(st)) missing += " " + dtype_name(st);
      }
      EXPECT_TRUE(missing.empty()) << k->op << " claims dtypes no case exercised:" << missing;
    }
  }
};
static ::testing::Environment* const kDtypeCoverage = ::testing::AddGlobalTestEnvironment(new DtypeCoverage);
