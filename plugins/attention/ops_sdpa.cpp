// attention plugin: scaled dot-product attention on the fused kernel.
//
//   aten::_scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.,
//       need_attn_weights=False, is_causal=False) -> (Tensor, Tensor)      LibTorch 1.13
//   aten::scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
//       is_causal=False, *, scale=None) -> Tensor                          PyTorch 2.x
//
// query [.., L, E], key [.., S, E], value [.., S, Ev]; leading dims broadcast as in
// matmul. attn_mask broadcasts to the weights' shape [.., L, S]: bool (true takes part)
// or float32 (added to the scaled scores). is_causal keeps key j for query i if j <= i.
// 1.13's second result is the softmax, which its math path returns even with
// need_attn_weights=False: a node that has that output gets it (computed from the
// final row maxima and sums in a second sweep over the keys; still no [L, S] scratch).
// enable_gqa=True (grouped-query attention): query [.., Hq, L, E] against key and value
// [.., Hkv, S, E], Hq a multiple of Hkv, query head h reading key/value head h / (Hq / Hkv);
// the heads are seen as [Hkv, group] with the group a broadcast dim of key and value, so
// no key or value is repeated in memory.
#include "binding.hpp"
#include "ops.hpp"

#include <cmath>
#include <optional>
#include <sstream>

namespace sy_attention {
namespace {

enum { kQuery, kKey, kValue, kMask };

struct Shapes {
  Shape attn_lead, lead;  // leading dims of the weights [.., L, S] and of the output [.., L, Ev]
  int64_t lq = 0, lk = 0, e = 0, ev = 0;
};

std::string number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

Shape leading(const DLTensor& t, int tail) { return Shape(t.shape, t.shape + t.ndim - tail); }

// Tensors of a grouped-query call seen with their head dim (-3) split in two, [Hkv, group]:
// the query's (and a mask's or output's of Hq heads) as [Hkv, g], key's and value's as
// [Hkv, 1] with a zero stride, a broadcast head dim as [1, 1]. Owns the views' arrays.
class GroupedViews {
 public:
  // t: query, key, value, mask (may be NULL); throws sy::Unsupported where the heads do
  // not divide.
  explicit GroupedViews(const std::vector<const DLTensor*>& t) : views_(t.size()), dims_(t.size()), strides_(t.size()) {
    const DLTensor* q = t[kQuery];
    const DLTensor* k = t[kKey];
    const DLTensor* v = t[kValue];
    if (!q || !k || !v || q->ndim < 3 || k->ndim < 3 || v->ndim < 3)
      throw sy::Unsupported("enable_gqa needs query, key and value with a head dim (3 dims or more)");
    const int64_t hq = q->shape[q->ndim - 3];
    kv_heads_ = k->shape[k->ndim - 3];
    if (kv_heads_ < 1 || v->shape[v->ndim - 3] != kv_heads_ || hq % kv_heads_ != 0)
      throw sy::Unsupported("enable_gqa: query heads " + std::to_string(hq) +
                            " are no multiple of key and value heads " + std::to_string(kv_heads_) + " and " +
                            std::to_string(v->shape[v->ndim - 3]));
    group_ = hq / kv_heads_;
    for (size_t i = 0; i < t.size(); ++i) {
      pointers_.push_back(nullptr);
      if (t[i] == nullptr) continue;
      if (t[i]->ndim < 3) {  // a mask without a head dim broadcasts as it is
        pointers_[i] = t[i];
        continue;
      }
      split(*t[i], i);
      pointers_[i] = &views_[i];
    }
  }
  const std::vector<const DLTensor*>& tensors() const { return pointers_; }
  int64_t group() const { return group_; }

 private:
  void split(const DLTensor& t, size_t i) {
    const Shape st = sy::strides_of(t);
    const int h = t.ndim - 3;
    const int64_t heads = t.shape[h];
    for (int d = 0; d < t.ndim; ++d) {
      if (d != h) {
        dims_[i].push_back(t.shape[d]);
        strides_[i].push_back(st[static_cast<size_t>(d)]);
        continue;
      }
      const bool grouped = heads == kv_heads_ * group_ && (i != kKey && i != kValue);
      const int64_t stride = heads == 1 ? 0 : st[static_cast<size_t>(d)];
      dims_[i].insert(dims_[i].end(), {heads == 1 ? 1 : kv_heads_, grouped ? group_ : 1});
      strides_[i].insert(strides_[i].end(), {grouped ? stride * group_ : stride, grouped ? stride : 0});
      const bool kv = i == kKey || i == kValue;
      if (!grouped && heads != 1 && !(kv && heads == kv_heads_))
        throw sy::Unsupported("enable_gqa: " + std::string(i == kMask ? "attn_mask" : "a tensor") + " with " +
                              std::to_string(heads) + " heads, neither the query's nor 1");
    }
    views_[i] = t;
    views_[i].ndim = t.ndim + 1;
    views_[i].shape = dims_[i].data();
    views_[i].strides = strides_[i].data();
  }

  std::vector<DLTensor> views_;
  std::vector<Shape> dims_, strides_;
  std::vector<const DLTensor*> pointers_;
  int64_t kv_heads_ = 1, group_ = 1;
};

class Sdpa {
 public:
  static void supports(const sy::Node& n) {
    sy::declining([&] {  // e.g. an attribute of the wrong kind
      Sdpa k(n);
      const std::vector<const DLTensor*> t = k.args_.all(n);
      if (k.gqa_)
        k.plan(GroupedViews(t).tensors(), n.num_outputs);
      else
        k.plan(t, n.num_outputs);
    });
  }

  explicit Sdpa(const sy::Node& n) : torch2_(*static_cast<const bool*>(n.user_data)) {
    const sy::Attrs& a = n.attrs;
    std::vector<std::string> others{"dropout_p", "is_causal"};
    if (torch2_)
      others.insert(others.end(), {"scale", "enable_gqa"});
    else
      others.push_back("need_attn_weights");
    args_ = TensorArgs(n, {"query", "key", "value", "attn_mask"}, others);

    const double dropout = a.f("dropout_p", 0.0);
    if (dropout != 0.0)
      throw sy::Unsupported("dropout_p=" + number(dropout) +
                            ": dropout is random; this inference kernel implements dropout_p=0 only");
    causal_ = a.i("is_causal", 0) != 0;
    if (!torch2_ && a.i("need_attn_weights", 0) != 0)
      throw sy::Unsupported("need_attn_weights=True is not implemented (only False)");
    if (torch2_ && a.has("scale")) scale_ = a.f("scale");
    gqa_ = torch2_ && a.i("enable_gqa", 0) != 0;
  }

  void infer(sy::Infer& f) {
    const std::vector<const DLTensor*> t = args_.all(f);
    Shapes s;
    if (gqa_) {  // planned over the split heads; the output has them merged again
      s = at_run([&] { return plan(GroupedViews(t).tensors(), f.args->num_outputs); });
      for (Shape* lead : {&s.lead, &s.attn_lead}) {
        const int64_t g = lead->back();
        lead->pop_back();
        lead->back() *= g;
      }
    } else {
      s = at_run([&] { return plan(t, f.args->num_outputs); });
    }
    Shape out = s.lead;
    out.insert(out.end(), {s.lq, s.ev});
    f.set_output(0, sy::kFloat32, out);
    if (f.args->num_outputs > 1) {
      Shape w = s.attn_lead;
      w.insert(w.end(), {s.lq, s.lk});
      f.set_output(1, sy::kFloat32, w);
    }
  }

  void run(sy::Run& r) {
    const std::vector<const DLTensor*> all = args_.all(r);
    std::optional<GroupedViews> grouped;
    if (gqa_) grouped.emplace(all);
    const std::vector<const DLTensor*>& t = grouped ? grouped->tensors() : all;
    const Shapes s = at_run([&] { return plan(t, r.num_outputs()); });
    Problem p;
    p.lead_shape = s.lead;
    p.lq = s.lq, p.lk = s.lk, p.e = s.e, p.ev = s.ev;
    p.scale = static_cast<float>(scale_ ? *scale_ : 1.0 / std::sqrt(static_cast<double>(s.e)));
    p.causal = causal_;
    operand(*t[kQuery], s.lead, &p.q);
    operand(*t[kKey], s.lead, &p.k);
    operand(*t[kValue], s.lead, &p.v);
    if (const DLTensor* m = t[kMask]) {
      p.mask.kind = is_bool(*m) ? MaskKind::KeepIfTrue : MaskKind::Additive;
      p.mask.data = static_cast<const char*>(m->data) + m->byte_offset;
      strides_over(*m, s.lead, &p.mask.lead, &p.mask.row, &p.mask.col);
    }
    p.out = compact(output_f32(r, 0), s.lead, s.lq, s.ev);
    if (r.num_outputs() > 1) p.weights = compact(output_f32(r, 1), s.lead, s.lq, s.lk);
    attention(p);
  }

 private:
  static const DLTensor& need(const std::vector<const DLTensor*>& t, int i, const char* name) {
    if (t[i] == nullptr) throw sy::Unsupported(std::string("'") + name + "' is missing");
    return *t[i];
  }

  // Checks the call against ATen's rules and works out the shapes.
  Shapes plan(const std::vector<const DLTensor*>& t, size_t num_outputs) const {
    const DLTensor& q = need(t, kQuery, "query");
    const DLTensor& k = need(t, kKey, "key");
    const DLTensor& v = need(t, kValue, "value");
    require_f32(q, "query");
    require_f32(k, "key");
    require_f32(v, "value");
    if (q.ndim < 2 || k.ndim < 2 || v.ndim < 2)
      throw sy::Unsupported("query, key and value need at least 2 dims, got " + str(shape_of(q)) + ", " +
                            str(shape_of(k)) + ", " + str(shape_of(v)));
    Shapes s;
    s.lq = q.shape[q.ndim - 2];
    s.e = q.shape[q.ndim - 1];
    s.lk = k.shape[k.ndim - 2];
    s.ev = v.shape[v.ndim - 1];
    if (k.shape[k.ndim - 1] != s.e)
      throw sy::Unsupported("query " + str(shape_of(q)) + " and key " + str(shape_of(k)) + " differ in their last dim");
    if (v.shape[v.ndim - 2] != s.lk)
      throw sy::Unsupported("key " + str(shape_of(k)) + " and value " + str(shape_of(v)) +
                            " differ in sequence length");
    s.attn_lead = broadcast(leading(q, 2), leading(k, 2), "query and key");
    s.lead = broadcast(s.attn_lead, leading(v, 2), "attention weights and value");
    if (const DLTensor* m = t[kMask]) {
      require_cpu(*m, "attn_mask");
      if (!is_bool(*m) && !is_f32(*m)) throw sy::Unsupported("'attn_mask' must be bool or float32");
      if (causal_)  // ATen's own check
        throw sy::Unsupported(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True");
      Shape w = s.attn_lead;
      w.insert(w.end(), {s.lq, s.lk});
      const Shape ms = shape_of(*m);
      if (broadcast(ms, w, "attn_mask and the attention weights") != w)
        throw sy::Unsupported("attn_mask " + str(ms) + " does not broadcast to the attention weights " + str(w));
    }
    if (num_outputs > (torch2_ ? 1u : 2u))
      throw sy::Unsupported("returns " + std::string(torch2_ ? "1 tensor" : "2 tensors") + ", node has " +
                            std::to_string(num_outputs) + " outputs");
    if (num_outputs == 2 && s.lead != s.attn_lead)
      throw sy::Unsupported("value's leading dims " + str(leading(v, 2)) +
                            " broadcast beyond the attention weights'; not implemented with the weights output");
    return s;
  }

  static void operand(const DLTensor& t, const Shape& lead, Operand* o) {
    o->data = sy::data<float>(t);
    strides_over(t, lead, &o->lead, &o->row, &o->col);
  }

  static Output compact(float* data, const Shape& lead, int64_t rows, int64_t cols) {
    Output o;
    o.data = data;
    o.row = cols;
    o.col = 1;
    o.lead.assign(lead.size(), 0);
    int64_t stride = rows * cols;
    for (size_t d = lead.size(); d-- > 0;) {
      o.lead[d] = stride;
      stride *= lead[d];
    }
    return o;
  }

  bool torch2_;
  TensorArgs args_;
  bool causal_ = false;
  bool gqa_ = false;  // enable_gqa (PyTorch 2): GroupedViews
  std::optional<double> scale_;
};

const bool kTorch113 = false;
const bool kTorch2 = true;

}  // namespace

std::shared_ptr<sy::KernelEntry> make_sdpa_kernel(const std::string& op, bool torch2) {
  return sy::kernel<Sdpa>(op, "attention", kernel_dtypes(), torch2 ? &kTorch2 : &kTorch113);
}

}  // namespace sy_attention
