// What the case generators (cases_<family>.cpp) share: seeded random tensors, strided and
// transposed layouts, attribute shorthands and 16-bit float conversion.
#pragma once

#include <switchyard/conformance.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::conformance {

// Deterministic random data: each generator seeds its own Rng.
class Rng {
 public:
  explicit Rng(uint32_t seed = 1) : engine_(seed) {}
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }
  int64_t integer(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(engine_); }

 private:
  std::mt19937 engine_;
};

// A contiguous tensor of `dtype` with values uniform in [lo, hi) (integers: rounded;
// bool: random 0/1).
Tensor random_tensor(Rng& rng, DLDataType dtype, std::vector<int64_t> shape, double lo = -1.0, double hi = 1.0);
// The same values seen through non-contiguous strides: a tensor with the last two
// dimensions swapped in memory, viewed back as `shape` (needs at least 2 dims).
Tensor transposed_layout(const Tensor& t);
// A view of every other element along dim 0 of a twice-as-large buffer.
Tensor strided_rows(Rng& rng, DLDataType dtype, std::vector<int64_t> shape);

inline Attribute ints(std::vector<int64_t> v) { return Attribute(std::move(v)); }
inline Attribute integer(int64_t v) { return Attribute(v); }
inline Attribute number(double v) { return Attribute(v); }
inline Attribute text(std::string v) { return Attribute(std::move(v)); }
inline Attribute none() { return Attribute(); }
// The attribute `name` of `attrs`, or nullptr.
const Attribute* find_attr(const Attributes& attrs, const std::string& name);

// 16-bit floats as bits: IEEE half (kDLFloat, 16) and bfloat16 (kDLBfloat, 16).
uint16_t to_half_bits(float v);
float from_half_bits(uint16_t bits);
uint16_t to_bfloat16_bits(float v);
float from_bfloat16_bits(uint16_t bits);

inline bool is_f32(DLDataType t) { return t.code == kDLFloat && t.bits == 32 && t.lanes == 1; }

}  // namespace switchyard::conformance
