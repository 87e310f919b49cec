// conv plugin: the activations a convolution can absorb as oneDNN eltwise post-ops.
// One line per consumer op; its attributes arrive prefixed with "post." ("post2." when it
// follows a fused add: the fusion convention, sdk.h).
#include "conv_common.hpp"

namespace syconv {
namespace {

using alg = dnnl::algorithm;

double post_f(const sy::Attrs& a, const std::string& prefix, const char* name, double fallback) {
  return a.f((prefix + name).c_str(), fallback);
}

void relu(const sy::Attrs&, const std::string&, dnnl::post_ops& ops) {
  ops.append_eltwise(1.f, alg::eltwise_relu, 0.f, 0.f);
}

void leaky_relu(const sy::Attrs& a, const std::string& prefix, dnnl::post_ops& ops) {
  ops.append_eltwise(1.f, alg::eltwise_relu, static_cast<float>(post_f(a, prefix, "negative_slope", 0.01)), 0.f);
}

void hardtanh(const sy::Attrs& a, const std::string& prefix, dnnl::post_ops& ops) {
  double lo = post_f(a, prefix, "min_val", -1.0), hi = post_f(a, prefix, "max_val", 1.0);
  if (lo > hi) throw sy::Unsupported("hardtanh with min_val > max_val");
  ops.append_eltwise(1.f, alg::eltwise_clip, static_cast<float>(lo), static_cast<float>(hi));
}

void relu6(const sy::Attrs&, const std::string&, dnnl::post_ops& ops) {
  ops.append_eltwise(1.f, alg::eltwise_clip, 0.f, 6.f);
}

// oneDNN 2.6's hardswish is x * relu6(x + 3) / 6, ATen's definition.
void hardswish(const sy::Attrs&, const std::string&, dnnl::post_ops& ops) {
  ops.append_eltwise(1.f, alg::eltwise_hardswish, 0.f, 0.f);
}

// oneDNN 2.6 has no hardsigmoid: relu6(x + 3) / 6 == clip(x / 6 + 1/2, 0, 1).
void hardsigmoid(const sy::Attrs&, const std::string&, dnnl::post_ops& ops) {
  ops.append_eltwise(1.f, alg::eltwise_linear, 1.f / 6.f, 0.5f);
  ops.append_eltwise(1.f, alg::eltwise_clip, 0.f, 1.f);
}

void silu(const sy::Attrs&, const std::string&, dnnl::post_ops& ops) {
  ops.append_eltwise(1.f, alg::eltwise_swish, 1.f, 0.f);
}

void gelu(const sy::Attrs& a, const std::string& prefix, dnnl::post_ops& ops) {
  std::string approximate = a.s((prefix + "approximate").c_str(), "none");
  if (approximate == "none") {
    ops.append_eltwise(1.f, alg::eltwise_gelu_erf, 0.f, 0.f);
  } else if (approximate == "tanh") {
    ops.append_eltwise(1.f, alg::eltwise_gelu_tanh, 0.f, 0.f);
  } else {
    throw sy::Unsupported("gelu approximate='" + approximate + "' (expected 'none' or 'tanh')");
  }
}

void sigmoid(const sy::Attrs&, const std::string&, dnnl::post_ops& ops) {
  ops.append_eltwise(1.f, alg::eltwise_logistic, 0.f, 0.f);
}

void tanh(const sy::Attrs&, const std::string&, dnnl::post_ops& ops) {
  ops.append_eltwise(1.f, alg::eltwise_tanh, 0.f, 0.f);
}

}  // namespace

const std::vector<Consumer>& consumers() {
  static const std::vector<Consumer> table = {
      {"aten::relu", {}, relu, false},
      {"aten::leaky_relu", {"negative_slope"}, leaky_relu},
      {"aten::hardtanh", {"min_val", "max_val"}, hardtanh, false},
      {"aten::relu6", {}, relu6, false},
      {"aten::hardswish", {}, hardswish},
      {"aten::hardsigmoid", {}, hardsigmoid, false},
      {"aten::silu", {}, silu},
      {"aten::gelu", {"approximate"}, gelu},
      {"aten::sigmoid", {}, sigmoid},
      {"aten::tanh", {}, tanh},
  };
  return table;
}

}  // namespace syconv
