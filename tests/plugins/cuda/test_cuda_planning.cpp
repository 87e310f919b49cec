// The planning half of every cuda kernel, on a machine without a GPU: this binary runs with
// SWITCHYARD_CUDA_PLAN_ONLY=1 (CTest sets it), so the plugin accepts nodes as if GPU 0 were
// there. Through the SDK table, as the host calls them, each case checks supports() (and
// the reasons it declines with), create(), infer() (output shapes and dtypes as ATen gives
// them), storage() (cuda storage, in-place where allowed), cost(), and that run() fails
// with a clear message instead of touching a device.
#include "cuda_test_util.hpp"
#include "loader/host_api.hpp"
#include "loader/plugin_manager.hpp"

#include <cstdlib>
#include <map>

namespace {

using namespace cudatest;
using switchyard::loader::PluginManager;

const SY_Plugin& table() {
  static PluginManager* pm = new PluginManager();  // never destroyed: see test_cuda_plugin.cpp
  static const SY_Plugin* t = [] {
    const std::string name = "/libswitchyard-cuda.so";
    for (const std::string& f : PluginManager::discover(PluginManager::default_search_paths()))
      if (f.size() >= name.size() && f.compare(f.size() - name.size(), name.size(), name) == 0)
        return &pm->load_file(f)->table();
    ADD_FAILURE() << "libswitchyard-cuda.so not found";
    return static_cast<const SY_Plugin*>(nullptr);
  }();
  return *t;
}

const SY_KernelDef* kernel(const std::string& op) {
  for (size_t i = 0; i < table().num_kernels; ++i)
    if (op == table().kernels[i]->op) return table().kernels[i];
  return nullptr;
}

// An input as the host describes it at planning time: metadata, and data for constants.
struct Meta {
  Shape shape;
  DLDataType dtype = kF32;
  std::optional<Tensor> constant;  // a weight: data visible to the kernel
  bool absent = false;
};
Meta t(Shape s, DLDataType d = kF32) { return Meta{std::move(s), d, std::nullopt, false}; }
Meta c(Tensor v) { return Meta{v.shape(), v.dtype(), v, false}; }
Meta none() { return Meta{{}, kF32, std::nullopt, true}; }

struct Out {
  Shape shape;
  DLDataType dtype = kF32;
};

struct Case {
  std::string op;
  ir::Attributes attrs;
  std::vector<Meta> inputs;
  std::vector<Out> outputs;  // expected; empty with `declines`
  std::string declines;      // a part of the reason, when the kernel must decline
  int in_place = -1;         // the input output 0 may take, if any
};

struct Call {
  std::vector<DLTensor> dl;
  std::vector<const DLTensor*> ptrs;
  std::vector<Shape> shapes;
  explicit Call(const std::vector<Meta>& in) : dl(in.size()), ptrs(in.size()), shapes(in.size()) {
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].absent) continue;
      shapes[i] = in[i].shape;
      DLTensor& d = dl[i];
      d = in[i].constant ? in[i].constant->dl() : DLTensor{};
      d.device = {kDLCPU, 0};
      d.ndim = static_cast<int32_t>(shapes[i].size());
      d.dtype = in[i].dtype;
      d.shape = shapes[i].data();
      if (!in[i].constant) d.data = nullptr, d.strides = nullptr;
      ptrs[i] = &d;
    }
  }
};

void check(const Case& k) {
  SCOPED_TRACE(k.op);
  const SY_KernelDef* def = kernel(k.op);
  ASSERT_NE(def, nullptr) << k.op << " is not in the cuda plugin";
  Call call(k.inputs);
  SY_CallContext ctx;
  SY_SupportsArgs s{};
  s.struct_size = SY_SupportsArgs_STRUCT_SIZE;
  s.call = &ctx;
  s.node_name = "node";
  s.attributes = switchyard::loader::as_sdk(k.attrs);
  s.inputs = call.ptrs.data();
  s.num_inputs = call.ptrs.size();
  s.num_outputs = k.declines.empty() ? k.outputs.size() : 1;
  const SY_Status st = def->supports(def->context, &s);
  if (!k.declines.empty()) {
    EXPECT_EQ(st, SY_ERROR_UNSUPPORTED);
    EXPECT_NE(ctx.message.find(k.declines), std::string::npos) << "declined with: " << ctx.message;
    return;
  }
  ASSERT_EQ(st, SY_OK) << ctx.message;

  SY_KernelCreateArgs cr{};
  cr.struct_size = SY_KernelCreateArgs_STRUCT_SIZE;
  cr.call = &ctx;
  cr.node_name = "node";
  cr.attributes = s.attributes;
  cr.inputs = s.inputs;
  cr.num_inputs = s.num_inputs;
  cr.num_outputs = s.num_outputs;
  ASSERT_EQ(def->create(def->context, &cr), SY_OK) << ctx.message;

  std::vector<SY_TensorDesc> outs(k.outputs.size());
  for (SY_TensorDesc& o : outs) o.struct_size = SY_TensorDesc_STRUCT_SIZE;
  SY_KernelInferArgs inf{};
  inf.struct_size = SY_KernelInferArgs_STRUCT_SIZE;
  inf.call = &ctx;
  inf.instance = cr.instance;
  inf.inputs = s.inputs;
  inf.num_inputs = s.num_inputs;
  inf.outputs = outs.data();
  inf.num_outputs = outs.size();
  EXPECT_EQ(def->infer(def->context, &inf), SY_OK) << ctx.message;
  for (size_t o = 0; o < outs.size(); ++o) {
    EXPECT_EQ(Shape(outs[o].shape, outs[o].shape + outs[o].ndim), k.outputs[o].shape) << "output " << o;
    EXPECT_TRUE(switchyard::same_dtype(outs[o].dtype, k.outputs[o].dtype))
        << "output " << o << " is " << switchyard::dtype_name(outs[o].dtype);
  }

  std::vector<SY_StorageMask> reads(s.num_inputs, SY_STORAGE_MASK_HOST), writes(outs.size(), SY_STORAGE_MASK_HOST);
  std::vector<int32_t> inplace(outs.size(), -1);
  SY_KernelStorageArgs sa{};
  sa.struct_size = SY_KernelStorageArgs_STRUCT_SIZE;
  sa.call = &ctx;
  sa.instance = cr.instance;
  sa.inputs = s.inputs;
  sa.num_inputs = s.num_inputs;
  sa.num_outputs = outs.size();
  sa.input_reads = reads.data();
  sa.output_writes = writes.data();
  sa.output_inplace = inplace.data();
  EXPECT_EQ(def->storage(def->context, &sa), SY_OK) << ctx.message;
  for (size_t i = 0; i < reads.size(); ++i)
    EXPECT_TRUE(reads[i] & SY_STORAGE_MASK(0)) << "input " << i << " is not read in the cuda storage";
  for (size_t o = 0; o < writes.size(); ++o) EXPECT_EQ(writes[o], SY_STORAGE_MASK(0)) << "output " << o;
  if (!inplace.empty()) EXPECT_EQ(inplace[0], k.in_place);

  SY_KernelCostArgs co{};
  co.struct_size = SY_KernelCostArgs_STRUCT_SIZE;
  co.call = &ctx;
  co.instance = cr.instance;
  co.inputs = s.inputs;
  co.num_inputs = s.num_inputs;
  co.num_outputs = outs.size();
  EXPECT_EQ(def->cost(def->context, &co), SY_OK) << ctx.message;
  EXPECT_GT(co.bytes, 0.0);

  // run: host-allocated host outputs, no storage arrays (as a 1.0-style host would call it).
  std::vector<Tensor> out_tensors;
  std::vector<DLTensor*> out_ptrs;
  for (const SY_TensorDesc& o : outs) {
    out_tensors.push_back(Tensor::empty(o.dtype, Shape(o.shape, o.shape + o.ndim)));
    out_ptrs.push_back(const_cast<DLTensor*>(&out_tensors.back().dl()));
  }
  std::vector<Tensor> in_tensors;
  std::vector<const DLTensor*> in_ptrs;
  for (const Meta& m : k.inputs) {
    if (m.absent) {
      in_ptrs.push_back(nullptr);
      continue;
    }
    in_tensors.push_back(m.constant ? *m.constant : Tensor::empty(m.dtype, m.shape));
    in_ptrs.push_back(&in_tensors.back().dl());
  }
  SY_KernelRunArgs ra{};
  ra.struct_size = SY_KernelRunArgs_STRUCT_SIZE;
  ra.call = &ctx;
  ra.instance = cr.instance;
  ra.inputs = in_ptrs.data();
  ra.num_inputs = in_ptrs.size();
  ra.outputs = out_ptrs.data();
  ra.num_outputs = out_ptrs.size();
  EXPECT_NE(def->run(def->context, &ra), SY_OK);
  EXPECT_NE(ctx.message.find("SWITCHYARD_CUDA_PLAN_ONLY"), std::string::npos) << ctx.message;
  def->destroy(def->context, cr.instance);
}

bool plan_only() {
  const char* v = std::getenv("SWITCHYARD_CUDA_PLAN_ONLY");
  return v != nullptr && std::string(v) == "1";
}

#define REQUIRE_PLAN_ONLY()                                                                                      \
  do {                                                                                                           \
    if (!plan_only())                                                                                            \
      GTEST_SKIP() << "missing resource: needs SWITCHYARD_CUDA_PLAN_ONLY=1 (CTest sets it for this binary)";     \
    if (gpu().usable)                                                                                            \
      GTEST_SKIP() << "missing resource: a usable GPU is present: test_cuda_plugin runs these kernels for real"; \
  } while (0)

const ir::Attributes kConvAttrs = {
    {"stride", list({2, 2})},         {"padding", list({3, 3})}, {"dilation", list({1, 1})}, {"transposed", i64(0)},
    {"output_padding", list({0, 0})}, {"groups", i64(1)},        {"benchmark", i64(0)},      {"deterministic", i64(0)},
    {"cudnn_enabled", i64(1)},        {"allow_tf32", i64(1)}};

TEST(CudaPlanning, Gemm) {
  REQUIRE_PLAN_ONLY();
  const Tensor w = random({5, 8}, 1), b = random({5}, 2);
  for (const Case& k : std::vector<Case>{
           {"aten::linear", {}, {t({2, 3, 8}), c(w), c(b)}, {{{2, 3, 5}}}},
           {"aten::linear", {}, {t({8}), c(w), none()}, {{{5}}}},
           {"aten::linear+aten::gelu", {{"post.approximate", text("tanh")}}, {t({4, 8}), c(w), c(b)}, {{{4, 5}}}},
           {"aten::linear", {}, {t({4, 8}, kF16), t({5, 8}, kF16)}, {{{4, 5}, kF16}}},
           {"aten::linear", {}, {t({4, 8}), t({5, 8}, kF16)}, {}, "mixed dtypes"},
           {"aten::linear", {}, {t({4, 8}), t({5, 7})}, {}, "cannot be multiplied"},
           {"aten::linear", {{"@precision", text("tf32")}}, {t({4, 8}), c(w)}, {{{4, 5}}}},
           {"aten::linear", {{"@precision", text("fp8")}}, {t({4, 8}), c(w)}, {}, "fp8"},
           {"aten::linear", {{"@other_plugins_option", i64(3)}}, {t({4, 8}), c(w)}, {{{4, 5}}}},
           {"aten::matmul", {}, {t({2, 1, 3, 4}), t({5, 4, 6})}, {{{2, 5, 3, 6}}}},
           {"aten::matmul", {}, {t({4}), t({3, 4, 5})}, {{{3, 5}}}},
           {"aten::bmm", {}, {t({3, 2, 4}), t({3, 4, 6})}, {{{3, 2, 6}}}},
           {"aten::bmm", {}, {t({3, 2, 4}), t({2, 4, 6})}, {}, "same batch size"},
           {"aten::addmm", {{"beta", i64(1)}, {"alpha", i64(1)}}, {t({5}), t({3, 4}), t({4, 5})}, {{{3, 5}}}},
           {"aten::baddbmm",
            {{"beta", i64(1)}, {"alpha", i64(1)}},
            {c(random({1, 64, 64}, 3)), t({8, 64, 32}), t({8, 32, 64})},
            {{{8, 64, 64}}}},
           {"aten::mm", {}, {t({3, 4}), t({4, 5}, kBF16)}, {}, "mixed dtypes"},
       })
    check(k);
}

TEST(CudaPlanning, ConvolutionAndPooling) {
  REQUIRE_PLAN_ONLY();
  if (kernel("aten::_convolution") == nullptr)
    GTEST_SKIP() << "missing resource: the cuda plugin was built without cuDNN";
  const Tensor w = random({64, 3, 7, 7}, 1), b = random({64}, 2);
  ir::Attributes grouped = kConvAttrs;
  grouped[5].second = i64(2);
  for (const Case& k : std::vector<Case>{
           {"aten::_convolution", kConvAttrs, {t({2, 3, 224, 224}), c(w), none()}, {{{2, 64, 112, 112}}}},
           {"aten::_convolution+aten::relu", kConvAttrs, {t({1, 3, 32, 32}), c(w), c(b)}, {{{1, 64, 16, 16}}}},
           {"aten::_convolution+aten::hardswish",
            kConvAttrs,
            {t({1, 3, 32, 32}, kF16), t({64, 3, 7, 7}, kF16)},
            {{{1, 64, 16, 16}, kF16}}},
           {"aten::_convolution",
            kConvAttrs,
            {t({1, 3, 32, 32}, kBF16), t({64, 3, 7, 7}, kBF16)},
            {},
            "float32 and float16"},
           {"aten::_convolution", grouped, {t({1, 4, 16, 16}), t({6, 3, 7, 7})}, {}, "groups"},
           {"aten::conv2d", {{"padding", text("same")}}, {t({3, 9, 9}), t({4, 3, 3, 3})}, {{{4, 9, 9}}}},
           {"aten::conv2d", {{"padding", text("same")}}, {t({1, 3, 9, 9}), t({4, 3, 2, 2})}, {}, "unevenly"},
           {"aten::conv1d", {{"stride", list({2})}}, {t({2, 3, 20}), t({5, 3, 4})}, {{{2, 5, 9}}}},
           {"aten::convolution",
            {{"stride", list({1, 1, 1})},
             {"padding", list({0, 0, 0})},
             {"dilation", list({1, 1, 1})},
             {"transposed", i64(0)},
             {"output_padding", list({0, 0, 0})},
             {"groups", i64(1)}},
            {t({1, 2, 4, 4, 4}), t({3, 2, 1, 1, 1})},
            {},
            "3-D"},
           {"aten::_convolution",
            {{"stride", list({1, 1})},
             {"padding", list({0, 0})},
             {"dilation", list({1, 1})},
             {"transposed", i64(1)},
             {"output_padding", list({0, 0})},
             {"groups", i64(1)}},
            {t({1, 3, 8, 8}), t({3, 4, 3, 3})},
            {},
            "transposed"},
           {"aten::max_pool2d",
            {{"kernel_size", list({3, 3})},
             {"stride", list({2, 2})},
             {"padding", list({1, 1})},
             {"dilation", list({1, 1})},
             {"ceil_mode", i64(0)}},
            {t({2, 64, 112, 112})},
            {{{2, 64, 56, 56}}}},
           {"aten::max_pool2d",
            {{"kernel_size", list({2, 2})}, {"dilation", list({2, 2})}},
            {t({1, 1, 8, 8})},
            {},
            "dilation"},
           {"aten::avg_pool2d",
            {{"kernel_size", list({2, 2})}, {"divisor_override", i64(3)}},
            {t({1, 1, 8, 8})},
            {},
            "divisor_override"},
           {"aten::avg_pool2d",
            {{"kernel_size", list({2})}, {"stride", list({})}, {"count_include_pad", i64(0)}},
            {t({1, 3, 8, 7})},
            {{{1, 3, 4, 3}}}},
       })
    check(k);
}

TEST(CudaPlanning, ElementwiseAndNormalisation) {
  REQUIRE_PLAN_ONLY();
  for (const Case& k : std::vector<Case>{
           {"aten::relu", {}, {t({2, 3})}, {{{2, 3}}}, "", 0},
           {"aten::gelu", {{"approximate", text("none")}}, {t({2, 3}, kBF16)}, {{{2, 3}, kBF16}}, "", 0},
           {"aten::gelu", {{"approximate", text("fast")}}, {t({2, 3})}, {}, "approximate"},
           {"aten::relu", {}, {t({2, 3}, kI64)}, {}, "int64"},
           {"aten::hardtanh", {{"min_val", f64(-2)}, {"max_val", f64(2)}}, {t({4})}, {{{4}}}, "", 0},
           {"aten::dropout", {{"p", f64(0.1)}, {"train", i64(0)}}, {t({4})}, {{{4}}}, "", 0},
           {"aten::dropout", {{"p", f64(0.1)}, {"train", i64(1)}}, {t({4})}, {}, "train"},
           {"aten::logical_not", {}, {t({4}, kBool)}, {{{4}, kBool}}, "", 0},
           {"aten::add", {{"alpha", i64(1)}}, {t({4, 1, 3}), t({5, 3})}, {{{4, 5, 3}}}, "", 0},
           {"aten::add", {{"alpha", i64(1)}}, {t({5, 3}), t({5, 3})}, {{{5, 3}}}, "", 0},
           {"aten::add", {{"alpha", i64(1)}}, {t({5, 3}), t({4, 3})}, {}, "broadcast"},
           {"aten::add", {{"alpha", i64(1)}}, {t({5, 3}), t({5, 3}, kF16)}, {}, "promotion"},
           {"aten::div", {}, {t({2, 4}), c(scalar_f64(8.0))}, {{{2, 4}}}, "", 0},
           {"aten::div", {{"rounding_mode", text("floor")}}, {t({2, 4}), t({2, 4})}, {}, "rounding_mode"},
           {"aten::mul", {{"other", f64(0.5)}}, {t({3})}, {{{3}}}, "", 0},
           {"aten::eq", {{"other", i64(0)}}, {t({2, 6}, kI64)}, {{{2, 6}, kBool}}},
           {"aten::lt", {}, {t({2, 6}), t({6})}, {{{2, 6}, kBool}}},
           {"aten::add", {{"other", f64(0.5)}, {"alpha", i64(1)}}, {t({3}, kI64)}, {}, "non-integral"},
           {"aten::where", {}, {t({3, 4}, kBool), t({2, 3, 4}), t({3, 1})}, {{{2, 3, 4}}}},
           {"aten::masked_fill", {{"value", f64(-1e9)}}, {t({2, 3, 4}), t({3, 4}, kBool)}, {{{2, 3, 4}}}, "", 0},
           {"aten::masked_fill", {{"value", f64(0)}}, {t({2, 3, 4}), t({3, 4})}, {}, "bool"},
           {"aten::batch_norm",
            {{"training", i64(0)}, {"momentum", f64(0.1)}, {"eps", f64(1e-5)}, {"cudnn_enabled", i64(1)}},
            {t({2, 3, 5, 5}), t({3}), t({3}), t({3}), t({3})},
            {{{2, 3, 5, 5}}}},
           {"aten::batch_norm", {{"training", i64(1)}}, {t({2, 3}), none(), none(), t({3}), t({3})}, {}, "training"},
           {"aten::zeros_like", {{"dtype", i64(6)}, {"device", text("cpu")}}, {t({2, 5}, kI64)}, {{{2, 5}}}},
           {"aten::ones_like", {}, {t({2, 5}, kBF16)}, {{{2, 5}, kBF16}}},
           {"aten::softmax",
            {{"dim", i64(-1)}, {"dtype", ir::Attribute::none()}},
            {t({4, 12, 197, 197})},
            {{{4, 12, 197, 197}}},
            "",
            0},
           {"aten::softmax", {{"dim", i64(3)}}, {t({2, 3})}, {}, "out of range"},
           {"aten::_softmax", {{"dim", i64(1)}, {"half_to_float", i64(1)}}, {t({2, 3}, kF16)}, {}, "half_to_float"},
           {"aten::log_softmax", {{"dim", i64(0)}}, {t({2, 3})}, {{{2, 3}}}, "", 0},
           {"aten::layer_norm",
            {{"normalized_shape", list({768})}, {"eps", f64(1e-6)}, {"cudnn_enable", i64(1)}},
            {t({4, 197, 768}), t({768}), t({768})},
            {{{4, 197, 768}}}},
           {"aten::layer_norm",
            {{"normalized_shape", list({768})}},
            {t({4, 197, 700}), none(), none()},
            {},
            "normalized_shape"},
           {"aten::adaptive_avg_pool2d", {{"output_size", list({1, 1})}}, {t({2, 576, 7, 7})}, {{{2, 576, 1, 1}}}},
           {"aten::adaptive_avg_pool2d", {{"output_size", list({3, 4})}}, {t({64, 10, 7})}, {{{64, 3, 4}}}},
       })
    check(k);
}

TEST(CudaPlanning, ShapeOpsGathersAndAttention) {
  REQUIRE_PLAN_ONLY();
  for (const Case& k : std::vector<Case>{
           {"aten::view", {{"size", list({4, -1})}}, {t({2, 3, 4})}, {{{4, 6}}}, "", 0},
           {"aten::view", {{"size", list({5, -1})}}, {t({2, 3, 4})}, {}, "invalid"},
           {"aten::reshape", {{"shape", list({-1, 768, 196})}}, {t({4, 768, 14, 14})}, {{{4, 768, 196}}}, "", 0},
           {"aten::flatten",
            {{"start_dim", i64(1)}, {"end_dim", i64(-1)}},
            {t({2, 3, 4}, kI64)},
            {{{2, 12}, kI64}},
            "",
            0},
           {"aten::transpose", {{"dim0", i64(1)}, {"dim1", i64(0)}}, {t({197, 4, 768})}, {{{4, 197, 768}}}},
           {"aten::permute", {{"dims", list({0, 2, 1})}}, {t({4, 768, 196})}, {{{4, 196, 768}}}},
           {"aten::contiguous", {{"memory_format", i64(0)}}, {t({3, 4})}, {{{3, 4}}}, "", 0},
           {"aten::expand", {{"size", list({-1, 1, 768})}, {"implicit", i64(0)}}, {t({4, 1, 768})}, {{{4, 1, 768}}}},
           {"aten::expand_as", {}, {c(random({1, 1, 768}, 1)), t({4, 1, 768})}, {{{4, 1, 768}}}},
           {"aten::slice",
            {{"dim", i64(0)}, {"start", i64(0)}, {"end", i64(INT64_MAX)}, {"step", i64(1)}},
            {t({4, 197, 768})},
            {{{4, 197, 768}}}},
           {"aten::select", {{"dim", i64(1)}, {"index", i64(0)}}, {t({4, 197, 768})}, {{{4, 768}}}},
           {"aten::chunk",
            {{"chunks", i64(3)}, {"dim", i64(-1)}},
            {t({64, 4, 384})},
            {{{64, 4, 128}}, {{64, 4, 128}}, {{64, 4, 128}}}},
           {"aten::cat", {{"dim", i64(1)}}, {t({4, 1, 768}), t({4, 196, 768})}, {{{4, 197, 768}}}},
           {"aten::cat", {{"dim", i64(1)}}, {t({4, 1, 768}), t({4, 196, 700})}, {}, "Sizes of tensors must match"},
           {"aten::stack", {{"dim", i64(0)}}, {t({3}, kI64), t({3}, kI64)}, {{{2, 3}, kI64}}},
           {"aten::embedding",
            {{"padding_idx", i64(-1)}, {"scale_grad_by_freq", i64(0)}, {"sparse", i64(0)}},
            {c(random({1000, 128}, 2)), t({4, 64}, kI64)},
            {{{4, 64, 128}}}},
           {"aten::embedding", {}, {t({1000, 128}), t({4, 64})}, {}, "int64 or int32"},
           {"aten::index_select", {{"dim", i64(1)}}, {t({4, 48, 128}), t({3}, kI64)}, {{{4, 3, 128}}}},
           {"aten::scaled_dot_product_attention",
            {{"dropout_p", f64(0)}, {"is_causal", i64(1)}},
            {t({4, 12, 197, 64}), t({4, 12, 197, 64}), t({4, 12, 197, 64})},
            {{{4, 12, 197, 64}}}},
           {"aten::scaled_dot_product_attention",
            {},
            {t({2, 1, 9, 32}), t({2, 3, 9, 32}), t({1, 3, 9, 16}), t({9, 9}, kBool)},
            {{{2, 3, 9, 16}}}},
           {"aten::scaled_dot_product_attention",
            {{"dropout_p", f64(0.1)}},
            {t({2, 4, 8}), t({2, 4, 8}), t({2, 4, 8})},
            {},
            "dropout"},
           {"aten::scaled_dot_product_attention",
            {},
            {t({2, 4, 256}), t({2, 4, 256}), t({2, 4, 256})},
            {},
            "head dims"},
           {"aten::_scaled_dot_product_attention",
            {{"need_attn_weights", i64(0)}, {"is_causal", i64(0)}},
            {t({2, 4, 6, 8}), t({2, 4, 7, 8}), t({2, 4, 7, 8})},
            {{{2, 4, 6, 8}}, {{2, 4, 6, 7}}}},
       })
    check(k);
}

TEST(CudaPlanning, ConversionsAndMemoryFailClearly) {
  REQUIRE_PLAN_ONLY();
  const SY_StorageDef& s = *table().storages[0];
  SY_CallContext call;
  SY_StorageAllocArgs a{};
  a.struct_size = SY_StorageAllocArgs_STRUCT_SIZE;
  a.call = &call;
  a.nbytes = 64;
  EXPECT_NE(s.alloc(s.context, &a), SY_OK);
  EXPECT_NE(call.message.find("SWITCHYARD_CUDA_PLAN_ONLY"), std::string::npos) << call.message;
}

}  // namespace
