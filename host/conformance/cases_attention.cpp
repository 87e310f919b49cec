// Conformance cases for the attention family's ops (see cases.hpp):
// _scaled_dot_product_attention (LibTorch 1.13), scaled_dot_product_attention (PyTorch
// 2.x), _native_multi_head_attention and _transformer_encoder_layer_fwd. float32 tensors;
// the bool dtype is the masks' (asked for bool, a generator gives its bool-mask cases).
// Shapes from the zoo (ViT-B/16: 197 tokens, 12 heads of 64; the BERT-like encoder: 48
// tokens, 4 heads of 32, key-padding masks), odd lengths (1, 7, 129), Lq != Lk, head
// dims 32/64/80, batch > 1, causal, bool and additive masks, fully masked rows (NaN, as
// ATen), strided and broadcast operands, empty sequences, weights as graph constants.
#include "case_makers.hpp"
#include "families.hpp"

#include <switchyard/sdk.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::conformance {

namespace {

using Shape = std::vector<int64_t>;
constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kBool{SY_DL_BOOL, 8, 1};

bool is_bool(DLDataType t) { return t.code == SY_DL_BOOL && t.bits == 8 && t.lanes == 1; }

class Maker {
 public:
  explicit Maker(uint32_t seed) : rng_(seed) {}

  Tensor t(Shape shape, double lo = -1.0, double hi = 1.0) {
    return random_tensor(rng_, kF32, std::move(shape), lo, hi);
  }
  // Weights like nn.Linear's: uniform in +-1/sqrt(fan_in).
  Tensor w(Shape shape) {
    const double a = 1.0 / std::sqrt(static_cast<double>(shape.back()));
    return t(std::move(shape), -a, a);
  }
  Tensor mask(Shape shape) { return random_tensor(rng_, kBool, std::move(shape)); }
  // Every other row of a twice-as-large buffer.
  Tensor rows(Shape shape) { return strided_rows(rng_, kF32, std::move(shape)); }
  // A [B, T] key-padding mask: row b pads its last pad[b] positions, which hold `padded`
  // (true for ATen's masked softmax, false for SDPA's "takes part" masks).
  static Tensor padding(int64_t t, const std::vector<int64_t>& pad, bool padded = true) {
    Tensor m = Tensor::empty(kBool, {static_cast<int64_t>(pad.size()), t});
    for (size_t b = 0; b < pad.size(); ++b)
      for (int64_t i = 0; i < t; ++i)
        m.data<uint8_t>()[static_cast<int64_t>(b) * t + i] = (i >= t - pad[b]) == padded ? 1 : 0;
    return m;
  }
  // A compact tensor's data seen with another shape.
  static Tensor view(const Tensor& t, Shape shape) {
    Tensor v = Tensor::from_blob(t.raw_data(), t.dtype(), std::move(shape));
    v.keep_alive(t.owner());
    return v;
  }
  // `shape` expanded from a size-1 dimension `dim` (stride 0).
  Tensor expanded(Shape shape, size_t dim) {
    Shape one = shape;
    one[dim] = 1;
    Tensor storage = t(one);
    Shape strides = storage.strides();
    strides[dim] = 0;
    Tensor view = Tensor::from_blob(storage.raw_data(), kF32, std::move(shape), strides);
    view.keep_alive(storage.owner());
    return view;
  }

  Case& add(std::string label, std::vector<std::optional<Tensor>> inputs, std::vector<bool> constant, Attributes attrs,
            bool bool_mask) {
    Case c;
    c.label = std::move(label);
    c.inputs = std::move(inputs);
    c.constant = std::move(constant);
    c.attrs = std::move(attrs);
    cases_.push_back(std::move(c));
    bool_mask_.push_back(bool_mask);
    return cases_.back();
  }
  // The cases for `dtype`: all at float32, those with a bool mask at bool.
  std::vector<Case> take(DLDataType dtype) {
    std::vector<Case> out;
    for (size_t i = 0; i < cases_.size(); ++i)
      if (is_f32(dtype) || (is_bool(dtype) && bool_mask_[i])) out.push_back(std::move(cases_[i]));
    return out;
  }

 private:
  Rng rng_;
  std::vector<Case> cases_;
  std::vector<bool> bool_mask_;
};

// Decomposed attention's bmm -> softmax -> bmm as one fused node: q [N, L, E], k^T
// [N, E, S] (usually a transposed view), v [N, S, Ev]; the softmax's dim is post.dim.
std::vector<Case> bmm_softmax_bmm_cases(DLDataType dtype) {
  if (!is_f32(dtype)) return {};
  Maker m(38);
  auto add = [&](std::string label, Tensor q, Tensor kt, Tensor v, int64_t dim = -1) {
    // Small scores are declined by default (@min_scores_mib): the option lets them through.
    Case& c = m.add(std::move(label), {std::move(q), std::move(kt), std::move(v)}, {},
                    {{"post.dim", integer(dim)}, {"@min_scores_mib", integer(0)}}, false);
    c.producer_inputs = 2;  // q and k^T are the first bmm's; v is the second's
    c.rest_inputs_to = 2;
  };
  add("ViT [12, 197, 64], k^T a transposed view", m.t({12, 197, 64}, -0.4, 0.4), transposed_layout(m.t({12, 64, 197})),
      m.t({12, 197, 64}));
  add("BERT-like [32, 48, 32], compact k^T", m.t({32, 48, 32}), m.t({32, 32, 48}), m.t({32, 48, 32}));
  add("Lq 7, Lk 129, E 5, Ev 9", m.t({3, 7, 5}, -2, 2), m.t({3, 5, 129}, -2, 2), m.t({3, 129, 9}));
  add("softmax dim 2, one query", m.t({2, 1, 16}), m.t({2, 16, 10}), m.t({2, 10, 8}), 2);
  add("strided value rows", m.t({4, 9, 8}), m.t({4, 8, 11}), m.rows({4, 11, 6}));
  {
    Tensor q = m.t({2, 5, 8});
    q.data<float>()[8 * 2 + 3] = std::numeric_limits<float>::quiet_NaN();  // query row 2 of item 0
    add("a NaN in a query (its output row is NaN)", std::move(q), m.t({2, 8, 6}), m.t({2, 6, 4}));
  }
  add("no keys (S = 0): zeros", m.t({2, 3, 4}), m.t({2, 4, 0}), m.t({2, 0, 5}));
  m.add("small scores without the option (declined: the three ops are faster)",
        {m.t({2, 5, 8}), m.t({2, 8, 6}), m.t({2, 6, 4})}, {}, {{"post.dim", integer(-1)}}, false)
      .producer_inputs = 2;
  return m.take(dtype);
}

// The same chain headed by baddbmm, as nn.MultiheadAttention traces a masked attention:
// mask (baddbmm's self, broadcast to [N, L, S]), q [N, L, E], k^T [N, E, S], then v.
std::vector<Case> baddbmm_softmax_bmm_cases(DLDataType dtype) {
  if (!is_f32(dtype)) return {};
  Maker m(39);
  const float inf = std::numeric_limits<float>::infinity();
  auto add = [&](std::string label, Tensor mask, Tensor q, Tensor kt, Tensor v, double alpha = 1.0, double beta = 1.0,
                 bool option = true) -> Case& {
    Attributes attrs = {{"beta", number(beta)}, {"alpha", number(alpha)}, {"post.dim", integer(-1)}};
    if (option) attrs.push_back({"@min_scores_mib", integer(0)});  // small scores: let them through
    Case& c = m.add(std::move(label), {std::move(mask), std::move(q), std::move(kt), std::move(v)}, {},
                    std::move(attrs), false);
    c.producer_inputs = 3;  // mask, q and k^T are baddbmm's; v is the second bmm's
    c.rest_inputs_to = 2;
    return c;
  };
  // A [1, L, L] causal mask: -inf above the diagonal.
  auto causal = [&](int64_t l) {
    Tensor c = Tensor::empty(kF32, {1, l, l});
    for (int64_t i = 0; i < l; ++i)
      for (int64_t j = 0; j < l; ++j) c.data<float>()[i * l + j] = j > i ? -inf : 0.0f;
    return c;
  };
  add("GPT causal [1, 64, 64] over [32, 64, 32], k^T a transposed view", causal(64), m.t({32, 64, 32}),
      transposed_layout(m.t({32, 32, 64})), m.t({32, 64, 32}));
  {
    Tensor pad = m.t({8, 1, 48}, 0, 0);  // key padding: the last 5 keys of item 3 left out
    for (int64_t j = 43; j < 48; ++j) pad.data<float>()[3 * 48 + j] = -inf;
    add("BERT key padding [8, 1, 48] over [8, 48, 32]", std::move(pad), m.t({8, 48, 32}), m.t({8, 32, 48}),
        m.t({8, 48, 32}));
  }
  add("alpha 0.25, a [7, 9] mask of numbers, Ev 5", m.t({7, 9}, -3, 3), m.t({3, 7, 4}), m.t({3, 4, 9}), m.t({3, 9, 5}),
      0.25);
  {
    Tensor ignored = m.t({2, 5, 6});
    ignored.data<float>()[4] = std::numeric_limits<float>::quiet_NaN();
    add("beta 0: self ignored, NaN included", std::move(ignored), m.t({2, 5, 8}), m.t({2, 8, 6}), m.t({2, 6, 4}), 1.0,
        0.0);
  }
  {
    Tensor all_out = m.t({2, 5, 6}, 0, 0);
    for (int64_t j = 0; j < 6; ++j) all_out.data<float>()[1 * 6 + j] = -inf;          // item 0, query row 1
    all_out.data<float>()[30 + 2 * 6 + 3] = std::numeric_limits<float>::quiet_NaN();  // item 1, row 2
    add("a row with every key -inf and a NaN in the mask (NaN rows, as ATen)", std::move(all_out), m.t({2, 5, 8}),
        m.t({2, 8, 6}), m.t({2, 6, 4}));
  }
  add("beta 2 (declined: the mask would need scaling)", m.t({2, 5, 6}), m.t({2, 5, 8}), m.t({2, 8, 6}), m.t({2, 6, 4}),
      1.0, 2.0);
  add("small scores without the option (declined: the three ops are faster)", m.t({2, 5, 6}), m.t({2, 5, 8}),
      m.t({2, 8, 6}), m.t({2, 6, 4}), 1.0, 1.0, false);
  return m.take(dtype);
}

// Both SDPA ops: q, k, v, attn_mask? and dropout_p / is_causal (+ the version's own).
std::vector<Case> sdpa_cases(DLDataType dtype, bool torch2) {
  if (!is_f32(dtype) && !is_bool(dtype)) return {};
  Maker m(torch2 ? 41 : 40);
  auto attrs = [&](bool causal) {
    Attributes a = {{"dropout_p", number(0.0)}, {"is_causal", integer(causal)}};
    if (!torch2) a.push_back({"need_attn_weights", integer(0)});
    return a;
  };
  auto add = [&](const std::string& label, Tensor q, Tensor k, Tensor v, std::optional<Tensor> mask = std::nullopt,
                 bool causal = false) -> Case& {
    const bool bool_mask = mask && is_bool(mask->dtype());
    return m.add(label, {q, k, v, mask}, {}, attrs(causal), bool_mask);
  };
  add("ViT-B/16 self-attention [1, 12, 197, 64]", m.t({1, 12, 197, 64}), m.t({1, 12, 197, 64}), m.t({1, 12, 197, 64}));
  add("BERT-like [2, 4, 48, 32], key padding [2, 1, 1, 48]", m.t({2, 4, 48, 32}), m.t({2, 4, 48, 32}),
      m.t({2, 4, 48, 32}), Maker::view(Maker::padding(48, {0, 13}, false), {2, 1, 1, 48}));
  add("causal GPT-like [2, 4, 64, 32]", m.t({2, 4, 64, 32}), m.t({2, 4, 64, 32}), m.t({2, 4, 64, 32}), std::nullopt,
      true);
  add("causal odd lengths Lq 129, Lk 7, head dim 80", m.t({2, 3, 129, 80}, -2, 2), m.t({2, 3, 7, 80}, -2, 2),
      m.t({2, 3, 7, 80}), std::nullopt, true);
  add("Lq 7, Lk 129, Ev 48 != E 64", m.t({2, 2, 7, 64}, -2, 2), m.t({2, 2, 129, 64}, -2, 2), m.t({2, 2, 129, 48}));
  add("one query (decoding), Lk 33", m.t({3, 2, 1, 64}), m.t({3, 2, 33, 64}), m.t({3, 2, 33, 64}));
  add("bool mask [7, 129]", m.t({2, 2, 7, 32}, -2, 2), m.t({2, 2, 129, 32}, -2, 2), m.t({2, 2, 129, 32}),
      m.mask({7, 129}));
  {
    Tensor mask = m.mask({2, 1, 9, 9});  // true takes part; batch 1's query 4 sees nothing (NaN, as ATen)
    for (int64_t j = 0; j < 9; ++j) mask.data<uint8_t>()[81 + 4 * 9 + j] = 0;
    add("bool mask [2, 1, 9, 9] with a fully masked row", m.t({2, 2, 9, 32}), m.t({2, 2, 9, 32}), m.t({2, 2, 9, 32}),
        mask);
  }
  add("additive float mask [2, 1, 65, 65]", m.t({2, 3, 65, 64}), m.t({2, 3, 65, 64}), m.t({2, 3, 65, 64}),
      m.t({2, 1, 65, 65}, -3, 3));
  add("transposed (strided) query and key", transposed_layout(m.t({2, 3, 32, 40})),
      transposed_layout(m.t({2, 3, 50, 40})), m.t({2, 3, 50, 32}));
  add("keys and values shared by all heads (stride 0)", m.t({2, 4, 17, 32}), m.expanded({2, 4, 23, 32}, 1),
      m.expanded({2, 4, 23, 32}, 1));
  add("3-D query over 2-D key and value (matmul broadcasting)", m.t({3, 9, 32}), m.t({11, 32}), m.t({11, 16}));
  add("empty key sequence (zeros)", m.t({2, 4, 32}), m.t({2, 0, 32}), m.t({2, 0, 32}));
  add("empty query sequence", m.t({2, 0, 32}), m.t({2, 5, 32}), m.t({2, 5, 32}));
  if (torch2) {
    m.add("explicit scale 0.3", {m.t({2, 3, 17, 64}), m.t({2, 3, 17, 64}), m.t({2, 3, 17, 64}), std::nullopt}, {},
          {{"dropout_p", number(0.0)}, {"is_causal", integer(0)}, {"scale", number(0.3)}}, false);
    // Grouped-query attention: 8 query heads over 2 key/value heads, none repeated.
    auto gqa = [&](bool causal) {
      return Attributes{{"dropout_p", number(0.0)}, {"is_causal", integer(causal)}, {"enable_gqa", integer(1)}};
    };
    m.add("grouped-query 8 heads over 2, causal",
          {m.t({2, 8, 19, 32}), m.t({2, 2, 19, 32}), m.t({2, 2, 19, 32}), std::nullopt}, {}, gqa(true), false);
    m.add("grouped-query 4 heads over 1, additive mask [2, 4, 5, 9]",
          {m.t({2, 4, 5, 32}), m.t({2, 1, 9, 32}), m.t({2, 1, 9, 24}), m.t({2, 4, 5, 9}, -3, 3)}, {}, gqa(false),
          false);
    m.add("grouped-query, strided query",
          {transposed_layout(m.t({1, 6, 40, 16})), m.t({1, 3, 40, 16}), m.t({1, 3, 40, 16}), m.mask({40, 40})}, {},
          gqa(false), true);
  } else {
    add("weights output (1.13 returns the softmax too)", m.t({2, 2, 70, 32}), m.t({2, 2, 90, 32}), m.t({2, 2, 90, 32}))
        .num_outputs = 2;
    add("weights output, causal", m.t({2, 2, 70, 32}), m.t({2, 2, 90, 32}), m.t({2, 2, 90, 32}), std::nullopt, true)
        .num_outputs = 2;
    add("weights output, bool mask", m.t({2, 2, 20, 32}), m.t({2, 2, 30, 32}), m.t({2, 2, 30, 32}),
        m.mask({2, 1, 20, 30}))
        .num_outputs = 2;
  }
  return m.take(dtype);
}

// _native_multi_head_attention: weights as graph constants, need_weights=False.
std::vector<Case> mha_cases(DLDataType dtype) {
  if (!is_f32(dtype) && !is_bool(dtype)) return {};
  Maker m(42);
  auto add = [&](const std::string& label, Tensor q, std::optional<Tensor> k, std::optional<Tensor> v, int64_t heads,
                 std::optional<Tensor> mask = std::nullopt, std::optional<int64_t> mask_type = std::nullopt) {
    const int64_t D = q.shape()[2];
    Attributes a = {{"embed_dim", integer(D)},
                    {"num_head", integer(heads)},
                    {"need_weights", integer(0)},
                    {"average_attn_weights", integer(1)},
                    {"mask_type", mask_type ? integer(*mask_type) : none()}};
    Case& c = m.add(
        label,
        {q, k ? *k : q, v ? *v : q, m.w({3 * D, D}), m.t({3 * D}, -0.1, 0.1), m.w({D, D}), m.t({D}, -0.1, 0.1), mask},
        {false, false, false, true, true, true, true, false}, std::move(a), mask && is_bool(mask->dtype()));
    c.num_outputs = 2;  // (out, weights): weights are ATen's undefined tensor, an empty float32 here
  };
  add("ViT-B/16 [1, 197, 768], 12 heads", m.t({1, 197, 768}), std::nullopt, std::nullopt, 12);
  add("self-attention [2, 7, 64], 2 heads of 32", m.t({2, 7, 64}), std::nullopt, std::nullopt, 2);
  add("self-attention [2, 129, 160], 2 heads of 80", m.t({2, 129, 160}), std::nullopt, std::nullopt, 2);
  add("one token [3, 1, 64]", m.t({3, 1, 64}), std::nullopt, std::nullopt, 1);
  add("cross-attention (distinct key and value)", m.t({2, 9, 96}), m.t({2, 9, 96}), m.t({2, 9, 96}), 3);
  add("strided query rows", m.rows({2, 9, 64}), std::nullopt, std::nullopt, 4);
  add("key padding [B, T], mask_type 1", m.t({3, 11, 64}), std::nullopt, std::nullopt, 4,
      Maker::padding(11, {0, 4, 10}), 1);
  add("key padding with a fully padded row (NaN)", m.t({2, 5, 32}), std::nullopt, std::nullopt, 2,
      Maker::padding(5, {1, 5}), 1);
  add("bool mask [B, H, T, T], mask_type 2", m.t({2, 8, 64}), std::nullopt, std::nullopt, 2, m.mask({2, 2, 8, 8}), 2);
  add("float mask [B, H, T, T] (non-zero masks), mask_type 2", m.t({2, 8, 64}), std::nullopt, std::nullopt, 2,
      m.t({2, 2, 8, 8}), 2);
  add("empty sequence", m.t({2, 0, 64}), std::nullopt, std::nullopt, 2);
  return m.take(dtype);
}

// _transformer_encoder_layer_fwd: every weight a graph constant.
std::vector<Case> encoder_cases(DLDataType dtype) {
  if (!is_f32(dtype) && !is_bool(dtype)) return {};
  Maker m(43);
  auto add = [&](const std::string& label, Shape src, int64_t heads, int64_t ffn, bool gelu, bool norm_first,
                 std::optional<Tensor> mask = std::nullopt) {
    const int64_t D = src[2];
    std::vector<std::optional<Tensor>> in = {m.t(src),
                                             m.w({3 * D, D}),
                                             m.t({3 * D}, -0.1, 0.1),
                                             m.w({D, D}),
                                             m.t({D}, -0.1, 0.1),
                                             m.t({D}, 0.5, 1.5),
                                             m.t({D}, -0.5, 0.5),
                                             m.t({D}, 0.5, 1.5),
                                             m.t({D}, -0.5, 0.5),
                                             m.w({ffn, D}),
                                             m.t({ffn}, -0.1, 0.1),
                                             m.w({D, ffn}),
                                             m.t({D}, -0.1, 0.1),
                                             mask};
    std::vector<bool> constant(in.size(), true);
    constant.front() = false;
    constant.back() = false;
    m.add(label, std::move(in), std::move(constant),
          {{"embed_dim", integer(D)},
           {"num_heads", integer(heads)},
           {"use_gelu", integer(gelu)},
           {"norm_first", integer(norm_first)},
           {"eps", number(1e-5)},
           {"mask_type", mask ? integer(1) : none()}},
          mask.has_value());
  };
  add("BERT-like [2, 48, 128], 4 heads, gelu, key padding", {2, 48, 128}, 4, 512, true, false,
      Maker::padding(48, {0, 17}));
  add("BERT-like [2, 48, 128] without mask", {2, 48, 128}, 4, 512, true, false);
  add("norm_first, relu, [3, 7, 64], 2 heads", {3, 7, 64}, 2, 96, false, true);
  add("norm_first, gelu, [2, 129, 160], 2 heads of 80, key padding", {2, 129, 160}, 2, 200, true, true,
      Maker::padding(129, {3, 64}));
  add("relu, one token [4, 1, 32]", {4, 1, 32}, 4, 64, false, false);
  add("empty sequence", {2, 0, 64}, 2, 96, true, false);
  return m.take(dtype);
}

}  // namespace

void add_attention_cases(CaseTable& table) {
  table.add("aten::bmm+aten::softmax+aten::bmm", bmm_softmax_bmm_cases);
  table.add("aten::baddbmm+aten::softmax+aten::bmm", baddbmm_softmax_bmm_cases);
  table.add("aten::_scaled_dot_product_attention", [](DLDataType d) { return sdpa_cases(d, false); });
  table.add("aten::scaled_dot_product_attention", [](DLDataType d) { return sdpa_cases(d, true); });
  table.add("aten::_native_multi_head_attention", mha_cases);
  table.add("aten::_transformer_encoder_layer_fwd", encoder_cases);
}

}  // namespace switchyard::conformance
