// Header-only C++ helpers for plugins: the attributes of ATen's convolution ops (conv1d,
// conv2d, convolution, _convolution), read and checked once for every plugin that runs
// them. Not part of the C ABI.
#ifndef SWITCHYARD_CONV_ATTRIBUTES_HPP
#define SWITCHYARD_CONV_ATTRIBUTES_HPP

#include <switchyard/plugin.hpp>
#include <switchyard/shapes.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sy {

// One convolution node's attributes, as ATen's op spelt them.
struct ConvAttributes {
  std::string op;                                  // "aten::conv2d", ...
  int spatial = 0;                                 // 1 or 2 (conv1d, conv2d); 0: the weight's rank says
  bool unbatched_ok = false;                       // conv1d and conv2d take an input without a batch dim
  std::string pad_mode;                            // "", "same" or "valid" (conv1d, conv2d)
  std::vector<int64_t> stride, padding, dilation;  // empty: absent (ATen's defaults apply)
  int64_t groups = 1;
};

namespace detail {
struct ConvOpSpec {
  const char* op;
  int spatial;    // 0: from the weight's rank
  bool defaults;  // stride, padding, dilation and groups may be absent
  std::vector<std::string> attrs;
};

inline const ConvOpSpec* conv_op_spec(const std::string& op) {
  // benchmark, deterministic, cudnn_enabled and allow_tf32 are ATen's hints; a plugin may
  // read them (or a config option) but the result does not depend on them.
  static const std::vector<ConvOpSpec> table = {
      {"aten::conv1d", 1, true, {"stride", "padding", "dilation", "groups"}},
      {"aten::conv2d", 2, true, {"stride", "padding", "dilation", "groups"}},
      {"aten::convolution", 0, false, {"stride", "padding", "dilation", "transposed", "output_padding", "groups"}},
      {"aten::_convolution",
       0,
       false,
       {"stride", "padding", "dilation", "transposed", "output_padding", "groups", "benchmark", "deterministic",
        "cudnn_enabled", "allow_tf32"}},
  };
  for (const ConvOpSpec& s : table)
    if (op == s.op) return &s;
  return nullptr;
}
}  // namespace detail

// The non-tensor attributes convolution op `op` may carry (stride, padding, ...); empty for
// an op that is no convolution.
inline const std::vector<std::string>& conv_attribute_names(const std::string& op) {
  static const std::vector<std::string> none;
  const detail::ConvOpSpec* spec = detail::conv_op_spec(op);
  return spec != nullptr ? spec->attrs : none;
}

// Reads and checks `op`'s attributes. Throws sy::Unsupported naming what a plugin cannot
// run from them: an op that is no convolution, a missing attribute where ATen has no
// default, a transposed convolution, a padding string other than "same" or "valid", or
// a non-positive stride, dilation or groups.
inline ConvAttributes conv_attributes(const std::string& op, const Attrs& a) {
  const detail::ConvOpSpec* spec = detail::conv_op_spec(op);
  if (spec == nullptr) throw Unsupported("no convolution op " + op);
  ConvAttributes c;
  c.op = op;
  c.spatial = spec->spatial;
  c.unbatched_ok = spec->spatial != 0;
  if (a.kind("padding") == SY_ATTR_STRING) {
    if (!c.unbatched_ok) throw Unsupported(op + " takes no padding string");
    c.pad_mode = a.s("padding");
    if (c.pad_mode != "same" && c.pad_mode != "valid")
      throw Unsupported("padding='" + c.pad_mode + "' (expected 'same', 'valid' or ints)");
  }
  auto list = [&](const char* name, std::vector<int64_t>* out) {
    if (a.has(name)) {
      if (a.kind(name) != SY_ATTR_INT && a.kind(name) != SY_ATTR_INTS)
        throw Unsupported(std::string("attribute '") + name + "' is not an int list");
      *out = a.ints(name);
    } else if (!spec->defaults) {
      throw Unsupported(std::string("attribute '") + name + "' is missing");
    }
  };
  list("stride", &c.stride);
  if (c.pad_mode.empty()) list("padding", &c.padding);
  list("dilation", &c.dilation);
  if (!a.has("groups") && !spec->defaults) throw Unsupported("attribute 'groups' is missing");
  c.groups = a.i("groups", 1);
  if (c.groups < 1) throw Unsupported("groups must be positive, got " + std::to_string(c.groups));
  if (a.i("transposed", 0) != 0) throw Unsupported("transposed convolution is not supported");
  if (a.has("output_padding")) {
    std::vector<int64_t> output_padding;
    list("output_padding", &output_padding);
    for (int64_t v : output_padding)
      if (v != 0) throw Unsupported("output_padding is only meaningful for transposed convolution");
  }
  for (int64_t v : c.stride)
    if (v < 1) throw Unsupported("stride must be positive, got " + shape_string(c.stride));
  for (int64_t v : c.dilation)
    if (v < 1) throw Unsupported("dilation must be positive, got " + shape_string(c.dilation));
  for (int64_t v : c.padding)
    if (v < 0) throw Unsupported("padding must not be negative, got " + shape_string(c.padding));
  return c;
}

}  // namespace sy

#endif  // SWITCHYARD_CONV_ATTRIBUTES_HPP
