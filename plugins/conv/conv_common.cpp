// conv plugin: oneDNN plumbing, memory descriptors from DLPack tensors, attribute checks.
#include "conv_common.hpp"

#include "common/onednn_engine.hpp"
#include "common/vector_clones.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <omp.h>

namespace syconv {

dnnl::engine& engine() { return sy_onednn::cpu_engine(); }

dnnl::stream& thread_stream() { return sy_onednn::thread_stream(); }

dnnl::memory thread_scratch(const dnnl::memory::desc& md) {
  try {
    return sy_onednn::thread_scratch(md);
  } catch (const sy::Error& e) {
    throw sy::Error(std::string("conv plugin: ") + e.what(), e.status);
  }
}

void reorder_into(dnnl::stream& stream, const dnnl::reorder& r, dnnl::memory& src, dnnl::memory& dst) {
  sy_onednn::execute(r, stream, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
}

std::string to_string(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

Dims compact_strides(const Dims& dims) {
  Dims s(dims.size());
  int64_t compact = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    s[d] = compact;
    compact *= dims[d];
  }
  return s;
}

dnnl::memory::desc strided_desc(const Dims& dims, const Dims& strides) {
  // Size-1 dimensions may carry any stride (DLPack allows it); give oneDNN a compact one
  // so that equal layouts compare equal.
  Dims s = strides;
  int64_t compact = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 1) s[d] = compact;
    compact *= std::max<int64_t>(dims[d], 1);
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, s);
}

dnnl::memory::desc plain_desc(const DLTensor& t) { return strided_desc(sy::shape_of(t), strides_of(t)); }

void check_tensor(const DLTensor& t, const char* what) {
  if (!sy::same_dtype(t.dtype, sy::kFloat32))
    throw sy::Unsupported(std::string(what) + " is not float32 (the conv plugin is float32 only)");
  if (t.device.device_type != kDLCPU) throw sy::Unsupported(std::string(what) + " is not on the CPU");
  if (t.strides == nullptr) return;
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] > 1 && t.strides[d] <= 0)
      throw sy::Unsupported(std::string(what) + " has stride " + std::to_string(t.strides[d]) + " in dimension " +
                            std::to_string(d) + " (broadcast or reversed views are not supported)");
}

void describable(const Dims& dims, const Dims& strides, const char* what) {
  try {
    strided_desc(dims, strides);
  } catch (const dnnl::error& e) {
    throw sy::Unsupported(std::string("oneDNN cannot describe the ") + what + " layout: shape " + to_string(dims) +
                          ", strides " + to_string(strides));
  }
}

// Runs on every call of a guarded kernel, over every input: an integer max of the exponent
// bits with a max reduction, which vectorizes exactly.
namespace {
SY_VECTOR_CLONES uint32_t max_exponent_serial(const float* p, size_t n) {
  constexpr size_t kBlock = 4096;  // stop early at a NaN or infinity, not only at the end
  uint32_t top = 0;
  for (size_t i = 0; i < n; i += kBlock) {
    const size_t end = std::min(n, i + kBlock);
#pragma omp simd reduction(max : top)
    for (size_t j = i; j < end; ++j) {
      uint32_t bits;
      std::memcpy(&bits, p + j, sizeof bits);
      top = std::max(top, bits & kNonFinite);
    }
    if (top == kNonFinite) break;
  }
  return top;
}
}  // namespace

// Large inputs are scanned by the calling thread's OpenMP team (as sized for the kernel
// that follows): a serial scan left the other threads idle before every guarded conv.
uint32_t max_exponent(const float* p, size_t n) {
  constexpr size_t kChunk = size_t{1} << 16;
  const int threads = omp_get_max_threads();
  if (n < 2 * kChunk || threads < 2) return max_exponent_serial(p, n);
  const int64_t chunks = static_cast<int64_t>((n + kChunk - 1) / kChunk);
  uint32_t top = 0;
#pragma omp parallel for num_threads(threads) reduction(max : top) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const size_t begin = static_cast<size_t>(c) * kChunk;
    top = std::max(top, max_exponent_serial(p + begin, std::min(kChunk, n - begin)));
  }
  return top;
}

uint32_t max_exponent(const dnnl::memory& m) {
  const dnnl::memory::desc md = m.get_desc();
  if (md.data_type() == dnnl::memory::data_type::bf16) {  // a float32's upper half: the same exponent bits
    const auto* p = static_cast<const uint16_t*>(m.get_data_handle());
    uint32_t top = 0;
    for (size_t i = 0, n = md.get_size() / sizeof(uint16_t); i < n && top != kNonFinite; ++i)
      top = std::max(top, (uint32_t{p[i]} << 16) & kNonFinite);
    return top;
  }
  return max_exponent(static_cast<const float*>(m.get_data_handle()), md.get_size() / sizeof(float));
}

void* handle(const DLTensor& t) { return static_cast<char*>(t.data) + t.byte_offset; }

void append_key(Dims& key, const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  key.push_back(d.ndims);
  for (int i = 0; i < d.ndims; ++i) key.push_back(d.dims[i]);
  if (d.format_kind != dnnl_blocked) return;
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  for (int i = 0; i < d.ndims; ++i) key.push_back(b.strides[i]);
  key.push_back(b.inner_nblks);  // nChw16c and a plain layout may share outer strides
  for (int i = 0; i < b.inner_nblks; ++i) key.push_back(b.inner_blks[i]), key.push_back(b.inner_idxs[i]);
}

// ---- per-thread buffers ----------------------------------------------------------------

float* thread_buffer(ThreadBuffer use, size_t bytes) {
  struct Buffer {
    std::unique_ptr<float, decltype(&std::free)> data{nullptr, &std::free};
    size_t bytes = 0;
  };
  static thread_local Buffer buffers[2];
  Buffer& b = buffers[use == ThreadBuffer::kChunk ? 0 : 1];
  if (b.bytes < bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    b.data.reset(static_cast<float*>(std::aligned_alloc(64, rounded)));
    if (!b.data) {
      b.bytes = 0;
      throw sy::Error("conv plugin: out of memory for " + std::to_string(bytes) + " bytes of scratch",
                      SY_ERROR_OUT_OF_MEMORY);
    }
    b.bytes = rounded;
  }
  return b.data.get();
}

// ---- attributes --------------------------------------------------------------------------

Dims int_list(const sy::Attrs& a, const char* name, size_t n, const Dims& fallback) {
  if (!a.has(name)) {
    if (fallback.empty()) throw sy::Unsupported(std::string("attribute '") + name + "' is missing");
    return fallback;
  }
  SY_AttrKind k = a.kind(name);
  if (k != SY_ATTR_INT && k != SY_ATTR_INTS)
    throw sy::Unsupported(std::string("attribute '") + name + "' is not an int list");
  Dims v = a.ints(name);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  if (v.size() != n)
    throw sy::Unsupported(std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
                          " values, expected " + std::to_string(n));
  return v;
}

void check_attr_names(const sy::Node& node, const std::vector<std::string>& known,
                      const std::vector<std::string>& post_known) {
  const SY_HostApi* h = sy::host_api();
  const SY_Attributes* raw = node.attrs.raw();
  for (size_t i = 0, n = h->attr_count(raw); i < n; ++i) {
    const char* name = h->attr_name(raw, i);
    if (name == nullptr) continue;
    std::string s = name;
    if (h->attr_kind(raw, name) == SY_ATTR_NONE) continue;  // an omitted optional argument
    if (s.rfind("@", 0) == 0) continue;  // a config option (sdk.h): read where known, never a refusal
    if (s.rfind("post", 0) == 0 && s.find('.') != std::string::npos) {
      if (std::find(post_known.begin(), post_known.end(), s) != post_known.end()) continue;
    } else if (std::find(known.begin(), known.end(), s) != known.end()) {
      continue;
    }
    throw sy::Unsupported("attribute '" + s + "' is not understood by " + node.op);
  }
}

const std::vector<std::string>& max_pool_attr_names() {
  static const std::vector<std::string> names = {"kernel_size", "stride", "padding", "dilation", "ceil_mode"};
  return names;
}

Fusion fusion_of(const std::string& op, std::string* producer) {
  Fusion f;
  size_t plus = op.find('+');
  *producer = op.substr(0, plus);
  if (plus == std::string::npos) return f;
  std::string rest = op.substr(plus + 1);
  const std::string pool = "+aten::max_pool2d";
  if (rest.size() > pool.size() && rest.compare(rest.size() - pool.size(), pool.size(), pool) == 0 &&
      rest.rfind("aten::add", 0) != 0) {
    f.max_pool = true;
    rest.resize(rest.size() - pool.size());
    for (const std::string& a : max_pool_attr_names()) f.attrs.push_back("post2." + a);
  }
  if (rest == "aten::add" || rest.rfind("aten::add+", 0) == 0) {
    f.residual = true;
    f.attrs = {"post.alpha"};
    rest = rest.size() > 9 ? rest.substr(10) : "";
  }
  if (rest.empty()) return f;
  for (const Consumer& c : consumers())
    if (rest == c.op) f.activation = &c;
  if (f.activation == nullptr) throw sy::Error("conv plugin: no fused activation '" + rest + "'", SY_ERROR_INTERNAL);
  f.activation_prefix = f.residual ? "post2." : "post.";
  for (const std::string& a : f.activation->attrs) f.attrs.push_back(f.activation_prefix + a);
  return f;
}

dnnl::post_ops post_ops_of(const Fusion& f, const sy::Attrs& attrs) {
  dnnl::post_ops ops;
  if (f.residual) ops.append_sum(static_cast<float>(attrs.f("post.alpha", 1.0)));
  if (f.activation != nullptr) f.activation->append(attrs, f.activation_prefix, ops);
  return ops;
}

}  // namespace syconv
