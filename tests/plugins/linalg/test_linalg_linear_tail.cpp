// The linalg plugin's linear kernels written over a buffer whose end holds their input
// (SDK 1.2, SY_KernelStorageArgs.output_inplace_tail), driven through the plugin's
// SY_KernelDef as the host calls it: storage() declares the tail only for a run-time,
// contiguous input whose rows map 1:1 to output rows at least as wide (n >= k), and run()
// with the input placed there gives what it gives on separate buffers.
#include "loader/host_api.hpp"
#include "loader/plugin_manager.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using switchyard::loader::PluginManager;
namespace ir = switchyard::ir;
using Shape = std::vector<int64_t>;
constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kF64{kDLFloat, 64, 1};

const SY_Plugin& table() {
  static PluginManager* pm = new PluginManager();  // never destroyed: kernels outlive tests
  static const SY_Plugin* t = [] {
    const std::string name = "/libswitchyard-linalg.so";
    for (const std::string& f : PluginManager::discover(PluginManager::default_search_paths()))
      if (f.size() >= name.size() && f.compare(f.size() - name.size(), name.size(), name) == 0)
        return &pm->load_file(f)->table();
    return static_cast<const SY_Plugin*>(nullptr);
  }();
  if (t == nullptr) throw std::runtime_error("libswitchyard-linalg.so not found");
  return *t;
}

const SY_KernelDef* kernel(const std::string& op) {
  for (size_t i = 0; i < table().num_kernels; ++i)
    if (op == table().kernels[i]->op) return table().kernels[i];
  return nullptr;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A tensor's bytes (8-byte aligned) and its DLTensor, which may be pointed elsewhere.
struct Buf {
  Shape shape, strides;
  DLDataType dtype = kF32;
  std::vector<double> mem;
  DLTensor dl{};
  Buf(Shape s, DLDataType d, uint32_t seed) : shape(std::move(s)), dtype(d), mem(size_t(numel(shape)) + 1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int64_t i = 0; i < numel(shape); ++i) set(i, u(rng));
    point(mem.data());
  }
  Buf(const Buf& o) : shape(o.shape), strides(o.strides), dtype(o.dtype), mem(o.mem) { point(mem.data()); }
  Buf& operator=(const Buf&) = delete;
  size_t bytes() const { return size_t(numel(shape)) * dtype.bits / 8; }
  void point(void* data) {
    dl = DLTensor{};
    dl.data = data;
    dl.device = {kDLCPU, 0};
    dl.ndim = int32_t(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
  }
  void set(int64_t i, double v) {
    if (dtype.bits == 64)
      reinterpret_cast<double*>(mem.data())[i] = v;
    else
      reinterpret_cast<float*>(mem.data())[i] = float(v);
  }
};

double at(const void* p, DLDataType d, int64_t i) {
  return d.bits == 64 ? static_cast<const double*>(p)[i] : static_cast<const float*>(p)[i];
}

// One linear node: x [..., k] (run-time), weight [n, k] and optional bias [n] (constants
// unless `runtime_weight`), bound to `op` through the plugin's table.
struct Linear {
  std::string op = "aten::linear";
  Shape x;
  int64_t n = 0;
  DLDataType dtype = kF32;
  bool bias = true;
  bool runtime_weight = false;
  ir::Attributes attrs;
};

class Bound {
 public:
  explicit Bound(const Linear& c)
      : c_(c), def_(kernel(c.op)), x_(c.x, c.dtype, 1), w_({c.n, c.x.back()}, c.dtype, 2), b_({c.n}, c.dtype, 3) {
    if (def_ == nullptr) throw std::runtime_error(c.op + " is not in the linalg plugin");
    // At planning time the host shows a constant's data and nothing of a run-time input;
    // at run time the constants' data is where it was.
    meta_ = {x_.dl, w_.dl, b_.dl};
    meta_[0].data = nullptr;
    if (c.runtime_weight) meta_[1].data = nullptr;
    meta_ptrs_ = {&meta_[0], &meta_[1]};
    if (c.bias) meta_ptrs_.push_back(&meta_[2]);
    SY_KernelCreateArgs cr{};
    cr.struct_size = SY_KernelCreateArgs_STRUCT_SIZE;
    cr.call = &ctx_;
    cr.node_name = "linear";
    cr.attributes = switchyard::loader::as_sdk(c_.attrs);
    cr.inputs = meta_ptrs_.data();
    cr.num_inputs = meta_ptrs_.size();
    cr.num_outputs = 1;
    if (def_->create(def_->context, &cr) != SY_OK) throw std::runtime_error("create: " + ctx_.message);
    instance_ = cr.instance;
    out_shape_ = c.x;
    out_shape_.back() = c.n;
  }
  ~Bound() { def_->destroy(def_->context, instance_); }
  Bound(const Bound&) = delete;
  Bound& operator=(const Bound&) = delete;

  // What storage() says of the tail (-1: nothing), checking it leaves the rest as preset.
  // `struct_size` below the 1.2 field: a host that does not know it.
  int32_t tail(size_t struct_size = SY_KernelStorageArgs_STRUCT_SIZE) {
    if (def_->storage == nullptr) return -2;
    std::vector<SY_StorageMask> reads(meta_ptrs_.size(), SY_STORAGE_MASK_HOST), writes(1, SY_STORAGE_MASK_HOST);
    int32_t inplace = -1, tail = -1;
    SY_KernelStorageArgs sa{};
    sa.struct_size = struct_size;
    sa.call = &ctx_;
    sa.instance = instance_;
    sa.inputs = meta_ptrs_.data();
    sa.num_inputs = meta_ptrs_.size();
    sa.num_outputs = 1;
    sa.input_reads = reads.data();
    sa.output_writes = writes.data();
    sa.output_inplace = &inplace;
    sa.output_inplace_tail = &tail;
    EXPECT_EQ(def_->storage(def_->context, &sa), SY_OK) << ctx_.message;
    for (SY_StorageMask m : reads) EXPECT_EQ(m, SY_STORAGE_MASK_HOST);
    EXPECT_EQ(writes[0], SY_STORAGE_MASK_HOST);
    EXPECT_EQ(inplace, -1);
    return tail;
  }

  // Runs with x and the output on separate buffers (tail_at < 0), or with x's bytes
  // starting `tail_at` bytes into the output's buffer (out bytes - x bytes: its tail).
  // Returns the output's values, or throws with the kernel's message.
  std::vector<double> run(int64_t tail_at = -1) {
    Buf out(out_shape_, c_.dtype, 4);
    std::vector<double> joint(out.mem.size() + x_.mem.size());
    Buf x = x_;
    if (tail_at >= 0) {
      out.point(joint.data());
      std::memcpy(reinterpret_cast<char*>(joint.data()) + tail_at, x_.mem.data(), x_.bytes());
      x.point(reinterpret_cast<char*>(joint.data()) + tail_at);
    }
    std::vector<const DLTensor*> in{&x.dl, &w_.dl};
    if (c_.bias) in.push_back(&b_.dl);
    DLTensor* outs[] = {&out.dl};
    SY_KernelRunArgs ra{};
    ra.struct_size = SY_KernelRunArgs_STRUCT_SIZE;
    ra.call = &ctx_;
    ra.instance = instance_;
    ra.inputs = in.data();
    ra.num_inputs = in.size();
    ra.outputs = outs;
    ra.num_outputs = 1;
    const SY_Status s = def_->run(def_->context, &ra);
    if (s != SY_OK) throw std::runtime_error("status " + std::to_string(s) + ": " + ctx_.message);
    std::vector<double> v(size_t(numel(out_shape_)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = at(out.dl.data, c_.dtype, int64_t(i));
    return v;
  }
  int64_t tail_offset() const { return int64_t(size_t(numel(out_shape_)) * c_.dtype.bits / 8 - x_.bytes()); }

 private:
  Linear c_;
  const SY_KernelDef* def_;
  Buf x_, w_, b_;
  std::vector<DLTensor> meta_;
  std::vector<const DLTensor*> meta_ptrs_;
  SY_CallContext ctx_;
  SY_KernelInstance* instance_ = nullptr;
  Shape out_shape_;
};

ir::Attributes gelu(const std::string& approximate) {
  return {{"post.approximate", ir::Attribute::of_string(approximate)}};
}

TEST(LinearTail, StorageDeclaresTheTailOnlyWhereSafe) {
  // The LM head: [8, 64, 128] x [1000, 128]^T + bias, and fused with gelu.
  EXPECT_EQ(Bound({"aten::linear", {8, 64, 128}, 1000}).tail(), 0);
  EXPECT_EQ(Bound({"aten::linear+aten::gelu", {8, 64, 128}, 1000, kF32, true, false, gelu("tanh")}).tail(), 0);
  EXPECT_EQ(Bound({"aten::linear+aten::relu", {512, 128}, 128, kF64, false, true}).tail(), 0);  // n == k
  EXPECT_EQ(Bound({"aten::linear", {128}, 300}).tail(), 0);                                     // one row
  // Output rows narrower than input rows: writing row r would overwrite input rows > r.
  EXPECT_EQ(Bound({"aten::linear", {8, 64, 128}, 64}).tail(), -1);
  EXPECT_EQ(Bound({"aten::linear+aten::gelu", {8, 64, 128}, 127, kF32, true, false, gelu("none")}).tail(), -1);
  // A host before 1.2 has no such field: the kernel must not write past its struct.
  EXPECT_EQ(Bound({"aten::linear", {8, 64, 128}, 1000}).tail(offsetof(SY_KernelStorageArgs, output_inplace_tail)), -1);
  // Other GEMM ops answer storage() only for the compute report ([precision]): no tail.
  EXPECT_EQ(Bound({"aten::mm", {64, 128}, 128, kF32, false, false}).tail(), -1);
  EXPECT_EQ(Bound({"aten::matmul", {8, 64, 128}, 128, kF32, false, false}).tail(), -1);
}

TEST(LinearTail, StorageRefusesStridedInputs) {
  Linear c{"aten::linear", {64, 128}, 1000};
  Bound b(c);
  EXPECT_EQ(b.tail(), 0);
  // The same node, its input described as the transpose of a [128, 64] buffer.
  SY_CallContext ctx;
  const SY_KernelDef* def = kernel(c.op);
  Shape xs{64, 128}, xst{1, 64}, ws{1000, 128};
  std::vector<float> w(size_t(numel(ws)), 0.5f), bias(1000, 0.25f);
  Shape bs{1000};
  DLTensor x{nullptr, {kDLCPU, 0}, 2, kF32, xs.data(), xst.data(), 0};
  DLTensor wt{w.data(), {kDLCPU, 0}, 2, kF32, ws.data(), nullptr, 0};
  DLTensor bt{bias.data(), {kDLCPU, 0}, 1, kF32, bs.data(), nullptr, 0};
  const DLTensor* in[] = {&x, &wt, &bt};
  ir::Attributes none;
  SY_KernelCreateArgs cr{sizeof(cr), &ctx, "linear", switchyard::loader::as_sdk(none), in, 3, 1, nullptr};
  ASSERT_EQ(def->create(def->context, &cr), SY_OK) << ctx.message;
  SY_StorageMask reads[3] = {SY_STORAGE_MASK_HOST, SY_STORAGE_MASK_HOST, SY_STORAGE_MASK_HOST};
  SY_StorageMask writes = SY_STORAGE_MASK_HOST;
  int32_t inplace = -1, tail = -1;
  SY_KernelStorageArgs sa{sizeof(sa), &ctx, cr.instance, in, 3, 1, reads, &writes, &inplace, &tail};
  EXPECT_EQ(def->storage(def->context, &sa), SY_OK) << ctx.message;
  EXPECT_EQ(tail, -1);
  // A constant input (data at planning time) is never the host's to place.
  x.data = w.data(), x.strides = nullptr;
  EXPECT_EQ(def->storage(def->context, &sa), SY_OK) << ctx.message;
  EXPECT_EQ(tail, -1);
  def->destroy(def->context, cr.instance);
}

// The kernel over the tail against the same kernel on separate buffers. Bit-exact in every
// case below when written, but not promised: the tail path splits the rows into several
// GEMM calls, and oneDNN / OpenBLAS may pick another kernel (another summation order over
// k) for another row count; hence a tolerance of a few float32 / float64 ulps.
void expect_same_over_tail(const Linear& c) {
  SCOPED_TRACE(c.op + " x " + std::to_string(c.x.size()) + "-D, " + std::to_string(numel(c.x) / c.x.back()) +
               " rows, k " + std::to_string(c.x.back()) + ", n " + std::to_string(c.n) +
               (c.dtype.bits == 64 ? ", f64" : ", f32"));
  Bound b(c);
  ASSERT_EQ(b.tail(), 0);
  const std::vector<double> want = b.run();
  const std::vector<double> got = b.run(b.tail_offset());
  const double tol = c.dtype.bits == 64 ? 1e-12 : 1e-6;
  int64_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": " << got[i] << " over the tail, " << want[i] << " on separate buffers";
  EXPECT_EQ(bad, 0) << "of " << want.size();
}

TEST(LinearTail, RunOverTheTailMatchesSeparateBuffers) {
  // The LM head: most rows in one GEMM straight from the input, the rest in a copied block.
  expect_same_over_tail({"aten::linear", {8, 64, 128}, 1000});
  expect_same_over_tail({"aten::linear+aten::gelu", {8, 64, 128}, 1000, kF32, true, false, gelu("tanh")});
  expect_same_over_tail({"aten::linear+aten::gelu", {8, 64, 128}, 1000, kF32, true, false, gelu("none")});
  // n == k: every block copied; 300 rows are a 256-row block and 44 more.
  expect_same_over_tail({"aten::linear", {300, 64}, 64});
  expect_same_over_tail({"aten::linear+aten::relu", {3, 100, 64}, 64, kF32, false});
  // n a little above k: blocks, then direct steps, of varied sizes.
  expect_same_over_tail({"aten::linear", {1000, 96}, 130});
  // n = 2.5 k: three direct steps (2400, 960, 384 rows), then one copied block.
  expect_same_over_tail({"aten::linear", {4000, 64}, 160});
  // Fewer rows than a block, and one row.
  expect_same_over_tail({"aten::linear", {5, 128}, 1000});
  expect_same_over_tail({"aten::linear", {128}, 300});
  // A run-time weight (oneDNN's plain sgemm, no packed B), and silu in the epilogue.
  expect_same_over_tail({"aten::linear+aten::silu", {4, 50, 96}, 200, kF32, true, true});
  // float64 (OpenBLAS): blocks of 64 rows at k 128.
  expect_same_over_tail({"aten::linear", {3, 50, 128}, 200, kF64});
  expect_same_over_tail({"aten::linear+aten::hardswish", {7, 33, 40}, 40, kF64, true, true});
  expect_same_over_tail({"aten::linear", {2, 1000, 32}, 1000, kF64, false});
}

TEST(LinearTail, RunRefusesAnOverlapThatIsNotTheTail) {
  Bound b({"aten::linear", {64, 128}, 1000});
  try {
    b.run(64);  // overlapping, but not at the end
    ADD_FAILURE() << "ran over an input that is not at the output's tail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("status " + std::to_string(SY_ERROR_INTERNAL)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("end of its buffer"), std::string::npos) << e.what();
  }
}

}  // namespace
