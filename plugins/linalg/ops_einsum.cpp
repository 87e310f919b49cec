// linalg plugin: aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None).
//
// Two-operand contractions become one batched GEMM. Each subscript is classified:
//   batch  in both operands and the output      -> a GEMM batch dimension (size 1 broadcasts)
//   m      in the first operand and the output  -> rows
//   n      in the second operand and the output -> columns
//   k      in both operands, not the output     -> the contracted dimension
// The operands are permuted to [batch, m, k] and [batch, k, n] (views; a copy only when a
// group of dimensions cannot be walked with one stride), and the [batch, m, n] result is
// written straight into the output when its subscripts are in that order, else permuted
// into it. Ellipsis ("...") dimensions are subscripts like the others, aligned on the right.
// Declined, with the reason: one or three and more operands, a subscript repeated within
// an operand (diagonals), a subscript summed within one operand, contracted sizes that
// differ. `path` only orders contractions of three or more operands, so it is ignored.
#include "linalg.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace sy_linalg {
namespace {

// A subscript: a letter's character code, or 0..E-1 for the E ellipsis dimensions.
using Label = int;
constexpr Label kEllipsis = -1;  // "..." before expansion

std::string label_name(Label l) {
  return l >= 'A' ? std::string(1, static_cast<char>(l)) : "...(" + std::to_string(l) + ")";
}

struct Equation {
  std::vector<std::vector<Label>> terms;  // per operand, with kEllipsis where "..." stands
  std::vector<Label> output;              // explicit output, kEllipsis for "..."
  bool explicit_output = false;
};

std::vector<Label> parse_term(const std::string& t, const std::string& eq) {
  std::vector<Label> labels;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.compare(i, 3, "...") == 0) {
      if (std::find(labels.begin(), labels.end(), kEllipsis) != labels.end())
        throw sy::Error("einsum '" + eq + "': more than one ellipsis in '" + t + "'");
      labels.push_back(kEllipsis);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(t[i]))) {
      labels.push_back(t[i]);
    } else {
      throw sy::Error("einsum '" + eq + "': unexpected character '" + std::string(1, t[i]) + "'");
    }
  }
  return labels;
}

Equation parse(const std::string& equation) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  Equation e;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  if (arrow != std::string::npos) {
    e.explicit_output = true;
    e.output = parse_term(eq.substr(arrow + 2), equation);
  }
  for (size_t b = 0;;) {
    size_t comma = lhs.find(',', b);
    e.terms.push_back(parse_term(lhs.substr(b, comma - b), equation));
    if (comma == std::string::npos) break;
    b = comma + 1;
  }
  if (e.terms.size() != 2)
    throw sy::Error("einsum '" + equation + "' has " + std::to_string(e.terms.size()) +
                    " operand(s); only two-operand contractions are handled");
  for (size_t t = 0; t < 2; ++t)
    for (Label l : e.terms[t])
      if (l != kEllipsis && std::count(e.terms[t].begin(), e.terms[t].end(), l) > 1)
        throw sy::Error("einsum '" + equation + "': subscript '" + label_name(l) + "' repeats in operand " +
                        std::to_string(t) + " (a diagonal); not handled");
  return e;
}

// One operand permuted to [group 0 | group 1 | group 2] (its own sizes, its strides).
struct Perm {
  Shape shape, strides;
  size_t g0 = 0, g1 = 0;  // sizes of the first two groups; the rest is the third
};

// Merges dims [b, e) of p into one (size, stride); false if no single stride walks them.
bool merge(const Perm& p, size_t b, size_t e, int64_t* size, int64_t* stride) {
  *size = 1, *stride = 0;
  bool first = true;
  for (size_t d = e; d-- > b;) {  // innermost first
    if (p.shape[d] == 1) continue;
    if (first)
      *stride = p.strides[d], first = false;
    else if (p.strides[d] != *stride * *size)
      return false;
    *size *= p.shape[d];
  }
  return true;
}

// The Gemm operand for p laid out as [batch (g0) | rows (g1) | cols (rest)] over `batch`.
bool to_operand(const Perm& p, const Shape& batch, Operand* o, int64_t* rows, int64_t* cols) {
  o->bs.assign(batch.size(), 0);
  for (size_t d = 0; d < p.g0; ++d) o->bs[d] = p.shape[d] == 1 ? 0 : p.strides[d];
  return merge(p, p.g0, p.g0 + p.g1, rows, &o->rs) && merge(p, p.g0 + p.g1, p.shape.size(), cols, &o->cs);
}

Perm contiguous(Perm p) {
  int64_t s = 1;
  for (size_t d = p.shape.size(); d-- > 0;) p.strides[d] = s, s *= p.shape[d];
  return p;
}

struct Plan {
  Gemm gemm;
  Shape out;
  Perm pa, pb;  // permuted operand views (strides into the inputs)
  bool copy_a = false, copy_b = false;
  std::vector<size_t> out_perm;  // output dim i is dim out_perm[i] of [batch, m, n]
  Shape natural;                 // sizes of [batch, m, n] dims, unmerged
  bool direct = true;            // out_perm is the identity
};

Plan plan(const Equation& e, const std::string& equation, const View& a, const View& b) {
  const View* ops[2] = {&a, &b};
  // Expand the ellipses, right-aligned: operand t's ellipsis of length len covers labels
  // ne - len .. ne - 1.
  std::vector<std::vector<Label>> terms(2);
  std::vector<int64_t> ellipsis(2, 0);
  for (size_t t = 0; t < 2; ++t) {
    const auto& term = e.terms[t];
    bool has = std::count(term.begin(), term.end(), kEllipsis) > 0;
    int64_t named = static_cast<int64_t>(term.size()) - (has ? 1 : 0);
    if (has ? ops[t]->dim() < named : ops[t]->dim() != named)
      throw sy::Error("einsum '" + equation + "': operand " + std::to_string(t) + " has " +
                      std::to_string(ops[t]->dim()) + " dimensions for " + std::to_string(named) + " subscripts");
    ellipsis[t] = has ? ops[t]->dim() - named : 0;
  }
  const int64_t ne = std::max(ellipsis[0], ellipsis[1]);
  for (size_t t = 0; t < 2; ++t)
    for (Label l : e.terms[t]) {
      if (l != kEllipsis) {
        terms[t].push_back(l);
        continue;
      }
      for (int64_t j = 0; j < ellipsis[t]; ++j) terms[t].push_back(static_cast<Label>(ne - ellipsis[t] + j));
    }
  std::vector<Label> out;
  if (e.explicit_output) {
    for (Label l : e.output) {
      if (l != kEllipsis)
        out.push_back(l);
      else
        for (Label j = 0; j < ne; ++j) out.push_back(j);
    }
  } else {  // numpy's implicit output: the ellipsis, then subscripts seen once, sorted
    for (Label j = 0; j < ne; ++j) out.push_back(j);
    std::map<Label, int> seen;
    for (const auto& term : terms)
      for (Label l : term)
        if (l >= 'A') ++seen[l];
    for (const auto& [l, count] : seen)
      if (count == 1) out.push_back(l);
  }

  // Sizes and roles.
  std::map<Label, int64_t> size[2];
  for (size_t t = 0; t < 2; ++t)
    for (size_t d = 0; d < terms[t].size(); ++d) size[t][terms[t][d]] = ops[t]->shape[d];
  std::vector<Label> batch, m, n, k;
  for (Label l : out) {
    if (std::count(out.begin(), out.end(), l) > 1)
      throw sy::Error("einsum '" + equation + "': output subscript '" + label_name(l) + "' repeats");
    bool in_a = size[0].count(l) > 0, in_b = size[1].count(l) > 0;
    if (in_a && in_b)
      batch.push_back(l);
    else if (in_a)
      m.push_back(l);
    else if (in_b)
      n.push_back(l);
    else
      throw sy::Error("einsum '" + equation + "': output subscript '" + label_name(l) + "' appears in no operand");
  }
  for (size_t t = 0; t < 2; ++t)
    for (Label l : terms[t]) {
      if (std::count(out.begin(), out.end(), l) > 0) continue;
      if (size[1 - t].count(l) == 0)
        throw sy::Error("einsum '" + equation + "': subscript '" + label_name(l) + "' is summed within operand " +
                        std::to_string(t) + " alone; not handled");
      if (t == 0) k.push_back(l);
    }
  auto size_of = [&](Label l, size_t t) { return size[t].count(l) ? size[t][l] : int64_t{1}; };
  for (Label l : k)
    if (size[0][l] != size[1][l])
      throw sy::Error("einsum '" + equation + "': contracted subscript '" + label_name(l) + "' has sizes " +
                      std::to_string(size[0][l]) + " and " + std::to_string(size[1][l]));

  Plan p;
  Gemm& g = p.gemm;
  for (Label l : batch) {
    int64_t sa = size_of(l, 0), sb = size_of(l, 1);
    if (sa != sb && sa != 1 && sb != 1)
      throw sy::Error("einsum '" + equation + "': subscript '" + label_name(l) + "' has sizes " + std::to_string(sa) +
                      " and " + std::to_string(sb) + ", which do not broadcast");
    g.batch.push_back(sa == 1 ? sb : sa);
  }
  auto perm = [&](size_t t, const std::vector<const std::vector<Label>*>& groups) {
    Perm q;
    for (const auto* group : groups)
      for (Label l : *group) {
        auto it = std::find(terms[t].begin(), terms[t].end(), l);
        if (it == terms[t].end()) {  // an ellipsis dim this operand lacks
          q.shape.push_back(1), q.strides.push_back(0);
          continue;
        }
        size_t d = static_cast<size_t>(it - terms[t].begin());
        q.shape.push_back(ops[t]->shape[d]), q.strides.push_back(ops[t]->strides[d]);
      }
    q.g0 = groups[0]->size(), q.g1 = groups[1]->size();
    return q;
  };
  p.pa = perm(0, {&batch, &m, &k});
  p.pb = perm(1, {&batch, &k, &n});
  int64_t rows, cols;
  p.copy_a = !to_operand(p.pa, g.batch, &g.a, &rows, &cols);
  g.m = 1, g.k = 1, g.n = 1;
  for (Label l : m) g.m *= size[0][l];
  for (Label l : k) g.k *= size[0][l];
  for (Label l : n) g.n *= size[1][l];
  p.copy_b = !to_operand(p.pb, g.batch, &g.b, &rows, &cols);
  g.a.data = a.data, g.b.data = b.data;
  g.bias.bs.assign(g.batch.size(), 0);

  // The [batch, m, n] result and where each output dimension sits in it.
  std::vector<Label> natural = batch;
  natural.insert(natural.end(), m.begin(), m.end());
  natural.insert(natural.end(), n.begin(), n.end());
  for (size_t i = 0; i < natural.size(); ++i)
    p.natural.push_back(i < batch.size() ? g.batch[i] : size_of(natural[i], i < batch.size() + m.size() ? 0 : 1));
  for (Label l : out) {
    size_t at = static_cast<size_t>(std::find(natural.begin(), natural.end(), l) - natural.begin());
    p.out_perm.push_back(at);
    p.out.push_back(p.natural[at]);
    p.direct = p.direct && at == p.out_perm.size() - 1;
  }
  return p;
}

class Einsum {
 public:
  static void supports(const sy::Node& node) {
    Einsum e(node);
    sy::declining([&] {
      std::vector<View> v = e.views(node.inputs, node.num_inputs);
      plan(e.eq_, e.equation_, v[0], v[1]);
    });
  }

  explicit Einsum(const sy::Node& node) : args_(node, {"*"}, {false}) {
    check_attributes(node, {"equation", "path"});
    if (node.attrs.kind("equation") != SY_ATTR_STRING)
      throw sy::Unsupported("attribute 'equation' is missing or not a string");
    equation_ = node.attrs.s("equation");
    sy::declining([&] { eq_ = parse(equation_); });
    if (args_.count() != 2)
      throw sy::Unsupported("einsum '" + equation_ + "' got " + std::to_string(args_.count()) +
                            " tensors; only two-operand contractions are handled");
    std::vector<const DLTensor*> t{args_.get(0, node.inputs, node.num_inputs),
                                   args_.get(1, node.inputs, node.num_inputs)};
    dtype_ = check_tensors(t, {"tensors"});
  }

  void infer(sy::Infer& in) {
    std::vector<View> v = views(in.args->inputs, in.args->num_inputs);
    in.set_output(0, dtypes()[dtype_ == Dtype::F32 ? 0 : 1], plan(eq_, equation_, v[0], v[1]).out);
  }

  void run(sy::Run& r) {
    std::vector<View> v = views(r.args->inputs, r.args->num_inputs);
    Plan p = plan(eq_, equation_, v[0], v[1]);
    DLTensor& out = r.output(0);
    if (sy::shape_of(out) != p.out || !sy::is_contiguous(out))
      throw sy::Error("output is " + str(sy::shape_of(out)) + ", expected contiguous " + str(p.out), SY_ERROR_INTERNAL);
    if (sy::numel(out) == 0) return;
    const size_t es = elem_size(dtype_);
    std::vector<char> copy_a, copy_b, result;  // per run: runs may be concurrent
    auto materialize = [&](const View& src, Perm& q, std::vector<char>& buf, Operand& o) {
      int64_t total = 1, rows, cols;
      for (int64_t s : q.shape) total *= s;
      buf.resize(static_cast<size_t>(total) * es);
      copy_contiguous(View{src.data, q.shape, q.strides}, es, buf.data());
      q = contiguous(q);
      to_operand(q, p.gemm.batch, &o, &rows, &cols);  // contiguous groups always merge
      o.data = buf.data();
    };
    if (p.copy_a) materialize(v[0], p.pa, copy_a, p.gemm.a);
    if (p.copy_b) materialize(v[1], p.pb, copy_b, p.gemm.b);
    char* dst = static_cast<char*>(out.data) + out.byte_offset;
    if (p.direct) {
      run_gemm(dtype_, p.gemm, dst);
      return;
    }
    int64_t total = 1;
    for (int64_t s : p.natural) total *= s;
    result.resize(static_cast<size_t>(total) * es);
    run_gemm(dtype_, p.gemm, result.data());
    Perm natural = contiguous(Perm{p.natural, p.natural});
    View permuted{result.data(), {}, {}};
    for (size_t at : p.out_perm) {
      permuted.shape.push_back(natural.shape[at]);
      permuted.strides.push_back(natural.strides[at]);
    }
    copy_contiguous(permuted, es, dst);
  }

 private:
  std::vector<View> views(const DLTensor* const* inputs, size_t n) const {
    std::vector<View> v;
    for (size_t i = 0; i < 2; ++i) {
      const DLTensor* t = args_.get(i, inputs, n);
      if (t == nullptr) throw sy::Error("einsum operand " + std::to_string(i) + " is missing");
      if (!sy::same_dtype(t->dtype, dtypes()[dtype_ == Dtype::F32 ? 0 : 1]))
        throw sy::Error("einsum operand " + std::to_string(i) + " is " + dtype_name(t->dtype));
      v.push_back(view_of(*t));
    }
    return v;
  }

  TensorArgs args_;
  std::string equation_;
  Equation eq_;
  Dtype dtype_ = Dtype::F32;
};

}  // namespace

void add_einsum_kernels(KernelList& list) { list.push_back(sy::kernel<Einsum>("aten::einsum", "linalg", dtypes())); }

}  // namespace sy_linalg
