// A test plugin with a fake device: its "device memory" is host memory mapped
// PROT_NONE, opened only while the plugin itself works on it (its kernels and its
// conversions), and poisoned with 0xFB when allocated. Any read or write of it by the
// host faults at once. Kernels (fp32, same-shape element-wise) check that every tensor
// they get lives on the fake device, as the host promised through `storage`.
#include <switchyard/plugin.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

namespace {

constexpr DLDevice kFake{kDLExtDev, 0};

struct Block {
  size_t bytes = 0;
  int opened = 0;  // how many accesses hold it readable
};
std::mutex g_mutex;
std::map<char*, Block> g_blocks;  // by base address

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// The block holding p; throws if p is not fake-device memory.
std::map<char*, Block>::iterator block_of(const void* p) {
  const char* q = static_cast<const char*>(p);
  auto it = g_blocks.upper_bound(const_cast<char*>(q));
  if (it == g_blocks.begin()) throw sy::Error("address is not fake-device memory", SY_ERROR_INTERNAL);
  --it;
  if (q >= it->first + it->second.bytes) throw sy::Error("address is not fake-device memory", SY_ERROR_INTERNAL);
  return it;
}

// Opens a tensor's block for the plugin's own use for as long as it lives.
class Access {
 public:
  Access(const DLTensor& t, const char* what) {
    if (t.device.device_type != kFake.device_type)
      throw sy::Error(
          std::string(what) + " is not on the fake device (device type " + std::to_string(t.device.device_type) + ")",
          SY_ERROR_INTERNAL);
    std::lock_guard<std::mutex> lock(g_mutex);
    it_ = block_of(t.data);
    if (it_->second.opened++ == 0) mprotect(it_->first, it_->second.bytes, PROT_READ | PROT_WRITE);
  }
  ~Access() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (--it_->second.opened == 0) mprotect(it_->first, it_->second.bytes, PROT_NONE);
  }
  Access(const Access&) = delete;
  Access& operator=(const Access&) = delete;

 private:
  std::map<char*, Block>::iterator it_;
};

float* floats(const DLTensor& t) { return reinterpret_cast<float*>(static_cast<char*>(t.data) + t.byte_offset); }

// Copies a (maybe strided) host tensor into dense floats at dst.
void gather(const DLTensor& src, float* dst) {
  const std::vector<int64_t> stride = sy::strides_of(src);
  const int64_t n = sy::numel(src);
  std::vector<int64_t> index(static_cast<size_t>(src.ndim), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (int d = 0; d < src.ndim; ++d) off += index[static_cast<size_t>(d)] * stride[static_cast<size_t>(d)];
    dst[k] = floats(src)[off];
    for (int d = src.ndim - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < src.shape[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

struct FakeMemory {
  static void* alloc(uint64_t nbytes) {
    const size_t bytes = (std::max<uint64_t>(nbytes, 1) + page() - 1) / page() * page();
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw sy::Error("fake device out of memory", SY_ERROR_OUT_OF_MEMORY);
    std::memset(p, 0xFB, bytes);  // poison: a kernel that reads what it never wrote sees garbage
    mprotect(p, bytes, PROT_NONE);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_blocks[static_cast<char*>(p)] = Block{bytes, 0};
    return p;
  }
  static void free(void* p) {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_blocks.find(static_cast<char*>(p));
    if (it == g_blocks.end()) return;
    munmap(it->first, it->second.bytes);
    g_blocks.erase(it);
  }
  static void to_host(const DLTensor& src, DLTensor& dst) {
    Access a(src, "to_host source");
    if (!sy::same_dtype(src.dtype, sy::kFloat32)) throw sy::Error("the fake device holds float32 only");
    std::memcpy(floats(dst), floats(src), static_cast<size_t>(sy::numel(src)) * sizeof(float));
  }
  static void from_host(const DLTensor& src, DLTensor& dst) {
    if (src.device.device_type != kDLCPU) throw sy::Error("from_host source is not host memory");
    Access a(dst, "from_host destination");
    gather(src, floats(dst));
  }
};

// ---- kernels: element-wise, fp32, on the fake device only

void same_shape_fp32(const sy::Node& node) {
  for (size_t i = 0; i < node.num_inputs; ++i) {
    if (!node.has_input(i)) continue;
    const DLTensor& t = node.input(i);
    if (!sy::same_dtype(t.dtype, sy::kFloat32)) throw sy::Unsupported("float32 only");
    if (sy::shape_of(t) != sy::shape_of(node.input(0))) throw sy::Unsupported("same shapes only");
  }
}

template <typename Op>
struct Elementwise {
  explicit Elementwise(const sy::Node& node) : alpha(static_cast<float>(node.attrs.f("alpha", 1.0))) {}
  static void supports(const sy::Node& node) { same_shape_fp32(node); }
  void infer(sy::Infer& in) { in.set_output(0, sy::kFloat32, sy::shape_of(in.input(0))); }
  void storage(sy::StorageQuery& q) {
    for (size_t i = 0; i < q.num_inputs(); ++i) q.reads(i, SY_STORAGE_MASK(0));
    q.writes(0, SY_STORAGE_MASK(0));
    q.in_place(0, 0);
  }
  void cost(sy::Cost& c) {
    const double n = static_cast<double>(sy::numel(c.input(0)));
    c.flops(n);
    c.bytes(n * 4 * static_cast<double>(c.num_inputs() + 1));
  }
  void run(sy::Run& run) {
    for (size_t i = 0; i < run.num_inputs(); ++i)
      if (run.input_storage(i) != 0)
        throw sy::Error("input " + std::to_string(i) + " was not given on the fake device");
    if (run.output_storage(0) != 0) throw sy::Error("the output was not placed on the fake device");
    DLTensor& out = run.output(0);
    Access o(out, "output");
    const int64_t n = sy::numel(out);
    float* y = floats(out);
    if (run.num_inputs() == 1) {
      Access a(run.input(0), "input 0");
      const float* x = floats(run.input(0));
      for (int64_t k = 0; k < n; ++k) y[k] = Op::apply(x[k], 0.0f, alpha);
      return;
    }
    Access a(run.input(0), "input 0"), b(run.input(1), "input 1");
    const float *x = floats(run.input(0)), *z = floats(run.input(1));
    for (int64_t k = 0; k < n; ++k) y[k] = Op::apply(x[k], z[k], alpha);
  }
  float alpha;
};

struct Relu {
  static float apply(float x, float, float) { return x > 0 ? x : 0; }
};
struct Add {
  static float apply(float x, float y, float alpha) { return x + alpha * y; }
};
struct Mul {
  static float apply(float x, float y, float) { return x * y; }
};

sy::PluginDef& fake_plugin() {
  static sy::PluginDef def = [] {
    sy::PluginDef d("fake", "0.1.0", "switchyard tests",
                    {sy::kernel<Elementwise<Relu>>("aten::relu", "elementwise", {sy::kFloat32}),
                     sy::kernel<Elementwise<Add>>("aten::add", "elementwise", {sy::kFloat32}),
                     sy::kernel<Elementwise<Mul>>("aten::mul", "elementwise", {sy::kFloat32})});
    d.add_storage(sy::storage<FakeMemory>("fake", kFake));
    return d;
  }();
  return def;
}

}  // namespace

SY_PLUGIN_FROM(fake_plugin)
