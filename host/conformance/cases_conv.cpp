// Conformance cases for the conv family's ops (see cases.hpp), float32 only:
//   aten::conv1d, aten::conv2d, aten::convolution, aten::_convolution, each alone, fused
//   with an activation ("<conv>+aten::relu" ... see activations()) and with a residual add
//   ("<conv>+aten::add", "<conv>+aten::add+aten::relu"), a 2-D one with relu and max pooling
//   ("<conv>+aten::relu+aten::max_pool2d", ResNet's stem). Pooling and batch norm:
//   cases_pool_norm.cpp.
// Shapes from the zoo (resnet stem and 3x3/1x1 layers, mobilenet_v3 depthwise and
// squeeze-excite convolutions, the ViT patch embedding, resnet's max pool, global average
// pools) plus odd sizes, asymmetric strides and padding, dilation, groups, padding
// strings, unbatched and empty-batch inputs, weights as constants and as run-time inputs,
// absent bias, and non-contiguous inputs (H/W swapped in memory, every other batch item).
#include "conv_case_makers.hpp"
#include "families.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::conformance {

namespace {

using namespace conv_cases;

// Writes one NaN and one +inf into the first channel of a contiguous [N, C, H, W] float32
// tensor (H, W >= 10), far enough apart that most outputs of a 3x3 convolution see
// neither: a kernel that spreads them (Winograd's tiles) leaves NaNs where ATen does not.
void with_sparse_non_finite(Tensor& t) {
  float* p = t.data<float>();
  const int64_t width = t.shape().back();
  p[2 * width + 2] = std::numeric_limits<float>::quiet_NaN();
  p[8 * width + 9] = std::numeric_limits<float>::infinity();
}

// Writes 2^127 over a 4x4 block of the first image's first channel of a contiguous
// [N, C, H, W] float32 tensor (H, W >= 8). A direct convolution's sums stay finite with
// weights of order 1/sqrt(fan-in); Winograd's input transform would add two of them (inf).
void with_huge_block(Tensor& t) {
  float* p = t.data<float>();
  const int64_t width = t.shape().back();
  for (int64_t r = 4; r < 8; ++r)
    for (int64_t c = 4; c < 8; ++c) p[r * width + c] = std::ldexp(1.f, 127);
}

ConvSpec spec(std::string label, Shape x, Shape w, int64_t stride, int64_t pad, int64_t dil = 1, int64_t groups = 1) {
  const size_t sp = w.size() - 2;
  ConvSpec s;
  s.label = std::move(label);
  s.x = std::move(x);
  s.w = std::move(w);
  s.stride = fill(sp, stride);
  s.padding = fill(sp, pad);
  s.dilation = fill(sp, dil);
  s.groups = groups;
  return s;
}

// The zoo's and the edge cases' convolutions with `sp` spatial dimensions.
std::vector<ConvSpec> conv_specs(size_t sp) {
  std::vector<ConvSpec> v;
  if (sp == 2) {
    v.push_back(spec("resnet stem 7x7 s2 p3", {1, 3, 40, 40}, {16, 3, 7, 7}, 2, 3));
    v.push_back(spec("resnet 3x3 layer", {2, 32, 14, 14}, {32, 32, 3, 3}, 1, 1));
    v.push_back(spec("resnet 3x3 s2 downsample", {1, 16, 15, 15}, {32, 16, 3, 3}, 2, 1));
    v.push_back(spec("resnet50 1x1 bottleneck", {2, 64, 7, 7}, {32, 64, 1, 1}, 1, 0));
    v.push_back(spec("mobilenet depthwise 3x3 s2", {2, 16, 28, 28}, {16, 1, 3, 3}, 2, 1, 1, 16));
    v.push_back(spec("mobilenet depthwise 5x5", {1, 40, 14, 14}, {40, 1, 5, 5}, 1, 2, 1, 40));
    v.push_back(spec("mobilenet squeeze-excite 1x1 on 1x1", {2, 72, 1, 1}, {24, 72, 1, 1}, 1, 0));
    v.push_back(spec("vit patch embedding 16x16 s16", {1, 3, 64, 48}, {24, 3, 16, 16}, 16, 0));
    v.push_back(spec("groups 4", {2, 8, 9, 9}, {12, 2, 3, 3}, 1, 1, 1, 4));
    v.push_back(spec("depthwise multiplier 2", {1, 6, 10, 11}, {12, 1, 3, 3}, 1, 1, 1, 6));
    v.push_back(spec("dilation 2", {1, 4, 15, 13}, {6, 4, 3, 3}, 1, 2, 2));
    // The conv plugin runs it by Winograd on parts of the output channels (winograd.cpp).
    v.push_back(spec("resnet 3x3 layer at 28x28, 128 channels", {1, 128, 28, 28}, {128, 128, 3, 3}, 1, 1));
    ConvSpec odd =
        spec("odd sizes, stride (2, 1), padding (1, 2), dilation (1, 2)", {3, 5, 13, 17}, {7, 5, 3, 5}, 1, 0);
    odd.stride = {2, 1};
    odd.padding = {1, 2};
    odd.dilation = {1, 2};
    v.push_back(odd);
  } else if (sp == 1) {
    v.push_back(spec("3-tap", {2, 8, 33}, {16, 8, 3}, 1, 1));
    v.push_back(spec("strided, padded, dilated", {3, 5, 31}, {7, 5, 4}, 2, 3, 2));
    v.push_back(spec("grouped", {2, 6, 17}, {9, 2, 3}, 1, 1, 1, 3));
    v.push_back(spec("depthwise", {1, 8, 16}, {8, 1, 5}, 1, 2, 1, 8));
  } else {
    v.push_back(spec("3x3x3", {1, 4, 6, 7, 5}, {6, 4, 3, 3, 3}, 1, 1));
    v.push_back(spec("grouped, strided", {2, 4, 7, 6, 6}, {6, 2, 3, 2, 3}, 2, 1, 1, 2));
  }
  ConvSpec base = v.front();
  base.label = v.front().label + ", no bias";
  base.bias = false;
  v.push_back(base);
  base = v[1];
  base.label = v[1].label + ", weights and bias as run-time inputs";
  base.const_weights = false;
  v.push_back(base);
  base = v[1];
  base.label = v[1].label + ", batch 0";
  base.x[0] = 0;
  v.push_back(base);
  if (sp >= 2) {
    base = v[1];
    base.label = v[1].label + ", input with its last two dims swapped in memory";
    base.layout = ConvSpec::kTransposed;
    v.push_back(base);
  }
  base = v[2];
  base.label = v[2].label + ", every other batch item of a larger buffer";
  base.x[0] = 2;
  base.layout = ConvSpec::kStridedBatch;
  v.push_back(base);
  return v;
}

// conv1d / conv2d only: padding strings (with a stride-1 padded spec) and unbatched input.
std::vector<ConvSpec> conv_nd_extras(size_t sp) {
  std::vector<ConvSpec> v;
  const Shape x = sp == 2 ? Shape{2, 4, 9, 10} : Shape{2, 4, 15};
  const Shape w_odd = sp == 2 ? Shape{6, 4, 3, 3} : Shape{6, 4, 3};
  const Shape w_even = sp == 2 ? Shape{5, 4, 4, 2} : Shape{5, 4, 4};
  ConvSpec s = spec("padding='same', odd kernel", x, w_odd, 1, 0);
  s.pad_string = "same";
  v.push_back(s);
  s = spec("padding='same', even kernel, dilation 2 (extra padding at the end)", x, w_even, 1, 0, 2);
  s.pad_string = "same";
  v.push_back(s);
  s = spec("padding='valid', stride 2", x, w_even, 2, 0);
  s.pad_string = "valid";
  v.push_back(s);
  s = spec("unbatched input", Shape(x.begin() + 1, x.end()), w_odd, 1, 1);
  v.push_back(s);
  return v;
}

enum class ConvOp { Conv1d, Conv2d, Convolution, UnderscoreConvolution };

Attributes conv_attrs(ConvOp op, const ConvSpec& s) {
  Attributes a = {{"stride", ints(s.stride)}};
  a.push_back({"padding", s.pad_string.empty() ? ints(s.padding) : text(s.pad_string)});
  a.push_back({"dilation", ints(s.dilation)});
  if (op == ConvOp::Convolution || op == ConvOp::UnderscoreConvolution) {
    a.push_back({"transposed", integer(0)});
    a.push_back({"output_padding", ints(Shape(s.stride.size(), 0))});
  }
  a.push_back({"groups", integer(s.groups)});
  if (op == ConvOp::UnderscoreConvolution)
    for (const char* flag : {"benchmark", "deterministic", "cudnn_enabled", "allow_tf32"})
      a.push_back({flag, integer(flag == std::string("cudnn_enabled") || flag == std::string("allow_tf32"))});
  return a;
}

Case conv_case(Maker& m, ConvOp op, const ConvSpec& s, double lo = -1.0, double hi = 1.0) {
  Case c;
  c.label = s.label;
  int64_t fan_in = 1;
  for (size_t i = 1; i < s.w.size(); ++i) fan_in *= s.w[i];
  const double scale = 1.0 / std::sqrt(static_cast<double>(fan_in));  // outputs of order 1
  c.inputs = {m.input(s.x, s.layout, lo, hi), m.t(s.w, -scale, scale)};
  if (s.bias)
    c.inputs.push_back(m.t({s.w[0]}, -0.5, 0.5));
  else if (op == ConvOp::Convolution || op == ConvOp::UnderscoreConvolution)
    c.inputs.push_back(std::nullopt);
  c.constant = {false, s.const_weights, s.const_weights};
  c.attrs = conv_attrs(op, s);
  return c;
}

// A spec's output shape (ATen's formula), for a residual added to it.
Shape conv_out_shape(const ConvSpec& s) {
  const size_t sp = s.w.size() - 2;
  Shape out;
  if (s.x.size() == sp + 2) out.push_back(s.x[0]);
  out.push_back(s.w[0]);
  for (size_t d = 0; d < sp; ++d) {
    const int64_t in = s.x[s.x.size() - sp + d], span = s.dilation[d] * (s.w[2 + d] - 1) + 1;
    const int64_t pad = s.pad_string == "valid" ? 0 : s.padding[d];
    out.push_back(s.pad_string == "same" ? in : (in + 2 * pad - span) / s.stride[d] + 1);
  }
  return out;
}

// The specs an op accepts: conv1d/conv2d have their own rank (plus padding strings and
// unbatched input); convolution/_convolution take 1-3 spatial dims.
std::vector<std::pair<ConvOp, ConvSpec>> specs_for(ConvOp op) {
  std::vector<std::pair<ConvOp, ConvSpec>> out;
  auto add = [&](const std::vector<ConvSpec>& v) {
    for (const ConvSpec& s : v) out.push_back({op, s});
  };
  if (op == ConvOp::Conv1d || op == ConvOp::Conv2d) {
    const size_t sp = op == ConvOp::Conv1d ? 1 : 2;
    add(conv_specs(sp));
    add(conv_nd_extras(sp));
  } else {
    add(conv_specs(2));
    add(conv_specs(1));
    add(conv_specs(3));
  }
  return out;
}

// Activations the conv plugin fuses, with attribute variants ("post." is added).
struct Activation {
  const char* op;
  std::vector<Attributes> variants;
};
const std::vector<Activation>& activations() {
  static const std::vector<Activation> table = {
      {"aten::relu", {{}}},
      {"aten::leaky_relu", {{}, {{"negative_slope", number(0.2)}}}},
      {"aten::hardtanh", {{}, {{"min_val", number(-0.5)}, {"max_val", integer(2)}}}},
      {"aten::relu6", {{}}},
      {"aten::hardswish", {{}}},
      {"aten::hardsigmoid", {{}}},
      {"aten::silu", {{}}},
      {"aten::gelu", {{}, {{"approximate", text("tanh")}}, {{"approximate", text("none")}}}},
      {"aten::sigmoid", {{}}},
      {"aten::tanh", {{}}},
  };
  return table;
}

// "<conv>+aten::add" and "<conv>+aten::add+aten::relu": conv(x) + alpha * residual (then
// relu), the residual a run-time tensor of the output's shape. Every spec for the add
// (strided and unbatched inputs, batch 0, run-time weights); alpha absent, 1 and -0.5; a
// residual with its last two dims swapped in memory; NaN and infinities in the residual
// and in the input; and a 25.7 MB output (conv2d and the general ops), which the conv
// plugin runs split (plugins/conv/split_epilogue.cpp).
void add_residual_ops(CaseTable& table, const char* name, ConvOp which) {
  for (const bool relu : {false, true}) {
    const std::string op = std::string(name) + "+aten::add" + (relu ? "+aten::relu" : "");
    table.add(op, [which, relu](DLDataType dtype) {
      std::vector<Case> cases;
      if (!is_f32(dtype)) return cases;
      Maker m(relu ? 14 : 13);
      const std::vector<std::pair<ConvOp, ConvSpec>> specs = specs_for(which);
      auto with_residual = [&](const ConvSpec& spec, Attributes alpha, const std::string& note) {
        Case c = conv_case(m, which, spec, -3.0, 3.0);
        c.producer_inputs = c.inputs.size();
        c.inputs.push_back(m.t(conv_out_shape(spec), -2.0, 2.0));
        for (auto& a : alpha) c.attrs.push_back(std::move(a));
        c.label += note;
        return c;
      };
      for (size_t k = 0; k < specs.size(); ++k)
        if (!relu || k < 2) cases.push_back(with_residual(specs[k].second, {}, ""));
      cases.push_back(with_residual(specs[1].second, {{"post.alpha", integer(1)}}, ", alpha 1"));
      cases.push_back(with_residual(specs[1].second, {{"post.alpha", number(-0.5)}}, ", alpha -0.5"));
      if (specs[1].second.x.size() >= 4) {
        Case c = with_residual(specs[1].second, {}, ", residual with its last two dims swapped in memory");
        c.inputs.back() = transposed_layout(*c.inputs.back());
        cases.push_back(std::move(c));
      }
      Case c = with_residual(specs[0].second, {}, ", NaN and infinities in the residual");
      with_non_finite(*c.inputs.back());
      cases.push_back(std::move(c));
      c = with_residual(specs[0].second, {}, ", NaN and infinities in the input");
      with_non_finite(*c.inputs[0]);
      cases.push_back(std::move(c));
      if (which != ConvOp::Conv1d) {  // an output past 16 MiB: the conv plugin splits the tail
        ConvSpec large;
        large.label = "1x1 conv 64 -> 256 channels on [8, 64, 56, 56] (a 25.7 MB output)";
        large.x = {8, 64, 56, 56};
        large.w = {256, 64, 1, 1};
        large.stride = large.dilation = {1, 1};
        large.padding = {0, 0};
        c = with_residual(large, {{"post.alpha", number(-0.5)}}, ", alpha -0.5, NaN and infinities in both");
        with_non_finite(*c.inputs[0]);
        with_non_finite(*c.inputs.back());
        cases.push_back(std::move(c));
      }
      return cases;
    });
  }
}

// "<conv>+aten::relu+aten::max_pool2d": max_pool2d(relu(conv(x))), the pool's attributes
// as "post2.". ResNet's stem at full size (224 x 224: the conv plugin cuts each image into
// bands of rows, and a band shares a row with the next) and small; pools without overlap,
// with ceil_mode, dilation and padding; channel counts off the vector width; no bias;
// groups; NaN and infinities; a strided input; batch 0; and run-time weights (declined by
// the conv plugin, which then runs the ops unfused).

void add_conv_pool_ops(CaseTable& table, const char* name, ConvOp which) {
  if (which == ConvOp::Conv1d) return;
  table.add(std::string(name) + "+aten::relu+aten::max_pool2d", [which](DLDataType dtype) {
    std::vector<Case> cases;
    if (!is_f32(dtype)) return cases;
    Maker m(15);
    auto add = [&](ConvSpec spec, Shape kernel, Shape stride, Shape padding, Attributes extra = {}) {
      Case c = conv_case(m, which, spec, -3.0, 3.0);
      c.label += ", max pool " + std::to_string(kernel[0]) + "x" + std::to_string(kernel[1]);
      for (auto& [attr, value] : pool(std::move(kernel), std::move(stride), std::move(padding)))
        c.attrs.push_back({"post2." + attr, std::move(value)});
      for (auto& [attr, value] : extra) {
        c.label += ", " + attr;
        c.attrs.push_back({"post2." + attr, std::move(value)});
      }
      cases.push_back(std::move(c));
      return &cases.back();
    };
    const ConvSpec stem = spec("resnet stem 7x7 s2 p3", {2, 3, 40, 40}, {16, 3, 7, 7}, 2, 3);
    add(spec("resnet stem at full size", {1, 3, 224, 224}, {64, 3, 7, 7}, 2, 3), {3, 3}, {2, 2}, {1, 1});
    add(stem, {3, 3}, {2, 2}, {1, 1});
    ConvSpec one = stem;
    one.label += ", batch 1";
    one.x[0] = 1;
    add(one, {3, 3}, {2, 2}, {1, 1});
    add(spec("3x3 conv, odd sizes", {1, 8, 17, 19}, {48, 8, 3, 3}, 1, 1), {2, 2}, {2, 2}, {0, 0});
    add(spec("3x3 conv, odd sizes", {3, 8, 17, 19}, {16, 8, 3, 3}, 1, 1), {2, 2}, {2, 2}, {0, 0},
        {{"ceil_mode", integer(1)}});
    add(spec("3x3 conv, 20 channels", {2, 4, 15, 13}, {20, 4, 3, 3}, 1, 1), {3, 3}, {1, 2}, {1, 1},
        {{"dilation", ints({2, 2})}});
    ConvSpec odd =
        spec("odd conv: stride (2, 1), padding (1, 2), dilation (1, 2)", {2, 5, 21, 17}, {16, 5, 3, 5}, 1, 0);
    odd.stride = {2, 1};
    odd.padding = {1, 2};
    odd.dilation = {1, 2};
    add(odd, {3, 2}, {2, 3}, {1, 0});
    ConvSpec s = stem;
    s.label += ", no bias";
    s.bias = false;
    add(s, {3, 3}, {2, 2}, {1, 1});
    add(spec("groups 2", {2, 8, 20, 20}, {32, 4, 3, 3}, 1, 1, 1, 2), {3, 3}, {2, 2}, {1, 1});
    Case* c = add(stem, {3, 3}, {2, 2}, {1, 1});
    c->label += ", NaN and infinities in the input";
    with_non_finite(*c->inputs[0]);
    s = stem;
    s.label += ", input with its last two dims swapped in memory";
    s.layout = ConvSpec::kTransposed;
    add(s, {3, 3}, {2, 2}, {1, 1});
    s = stem;
    s.label += ", batch 0";
    s.x[0] = 0;
    add(s, {3, 3}, {2, 2}, {1, 1});
    s = stem;
    s.label += ", weights and bias as run-time inputs";
    s.const_weights = false;
    add(s, {3, 3}, {2, 2}, {1, 1});
    return cases;
  });
}

const std::pair<const char*, ConvOp> kConvOps[] = {{"aten::conv1d", ConvOp::Conv1d},
                                                   {"aten::conv2d", ConvOp::Conv2d},
                                                   {"aten::convolution", ConvOp::Convolution},
                                                   {"aten::_convolution", ConvOp::UnderscoreConvolution}};

void add_conv_ops(CaseTable& table) {
  for (const auto& [name, op] : kConvOps) {
    const ConvOp which = op;
    table.add(name, [which](DLDataType dtype) {
      std::vector<Case> cases;
      if (!is_f32(dtype)) return cases;
      Maker m(11);
      const std::vector<std::pair<ConvOp, ConvSpec>> specs = specs_for(which);
      for (const auto& [o, s] : specs) cases.push_back(conv_case(m, o, s));
      // The 2-D 3x3 layer, which the conv plugin may run by Winograd (its input scanned
      // first): NaN and infinities, and finite values too large for Winograd's transforms.
      if (specs[1].second.x.size() == 4) {
        Case c = conv_case(m, specs[1].first, specs[1].second);
        c.label += ", a NaN and an infinity in the input";
        with_sparse_non_finite(*c.inputs[0]);
        cases.push_back(std::move(c));
        c = conv_case(m, specs[1].first, specs[1].second);
        c.label += ", 2^127 in a 4x4 block of the input";
        with_huge_block(*c.inputs[0]);
        cases.push_back(std::move(c));
      }
      return cases;
    });
    for (const Activation& act : activations()) {
      table.add(std::string(name) + "+" + act.op, [which, act](DLDataType dtype) {
        std::vector<Case> cases;
        if (!is_f32(dtype)) return cases;
        Maker m(12);
        std::vector<std::pair<ConvOp, ConvSpec>> specs = specs_for(which);
        // Per variant: the first two (zoo) convolutions, the first grouped one, and the one
        // with run-time weights.
        std::vector<size_t> picks = {0, 1};
        for (bool grouped : {true, false})
          for (size_t k = 0; k < specs.size(); ++k)
            if (grouped ? specs[k].second.groups > 1 : !specs[k].second.const_weights) {
              picks.push_back(k);
              break;
            }
        for (const Attributes& variant : act.variants)
          for (size_t k : picks) {
            // Inputs in [-3, 3]: both sides of every activation's knees.
            Case c = conv_case(m, specs[k].first, specs[k].second, -3.0, 3.0);
            for (const auto& [attr, value] : variant) {
              c.attrs.push_back({"post." + attr, value});
              c.label += ", " + attr;
            }
            cases.push_back(std::move(c));
          }
        // NaN and infinities in the input: ATen's activations keep NaN (oneDNN's relu and
        // clip would not, by themselves).
        Case c = conv_case(m, specs[0].first, specs[0].second, -3.0, 3.0);
        c.label += ", NaN and infinities in the input";
        with_non_finite(*c.inputs[0]);
        cases.push_back(std::move(c));
        if (specs[1].second.x.size() == 4) {  // a 3x3 that the conv plugin may run by Winograd
          c = conv_case(m, specs[1].first, specs[1].second, -3.0, 3.0);
          c.label += ", a NaN and an infinity in the input";
          with_sparse_non_finite(*c.inputs[0]);
          cases.push_back(std::move(c));
        }
        return cases;
      });
    }
    add_residual_ops(table, name, which);
    add_conv_pool_ops(table, name, which);
  }
}

}  // namespace

void add_conv_cases(CaseTable& table) { add_conv_ops(table); }

}  // namespace switchyard::conformance
