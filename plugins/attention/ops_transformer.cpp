// attention plugin: the fast-path transformer ops that nn.MultiheadAttention and
// nn.TransformerEncoderLayer record in eval mode, on oneDNN sgemm projections around the
// fused attention kernel. float32, batch-first [B, T, D] inputs, as ATen 1.13 takes them.
//
//   aten::_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight,
//       qkv_bias, proj_weight, proj_bias, mask=None, need_weights=True,
//       average_attn_weights=True, mask_type=None) -> (Tensor, Tensor)
//   aten::_transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias,
//       proj_weight, proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1,
//       norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2,
//       mask=None, mask_type=None) -> Tensor
//
// Masks follow ATen 1.13's CPU masked softmax: true (or a non-zero float) leaves the key
// out; mask_type 1 takes a key-padding mask [B, T] (what the TorchScript importer passes
// with its dense nested tensors) or [B, H, T, T], mask_type 2 takes [B, H, T, T]; a mask
// without mask_type, or mask_type 0, is refused as ATen refuses it on the CPU.
// need_weights=True is not implemented; with False the second result is ATen's undefined
// tensor, which switchyard hands on as an empty float32 tensor (as the aten plugin does).
#include "binding.hpp"
#include "dense.hpp"
#include "onednn_rows.hpp"
#include "ops.hpp"

#include <cmath>
#include <optional>

namespace sy_attention {
namespace {

// A weight: the graph constant itself when compact, else a compact copy made at create.
class Param {
 public:
  void prepare(const DLTensor* t) {
    if (t == nullptr || t->data == nullptr) return;  // not a constant: read at run
    Rows r = as_rows(*t, copy_);
    copied_ = r.data == copy_.data();
  }
  const float* get(const DLTensor& t, std::vector<float>& storage) const {
    return copied_ ? copy_.data() : as_rows(t, storage).data;
  }

 private:
  std::vector<float> copy_;
  bool copied_ = false;
};

void expect_shape(const DLTensor* t, const std::string& name, const Shape& want) {
  if (t == nullptr) throw sy::Unsupported("'" + name + "' is missing");
  require_f32(*t, name);
  if (shape_of(*t) != want)
    throw sy::Unsupported("'" + name + "' has shape " + str(shape_of(*t)) + ", expected " + str(want));
}

// ATen 1.13's CPU masked-softmax rules for `mask` over scores [B, H, T, T].
void check_mask(const DLTensor* mask, std::optional<int64_t> type, int64_t B, int64_t H, int64_t T) {
  if (mask == nullptr) return;
  require_cpu(*mask, "mask");
  if (!is_bool(*mask) && !is_f32(*mask)) throw sy::Unsupported("'mask' must be bool or float32");
  if (!type) throw sy::Unsupported("a mask without mask_type (ATen: \"Mask Type should be defined\")");
  if (*type == 0) throw sy::Unsupported("mask_type=0 (src_mask) is not supported on the CPU by ATen 1.13");
  if (*type != 1 && *type != 2) throw sy::Unsupported("mask_type=" + std::to_string(*type) + ": expected 1 or 2");
  const Shape s = shape_of(*mask);
  if ((*type == 1 && s == Shape{B, T}) || s == Shape{B, H, T, T}) return;
  throw sy::Unsupported("mask " + str(s) + " with mask_type=" + std::to_string(*type) + ": expected " +
                        (*type == 1 ? str({B, T}) + " or " : std::string()) + str({B, H, T, T}));
}

struct MhaInputs {
  int64_t B = 0, T = 0, D = 0, H = 0;
  const float *qkv_w = nullptr, *qkv_b = nullptr, *proj_w = nullptr, *proj_b = nullptr;
  const DLTensor* mask = nullptr;
};

// out [B*T, D] = ATen's _native_multi_head_attention of the query rows xq over xk, xv
// (NULL: self-attention, one projection for all three).
void mha_forward(const MhaInputs& m, const Rows& xq, const Rows* xk, const Rows* xv, float* out) {
  const int64_t rows = m.B * m.T, D = m.D, dh = D / m.H;
  std::vector<float> qkv(static_cast<size_t>(rows * 3 * D)), ctx(static_cast<size_t>(rows * D));
  if (xk == nullptr) {
    linear(xq, m.qkv_w, D, 3 * D, m.qkv_b, qkv.data(), 3 * D);
  } else {
    const Rows* x[3] = {&xq, xk, xv};
    for (int64_t c = 0; c < 3; ++c)
      linear(*x[c], m.qkv_w + c * D * D, D, D, m.qkv_b + c * D, qkv.data() + c * D, 3 * D);
  }
  // Head h of q, k, v is columns [h*dh, (h+1)*dh) of the first, second, third D columns.
  Problem p;
  p.lead_shape = {m.B, m.H};
  p.lq = p.lk = m.T;
  p.e = p.ev = dh;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dh)));
  Operand* ops[3] = {&p.q, &p.k, &p.v};
  for (int64_t c = 0; c < 3; ++c) {
    ops[c]->data = qkv.data() + c * D;
    ops[c]->lead = {m.T * 3 * D, dh};
    ops[c]->row = 3 * D;
    ops[c]->col = 1;
  }
  p.out.data = ctx.data();
  p.out.lead = {m.T * D, dh};
  p.out.row = D;
  p.out.col = 1;
  if (m.mask != nullptr) {
    const Shape st = strides_of(*m.mask);
    p.mask.kind = is_bool(*m.mask) ? MaskKind::DropIfTrue : MaskKind::DropIfNonzero;
    p.mask.data = static_cast<const char*>(m.mask->data) + m.mask->byte_offset;
    if (m.mask->ndim == 2) {  // [B, T]: the same key-padding row for every head and query
      p.mask.lead = {st[0], 0};
      p.mask.row = 0;
      p.mask.col = st[1];
    } else {
      p.mask.lead = {st[0], st[1]};
      p.mask.row = st[2];
      p.mask.col = st[3];
    }
  }
  attention(p);
  linear(Rows{ctx.data(), rows, D, D}, m.proj_w, D, D, m.proj_b, out, D);
}

bool same_tensor(const DLTensor& a, const DLTensor& b) {
  return sy::data<float>(a) == sy::data<float>(b) && shape_of(a) == shape_of(b) && strides_of(a) == strides_of(b);
}

// The arguments both ops share: embed_dim, the head count and the four attention weights.
struct AttentionWeights {
  int64_t D = 0, H = 0;
  Param qkv_w, qkv_b, proj_w, proj_b;

  void check(const std::vector<const DLTensor*>& t, size_t first) const {
    if (H <= 0 || D <= 0 || D % H != 0)
      throw sy::Unsupported("embed_dim " + std::to_string(D) + " must be positive and divide evenly by " +
                            std::to_string(H) + " heads");
    expect_shape(t[first], "qkv_weight", {3 * D, D});
    expect_shape(t[first + 1], "qkv_bias", {3 * D});
    expect_shape(t[first + 2], "proj_weight", {D, D});
    expect_shape(t[first + 3], "proj_bias", {D});
  }
  void prepare(const std::vector<const DLTensor*>& t, size_t first) {
    qkv_w.prepare(t[first]);
    qkv_b.prepare(t[first + 1]);
    proj_w.prepare(t[first + 2]);
    proj_b.prepare(t[first + 3]);
  }
  MhaInputs bind(const std::vector<const DLTensor*>& t, size_t first, std::vector<float> (&tmp)[4]) const {
    MhaInputs m;
    m.D = D;
    m.H = H;
    m.qkv_w = qkv_w.get(*t[first], tmp[0]);
    m.qkv_b = qkv_b.get(*t[first + 1], tmp[1]);
    m.proj_w = proj_w.get(*t[first + 2], tmp[2]);
    m.proj_b = proj_b.get(*t[first + 3], tmp[3]);
    return m;
  }
};

std::optional<int64_t> optional_int(const sy::Attrs& a, const char* name) {
  return a.has(name) ? std::optional<int64_t>(a.i(name)) : std::nullopt;
}

// Turns an attribute of the wrong kind (sy::Error) into a capability answer.
template <typename K>
void supports_via(const sy::Node& n) {
  sy::declining([&] {
    K k(n);
    k.plan(k.args().all(n), n.num_outputs);
  });
}

// ---- aten::_native_multi_head_attention -------------------------------------------------

class Mha {
 public:
  enum { kQuery, kKey, kValue, kWeights, kMask = kWeights + 4 };
  static void supports(const sy::Node& n) { supports_via<Mha>(n); }

  explicit Mha(const sy::Node& n) {
    args_ = TensorArgs(n, {"query", "key", "value", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias", "mask"},
                       {"embed_dim", "num_head", "need_weights", "average_attn_weights", "mask_type"});
    w_.D = n.attrs.i("embed_dim");
    w_.H = n.attrs.i("num_head");
    mask_type_ = optional_int(n.attrs, "mask_type");
    if (n.attrs.i("need_weights", 1) != 0)  // the schema's default is True
      throw sy::Unsupported(
          "need_weights=True (the attention weights as an output) is not implemented; "
          "need_weights=False only");
    const auto t = args_.all(n);
    w_.check(t, kWeights);
    w_.prepare(t, kWeights);
  }
  const TensorArgs& args() const { return args_; }

  // [B, T, D] of the query; throws sy::Unsupported where ATen would fail.
  Shape plan(const std::vector<const DLTensor*>& t, size_t num_outputs) const {
    if (num_outputs > 2) throw sy::Unsupported("returns 2 tensors, node has " + std::to_string(num_outputs));
    for (int i : {kQuery, kKey, kValue}) {
      const char* name = i == kQuery ? "query" : i == kKey ? "key" : "value";
      if (t[i] == nullptr) throw sy::Unsupported(std::string("'") + name + "' is missing");
      require_f32(*t[i], name);
      if (t[i]->ndim != 3)
        throw sy::Unsupported(std::string("expected 3-D `") + name + "`, got " + str(shape_of(*t[i])));
    }
    const Shape s = shape_of(*t[kQuery]);
    if (shape_of(*t[kKey]) != s || shape_of(*t[kValue]) != s)
      throw sy::Unsupported("expected `query`/`key`/`value` shapes to match");
    if (s[2] != w_.D)
      throw sy::Unsupported("query's embedding dim " + std::to_string(s[2]) + " is not embed_dim " +
                            std::to_string(w_.D));
    w_.check(t, kWeights);
    check_mask(t[kMask], mask_type_, s[0], w_.H, s[1]);
    return s;
  }

  void infer(sy::Infer& f) {
    const Shape s = at_run([&] { return plan(args_.all(f), f.args->num_outputs); });
    f.set_output(0, sy::kFloat32, s);
    if (f.args->num_outputs > 1) f.set_output(1, sy::kFloat32, {0});
  }

  void run(sy::Run& r) {
    const auto t = args_.all(r);
    const Shape s = at_run([&] { return plan(t, r.num_outputs()); });
    std::vector<float> tmp[4], xs[3];
    MhaInputs m = w_.bind(t, kWeights, tmp);
    m.B = s[0];
    m.T = s[1];
    m.mask = t[kMask];
    float* out = output_f32(r, 0);
    if (m.B * m.T == 0) return;
    const Rows xq = as_rows(*t[kQuery], xs[0]);
    if (same_tensor(*t[kQuery], *t[kKey]) && same_tensor(*t[kKey], *t[kValue])) {
      mha_forward(m, xq, nullptr, nullptr, out);
    } else {
      const Rows xk = as_rows(*t[kKey], xs[1]), xv = as_rows(*t[kValue], xs[2]);
      mha_forward(m, xq, &xk, &xv, out);
    }
  }

 private:
  TensorArgs args_;
  AttentionWeights w_;
  std::optional<int64_t> mask_type_;
};

// ---- aten::_transformer_encoder_layer_fwd ------------------------------------------------

class EncoderLayer {
 public:
  enum {
    kSrc,
    kWeights,
    kNorm1 = kWeights + 4,
    kNorm2 = kNorm1 + 2,
    kFfn1 = kNorm2 + 2,
    kFfn2 = kFfn1 + 2,
    kMask = kFfn2 + 2
  };
  static void supports(const sy::Node& n) { supports_via<EncoderLayer>(n); }

  explicit EncoderLayer(const sy::Node& n) {
    args_ =
        TensorArgs(n,
                   {"src", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias", "norm_weight_1", "norm_bias_1",
                    "norm_weight_2", "norm_bias_2", "ffn_weight_1", "ffn_bias_1", "ffn_weight_2", "ffn_bias_2", "mask"},
                   {"embed_dim", "num_heads", "use_gelu", "norm_first", "eps", "mask_type"});
    const sy::Attrs& a = n.attrs;
    w_.D = a.i("embed_dim");
    w_.H = a.i("num_heads");
    use_gelu_ = a.i("use_gelu") != 0;
    norm_first_ = a.i("norm_first") != 0;
    eps_ = a.f("eps");
    mask_type_ = optional_int(a, "mask_type");
    const auto t = args_.all(n);
    check_weights(t);
    w_.prepare(t, kWeights);
    for (int i = kNorm1; i < kMask; ++i) params_[i - kNorm1].prepare(t[i]);
  }
  const TensorArgs& args() const { return args_; }

  Shape plan(const std::vector<const DLTensor*>& t, size_t num_outputs) const {
    if (num_outputs > 1) throw sy::Unsupported("returns 1 tensor, node has " + std::to_string(num_outputs));
    if (t[kSrc] == nullptr) throw sy::Unsupported("'src' is missing");
    require_f32(*t[kSrc], "src");
    const Shape s = shape_of(*t[kSrc]);
    if (s.size() != 3 || s[2] != w_.D)
      throw sy::Unsupported("src " + str(s) + ": expected [batch, sequence, embed_dim=" + std::to_string(w_.D) + "]");
    check_weights(t);
    check_mask(t[kMask], mask_type_, s[0], w_.H, s[1]);
    return s;
  }

  void infer(sy::Infer& f) {
    f.set_output(0, sy::kFloat32, at_run([&] { return plan(args_.all(f), f.args->num_outputs); }));
  }

  void run(sy::Run& r) {
    const auto t = args_.all(r);
    const Shape s = at_run([&] { return plan(t, r.num_outputs()); });
    const int64_t rows = s[0] * s[1], D = w_.D, n = rows * D;
    float* out = output_f32(r, 0);
    if (n == 0) return;
    std::vector<float> tmp[4], ptmp[8], src_copy;
    MhaInputs m = w_.bind(t, kWeights, tmp);
    m.B = s[0];
    m.T = s[1];
    m.mask = t[kMask];
    const float* p[8];
    for (int i = 0; i < 8; ++i) p[i] = params_[i].get(*t[kNorm1 + i], ptmp[i]);
    const float *g1 = p[0], *b1 = p[1], *g2 = p[2], *b2 = p[3], *w1 = p[4], *fb1 = p[5], *w2 = p[6], *fb2 = p[7];
    const int64_t F = t[kFfn1]->shape[0];

    const Rows src = as_rows(*t[kSrc], src_copy);
    std::vector<float> h;
    const float* attn_in = src.data;
    if (norm_first_) {
      h.assign(src.data, src.data + n);
      layer_norm(h.data(), rows, D, g1, b1, eps_);
      attn_in = h.data();
    }
    std::vector<float> a(static_cast<size_t>(n));
    mha_forward(m, Rows{attn_in, rows, D, D}, nullptr, nullptr, a.data());
    add(a.data(), src.data, n);  // a = src + attention
    if (!norm_first_) layer_norm(a.data(), rows, D, g1, b1, eps_);
    const float* ffn_in = a.data();
    if (norm_first_) {
      h = a;
      layer_norm(h.data(), rows, D, g2, b2, eps_);
      ffn_in = h.data();
    }
    std::vector<float> hidden(static_cast<size_t>(rows * F));
    linear(Rows{ffn_in, rows, D, D}, w1, D, F, fb1, hidden.data(), F);
    if (use_gelu_)
      gelu(hidden.data(), rows * F);
    else
      relu(hidden.data(), rows * F);
    linear(Rows{hidden.data(), rows, F, F}, w2, F, D, fb2, out, D);
    add(out, a.data(), n);
    if (!norm_first_) layer_norm(out, rows, D, g2, b2, eps_);
  }

 private:
  void check_weights(const std::vector<const DLTensor*>& t) const {
    w_.check(t, kWeights);
    const int64_t D = w_.D;
    expect_shape(t[kNorm1], "norm_weight_1", {D});
    expect_shape(t[kNorm1 + 1], "norm_bias_1", {D});
    expect_shape(t[kNorm2], "norm_weight_2", {D});
    expect_shape(t[kNorm2 + 1], "norm_bias_2", {D});
    if (t[kFfn1] == nullptr || t[kFfn1]->ndim != 2) throw sy::Unsupported("'ffn_weight_1' must be 2-D [F, embed_dim]");
    const int64_t F = t[kFfn1]->shape[0];
    expect_shape(t[kFfn1], "ffn_weight_1", {F, D});
    expect_shape(t[kFfn1 + 1], "ffn_bias_1", {F});
    expect_shape(t[kFfn2], "ffn_weight_2", {D, F});
    expect_shape(t[kFfn2 + 1], "ffn_bias_2", {D});
  }

  TensorArgs args_;
  AttentionWeights w_;
  Param params_[8];  // norm 1, norm 2, ffn 1, ffn 2: weight and bias each
  bool use_gelu_ = false, norm_first_ = false;
  double eps_ = 1e-5;
  std::optional<int64_t> mask_type_;
};

}  // namespace

std::shared_ptr<sy::KernelEntry> make_mha_kernel(const std::string& op) {
  return sy::kernel<Mha>(op, "attention", kernel_dtypes());
}

std::shared_ptr<sy::KernelEntry> make_encoder_layer_kernel(const std::string& op) {
  return sy::kernel<EncoderLayer>(op, "attention", kernel_dtypes());
}

}  // namespace sy_attention
