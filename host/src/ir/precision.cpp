#include "ir/precision.hpp"

#include <switchyard/half.hpp>

namespace switchyard::ir {
namespace {

constexpr DLDataType kF32{kDLFloat, 32, 1};
// c10::ScalarType's numbers, as TorchScript and torch.export record dtype arguments.
constexpr int64_t kHalfCode = 5, kFloatCode = 6, kBFloat16Code = 15;

bool half_constant(const Value& v) {
  return v.kind == ValueKind::Constant && v.constant.defined() && is_half(v.constant.dtype());
}

// The dtype arguments of one node that name a half dtype, now float32.
size_t upcast_dtype_arguments(Node& node) {
  size_t changed = 0;
  for (auto& [name, a] : node.attrs) {
    if (name == "dtype" && a.kind == AttrKind::Int && !a.bound() && (a.i == kHalfCode || a.i == kBFloat16Code)) {
      a.i = kFloatCode;
      ++changed;
    } else if (name == "dtype" && a.kind == AttrKind::String && (a.s == "float16" || a.s == "bfloat16")) {
      a.s = "float32";  // sym::tensor's
      ++changed;
    } else if (a.kind == AttrKind::Tensor && a.tensor.defined() && is_half(a.tensor.dtype())) {
      a.tensor = to_float32(a.tensor);
    }
  }
  return changed;
}

}  // namespace

Tensor to_float32(const Tensor& t) {
  Tensor out = Tensor::uninitialized(kF32, t.shape());
  const Tensor src = t.contiguous();
  const auto* in = static_cast<const uint16_t*>(src.raw_data());
  float* y = out.data<float>();
  const bool bf16 = t.dtype().code == kDLBfloat;
  for (int64_t i = 0; i < src.numel(); ++i) y[i] = bf16 ? bfloat16_to_float(in[i]) : half_to_float(in[i]);
  return out;
}

bool is_half(DLDataType d) { return d.bits == 16 && d.lanes == 1 && (d.code == kDLFloat || d.code == kDLBfloat); }

bool has_half_weights(const Graph& graph) {
  for (const Value& v : graph.values)
    if (half_constant(v)) return true;
  return false;
}

DLDataType half_dtype_of(const Graph& graph) {
  DLDataType found{0, 0, 0};
  for (const Value& v : graph.values) {
    const bool input = v.kind == ValueKind::Input && v.type == ValueType::Tensor && is_half(v.dtype);
    if (!input && !half_constant(v)) continue;
    const DLDataType d = input ? v.dtype : v.constant.dtype();
    if (found.lanes == 0 || d.code == kDLFloat) found = d;
  }
  return found;
}

Float32Upcast compute_in_float32(Graph& graph) {
  Float32Upcast report;
  for (Value& v : graph.values)
    if (half_constant(v)) {
      v.constant = to_float32(v.constant);
      v.dtype = kF32;
      ++report.constants;
      report.constant_bytes += v.constant.nbytes();
    }
  for (Node& node : graph.nodes) report.dtype_arguments += upcast_dtype_arguments(node);
  const std::vector<ValueId> inputs = graph.inputs;
  for (ValueId in : inputs) {
    const Value& value = graph.values[static_cast<size_t>(in)];
    if (value.type != ValueType::Tensor || !is_half(value.dtype)) continue;
    const std::string name = value.name;
    const size_t readers_end = graph.nodes.size();
    const int32_t cast = graph.add_node(name + ".to_float32", "aten::to", {in}, {name + ".to_float32"},
                                        {{"dtype", Attribute::of_int(kFloatCode)},
                                         {"non_blocking", Attribute::of_int(0)},
                                         {"copy", Attribute::of_int(0)}});
    const ValueId converted = graph.nodes[static_cast<size_t>(cast)].outputs[0];
    for (size_t n = 0; n < readers_end; ++n)
      for (ValueId& v : graph.nodes[n].inputs)
        if (v == in) v = converted;
    for (ValueId& v : graph.outputs)
      if (v == in) v = converted;
    report.inputs.push_back(name);
  }
  return report;
}

}  // namespace switchyard::ir
