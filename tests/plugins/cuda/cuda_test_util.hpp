// Helpers for the cuda plugin's tests: the GPU check that decides whether GPU tests run
// (they skip, naming the missing GPU, where the plugin declines for want of one), configs,
// single-node and chained graphs, random tensors in float32/float16/bfloat16, host
// references' comparison with a tolerance scaled by the reference's magnitude.
#pragma once

#include "../../host/exec/exec_test_util.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace cudatest {

using switchyard::Tensor;
using Shape = std::vector<int64_t>;
namespace ir = switchyard::ir;

inline constexpr DLDataType kF32{kDLFloat, 32, 1};
inline constexpr DLDataType kF16{kDLFloat, 16, 1};
inline constexpr DLDataType kBF16{kDLBfloat, 16, 1};
inline constexpr DLDataType kF64{kDLFloat, 64, 1};
inline constexpr DLDataType kI64{kDLInt, 64, 1};
inline constexpr DLDataType kBool{6, 8, 1};

// ---- configs and the GPU check ---------------------------------------------------------------

// Only the cuda plugin, strict: a node it declines fails the plan instead of falling back.
inline std::string cuda_only_config(const std::string& options = "") {
  return sytest::write_config("cuda_only",
                              "[plugins]\nload = [\"cuda\"]\n[selection]\ndefault = [\"cuda\"]\nstrict = true\n"
                              "fuse = false\n" +
                                  options);
}

inline switchyard::Runtime& cuda_runtime() {
  static std::unique_ptr<switchyard::Runtime> rt =
      std::make_unique<switchyard::Runtime>(switchyard::Options{cuda_only_config()});
  return *rt;
}

// Whether the plugin found a usable GPU, and if not, the reason it gives every node.
struct GpuState {
  bool usable = false;
  std::string reason;
};
const GpuState& gpu();

#define REQUIRE_GPU()                                                                                               \
  do {                                                                                                              \
    if (!::cudatest::gpu().usable)                                                                                  \
      GTEST_SKIP() << "missing resource: needs a CUDA GPU, and the cuda plugin says: " << ::cudatest::gpu().reason; \
  } while (0)

// True when the cuda plugin lists a kernel for `op` (cuDNN's ops depend on the build).
bool has_cuda_op(const std::string& op);

// ---- tensors -------------------------------------------------------------------------------------

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

// Element i of a float tensor (float32/float16/bfloat16/float64) or integer/bool tensor, as double.
double at(const Tensor& t, int64_t i);
// Float values in [lo, hi) stored in `dtype` (rounded to it).
Tensor random(Shape shape, uint32_t seed, DLDataType dtype = kF32, double lo = -1, double hi = 1);
Tensor ints(Shape shape, std::vector<int64_t> values, DLDataType dtype = kI64);
Tensor bools(Shape shape, std::vector<int> values);
Tensor scalar_f64(double v);  // a 0-dim float64 tensor (as traced Python scalars are)
// The values of t rounded as `dtype` stores them, back as doubles (references see what the GPU sees).
std::vector<double> values_of(const Tensor& t);

// ---- graphs --------------------------------------------------------------------------------------

struct Arg {
  std::optional<Tensor> t;  // nullopt: an absent optional input
  bool constant = false;
};
inline Arg in(Tensor t) { return {std::move(t), false}; }
inline Arg weight(Tensor t) { return {std::move(t), true}; }
inline Arg absent() { return {}; }

struct Step {
  std::string op;
  ir::Attributes attrs;
  std::vector<Arg> extra;  // inputs after the previous step's output (chains)
  size_t outputs = 1;
};

struct Built {
  ir::Graph graph;
  std::vector<Tensor> feeds;
};

// Node 0 takes `args`; each later node the previous node's first output, then its `extra`.
// Graph outputs: every output of the last node.
Built chain(const std::vector<Step>& steps, const std::vector<Arg>& args);

// Runs the chain on the cuda plugin alone (strict), checking the plan put every node there.
std::vector<Tensor> run_cuda(const std::vector<Step>& steps, const std::vector<Arg>& args,
                             switchyard::Runtime* rt = nullptr);
// The error planning or running it on the cuda plugin alone gives ("" if none).
std::string cuda_error(const std::vector<Step>& steps, const std::vector<Arg>& args);

inline ir::Attribute i64(int64_t v) { return ir::Attribute::of_int(v); }
inline ir::Attribute f64(double v) { return ir::Attribute::of_float(v); }
inline ir::Attribute list(std::vector<int64_t> v) { return ir::Attribute::of_ints(std::move(v)); }
inline ir::Attribute text(std::string s) { return ir::Attribute::of_string(std::move(s)); }

// ---- comparison ----------------------------------------------------------------------------------

// |got - ref| <= tol * max(1, max|ref|) element-wise, same shape; NaN where ref is NaN, equal
// infinities; and a reference that is not all zeros (a test that cannot fail is no test).
void expect_close(const Tensor& got, const std::vector<double>& ref, const Shape& ref_shape, double tol,
                  const std::string& what);
// The tolerance for results of dtype `dtype`: `fp32` for float32, a few roundings for the half types.
double tolerance(DLDataType dtype, double fp32 = 1e-5);

}  // namespace cudatest
