// attention plugin: a node's arguments by ATen schema name, and tensor checks.
//
// The argument convention is the aten plugin's: tensor arguments are inputs in schema
// order (an absent optional one is a NULL entry or left off the end), or a constant
// tensor attribute named like the argument (then it takes no input slot); every other
// argument is an attribute named as in the schema.
#pragma once

#include "flash_attention.hpp"

#include <switchyard/plugin.hpp>

#include <string>
#include <vector>

namespace sy_attention {

using Shape = std::vector<int64_t>;
std::string str(const Shape& s);  // "[2, 3]"

class TensorArgs {
 public:
  TensorArgs() = default;
  // `tensors`: the schema's tensor arguments in order; `others`: its other arguments.
  // Throws sy::Unsupported for surplus inputs or an attribute the schema doesn't name.
  TensorArgs(const sy::Node& n, std::vector<std::string> tensors, const std::vector<std::string>& others);

  // Argument i for one call's inputs; NULL when absent.
  const DLTensor* get(size_t i, const DLTensor* const* inputs, size_t num_inputs) const;
  // Every argument for one call's inputs, in schema order.
  std::vector<const DLTensor*> all(const DLTensor* const* inputs, size_t num_inputs) const;
  std::vector<const DLTensor*> all(const sy::Node& n) const { return all(n.inputs, n.num_inputs); }
  std::vector<const DLTensor*> all(const sy::Run& r) const { return all(r.args->inputs, r.num_inputs()); }
  std::vector<const DLTensor*> all(const sy::Infer& f) const { return all(f.args->inputs, f.num_inputs()); }
  const std::string& name(size_t i) const { return names_[i]; }

 private:
  std::vector<std::string> names_;
  std::vector<int> slot_;  // input index, or kFromAttr / kAbsent
  std::vector<const DLTensor*> attr_;
  size_t num_inputs_ = 0;
};

bool is_f32(const DLTensor& t);
bool is_bool(const DLTensor& t);
// Throw sy::Unsupported naming the argument unless the tensor is float32 / on the CPU.
void require_f32(const DLTensor& t, const std::string& name);
void require_cpu(const DLTensor& t, const std::string& name);

using sy::shape_of;
using sy::strides_of;  // element strides, filled in when NULL (compact)
// numpy broadcasting of two shapes; throws sy::Unsupported naming `what`.
Shape broadcast(const Shape& a, const Shape& b, const std::string& what);
// Strides of t's first (ndim - tail) dims, right-aligned to `lead`: 0 where t has no such
// dim or has size 1 there (broadcast).
std::vector<int64_t> lead_strides(const DLTensor& t, int tail, const Shape& lead);
// Strides over `lead` + [rows, cols] of a tensor of at most that rank (broadcast dims 0).
void strides_over(const DLTensor& t, const Shape& lead, std::vector<int64_t>* lead_out, int64_t* row, int64_t* col);

// Runs f; a capability answer (sy::Unsupported) found only at run time is a plain error.
template <typename F>
auto at_run(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const sy::Unsupported& e) {
    throw sy::Error(e.what());
  }
}

// Output i of a host-allocated call, as a contiguous float32 buffer.
float* output_f32(const sy::Run& r, size_t i);

}  // namespace sy_attention
