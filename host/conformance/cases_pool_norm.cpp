// Conformance cases for the conv family's pooling and normalization, float32 only:
// aten::max_pool2d, aten::avg_pool2d, aten::adaptive_avg_pool2d, and inference
// aten::batch_norm alone and fused with a relu ("aten::batch_norm+aten::relu").
#include "conv_case_makers.hpp"
#include "families.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::conformance {

namespace {

using namespace conv_cases;

// ---- pooling -------------------------------------------------------------------------------

void add_pool_ops(CaseTable& table) {
  table.add("aten::max_pool2d", [](DLDataType dtype) {
    std::vector<Case> cases;
    if (!is_f32(dtype)) return cases;
    Maker m(21);
    auto add = [&](std::string label, Tensor x, Attributes a) {
      cases.push_back(Case{std::move(label), {std::move(x)}, {}, std::move(a)});
    };
    add("resnet 3x3 s2 p1", m.t({2, 16, 28, 28}), pool({3, 3}, {2, 2}, {1, 1}));
    add("odd sizes, kernel (3, 2), stride (2, 3)", m.t({1, 5, 15, 13}), pool({3, 2}, {2, 3}, {1, 0}));
    add("empty stride (= kernel)", m.t({2, 3, 12, 10}), pool({2, 2}, {}, {0, 0}));
    add("ceil_mode", m.t({1, 4, 14, 11}), with(pool({3, 3}, {2, 2}, {0, 1}), "ceil_mode", integer(1)));
    add("ceil_mode, last window would start in the padding", m.t({1, 2, 5, 5}),
        with(pool({2, 2}, {2, 2}, {1, 1}), "ceil_mode", integer(1)));
    add("dilation 2", m.t({2, 3, 15, 15}), with(pool({3, 3}, {1, 2}, {1, 1}), "dilation", ints({2, 2})));
    add("unbatched", m.t({4, 9, 9}), pool({3, 3}, {2, 2}, {1, 1}));
    add("all-negative input", m.t({1, 2, 6, 6}, -3.0, -1.0), pool({3, 3}, {2, 2}, {1, 1}));
    Tensor x = m.t({2, 3, 9, 8});
    with_non_finite(x);
    add("NaN and infinities (ATen returns NaN for a window holding one)", x, pool({3, 3}, {2, 2}, {1, 1}));
    add("H/W swapped in memory", transposed_layout(m.t({2, 3, 11, 9})), pool({3, 3}, {2, 2}, {1, 1}));
    add("batch 0", m.t({0, 3, 8, 8}), pool({2, 2}, {2, 2}, {0, 0}));
    return cases;
  });
  table.add("aten::avg_pool2d", [](DLDataType dtype) {
    std::vector<Case> cases;
    if (!is_f32(dtype)) return cases;
    Maker m(22);
    auto add = [&](std::string label, Tensor x, Attributes a) {
      cases.push_back(Case{std::move(label), {std::move(x)}, {}, std::move(a)});
    };
    add("2x2 s2", m.t({2, 6, 10, 10}), pool({2, 2}, {2, 2}, {0, 0}));
    add("padded, count_include_pad", m.t({1, 4, 11, 9}), pool({3, 3}, {2, 2}, {1, 1}));
    add("padded, count_include_pad=False", m.t({1, 4, 11, 9}),
        with(pool({3, 3}, {2, 2}, {1, 1}), "count_include_pad", integer(0)));
    add("ceil_mode, count_include_pad=False", m.t({2, 3, 10, 7}),
        with(with(pool({3, 3}, {2, 2}, {1, 0}), "ceil_mode", integer(1)), "count_include_pad", integer(0)));
    add("ceil_mode, count_include_pad, no window past the padding", m.t({1, 3, 9, 9}),
        with(pool({3, 3}, {2, 2}, {1, 1}), "ceil_mode", integer(1)));
    add("divisor_override", m.t({2, 3, 9, 8}), with(pool({3, 2}, {2, 2}, {1, 1}), "divisor_override", integer(4)));
    add("divisor_override, ceil_mode", m.t({1, 2, 8, 8}),
        with(with(pool({3, 3}, {2, 2}, {0, 0}), "ceil_mode", integer(1)), "divisor_override", integer(5)));
    add("unbatched, odd", m.t({3, 7, 5}), pool({3, 2}, {1, 2}, {1, 1}));
    add("H/W swapped in memory", transposed_layout(m.t({2, 3, 8, 6})), pool({2, 2}, {2, 2}, {1, 0}));
    return cases;
  });
  table.add("aten::adaptive_avg_pool2d", [](DLDataType dtype) {
    std::vector<Case> cases;
    if (!is_f32(dtype)) return cases;
    Maker m(23);
    auto add = [&](std::string label, Tensor x, Shape out) {
      cases.push_back(Case{std::move(label), {std::move(x)}, {}, {{"output_size", ints(std::move(out))}}});
    };
    add("resnet global 1x1", m.t({2, 512, 7, 7}), {1, 1});
    add("mobilenet squeeze-excite 1x1", m.t({1, 96, 14, 14}), {1, 1});
    add("evenly divisible", m.t({3, 4, 8, 12}), {2, 3});
    add("same size", m.t({1, 4, 5, 6}), {5, 6});
    add("unbatched", m.t({6, 9, 6}), {3, 2});
    add("H/W swapped in memory", transposed_layout(m.t({2, 5, 6, 4})), {1, 1});
    Rng rng(24);
    add("every other batch item", strided_rows(rng, {kDLFloat, 32, 1}, {2, 3, 4, 4}), {2, 2});
    return cases;
  });
}

// ---- batch norm -----------------------------------------------------------------------------

// aten::batch_norm with training=False, and "aten::batch_norm+aten::relu": DenseNet's norm
// after a concat ([N, C, H, W], channel counts off and on the 16-channel block), a
// BatchNorm1d on features ([N, C]) and on sequences ([N, C, L]), a 5-D input; with and
// without weight and bias; eps 1e-5, 1e-3 and 0.1 (a zero variance too); statistics as
// constants and as run-time inputs; batch 0; an input large enough to run on several
// threads; non-contiguous inputs; NaN and infinities.
void add_batch_norm_ops(CaseTable& table) {
  for (const bool relu : {false, true}) {
    table.add(relu ? "aten::batch_norm+aten::relu" : "aten::batch_norm", [relu](DLDataType dtype) {
      std::vector<Case> cases;
      if (!is_f32(dtype)) return cases;
      Maker m(relu ? 32 : 31);
      struct Options {
        bool weight = true, bias = true, constant = true;
        double eps = 1e-5;
        ConvSpec::Layout layout = ConvSpec::kPlain;
      };
      auto add = [&](std::string label, Shape x, Options o = {}) -> Case& {
        const int64_t channels = x[1];
        Case c;
        c.label = std::move(label);
        c.inputs.push_back(m.input(x, o.layout, -3.0, 3.0));
        c.inputs.push_back(o.weight ? std::optional<Tensor>(m.t({channels}, -1.5, 1.5)) : std::nullopt);
        c.inputs.push_back(o.bias ? std::optional<Tensor>(m.t({channels}, -1.0, 1.0)) : std::nullopt);
        c.inputs.push_back(m.t({channels}, -1.0, 1.0));  // running mean
        c.inputs.push_back(m.t({channels}, 0.05, 2.0));  // running variance
        c.constant = {false, o.constant, o.constant, o.constant, o.constant};
        c.attrs = {
            {"training", integer(0)}, {"momentum", number(0.1)}, {"eps", number(o.eps)}, {"cudnn_enabled", integer(1)}};
        if (!o.weight) c.label += ", no weight";
        if (!o.bias) c.label += ", no bias";
        if (o.eps != 1e-5) {
          char eps[32];
          std::snprintf(eps, sizeof eps, "%g", o.eps);
          c.label += std::string(", eps ") + eps;
        }
        if (!o.constant) c.label += ", statistics as run-time inputs";
        cases.push_back(std::move(c));
        return cases.back();
      };
      add("densenet norm after a concat", {2, 96, 14, 14});
      add("densenet norm after a concat", {2, 96, 14, 14}, {false, true});
      add("densenet norm after a concat", {2, 96, 14, 14}, {true, false});
      add("densenet norm after a concat", {2, 96, 14, 14}, {false, false});
      add("16 channels (one block of nChw16c)", {1, 16, 8, 8}, {true, true, true, 1e-3});
      add("odd sizes, 40 channels", {3, 40, 9, 7}, {true, true, true, 0.1});
      add("odd sizes, 5 channels", {3, 5, 7, 9}, {false, true, false});
      add("densenet norm after a concat", {2, 96, 14, 14}, {true, true, false});
      add("features [N, C] (BatchNorm1d)", {8, 24});
      add("features [N, C] (BatchNorm1d)", {8, 24}, {false, false, false, 1e-3});
      add("sequences [N, C, L] (BatchNorm1d)", {4, 12, 33});
      add("[N, C, D, H, W] (BatchNorm3d)", {2, 6, 3, 4, 5}, {true, false});
      add("[4, 128, 28, 28] (several threads)", {4, 128, 28, 28});
      add("batch 0", {0, 8, 5, 5});
      add("input with its last two dims swapped in memory", {2, 20, 11, 9},
          {true, true, true, 1e-5, ConvSpec::kTransposed});
      add("every other batch item of a larger buffer", {2, 12, 6, 6},
          {true, true, true, 1e-5, ConvSpec::kStridedBatch});
      Case& zero = add("a zero variance", {2, 8, 5, 5}, {true, true, true, 1e-3});
      zero.inputs[4]->data<float>()[3] = 0.f;
      Case& odd = add("NaN and infinities in the input", {2, 24, 10, 10});
      with_non_finite(*odd.inputs[0]);
      return cases;
    });
  }
}

// "aten::cat+aten::batch_norm" (+ relu): DenseNet's concatenation of earlier feature maps
// read only by norm1 + relu1. The parts along dim 1 (dim -3 too), then the statistics:
// parts of 32 channels and of odd counts, one part alone, a part with its last two dims
// swapped in memory and one from every other batch item, statistics as run-time inputs,
// an empty part and an empty batch, NaN and infinities.
void add_cat_batch_norm_ops(CaseTable& table) {
  for (const bool relu : {false, true}) {
    const std::string op = relu ? "aten::cat+aten::batch_norm+aten::relu" : "aten::cat+aten::batch_norm";
    table.add(op, [relu](DLDataType dtype) {
      std::vector<Case> cases;
      if (!is_f32(dtype)) return cases;
      Maker m(relu ? 34 : 33);
      auto add = [&](std::string label, std::vector<Tensor> parts, bool constant = true, int64_t dim = 1) -> Case& {
        int64_t channels = 0;
        for (const Tensor& t : parts) channels += t.shape()[1];
        Case c;
        c.label = std::move(label);
        for (Tensor& t : parts) c.inputs.push_back(std::move(t));
        c.producer_inputs = c.inputs.size();
        c.constant.assign(c.inputs.size(), false);
        c.inputs.push_back(m.t({channels}, -1.5, 1.5));  // weight
        c.inputs.push_back(m.t({channels}, -1.0, 1.0));  // bias
        c.inputs.push_back(m.t({channels}, -1.0, 1.0));  // running mean
        c.inputs.push_back(m.t({channels}, 0.05, 2.0));  // running variance
        for (int k = 0; k < 4; ++k) c.constant.push_back(constant);
        c.attrs = {{"dim", integer(dim)},
                   {"post.training", integer(0)},
                   {"post.momentum", number(0.1)},
                   {"post.eps", number(1e-5)},
                   {"post.cudnn_enabled", integer(1)}};
        cases.push_back(std::move(c));
        return cases.back();
      };
      const ConvSpec::Layout plain = ConvSpec::kPlain;
      add("densenet layer: [2, 64, 8, 8] and two [2, 32, 8, 8]",
          {m.input({2, 64, 8, 8}, plain, -3, 3), m.input({2, 32, 8, 8}, plain, -3, 3),
           m.input({2, 32, 8, 8}, plain, -3, 3)});
      add("odd channel counts 5, 3 and 17", {m.input({3, 5, 7, 9}, plain, -3, 3), m.input({3, 3, 7, 9}, plain, -3, 3),
                                             m.input({3, 17, 7, 9}, plain, -3, 3)});
      add("one part", {m.input({2, 24, 6, 6}, plain, -3, 3)});
      add("dim -3", {m.input({2, 16, 5, 5}, plain, -3, 3), m.input({2, 8, 5, 5}, plain, -3, 3)}, true, -3);
      add("a part with its last two dims swapped in memory",
          {m.input({2, 20, 11, 9}, ConvSpec::kTransposed, -3, 3), m.input({2, 12, 11, 9}, plain, -3, 3)});
      add("a part from every other batch item",
          {m.input({2, 12, 6, 6}, ConvSpec::kStridedBatch, -3, 3), m.input({2, 4, 6, 6}, plain, -3, 3)});
      add("statistics as run-time inputs", {m.input({2, 16, 4, 4}, plain, -3, 3), m.input({2, 16, 4, 4}, plain, -3, 3)},
          false);
      add("an empty part",
          {m.input({2, 8, 4, 4}, plain, -3, 3), m.input({2, 0, 4, 4}, plain), m.input({2, 8, 4, 4}, plain, -3, 3)});
      add("batch 0", {m.input({0, 8, 5, 5}, plain), m.input({0, 8, 5, 5}, plain)});
      add("[8, 256, 16, 16] in eight parts (several threads)",
          {m.input({8, 32, 16, 16}, plain, -3, 3), m.input({8, 32, 16, 16}, plain, -3, 3),
           m.input({8, 32, 16, 16}, plain, -3, 3), m.input({8, 32, 16, 16}, plain, -3, 3),
           m.input({8, 32, 16, 16}, plain, -3, 3), m.input({8, 32, 16, 16}, plain, -3, 3),
           m.input({8, 32, 16, 16}, plain, -3, 3), m.input({8, 32, 16, 16}, plain, -3, 3)});
      Case& odd = add("NaN and infinities in a part",
                      {m.input({2, 24, 10, 10}, plain, -3, 3), m.input({2, 8, 10, 10}, plain, -3, 3)});
      with_non_finite(*odd.inputs[0]);
      return cases;
    });
  }
}

}  // namespace

void add_pool_norm_cases(CaseTable& table) {
  add_pool_ops(table);
  add_batch_norm_ops(table);
  add_cat_batch_norm_ops(table);
}

}  // namespace switchyard::conformance
