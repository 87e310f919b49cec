// cuda plugin: convolution and pooling arguments and geometry (conv_plan.hpp).
#include "conv_plan.hpp"
#include <switchyard/conv_attributes.hpp>
#include <switchyard/shapes.hpp>

#include <algorithm>

namespace sycuda {

namespace {

std::string str(const Shape& s) { return sy::shape_string(s); }

Shape int_list(const sy::Attrs& a, const char* name) {
  const SY_AttrKind k = a.kind(name);
  if (k != SY_ATTR_INT && k != SY_ATTR_INTS)
    throw sy::Unsupported(std::string("attribute '") + name + "' is not an int list");
  return a.ints(name);
}

Shape expand(const Shape& v, size_t n, int64_t fallback, const char* what) {
  if (v.empty()) return Shape(n, fallback);
  if (v.size() == 1) return Shape(n, v[0]);
  if (v.size() != n)
    throw sy::Error(std::string(what) + " " + str(v) + " does not fit " + std::to_string(n) + " spatial dimensions");
  return v;
}

}  // namespace

ConvParams parse_conv(const std::string& op, const sy::Attrs& a) {
  const sy::ConvAttributes c = sy::conv_attributes(op, a);
  ConvParams p;
  p.producer = op;
  p.spatial = c.spatial;
  p.unbatched_ok = c.unbatched_ok;
  p.pad_mode = c.pad_mode;
  p.stride = c.stride;
  p.padding = c.padding;
  p.dilation = c.dilation;
  p.groups = c.groups;
  return p;
}

ConvGeometry conv_geometry(const ConvParams& p, const Shape& x, const Shape& w, const Shape* bias) {
  const int sp = p.spatial != 0 ? p.spatial : static_cast<int>(w.size()) - 2;
  if (sp == 3) throw sy::Unsupported("3-D convolution is not implemented on the cuda plugin");
  if (sp < 1 || sp > 2) throw sy::Error("weight has " + std::to_string(w.size()) + " dimensions (expected 3 or 4)");
  if (static_cast<int>(w.size()) != sp + 2)
    throw sy::Error("weight has " + std::to_string(w.size()) + " dimensions, expected " + std::to_string(sp + 2));
  const bool unbatched = p.unbatched_ok && static_cast<int>(x.size()) == sp + 1;
  if (static_cast<int>(x.size()) != sp + 2 && !unbatched)
    throw sy::Error("input " + str(x) + " has " + std::to_string(x.size()) + " dimensions, expected " +
                    std::to_string(sp + 2) + (p.unbatched_ok ? " (or " + std::to_string(sp + 1) + " unbatched)" : ""));
  const Shape stride = expand(p.stride, sp, 1, "stride"), dilation = expand(p.dilation, sp, 1, "dilation");
  Shape pad = expand(p.padding, sp, 0, "padding");
  ConvGeometry g;
  const size_t b = unbatched ? 0 : 1;  // where the channel dim is
  g.n = unbatched ? 1 : x[0];
  g.c = x[b];
  g.h = sp == 2 ? x[b + 1] : 1;
  g.w = x[b + sp];
  g.k = w[0];
  g.r = sp == 2 ? w[2] : 1;
  g.s = w[1 + sp];
  g.groups = p.groups;
  if (g.k < 1 || w[1] < 1) throw sy::Error("weight " + str(w) + " is empty");
  if (g.k % g.groups != 0)
    throw sy::Error("out_channels " + std::to_string(g.k) + " is not divisible by groups " + std::to_string(g.groups));
  if (g.c != w[1] * g.groups)
    throw sy::Error("input " + str(x) + " has " + std::to_string(g.c) + " channels; weight " + str(w) +
                    " with groups=" + std::to_string(g.groups) + " expects " + std::to_string(w[1] * g.groups));
  if (bias != nullptr && (bias->size() != 1 || (*bias)[0] != g.k))
    throw sy::Error("bias " + str(*bias) + " does not match out_channels " + std::to_string(g.k));
  if (p.pad_mode == "same") {
    for (int d = 0; d < sp; ++d) {
      if (stride[d] != 1) throw sy::Error("padding='same' needs stride 1, got " + str(stride));
      const int64_t total = dilation[d] * (w[2 + d] - 1);
      if (total % 2 != 0)
        throw sy::Unsupported("padding='same' with an even kernel pads unevenly, which cuDNN's API cannot express");
      pad[d] = total / 2;
    }
  }
  g.pad_w = pad[sp - 1], g.stride_w = stride[sp - 1], g.dil_w = dilation[sp - 1];
  if (sp == 2) g.pad_h = pad[0], g.stride_h = stride[0], g.dil_h = dilation[0];
  auto out_size = [&](int64_t in, int64_t k, int64_t pd, int64_t st, int64_t dl, const char* dim) {
    const int64_t span = dl * (k - 1) + 1;
    if (in < 1) throw sy::Error("input " + str(x) + " is empty in its " + dim);
    if (in + 2 * pd < span)
      throw sy::Error("input " + str(x) + " (padded) is smaller than the kernel " + str(w) + " with dilation " +
                      str(dilation));
    return (in + 2 * pd - span) / st + 1;
  };
  g.oh = out_size(g.h, g.r, g.pad_h, g.stride_h, g.dil_h, "height");
  g.ow = out_size(g.w, g.s, g.pad_w, g.stride_w, g.dil_w, "width");
  if (!unbatched) g.out_shape.push_back(g.n);
  g.out_shape.push_back(g.k);
  if (sp == 2) g.out_shape.push_back(g.oh);
  g.out_shape.push_back(g.ow);
  return g;
}

// ---- pooling -------------------------------------------------------------------------------------

const std::vector<std::string>& pool_attribute_names(bool max) {
  static const std::vector<std::string> max_names = {"self",    "kernel_size", "stride",
                                                     "padding", "dilation",    "ceil_mode"};
  static const std::vector<std::string> avg_names = {"self",      "kernel_size",       "stride",          "padding",
                                                     "ceil_mode", "count_include_pad", "divisor_override"};
  return max ? max_names : avg_names;
}

PoolParams parse_pool(bool max, const sy::Attrs& a) {
  PoolParams p;
  p.max = max;
  auto two = [&](const char* name, const Shape& fallback) {
    if (!a.has(name)) {
      if (fallback.empty()) throw sy::Unsupported(std::string("attribute '") + name + "' is missing");
      return fallback;
    }
    Shape v = int_list(a, name);
    if (v.size() == 1) v.push_back(v[0]);
    if (v.size() != 2)
      throw sy::Unsupported(std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
                            " values, expected 2");
    return v;
  };
  p.kernel = two("kernel_size", {});
  // An empty stride means "the kernel size" in ATen.
  const bool no_stride = !a.has("stride") || (a.kind("stride") == SY_ATTR_INTS && a.ints("stride").empty());
  p.stride = no_stride ? p.kernel : two("stride", {});
  p.padding = two("padding", {0, 0});
  p.dilation = max ? two("dilation", {1, 1}) : Shape{1, 1};
  for (int d = 0; d < 2; ++d) {
    if (p.kernel[d] < 1 || p.stride[d] < 1) throw sy::Unsupported("kernel_size and stride must be positive");
    if (p.padding[d] < 0 || p.padding[d] > p.kernel[d] / 2)
      throw sy::Unsupported("padding " + str(p.padding) + " must be between 0 and half the kernel size " +
                            str(p.kernel));
    if (p.dilation[d] != 1)
      throw sy::Unsupported("pooling with dilation " + str(p.dilation) + " (cuDNN pools without dilation)");
  }
  p.ceil_mode = a.has("ceil_mode") && a.i("ceil_mode") != 0;
  if (!max) {
    p.count_include_pad = !a.has("count_include_pad") || a.i("count_include_pad") != 0;
    if (a.has("divisor_override")) throw sy::Unsupported("avg_pool2d with divisor_override is not implemented");
  }
  return p;
}

PoolGeometry pool_geometry(const PoolParams& p, const Shape& x) {
  if (x.size() != 3 && x.size() != 4)
    throw sy::Error("input " + str(x) + " has " + std::to_string(x.size()) +
                    " dimensions, expected 4 (or 3 unbatched)");
  PoolGeometry g;
  const size_t b = x.size() == 4 ? 1 : 0;
  g.n = b ? x[0] : 1;
  g.c = x[b];
  g.h = x[b + 1];
  g.w = x[b + 2];
  if (g.c < 1 || g.h < 1 || g.w < 1) throw sy::Error("input " + str(x) + " has an empty channel or spatial dimension");
  auto out_size = [&](int64_t in, int d) {
    const int64_t k = p.kernel[d], s = p.stride[d], pad = p.padding[d];
    const int64_t floor_out = (in + 2 * pad - k) / s + 1;
    if (in + 2 * pad < k || floor_out < 1)
      throw sy::Error("input " + str(x) + " is too small for kernel " + str(p.kernel) + " with padding " +
                      str(p.padding));
    if (!p.ceil_mode) return floor_out;
    // ATen's ceil mode: one more window if it starts inside the input or its left padding.
    int64_t out = (in + 2 * pad - k + s - 1) / s + 1;
    if ((out - 1) * s >= in + pad) --out;
    if (out != floor_out)
      throw sy::Unsupported("ceil_mode=True adds a window here, which cuDNN's pooling (floor division) does not");
    return out;
  };
  g.oh = out_size(g.h, 0);
  g.ow = out_size(g.w, 1);
  if (b) g.out_shape.push_back(g.n);
  g.out_shape.insert(g.out_shape.end(), {g.c, g.oh, g.ow});
  return g;
}

}  // namespace sycuda
