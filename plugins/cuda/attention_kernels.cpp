// cuda plugin: scaled dot-product attention on the fused flash-style kernel (attention.cu).
//
//   aten::scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
//       is_causal=False, *, scale=None, enable_gqa=False) -> Tensor                PyTorch 2.x
//   aten::_scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
//       need_attn_weights=False, is_causal=False) -> (Tensor, Tensor)              LibTorch 1.13
//
// The semantics are the attention plugin's (plugins/attention/ops_sdpa.cpp): query [.., L, E],
// key [.., S, E], value [.., S, Ev], leading dims broadcast; attn_mask bool (true takes
// part) or float (added to the scaled scores), broadcast to [.., L, S]; is_causal keeps key
// j for query i iff j <= i; a row with every key masked is NaN. 1.13's second output, the
// softmax weights, is computed in a second pass from each row's final maximum and sum.
// Head dims up to 128 (launch::kMaxHeadDim); dropout_p must be 0 (inference).
#include "kernel_base.hpp"
#include "kernels.hpp"

#include <cmath>
#include <sstream>

namespace sycuda {
namespace {

double esize(DLDataType dt) { return static_cast<double>((dt.bits * dt.lanes + 7) / 8); }

Shape lead_of(const DLTensor& t) { return Shape(t.shape, t.shape + t.ndim - 2); }

// Strides of the lead dims of a compact tensor with `lead` dims of its own (row block
// `block` elements) laid over `out_lead`: 0 where broadcast.
Shape lead_strides(const Shape& lead, const Shape& out_lead, int64_t block) {
  Shape st(out_lead.size(), 0);
  int64_t step = block;
  for (size_t i = 1; i <= lead.size(); ++i) {
    if (lead[lead.size() - i] != 1) st[out_lead.size() - i] = step;
    step *= lead[lead.size() - i];
  }
  return st;
}

bool is_bool(const DLTensor& t) { return t.dtype.code == SY_DL_BOOL && t.dtype.bits == 8 && t.dtype.lanes == 1; }

class SdpaKernel : public CudaKernel {
 public:
  static void supports(const sy::Node& n) {
    require_device();
    SdpaKernel k(n);
    declining([&] { k.plan(n.inputs, n.num_inputs, n.num_outputs); });
  }

  explicit SdpaKernel(const sy::Node& n)
      : CudaKernel(n),
        torch2_(std::string(n.op) == "aten::scaled_dot_product_attention"),
        args_(n, {"query", "key", "value", "attn_mask"}, {false, false, false, true}) {
    std::vector<std::string> known = {"query", "key", "value", "attn_mask", "dropout_p", "is_causal"};
    if (torch2_)
      known.insert(known.end(), {"scale", "enable_gqa"});
    else
      known.push_back("need_attn_weights");
    check_attributes(n, known);
    const double dropout = n.attrs.f("dropout_p", 0.0);
    if (dropout != 0.0) {
      std::ostringstream s;
      s << "dropout_p=" << dropout << ": dropout is random; this inference kernel implements dropout_p=0 only";
      throw sy::Unsupported(s.str());
    }
    causal_ = n.attrs.i("is_causal", 0) != 0;
    if (!torch2_ && n.attrs.i("need_attn_weights", 0) != 0)
      throw sy::Unsupported("need_attn_weights=True is not implemented (only False)");
    if (torch2_ && n.attrs.has("scale")) scale_ = n.attrs.f("scale");
    if (torch2_ && n.attrs.i("enable_gqa", 0) != 0)
      throw sy::Unsupported("enable_gqa=True (grouped-query attention) is not implemented");
  }

  void infer(sy::Infer& f) {
    const Plan p = at_run([&] { return plan(f.args->inputs, f.num_inputs(), f.args->num_outputs); });
    Shape out = p.lead;
    out.insert(out.end(), {p.lq, p.ev});
    f.set_output(0, p.dtype, out);
    if (f.args->num_outputs > 1) {
      Shape w = p.attn_lead;
      w.insert(w.end(), {p.lq, p.lk});
      f.set_output(1, p.dtype, w);
    }
  }

  void run(sy::Run& r) {
    const Plan p = plan(r.args->inputs, r.num_inputs(), r.num_outputs());
    DeviceRun d(r);
    const DevTensor q = args_.device(0, d), k = args_.device(1, d), v = args_.device(2, d), m = args_.device(3, d);
    DevTensor& out = d.out(0);
    const launch::DT dt = *dt_of(p.dtype);
    if (p.lk == 0) {  // softmax over no keys times nothing: zeros (ATen's math path)
      launched(launch::fill(dt, out.data, out.numel(), 0.0, d.stream()), "fill");
      if (d.num_outputs() > 1) launched(launch::fill(dt, d.out(1).data, d.out(1).numel(), 0.0, d.stream()), "fill");
      return d.finish();
    }
    launch::Attention a;
    a.dtype = dt;
    a.lead_ndim = static_cast<int32_t>(p.lead.size());
    const Shape sq =
        lead_strides(q.shape.size() > 2 ? Shape(q.shape.begin(), q.shape.end() - 2) : Shape{}, p.lead, p.lq * p.e);
    const Shape sk =
        lead_strides(k.shape.size() > 2 ? Shape(k.shape.begin(), k.shape.end() - 2) : Shape{}, p.lead, p.lk * p.e);
    const Shape sv =
        lead_strides(v.shape.size() > 2 ? Shape(v.shape.begin(), v.shape.end() - 2) : Shape{}, p.lead, p.lk * p.ev);
    const Shape so = lead_strides(p.lead, p.lead, p.lq * p.ev);
    for (size_t i = 0; i < p.lead.size(); ++i) {
      a.lead[i] = p.lead[i];
      a.q_lead[i] = sq[i], a.k_lead[i] = sk[i], a.v_lead[i] = sv[i], a.out_lead[i] = so[i];
    }
    a.q_row = p.e, a.k_row = p.e, a.v_row = p.ev, a.out_row = p.ev;
    a.q = q.data, a.k = k.data, a.v = v.data, a.out = out.data;
    a.lq = p.lq, a.lk = p.lk, a.e = p.e, a.ev = p.ev;
    a.scale = static_cast<float>(scale_ ? *scale_ : 1.0 / std::sqrt(static_cast<double>(p.e)));
    a.causal = causal_;
    if (m.data != nullptr) {
      a.mask = is_bool_dt(m.dtype) ? launch::Attention::Mask::KeepIfTrue : launch::Attention::Mask::Additive;
      a.mask_data = m.data;
      a.mask_dtype = *dt_of(m.dtype);
      // The mask's compact strides laid over [lead..., L, S].
      Shape full = p.lead;
      full.insert(full.end(), {p.lq, p.lk});
      const Shape st = broadcast_strides(m.shape, full);
      for (size_t i = 0; i < p.lead.size(); ++i) a.mask_lead[i] = st[i];
      a.mask_row = st[p.lead.size()];
      a.mask_col = st[p.lead.size() + 1];
    }
    DeviceBuffer stats;
    if (d.num_outputs() > 1) {
      stats = DeviceBuffer(static_cast<uint64_t>(product(p.lead) * p.lq * 2) * sizeof(float));
      a.row_stats = static_cast<float*>(stats.get());
    }
    launched(launch::attention(a, d.stream()), "attention");
    if (d.num_outputs() > 1) launched(launch::attention_weights(a, d.out(1).data, d.stream()), "attention_weights");
    d.finish();
  }

  void cost(sy::Cost& c) {
    const Plan p = plan(c.args->inputs, c.num_inputs(), c.args->num_outputs);
    const double leads = static_cast<double>(product(p.lead));
    c.flops(2.0 * leads * static_cast<double>(p.lq) * static_cast<double>(p.lk) * static_cast<double>(p.e + p.ev));
    double bytes = leads * static_cast<double>(p.lq * p.ev) * esize(p.dtype);
    for (size_t i = 0; i < args_.size(); ++i)
      if (const DLTensor* t = args_.meta(i, c.args->inputs, c.num_inputs()))
        bytes += static_cast<double>(sy::numel(*t)) * esize(t->dtype);
    c.bytes(bytes);
  }

 private:
  struct Plan {
    Shape attn_lead, lead;
    int64_t lq = 0, lk = 0, e = 0, ev = 0;
    DLDataType dtype{};
  };

  static bool is_bool_dt(DLDataType dt) { return dt.code == SY_DL_BOOL && dt.bits == 8 && dt.lanes == 1; }

  Plan plan(const DLTensor* const* in, size_t n, size_t num_outputs) const {
    const DLTensor* q = args_.meta(0, in, n);
    const DLTensor* k = args_.meta(1, in, n);
    const DLTensor* v = args_.meta(2, in, n);
    if (!q || !k || !v) throw sy::Unsupported("query, key and value are required");
    if (!is_float(q->dtype)) throw sy::Unsupported("query has dtype " + dtype_name(q->dtype));
    if (!sy::same_dtype(q->dtype, k->dtype) || !sy::same_dtype(q->dtype, v->dtype))
      throw sy::Unsupported("query, key and value have different dtypes");
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
      throw sy::Unsupported("query, key and value need at least 2 dims, got " + str(sy::shape_of(*q)) + ", " +
                            str(sy::shape_of(*k)) + ", " + str(sy::shape_of(*v)));
    Plan p;
    p.dtype = q->dtype;
    p.lq = q->shape[q->ndim - 2];
    p.e = q->shape[q->ndim - 1];
    p.lk = k->shape[k->ndim - 2];
    p.ev = v->shape[v->ndim - 1];
    if (k->shape[k->ndim - 1] != p.e)
      throw sy::Unsupported("query " + str(sy::shape_of(*q)) + " and key " + str(sy::shape_of(*k)) +
                            " differ in their last dim");
    if (v->shape[v->ndim - 2] != p.lk)
      throw sy::Unsupported("key " + str(sy::shape_of(*k)) + " and value " + str(sy::shape_of(*v)) +
                            " differ in sequence length");
    if (p.e > launch::kMaxHeadDim || p.ev > launch::kMaxHeadDim)
      throw sy::Unsupported("head dims " + std::to_string(p.e) + "/" + std::to_string(p.ev) +
                            " exceed the cuda kernel's " + std::to_string(launch::kMaxHeadDim));
    if (p.e < 1 || p.ev < 1) throw sy::Unsupported("empty head dims");
    p.attn_lead = broadcast_shapes(lead_of(*q), lead_of(*k), "query and key");
    p.lead = broadcast_shapes(p.attn_lead, lead_of(*v), "attention weights and value");
    if (p.lead.size() > static_cast<size_t>(launch::kMaxDims))
      throw sy::Unsupported("more than " + std::to_string(launch::kMaxDims) + " leading dims");
    if (const DLTensor* m = args_.meta(3, in, n)) {
      if (!is_bool(*m) && !is_float(m->dtype) && !sy::same_dtype(m->dtype, sy::kFloat64))
        throw sy::Unsupported("'attn_mask' must be bool or float, got " + dtype_name(m->dtype));
      if (causal_)  // ATen's own check
        throw sy::Unsupported(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
      Shape w = p.attn_lead;
      w.insert(w.end(), {p.lq, p.lk});
      if (broadcast_shapes(sy::shape_of(*m), w, "attn_mask and the attention weights") != w)
        throw sy::Unsupported("attn_mask " + str(sy::shape_of(*m)) + " does not broadcast to the attention weights " +
                              str(w));
    }
    if (num_outputs > (torch2_ ? 1u : 2u))
      throw sy::Unsupported("returns " + std::string(torch2_ ? "1 tensor" : "2 tensors") + ", node has " +
                            std::to_string(num_outputs) + " outputs");
    if (num_outputs == 2 && p.lead != p.attn_lead)
      throw sy::Unsupported(
          "value's leading dims broadcast beyond the attention weights'; not implemented with the weights output");
    return p;
  }

  bool torch2_;
  TensorArgs args_;
  bool causal_ = false;
  std::optional<double> scale_;
};

}  // namespace

void add_attention_kernels(KernelList& list) {
  std::vector<DLDataType> dtypes = float_dtypes();
  dtypes.push_back(sy::kBool);
  add_kernel<SdpaKernel>(list, "aten::_scaled_dot_product_attention", "attention", dtypes);
  add_kernel<SdpaKernel>(list, "aten::scaled_dot_product_attention", "attention", dtypes);
}

}  // namespace sycuda
