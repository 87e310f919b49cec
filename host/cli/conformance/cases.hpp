// The conformance kit's generated cases: for each op, a generator that makes the inputs
// and attributes of small single-node graphs at one dtype. `switchyard check-plugin`
// runs every kernel a plugin exports on its op's cases and compares with the aten
// reference plugin. Each op family adds its generators in its own cases_<family>.cpp.
#pragma once

#include "ir/graph.hpp"

#include <switchyard/tensor.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::conformance {

struct Case {
  std::string label;                            // what is special, e.g. "transposed B"
  std::vector<std::optional<Tensor>> inputs;    // nullopt: an absent optional input
  std::vector<bool> constant;                   // (optional) input i is a graph constant
  std::vector<std::pair<std::string, ir::Attribute>> attrs;
  size_t num_outputs = 1;
  // Fused ops "A+B" only: how many of `inputs` are A's (the rest follow B's first input).
  // 0 = all of them (B is unary).
  size_t producer_inputs = 0;
  // An output passes when |got - ref| <= atol + rtol * |ref| for every element.
  double atol = 1e-5, rtol = 1e-4;
};

// Cases for one op at one dtype; empty when the op has no case at that dtype.
using CaseGenerator = std::function<std::vector<Case>(DLDataType dtype)>;

class CaseTable {
 public:
  void add(const std::string& op, CaseGenerator generator) { generators_[op] = std::move(generator); }
  const CaseGenerator* find(const std::string& op) const {
    auto it = generators_.find(op);
    return it == generators_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> ops() const {
    std::vector<std::string> names;
    for (const auto& [op, g] : generators_) names.push_back(op);
    return names;
  }

 private:
  std::map<std::string, CaseGenerator> generators_;
};

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

inline ir::Attribute ints(std::vector<int64_t> v) { return ir::Attribute::of_ints(std::move(v)); }
inline ir::Attribute integer(int64_t v) { return ir::Attribute::of_int(v); }
inline ir::Attribute number(double v) { return ir::Attribute::of_float(v); }
inline ir::Attribute text(std::string v) { return ir::Attribute::of_string(std::move(v)); }
inline ir::Attribute none() { return ir::Attribute::none(); }

// 16-bit floats as bits: IEEE half (kDLFloat, 16) and bfloat16 (kDLBfloat, 16).
uint16_t to_half_bits(float v);
float from_half_bits(uint16_t bits);
uint16_t to_bfloat16_bits(float v);
float from_bfloat16_bits(uint16_t bits);

inline bool is_f32(DLDataType t) { return t.code == kDLFloat && t.bits == 32 && t.lanes == 1; }

// One per family file (cases_<family>.cpp); each adds the generators for its ops.
void add_elementwise_cases(CaseTable& table);
void add_linalg_cases(CaseTable& table);
void add_conv_cases(CaseTable& table);
void add_attention_cases(CaseTable& table);
void add_shape_cases(CaseTable& table);

inline CaseTable all_cases() {
  CaseTable table;
  add_elementwise_cases(table);
  add_linalg_cases(table);
  add_conv_cases(table);
  add_attention_cases(table);
  add_shape_cases(table);
  return table;
}

}  // namespace switchyard::conformance
