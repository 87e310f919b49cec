// attention plugin: decomposed attention's core, the fused chains
//
//   aten::bmm+aten::softmax+aten::bmm      bmm(softmax(bmm(q, kt), dim=-1), v)
//   aten::baddbmm+aten::softmax+aten::bmm  bmm(softmax(baddbmm(mask, q, kt, beta=1, alpha), dim=-1), v)
//
// as nn.MultiheadAttention's math path traces them (ViT and BERT-like encoders without
// and with an attention mask, GPT-like decoders' causal mask): q [N, L, E] (already
// scaled), kt [N, E, S] (a transposed view of k), v [N, S, Ev], the mask broadcast to
// [N, L, S]; the softmax's `dim` and `dtype` are post.dim and post.dtype. It runs on the
// fused attention kernel (flash_attention.hpp) with scale alpha (1 for bmm) and the mask
// added to the scores, so the [N, L, S] scores and weights, the largest values of such
// a layer at long sequences, are never made. float32; the softmax over the last dim only,
// with no dtype conversion; baddbmm with beta 1 (or 0: no mask); anything else is
// declined and runs as the three ops.
//
// Only where the scores would be large: at least `@min_scores_mib` MiB (a rule option,
// configs/README.md; default kMinScoresMiB). Below that the three ops are faster here
// (oneDNN's batched GEMMs and a softmax written over the scores: ViT-B/16 at batch 1,
// 1.8 MiB of scores, ran 10-20% slower fused), and their memory is small anyway; above
// it the scores dominate a layer's memory (ViT-B/16 at batch 8: 14.2 of 32.7 MiB).
#include "binding.hpp"
#include "ops.hpp"

#include <algorithm>

namespace sy_attention {
namespace {

enum { kQuery, kKeyT, kValue, kMask };

constexpr double kMinScoresMiB = 8.0;

// Baddbmm: the chain's head is baddbmm (its `self` the mask), else bmm.
template <bool Baddbmm>
class ScoresSoftmaxBmm {
 public:
  static void supports(const sy::Node& n) {
    ScoresSoftmaxBmm k(n);
    const Dims d = k.plan(k.tensors(n));
    const double mib = static_cast<double>(d.n) * static_cast<double>(d.l) * static_cast<double>(d.s) * sizeof(float) /
                       (1024.0 * 1024.0);
    if (mib < k.min_scores_mib_)
      throw sy::Unsupported("scores of " + std::to_string(mib) + " MiB, under @min_scores_mib (" +
                            std::to_string(k.min_scores_mib_) + "): the three ops are faster");
  }

  explicit ScoresSoftmaxBmm(const sy::Node& n) {
    const sy::Attrs& a = n.attrs;
    if constexpr (Baddbmm) {
      args_ = TensorArgs(n, {"self", "batch1", "batch2", "post2.mat2"}, {"beta", "alpha", "post.dim", "post.dtype"});
      const double beta = a.f("beta", 1.0);
      alpha_ = a.f("alpha", 1.0);
      if (beta != 1.0 && beta != 0.0)
        throw sy::Unsupported("baddbmm with beta " + std::to_string(beta) + " (the mask is added as is: 1 or 0 only)");
      if (alpha_ == 0.0) throw sy::Unsupported("baddbmm with alpha 0");
      with_mask_ = beta != 0.0;  // beta 0: ATen ignores `self`, NaN included
    } else {
      args_ = TensorArgs(n, {"self", "mat2", "post2.mat2"}, {"post.dim", "post.dtype"});
    }
    if (a.kind("post.dtype") != SY_ATTR_MISSING && a.kind("post.dtype") != SY_ATTR_NONE)
      throw sy::Unsupported("softmax with a dtype argument (a conversion) is not fused");
    if (a.kind("post.dim") != SY_ATTR_INT) throw sy::Unsupported("softmax's dim is not a constant int");
    dim_ = a.i("post.dim");
    if (a.kind("@min_scores_mib") == SY_ATTR_INT)
      min_scores_mib_ = static_cast<double>(a.i("@min_scores_mib"));
    else if (a.kind("@min_scores_mib") == SY_ATTR_FLOAT)
      min_scores_mib_ = a.f("@min_scores_mib");
    else if (a.kind("@min_scores_mib") != SY_ATTR_MISSING)
      throw sy::Error("option min_scores_mib must be a number (MiB)");
  }

  void infer(sy::Infer& f) {
    const Dims d = at_run([&] { return plan(tensors(f)); });
    f.set_output(0, sy::kFloat32, {d.n, d.l, d.ev});
  }

  void run(sy::Run& r) {
    const std::vector<const DLTensor*> t = tensors(r);
    const Dims d = at_run([&] { return plan(t); });
    const DLTensor& q = *t[kQuery];
    const DLTensor& kt = *t[kKeyT];
    const DLTensor& v = *t[kValue];
    Problem p;
    p.lead_shape = {d.n};
    p.lq = d.l, p.lk = d.s, p.e = d.e, p.ev = d.ev;
    p.scale = static_cast<float>(alpha_);  // bmm: the graph scaled q (or not) before the first bmm
    const Shape qs = strides_of(q), ks = strides_of(kt), vs = strides_of(v);
    p.q = Operand{sy::data<float>(q), {d.n > 1 ? qs[0] : 0}, qs[1], qs[2]};
    p.k = Operand{sy::data<float>(kt), {d.n > 1 ? ks[0] : 0}, ks[2], ks[1]};  // k[n, j, c] = kt[n, c, j]
    p.v = Operand{sy::data<float>(v), {d.n > 1 ? vs[0] : 0}, vs[1], vs[2]};
    if (const DLTensor* m = mask(t)) {  // broadcast to [N, L, S]
      p.mask.kind = MaskKind::Additive;
      p.mask.data = sy::data<float>(*m);
      strides_over(*m, {d.n}, &p.mask.lead, &p.mask.row, &p.mask.col);
    }
    p.out.data = output_f32(r, 0);
    p.out.lead = {d.l * d.ev};
    p.out.row = d.ev;
    p.out.col = 1;
    attention(p);
  }

 private:
  struct Dims {
    int64_t n = 0, l = 0, s = 0, e = 0, ev = 0;
  };

  // bmm's rules (3-D, equal batch, inner dims agree) for both products.
  Dims plan(const std::vector<const DLTensor*>& t) const {
    for (int i : {kQuery, kKeyT, kValue}) {
      if (t[static_cast<size_t>(i)] == nullptr) throw sy::Unsupported("'" + name(i) + "' is missing");
      require_f32(*t[static_cast<size_t>(i)], name(i));
      if (t[static_cast<size_t>(i)]->ndim != 3)
        throw sy::Unsupported("bmm takes 3-D tensors; '" + name(i) + "' is " +
                              str(shape_of(*t[static_cast<size_t>(i)])));
    }
    const DLTensor& q = *t[kQuery];
    const DLTensor& kt = *t[kKeyT];
    const DLTensor& v = *t[kValue];
    if (dim_ != -1 && dim_ != 2) throw sy::Unsupported("softmax over dim " + std::to_string(dim_) + ", not the last");
    Dims d{q.shape[0], q.shape[1], kt.shape[2], q.shape[2], v.shape[2]};
    if (kt.shape[0] != d.n || v.shape[0] != d.n || kt.shape[1] != d.e || v.shape[1] != d.s)
      throw sy::Unsupported("shapes " + str(shape_of(q)) + ", " + str(shape_of(kt)) + " and " + str(shape_of(v)) +
                            " are not bmm(softmax(bmm(q [N, L, E], k^T [N, E, S])), v [N, S, Ev])");
    if (const DLTensor* m = mask(t)) {
      require_f32(*m, "self");
      if (broadcast(shape_of(*m), {d.n, d.l, d.s}, "baddbmm's self") != Shape{d.n, d.l, d.s})
        throw sy::Unsupported("baddbmm's self " + str(shape_of(*m)) + " does not broadcast to the scores [" +
                              std::to_string(d.n) + ", " + std::to_string(d.l) + ", " + std::to_string(d.s) + "]");
    }
    return d;
  }

  // One call's tensors in the order kQuery, kKeyT, kValue (, kMask): baddbmm's `self`
  // comes first among the inputs.
  template <typename Call>
  std::vector<const DLTensor*> tensors(const Call& call) const {
    std::vector<const DLTensor*> t = args_.all(call);
    if constexpr (Baddbmm) std::rotate(t.begin(), t.begin() + 1, t.end());
    return t;
  }
  std::string name(int i) const {
    return args_.name(Baddbmm ? static_cast<size_t>(i + 1) % 4 : static_cast<size_t>(i));
  }

  // The mask (baddbmm's `self`) where it is added, else NULL.
  const DLTensor* mask(const std::vector<const DLTensor*>& t) const {
    if (!with_mask_) return nullptr;
    if (t[kMask] == nullptr) throw sy::Unsupported("baddbmm's 'self' is missing");
    return t[kMask];
  }

  TensorArgs args_;
  int64_t dim_ = -1;
  double alpha_ = 1.0;
  bool with_mask_ = false;
  double min_scores_mib_ = kMinScoresMiB;
};

}  // namespace

std::shared_ptr<sy::KernelEntry> make_bmm_softmax_bmm_kernel(const std::string& op) {
  return sy::kernel<ScoresSoftmaxBmm<false>>(op, "attention", {sy::kFloat32});
}

std::shared_ptr<sy::KernelEntry> make_baddbmm_softmax_bmm_kernel(const std::string& op) {
  return sy::kernel<ScoresSoftmaxBmm<true>>(op, "attention", {sy::kFloat32});
}

}  // namespace sy_attention
