// Helpers for the cuda plugin's tests (cuda_test_util.hpp).
#include "cuda_test_util.hpp"
#include "api/internal.hpp"

#include <algorithm>

namespace cudatest {

const GpuState& gpu() {
  static const GpuState state = [] {
    GpuState s;
    // A relu on the cuda plugin alone: it plans iff the plugin found a usable GPU.
    const std::string err = cuda_error({{"aten::relu", {}, {}}}, {in(random({4}, 1))});
    s.usable = err.empty();
    s.reason = err;
    for (const char* key : {"no CUDA device", "no usable CUDA device"}) {
      const size_t at = err.find(key);
      if (at != std::string::npos) {
        s.reason = err.substr(at);
        break;
      }
    }
    return s;
  }();
  return state;
}

bool has_cuda_op(const std::string& op) {
  for (const switchyard::PluginInfo& p : cuda_runtime().plugins())
    if (p.name == "cuda")
      for (const switchyard::KernelInfo& k : p.kernels)
        if (k.op == op) return true;
  return false;
}

// ---- half precision on the host -------------------------------------------------------------------

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      uint32_t m = man;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (m & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {  // subnormal or zero, round to nearest even
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t h = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = static_cast<uint32_t>(exp) << 10 | man >> 13;
  const uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN stays NaN
  x += 0x7fffu + ((x >> 16) & 1u);                                                       // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

// ---- tensors ----------------------------------------------------------------------------------------

double at(const Tensor& t0, int64_t i) {
  const Tensor t = t0.contiguous();
  const DLDataType d = t.dtype();
  if (d.code == kDLFloat && d.bits == 32) return t.data<float>()[i];
  if (d.code == kDLFloat && d.bits == 64) return t.data<double>()[i];
  if (d.code == kDLFloat && d.bits == 16) return half_to_float(t.data<uint16_t>()[i]);
  if (d.code == kDLBfloat && d.bits == 16) return bf16_to_float(t.data<uint16_t>()[i]);
  if (d.code == kDLInt && d.bits == 64) return static_cast<double>(t.data<int64_t>()[i]);
  if (d.code == kDLInt && d.bits == 32) return t.data<int32_t>()[i];
  if (d.bits == 8) return t.data<uint8_t>()[i];
  ADD_FAILURE() << "no test accessor for dtype " << switchyard::dtype_name(d);
  return 0;
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  const Tensor c = t.contiguous();
  for (int64_t i = 0; i < c.numel(); ++i) v[static_cast<size_t>(i)] = at(c, i);
  return v;
}

Tensor random(Shape shape, uint32_t seed, DLDataType dtype, double lo, double hi) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = u(rng);
    if (dtype.code == kDLFloat && dtype.bits == 32)
      t.data<float>()[i] = static_cast<float>(v);
    else if (dtype.code == kDLFloat && dtype.bits == 64)
      t.data<double>()[i] = v;
    else if (dtype.code == kDLFloat && dtype.bits == 16)
      t.data<uint16_t>()[i] = float_to_half(static_cast<float>(v));
    else if (dtype.code == kDLBfloat)
      t.data<uint16_t>()[i] = float_to_bf16(static_cast<float>(v));
    else
      ADD_FAILURE() << "random() of a non-float dtype";
  }
  return t;
}

Tensor ints(Shape shape, std::vector<int64_t> values, DLDataType dtype) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype.bits == 64)
      t.data<int64_t>()[i] = values[static_cast<size_t>(i)];
    else
      t.data<int32_t>()[i] = static_cast<int32_t>(values[static_cast<size_t>(i)]);
  }
  return t;
}

Tensor bools(Shape shape, std::vector<int> values) {
  Tensor t = Tensor::empty(kBool, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = values[static_cast<size_t>(i)] ? 1 : 0;
  return t;
}

Tensor scalar_f64(double v) {
  Tensor t = Tensor::empty(kF64, {});
  t.data<double>()[0] = v;
  return t;
}

// ---- graphs -------------------------------------------------------------------------------------------

Built chain(const std::vector<Step>& steps, const std::vector<Arg>& args) {
  Built b;
  int counter = 0;
  auto value_of = [&](const Arg& a) -> ir::ValueId {
    if (!a.t) return ir::kNoValue;
    const std::string name = "v" + std::to_string(counter++);
    if (a.constant) return b.graph.add_constant(name, *a.t);
    b.feeds.push_back(*a.t);
    return b.graph.add_input(name, a.t->dtype());
  };
  std::vector<ir::ValueId> ids;
  for (const Arg& a : args) ids.push_back(value_of(a));
  for (size_t s = 0; s < steps.size(); ++s) {
    if (s > 0) {
      ids = {ids.front()};
      for (const Arg& a : steps[s].extra) ids.push_back(value_of(a));
    }
    std::vector<std::string> outs;
    for (size_t o = 0; o < steps[s].outputs; ++o) outs.push_back("n" + std::to_string(s) + "_" + std::to_string(o));
    b.graph.add_node("n" + std::to_string(s), steps[s].op, ids, outs, steps[s].attrs);
    ids.clear();
    for (const std::string& o : outs) ids.push_back(b.graph.find_value(o));
  }
  b.graph.outputs = ids;
  return b;
}

std::vector<Tensor> run_cuda(const std::vector<Step>& steps, const std::vector<Arg>& args, switchyard::Runtime* rt) {
  Built b = chain(steps, args);
  auto model = load_graph(rt ? *rt : cuda_runtime(), std::move(b.graph));
  for (const switchyard::PlanEntry& e : model->plan(b.feeds)) EXPECT_EQ(e.backend, "cuda") << e.node << " " << e.op;
  return model->run(b.feeds);
}

std::string cuda_error(const std::vector<Step>& steps, const std::vector<Arg>& args) {
  Built b = chain(steps, args);
  return sytest::error_of([&] {
    auto model = load_graph(cuda_runtime(), std::move(b.graph));
    model->plan(b.feeds);
    model->run(b.feeds);
  });
}

// ---- comparison ---------------------------------------------------------------------------------------

void expect_close(const Tensor& got, const std::vector<double>& ref, const Shape& ref_shape, double tol,
                  const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.shape(), ref_shape) << what;
  const std::vector<double> g = values_of(got);
  ASSERT_EQ(g.size(), ref.size()) << what;
  double scale = 1;
  for (double r : ref)
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
  size_t bad = 0, nonzero = 0, first_bad = 0;
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(ref[i]) || !std::isfinite(g[i])) {
      const bool same = std::isnan(ref[i]) ? std::isnan(g[i]) : g[i] == ref[i];
      if (!same && bad++ == 0) first_bad = i;
      ++nonzero;
      continue;
    }
    const double d = std::fabs(g[i] - ref[i]);
    worst = std::max(worst, d);
    if (!(d <= tol * scale) && bad++ == 0) first_bad = i;
    if (ref[i] != 0) ++nonzero;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << ref.size() << " elements differ (tolerance " << tol * scale
                     << "), worst " << worst << "; first at " << first_bad << ": got " << g[first_bad] << ", expected "
                     << ref[first_bad];
  if (!ref.empty()) EXPECT_GT(nonzero, 0u) << what << ": the reference is all zeros";
}

double tolerance(DLDataType dtype, double fp32) {
  // Eight units of the dtype's rounding (2^-11 for float16, 2^-8 for bfloat16): the inputs
  // the reference sees are already rounded, so what differs is the result's own rounding
  // and the order of float sums.
  if (dtype.code == kDLFloat && dtype.bits == 16) return 8.0 / 2048;
  if (dtype.code == kDLBfloat) return 8.0 / 256;
  return fp32;
}

}  // namespace cudatest
