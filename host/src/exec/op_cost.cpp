#include "exec/op_cost.hpp"

#include <switchyard/tensor.hpp>

namespace switchyard::exec {
namespace {

double numel(const TensorShape& t) {
  if (!t.defined) return 0;
  double n = 1;
  for (int64_t d : t.shape) n *= static_cast<double>(d);
  return n;
}

double last_dim(const TensorShape& t) { return static_cast<double>(t.shape.back()); }

// FLOPs of a matmul-like op, -1 when the op is not one (or its shapes say too little).
double matmul_like_flops(const std::string& op, const std::vector<TensorShape>& in,
                         const std::vector<TensorShape>& out) {
  if (out.empty() || !out[0].defined || in.empty() || !in[0].defined || in[0].shape.empty()) return -1;
  if (op == "aten::linear" || op == "aten::matmul" || op == "aten::mm" || op == "aten::bmm" || op == "aten::addmm") {
    if (op == "aten::addmm" && in.size() > 1 && in[1].defined && !in[1].shape.empty())
      return 2.0 * numel(out[0]) * last_dim(in[1]);
    return 2.0 * numel(out[0]) * last_dim(in[0]);
  }
  if (op == "aten::_convolution" || op == "aten::conv2d" || op == "aten::conv1d" || op == "aten::convolution") {
    if (in.size() < 2 || !in[1].defined || in[1].shape.empty()) return -1;
    // Per output element: one multiply-add per weight of its output channel.
    return 2.0 * numel(out[0]) * numel(in[1]) / static_cast<double>(in[1].shape[0]);
  }
  if (op == "aten::scaled_dot_product_attention" && in.size() >= 3 && in[1].defined && in[1].shape.size() >= 2) {
    const double s = static_cast<double>(in[1].shape[in[1].shape.size() - 2]);  // key length
    return 2.0 * numel(in[0]) * s + 2.0 * numel(out[0]) * s;                    // QK^T, then PV
  }
  return -1;
}

}  // namespace

OpCost estimate_op_cost(const std::string& op, const std::vector<TensorShape>& inputs,
                        const std::vector<TensorShape>& outputs) {
  OpCost c;
  for (const auto* list : {&inputs, &outputs})
    for (const TensorShape& t : *list)
      if (t.defined) c.bytes += numel(t) * static_cast<double>(dtype_size(t.dtype));
  const size_t plus = op.find('+');
  const double main = matmul_like_flops(op.substr(0, plus), inputs, outputs);
  double out_elems = 0;
  for (const TensorShape& t : outputs) out_elems += numel(t);
  c.flops = main >= 0 ? main : out_elems;
  for (size_t p = plus; p != std::string::npos; p = op.find('+', p + 1)) c.flops += out_elems;  // fused epilogues
  return c;
}

}  // namespace switchyard::exec
