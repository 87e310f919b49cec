// The attention plugin (plugins/attention/) through the embedding API, against the aten
// plugin (LibTorch 1.13) on the same single-node graphs: each case runs once with strict
// selection of "attention" and once of "aten", and every output must agree, NaNs in the
// same places. Covers causal and masked attention (bool, additive, key padding, fully
// masked rows), odd lengths (1, 7, 129), Lq != Lk, head dims 32/64/80, batch > 1,
// strided and broadcast inputs, the weights output, the transformer fast-path ops, runs
// from several threads, and the rejections.
#include "../../host/exec/exec_test_util.hpp"
#include "api/internal.hpp"
#include "ir/graph.hpp"

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace switchyard;
using namespace sytest;

namespace {

using Shape = std::vector<int64_t>;
constexpr DLDataType kBool{6, 8, 1};
constexpr DLDataType kF64{kDLFloat, 64, 1};
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr const char* kSdpa113 = "aten::_scaled_dot_product_attention";
constexpr const char* kSdpa2 = "aten::scaled_dot_product_attention";
constexpr const char* kMha = "aten::_native_multi_head_attention";
constexpr const char* kEncoder = "aten::_transformer_encoder_layer_fwd";

// One runtime per backend for the whole binary (the aten plugin loads LibTorch once).
const Runtime& runtime(const std::string& backend) {
  static std::unique_ptr<Runtime> attention, aten;
  std::unique_ptr<Runtime>& rt = backend == "aten" ? aten : attention;
  if (!rt) {
    std::string path = write_config("attention_test_" + backend,
                                    "[plugins]\nload = [\"attention\", \"aten\"]\n"
                                    "[selection]\ndefault = [\"" +
                                        backend + "\"]\nstrict = true\n");
    rt = std::make_unique<Runtime>(Options{path});
  }
  return *rt;
}

std::mt19937& rng() {
  static std::mt19937 engine(7);
  return engine;
}

Tensor uniform(Shape shape, float lo = -1.0f, float hi = 1.0f) {
  Tensor t = Tensor::empty(kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng());
  return t;
}

// A bool tensor, true with probability p.
Tensor bools(Shape shape, double p) {
  Tensor t = Tensor::empty(kBool, std::move(shape));
  std::bernoulli_distribution d(p);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = d(rng()) ? 1 : 0;
  return t;
}

void set_bool(Tensor& t, int64_t index, bool v) { t.data<uint8_t>()[index] = v ? 1 : 0; }

// `shape` with the values held in a buffer whose dims 1 and 2 are swapped: [B, H, L, E]
// read from a [B, L, H, E] layout, as attention heads usually arrive.
Tensor heads_interleaved(const Shape& shape) {
  Tensor base = uniform({shape[0], shape[2], shape[1], shape[3]});
  Shape strides{shape[2] * shape[1] * shape[3], shape[3], shape[1] * shape[3], 1};
  return Tensor::from_blob(base.raw_data(), kF32, shape, strides, [base] {});
}

// `t` (dim 1 of size 1) seen as size n along dim 1 with stride 0.
Tensor expand_dim1(const Tensor& t, int64_t n) {
  Shape shape = t.shape(), strides = t.strides();
  shape[1] = n;
  strides[1] = 0;
  return Tensor::from_blob(t.raw_data(), t.dtype(), shape, strides, [t] {});
}

struct OpCase {
  std::string op;
  std::vector<std::optional<Tensor>> inputs;  // nullopt: an absent optional input
  std::vector<bool> constant;                 // input i is a graph constant
  ir::Attributes attrs;
  size_t outputs = 1;
};

std::unique_ptr<Model> load(const std::string& backend, const OpCase& c, std::vector<Tensor>* feed) {
  ir::Graph g;
  std::vector<ir::ValueId> ids;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i]) {
      ids.push_back(ir::kNoValue);
    } else if (i < c.constant.size() && c.constant[i]) {
      ids.push_back(g.add_constant("c" + std::to_string(i), *c.inputs[i]));
    } else {
      ids.push_back(g.add_input("x" + std::to_string(i), c.inputs[i]->dtype()));
      feed->push_back(*c.inputs[i]);
    }
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < c.outputs; ++i) names.push_back("y" + std::to_string(i));
  g.add_node("n", c.op, ids, names, c.attrs);
  for (const std::string& name : names) g.outputs.push_back(g.find_value(name));
  return load_graph(runtime(backend), std::move(g));
}

std::vector<Tensor> run_on(const std::string& backend, const OpCase& c) {
  std::vector<Tensor> feed;
  auto model = load(backend, c, &feed);
  for (const PlanEntry& e : model->plan(feed)) EXPECT_EQ(e.backend, backend) << e.node;
  return model->run(feed);
}

// The error of planning `c` on the attention plugin ("" if it was accepted).
std::string rejection(const OpCase& c) {
  std::vector<Tensor> feed;
  auto model = load("attention", c, &feed);
  return error_of([&] { model->plan(feed); });
}

// Outputs of the attention plugin and of aten agree: |a - b| <= atol + rtol |b|, NaN where
// aten has NaN.
void expect_matches_aten(const OpCase& c, double atol = 2e-5, double rtol = 1e-4) {
  std::vector<Tensor> got = run_on("attention", c), want = run_on("aten", c);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape()) << "output " << o;
    ASSERT_TRUE(same_dtype(got[o].dtype(), want[o].dtype())) << "output " << o;
    std::vector<float> a = values(got[o]), b = values(want[o]);
    size_t bad = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      bool ok = std::isnan(b[i]) ? std::isnan(a[i]) : std::fabs(a[i] - b[i]) <= atol + rtol * std::fabs(b[i]);
      if (!ok && bad++ < 3) ADD_FAILURE() << "output " << o << " [" << i << "]: " << a[i] << " vs aten " << b[i];
    }
    EXPECT_EQ(bad, 0u) << "output " << o << " of " << a.size();
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ir::Attribute i(int64_t v) { return ir::Attribute::of_int(v); }
ir::Attribute f(double v) { return ir::Attribute::of_float(v); }

OpCase sdpa(const char* op, Tensor q, Tensor k, Tensor v, std::optional<Tensor> mask = std::nullopt,
            bool causal = false, size_t outputs = 1) {
  return OpCase{op, {q, k, v, mask}, {}, {{"dropout_p", f(0.0)}, {"is_causal", i(causal)}}, outputs};
}

}  // namespace

// ---- scaled dot-product attention ------------------------------------------------------

TEST(AttentionPlugin, SdpaOverLengthsHeadDimsAndCausal) {
  for (int64_t e : {32, 64, 80})
    for (int64_t l : {1, 7, 129})
      for (bool causal : {false, true})
        for (const char* op : {kSdpa113, kSdpa2}) {
          SCOPED_TRACE(std::string(op) + " E=" + std::to_string(e) + " L=" + std::to_string(l) +
                       (causal ? " causal" : ""));
          expect_matches_aten(sdpa(op, uniform({2, 3, l, e}, -2, 2), uniform({2, 3, l, e}, -2, 2),
                                   uniform({2, 3, l, e}), std::nullopt, causal));
        }
}

TEST(AttentionPlugin, SdpaQueryAndKeyLengthsDiffer) {
  for (auto [lq, lk] : {std::pair<int64_t, int64_t>{7, 129}, {129, 7}, {1, 129}, {129, 1}, {65, 200}})
    for (bool causal : {false, true}) {
      SCOPED_TRACE("Lq=" + std::to_string(lq) + " Lk=" + std::to_string(lk) + (causal ? " causal" : ""));
      expect_matches_aten(sdpa(kSdpa113, uniform({2, 2, lq, 64}, -2, 2), uniform({2, 2, lk, 64}, -2, 2),
                               uniform({2, 2, lk, 48}), std::nullopt, causal));
    }
}

TEST(AttentionPlugin, SdpaBoolMasks) {
  const int64_t B = 2, H = 3, L = 7, S = 129;
  Tensor q = uniform({B, H, L, 32}, -2, 2), k = uniform({B, H, S, 32}, -2, 2), v = uniform({B, H, S, 32});
  // [L, S], every row keeping something.
  Tensor m = bools({L, S}, 0.6);
  for (int64_t r = 0; r < L; ++r) set_bool(m, r * S + r, true);
  expect_matches_aten(sdpa(kSdpa2, q, k, v, m));
  // Key padding [B, 1, 1, S] with batch 1 fully padded: its rows are NaN, as in ATen.
  Tensor pad = bools({B, 1, 1, S}, 0.0);
  for (int64_t j = 0; j < S; ++j) set_bool(pad, j, j < 100);
  expect_matches_aten(sdpa(kSdpa113, q, k, v, pad));
  std::vector<float> out = values(run_on("attention", sdpa(kSdpa113, q, k, v, pad))[0]);
  EXPECT_TRUE(std::isnan(out.back()));
  EXPECT_FALSE(std::isnan(out.front()));
}

TEST(AttentionPlugin, SdpaAdditiveFloatMasks) {
  const int64_t B = 2, H = 3, L = 129, S = 7;
  Tensor q = uniform({B, H, L, 80}, -2, 2), k = uniform({B, H, S, 80}, -2, 2), v = uniform({B, H, S, 80});
  Tensor bias = uniform({H, L, S}, -3, 3);  // broadcast over the batch
  for (int64_t r = 0; r < L; ++r) bias.data<float>()[r * S + (r % S)] = -kInf;
  expect_matches_aten(sdpa(kSdpa113, q, k, v, bias));
  expect_matches_aten(sdpa(kSdpa2, q, k, v, uniform({B, H, L, S}, -1, 1)));
  expect_matches_aten(sdpa(kSdpa2, q, k, v, uniform({S}, -1, 1)));
}

TEST(AttentionPlugin, SdpaStridedBroadcastAndLowRankInputs) {
  // Heads interleaved in memory, keys and values shared by all heads (stride 0).
  Tensor q = heads_interleaved({2, 4, 33, 64});
  Tensor k = expand_dim1(uniform({2, 1, 40, 64}, -2, 2), 4), v = expand_dim1(uniform({2, 1, 40, 16}), 4);
  expect_matches_aten(sdpa(kSdpa113, q, k, v));
  expect_matches_aten(
      sdpa(kSdpa113, q, heads_interleaved({2, 4, 40, 64}), heads_interleaved({2, 4, 40, 64}), std::nullopt, true));
  // matmul broadcasting: 3-D query against 2-D key and value; [H, S] keys per head.
  expect_matches_aten(sdpa(kSdpa2, uniform({3, 9, 32}), uniform({11, 32}), uniform({11, 8})));
  expect_matches_aten(sdpa(kSdpa2, uniform({9, 32}), uniform({3, 11, 32}), uniform({3, 11, 8})));
}

TEST(AttentionPlugin, SdpaEmptyLengths) {
  expect_matches_aten(sdpa(kSdpa113, uniform({2, 0, 32}), uniform({2, 5, 32}), uniform({2, 5, 32})));
  expect_matches_aten(sdpa(kSdpa113, uniform({2, 4, 32}), uniform({2, 0, 32}), uniform({2, 0, 32})));
}

TEST(AttentionPlugin, SdpaWeightsOutputOf113) {
  // 1.13's second result: the softmax, also with need_attn_weights=False.
  Tensor q = uniform({2, 2, 70, 32}, -2, 2), k = uniform({2, 2, 90, 32}, -2, 2), v = uniform({2, 2, 90, 32});
  expect_matches_aten(sdpa(kSdpa113, q, k, v, std::nullopt, false, 2));
  expect_matches_aten(sdpa(kSdpa113, q, k, v, std::nullopt, true, 2));
  Tensor m = bools({2, 1, 70, 90}, 0.7);
  set_bool(m, 0, false);
  for (int64_t j = 0; j < 90; ++j) set_bool(m, j, false);  // query 0 of batch 0 sees nothing
  expect_matches_aten(sdpa(kSdpa113, q, k, v, m, false, 2));
}

TEST(AttentionPlugin, SdpaExplicitScale) {
  OpCase c = sdpa(kSdpa2, uniform({2, 3, 17, 64}), uniform({2, 3, 17, 64}), uniform({2, 3, 17, 64}));
  c.attrs.push_back({"scale", f(0.3)});
  expect_matches_aten(c);
}

TEST(AttentionPlugin, SdpaRejections) {
  Tensor q = uniform({1, 4, 8}), k = uniform({1, 4, 8}), v = uniform({1, 4, 8});
  OpCase dropout = sdpa(kSdpa2, q, k, v);
  dropout.attrs[0].second = f(0.1);
  EXPECT_TRUE(contains(rejection(dropout), "dropout_p=0.1")) << rejection(dropout);
  OpCase weights = sdpa(kSdpa113, q, k, v);
  weights.attrs.push_back({"need_attn_weights", i(1)});
  EXPECT_TRUE(contains(rejection(weights), "need_attn_weights=True")) << rejection(weights);
  OpCase both = sdpa(kSdpa2, q, k, v, bools({4, 4}, 0.5), true);
  EXPECT_TRUE(contains(rejection(both), "Explicit attn_mask should not be set when is_causal=True"));
  Tensor q64 = Tensor::empty(kF64, {1, 4, 8});
  EXPECT_TRUE(contains(rejection(sdpa(kSdpa2, q64, q64, q64)), "float64")) << rejection(sdpa(kSdpa2, q64, q64, q64));
  Tensor int_mask = Tensor::empty(kI64, {4, 4});
  EXPECT_TRUE(contains(rejection(sdpa(kSdpa2, q, k, v, int_mask)), "int64"))
      << rejection(sdpa(kSdpa2, q, k, v, int_mask));
  EXPECT_TRUE(contains(rejection(sdpa(kSdpa2, q, uniform({1, 4, 6}), v)), "differ in their last dim"));
  EXPECT_TRUE(contains(rejection(sdpa(kSdpa2, q, k, v, bools({3, 4}, 0.5))), "do not broadcast"));
  // Grouped-query attention (run by the conformance kit's cases): heads that do not divide,
  // and tensors without a head dim, are declined.
  OpCase gqa = sdpa(kSdpa2, uniform({1, 3, 4, 8}), uniform({1, 2, 4, 8}), uniform({1, 2, 4, 8}));
  gqa.attrs.push_back({"enable_gqa", i(1)});
  EXPECT_TRUE(contains(rejection(gqa), "query heads 3 are no multiple of key and value heads 2")) << rejection(gqa);
  OpCase flat = sdpa(kSdpa2, uniform({4, 8}), uniform({4, 8}), uniform({4, 8}));
  flat.attrs.push_back({"enable_gqa", i(1)});
  EXPECT_TRUE(contains(rejection(flat), "a head dim")) << rejection(flat);
}

// ---- aten::_native_multi_head_attention --------------------------------------------------

namespace {

// ATen's MHA with D = H * dh; weights are graph constants scaled like nn.Linear's.
OpCase mha(Tensor query, std::optional<Tensor> key, std::optional<Tensor> value, int64_t heads,
           std::optional<Tensor> mask = std::nullopt, std::optional<int64_t> mask_type = std::nullopt) {
  const int64_t D = query.shape()[2];
  const float a = 1.0f / std::sqrt(static_cast<float>(D));
  OpCase c{kMha,
           {query, key ? *key : query, value ? *value : query, uniform({3 * D, D}, -a, a), uniform({3 * D}, -a, a),
            uniform({D, D}, -a, a), uniform({D}, -a, a), mask},
           {false, false, false, true, true, true, true, false},
           {{"embed_dim", i(D)},
            {"num_head", i(heads)},
            {"need_weights", i(0)},
            {"average_attn_weights", i(1)},
            {"mask_type", mask_type ? i(*mask_type) : ir::Attribute::none()}},
           2};
  return c;
}

}  // namespace

TEST(AttentionPlugin, MhaSelfAttentionOverLengthsAndHeadDims) {
  for (int64_t dh : {32, 64, 80})
    for (int64_t t : {1, 7, 129}) {
      SCOPED_TRACE("dh=" + std::to_string(dh) + " T=" + std::to_string(t));
      expect_matches_aten(mha(uniform({2, t, 2 * dh}), std::nullopt, std::nullopt, 2));
    }
}

TEST(AttentionPlugin, MhaSameQueryValueFeedsAllThree) {
  // One graph value as query, key and value (ViT's self-attention): one QKV projection.
  OpCase c = mha(uniform({2, 9, 64}), std::nullopt, std::nullopt, 4);
  ir::Graph g;
  ir::ValueId x = g.add_input("x", kF32);
  std::vector<ir::ValueId> ids{x, x, x};
  for (size_t k = 3; k < 7; ++k) ids.push_back(g.add_constant("w" + std::to_string(k), *c.inputs[k]));
  ids.push_back(ir::kNoValue);
  g.add_node("n", kMha, ids, {"y", "w"}, c.attrs);
  g.outputs = {g.find_value("y")};
  ir::Graph g2 = g;
  auto ours = load_graph(runtime("attention"), std::move(g))->run({*c.inputs[0]});
  auto ref = load_graph(runtime("aten"), std::move(g2))->run({*c.inputs[0]});
  std::vector<float> a = values(ours[0]), b = values(ref[0]);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 2e-5 + 1e-4 * std::fabs(b[k])) << k;
}

TEST(AttentionPlugin, MhaCrossAttentionAndStridedInput) {
  expect_matches_aten(mha(uniform({3, 7, 96}), uniform({3, 7, 96}), uniform({3, 7, 96}), 3));
  Tensor base = uniform({7, 3, 96});  // [T, B, D] in memory, seen as [B, T, D]
  Tensor q = Tensor::from_blob(base.raw_data(), kF32, {3, 7, 96}, {96, 3 * 96, 1}, [base] {});
  expect_matches_aten(mha(q, std::nullopt, std::nullopt, 3));
}

TEST(AttentionPlugin, MhaMasks) {
  const int64_t B = 3, T = 7, H = 2;
  Tensor x = uniform({B, T, 64});
  Tensor pad = bools({B, T}, 0.0);  // key padding, batch 2 fully padded: NaN rows as ATen
  for (int64_t t = 5; t < T; ++t) set_bool(pad, t, true);
  for (int64_t t = 0; t < T; ++t) set_bool(pad, 2 * T + t, true);
  expect_matches_aten(mha(x, std::nullopt, std::nullopt, H, pad, 1));
  Tensor full = bools({B, H, T, T}, 0.3);
  expect_matches_aten(mha(x, std::nullopt, std::nullopt, H, full, 2));
  expect_matches_aten(mha(x, std::nullopt, std::nullopt, H, full, 1));
  // A float mask counts as true where non-zero.
  Tensor fm = uniform({B, H, T, T});
  for (int64_t k = 0; k < fm.numel(); k += 3) fm.data<float>()[k] = 0.0f;
  expect_matches_aten(mha(x, std::nullopt, std::nullopt, H, fm, 2));
}

TEST(AttentionPlugin, MhaWeightsAsTensorAttributes) {
  OpCase c = mha(uniform({2, 5, 32}), std::nullopt, std::nullopt, 2);
  const char* names[] = {"qkv_weight", "qkv_bias", "proj_weight", "proj_bias"};
  for (size_t k = 0; k < 4; ++k) c.attrs.push_back({names[k], ir::Attribute::of_tensor(*c.inputs[3 + k])});
  c.inputs = {c.inputs[0], c.inputs[1], c.inputs[2]};
  c.constant.clear();
  expect_matches_aten(c);
}

TEST(AttentionPlugin, MhaRejections) {
  Tensor x = uniform({2, 4, 32});
  OpCase weights = mha(x, std::nullopt, std::nullopt, 2);
  weights.attrs[2].second = i(1);
  EXPECT_TRUE(contains(rejection(weights), "need_weights=True")) << rejection(weights);
  OpCase defaulted = mha(x, std::nullopt, std::nullopt, 2);
  defaulted.attrs.erase(defaulted.attrs.begin() + 2);  // the schema's default is True
  EXPECT_TRUE(contains(rejection(defaulted), "need_weights=True"));
  EXPECT_TRUE(contains(rejection(mha(x, std::nullopt, std::nullopt, 2, bools({2, 4}, 0.2))), "mask_type"));
  EXPECT_TRUE(contains(rejection(mha(x, std::nullopt, std::nullopt, 2, bools({4, 4}, 0.2), 0)), "src_mask"));
  EXPECT_TRUE(contains(rejection(mha(x, std::nullopt, std::nullopt, 2, bools({2, 4}, 0.2), 2)), "expected"));
  EXPECT_TRUE(contains(rejection(mha(x, std::nullopt, std::nullopt, 3)), "divide evenly"));
  EXPECT_TRUE(contains(rejection(mha(x, uniform({2, 5, 32}), uniform({2, 5, 32}), 2)), "shapes to match"));
}

// ---- aten::_transformer_encoder_layer_fwd ------------------------------------------------

TEST(AttentionPlugin, EncoderLayerActivationsNormOrderAndMask) {
  const int64_t B = 2, D = 64, F = 96, H = 4;
  const float a = 1.0f / std::sqrt(static_cast<float>(D)), af = 1.0f / std::sqrt(static_cast<float>(F));
  for (int64_t T : {7, 129})
    for (bool gelu : {false, true})
      for (bool norm_first : {false, true})
        for (bool masked : {false, true}) {
          SCOPED_TRACE("T=" + std::to_string(T) + (gelu ? " gelu" : " relu") + (norm_first ? " norm_first" : "") +
                       (masked ? " key padding" : ""));
          std::optional<Tensor> mask;
          if (masked) {
            mask = bools({B, T}, 0.0);
            for (int64_t t = T - 3; t < T; ++t) set_bool(*mask, T + t, true);
          }
          OpCase c{kEncoder,
                   {uniform({B, T, D}), uniform({3 * D, D}, -a, a), uniform({3 * D}, -a, a), uniform({D, D}, -a, a),
                    uniform({D}, -a, a), uniform({D}, 0.5f, 1.5f), uniform({D}, -0.5f, 0.5f), uniform({D}, 0.5f, 1.5f),
                    uniform({D}, -0.5f, 0.5f), uniform({F, D}, -a, a), uniform({F}, -a, a), uniform({D, F}, -af, af),
                    uniform({D}, -af, af), mask},
                   {false, true, true, true, true, true, true, true, true, true, true, true, true, false},
                   {{"embed_dim", i(D)},
                    {"num_heads", i(H)},
                    {"use_gelu", i(gelu)},
                    {"norm_first", i(norm_first)},
                    {"eps", f(1e-5)},
                    {"mask_type", masked ? i(1) : ir::Attribute::none()}}};
          expect_matches_aten(c);
        }
}

// ---- concurrency -------------------------------------------------------------------------

TEST(AttentionPlugin, OneModelRunsFromSeveralThreadsAlike) {
  OpCase c =
      sdpa(kSdpa113, uniform({2, 4, 150, 64}), uniform({2, 4, 150, 64}), uniform({2, 4, 150, 64}), std::nullopt, true);
  std::vector<Tensor> feed;
  auto model = load("attention", c, &feed);
  const std::vector<float> first = values(model->run(feed)[0]);
  std::vector<std::vector<float>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      RunContext ctx;
      for (int r = 0; r < 5; ++r) got[t] = values(model->run(feed, ctx)[0]);
    });
  for (std::thread& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, first);
}
