// linalg plugin: views, broadcasting, torch.matmul's lowering to a Gemm, and the node
// argument helpers (see linalg.hpp).
#include <switchyard/shapes.hpp>
#include "linalg.hpp"

#include <algorithm>

namespace sy_linalg {

std::string str(const Shape& shape) { return sy::shape_string(shape); }

std::string dtype_name(DLDataType dt) {
  if (dt.lanes == 1 && dt.code == kDLFloat) return "float" + std::to_string(dt.bits);
  if (dt.lanes == 1 && dt.code == kDLBfloat && dt.bits == 16) return "bfloat16";
  if (dt.lanes == 1 && dt.code == kDLInt) return "int" + std::to_string(dt.bits);
  if (dt.lanes == 1 && dt.code == kDLUInt) return "uint" + std::to_string(dt.bits);
  if (dt.lanes == 1 && dt.code == SY_DL_BOOL) return "bool";
  return "dtype(code " + std::to_string(dt.code) + ", bits " + std::to_string(dt.bits) + ", lanes " +
         std::to_string(dt.lanes) + ")";
}

size_t elem_size(Dtype d) { return d == Dtype::F32 ? 4 : 8; }

// ---- views ------------------------------------------------------------------------------

View view_of(const DLTensor& t) {
  View v;
  v.data = t.data ? static_cast<const char*>(t.data) + t.byte_offset : nullptr;
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.strides.resize(v.shape.size());
  int64_t contiguous = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    v.strides[d] = t.strides ? t.strides[d] : contiguous;
    contiguous *= t.shape[d];
  }
  return v;
}

View transpose_last2(View v) {
  if (v.dim() >= 2) {
    size_t n = v.shape.size();
    std::swap(v.shape[n - 1], v.shape[n - 2]);
    std::swap(v.strides[n - 1], v.strides[n - 2]);
  }
  return v;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what) {
  return sy::broadcast_shapes(a, b, what);
}

Shape broadcast_strides(const View& v, const Shape& out, const std::string& what) {
  auto fail = [&]() -> Shape {
    throw sy::Error(what + " of shape " + str(v.shape) + " does not broadcast to " + str(out));
  };
  if (v.shape.size() > out.size()) return fail();
  Shape strides(out.size(), 0);
  for (size_t i = 1; i <= v.shape.size(); ++i) {
    int64_t s = v.shape[v.shape.size() - i], o = out[out.size() - i];
    if (s == o && s != 1)
      strides[out.size() - i] = v.strides[v.shape.size() - i];
    else if (s != 1 && s != o)
      return fail();
  }
  return strides;
}

// ---- torch.matmul -----------------------------------------------------------------------

MatmulPlan plan_matmul(const View& a, const View& b) {
  if (a.dim() == 0 || b.dim() == 0)
    throw sy::Error("both arguments to matmul need to be at least 1-D, got " + std::to_string(a.dim()) + "-D and " +
                    std::to_string(b.dim()) + "-D");
  MatmulPlan p;
  Gemm& g = p.gemm;
  const size_t na = a.shape.size(), nb = b.shape.size();
  int64_t ka;
  View abatch, bbatch;
  if (na == 1) {  // [k] is a [1, k] row
    p.squeeze_m = true;
    g.m = 1, ka = a.shape[0], g.a.rs = 0, g.a.cs = a.strides[0];
  } else {
    g.m = a.shape[na - 2], ka = a.shape[na - 1];
    g.a.rs = a.strides[na - 2], g.a.cs = a.strides[na - 1];
    abatch.shape.assign(a.shape.begin(), a.shape.end() - 2);
    abatch.strides.assign(a.strides.begin(), a.strides.end() - 2);
  }
  if (nb == 1) {  // [k] is a [k, 1] column
    p.squeeze_n = true;
    g.k = b.shape[0], g.n = 1, g.b.rs = b.strides[0], g.b.cs = 0;
  } else {
    g.k = b.shape[nb - 2], g.n = b.shape[nb - 1];
    g.b.rs = b.strides[nb - 2], g.b.cs = b.strides[nb - 1];
    bbatch.shape.assign(b.shape.begin(), b.shape.end() - 2);
    bbatch.strides.assign(b.strides.begin(), b.strides.end() - 2);
  }
  if (ka != g.k)
    throw sy::Error("shapes " + str(a.shape) + " and " + str(b.shape) + " cannot be multiplied (" + std::to_string(ka) +
                    " != " + std::to_string(g.k) + ")");
  g.batch = broadcast_shapes(abatch.shape, bbatch.shape, "batch dimensions");
  g.a.data = a.data, g.b.data = b.data;
  g.a.bs = broadcast_strides(abatch, g.batch, "batch dimensions");
  g.b.bs = broadcast_strides(bbatch, g.batch, "batch dimensions");
  g.bias.bs.assign(g.batch.size(), 0);
  p.out = g.batch;
  if (!p.squeeze_m) p.out.push_back(g.m);
  if (!p.squeeze_n) p.out.push_back(g.n);
  return p;
}

void set_bias(MatmulPlan& p, const View& bias, double beta) {
  Shape st = broadcast_strides(bias, p.out, "bias");
  // Back to [batch..., m, n]: a squeezed dimension has size 1, so stride 0.
  if (p.squeeze_n) st.push_back(0);
  if (p.squeeze_m) st.insert(st.end() - 1, 0);
  const size_t nb = p.gemm.batch.size();
  p.gemm.bias.data = bias.data;
  p.gemm.bias.bs.assign(st.begin(), st.begin() + static_cast<long>(nb));
  p.gemm.bias.rs = st[nb], p.gemm.bias.cs = st[nb + 1];
  p.gemm.beta = beta;
}

// ---- node arguments ---------------------------------------------------------------------

TensorArgs::TensorArgs(const sy::Node& node, const std::vector<std::string>& names, const std::vector<bool>& optional) {
  size_t slot = 0;
  const size_t n = node.num_inputs;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (name == "*") {  // a tensor list: every remaining input
      for (; slot < n; ++slot) {
        if (node.inputs[slot] == nullptr)
          throw sy::Unsupported("tensor list entry (input " + std::to_string(slot) + ") is missing");
        slots_.push_back(static_cast<int64_t>(slot));
        attrs_.push_back(nullptr);
      }
      break;
    }
    if (node.attrs.kind(name.c_str()) == SY_ATTR_TENSOR) {
      slots_.push_back(-1);
      attrs_.push_back(node.attrs.tensor(name.c_str()));
    } else if (slot < n && (node.inputs[slot] != nullptr || optional[i])) {
      slots_.push_back(static_cast<int64_t>(slot++));
      attrs_.push_back(nullptr);
    } else if (optional[i]) {
      slots_.push_back(-1);
      attrs_.push_back(nullptr);
    } else {
      throw sy::Unsupported("tensor argument '" + name + "' (input " + std::to_string(slot) + ") is missing");
    }
  }
  if (slot < n)
    throw sy::Unsupported("takes " + std::to_string(slot) + " tensor inputs, node has " + std::to_string(n));
}

const DLTensor* TensorArgs::get(size_t i, const DLTensor* const* inputs, size_t n) const {
  if (slots_[i] < 0) return attrs_[i];
  return static_cast<size_t>(slots_[i]) < n ? inputs[slots_[i]] : nullptr;
}

void check_attributes(const sy::Node& node, const std::vector<std::string>& known) {
  const SY_HostApi* h = sy::host_api();
  const size_t count = h->attr_count(node.attrs.raw());
  for (size_t i = 0; i < count; ++i) {
    const char* name = h->attr_name(node.attrs.raw(), i);
    // '@' attributes are config options (sdk.h, "Options"): never a reason to decline.
    if (name == nullptr || name[0] == '@' || node.attrs.kind(name) == SY_ATTR_NONE) continue;
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw sy::Unsupported(std::string("unexpected attribute '") + name + "'");
  }
}

Dtype check_tensors(const std::vector<const DLTensor*>& tensors, const std::vector<std::string>& names) {
  const DLTensor* first = nullptr;
  std::string first_name;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const DLTensor* t = tensors[i];
    if (t == nullptr) continue;
    const std::string what = "'" + (i < names.size() ? names[i] : names.back()) + "'";
    if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost)
      throw sy::Unsupported(what + " is on device type " + std::to_string(t->device.device_type) +
                            "; the linalg plugin runs on the CPU only");
    bool known = false;
    for (const DLDataType& d : dtypes()) known = known || sy::same_dtype(d, t->dtype);
    if (!known)
      throw sy::Unsupported(what + " has dtype " + dtype_name(t->dtype) +
                            "; the linalg plugin takes float32 and float64");
    if (first == nullptr) {
      first = t, first_name = what;
    } else if (!sy::same_dtype(first->dtype, t->dtype)) {
      throw sy::Unsupported(first_name + " is " + dtype_name(first->dtype) + " but " + what + " is " +
                            dtype_name(t->dtype) + ": mixed dtypes are not supported");
    }
  }
  if (first == nullptr) throw sy::Unsupported("no tensor arguments");
  return sy::same_dtype(first->dtype, sy::kFloat32) ? Dtype::F32 : Dtype::F64;
}

double scalar_attr(const sy::Attrs& attrs, const char* name, double fallback) {
  switch (attrs.kind(name)) {
    case SY_ATTR_MISSING:
    case SY_ATTR_NONE: return fallback;
    case SY_ATTR_INT:
    case SY_ATTR_FLOAT: return attrs.f(name);
    default: throw sy::Unsupported(std::string("attribute '") + name + "' is not a number");
  }
}

Act activation_of(const sy::Node& node) {
  const std::string op = node.op;
  const size_t plus = op.find('+');
  if (plus == std::string::npos) return Act::None;
  return activation_named(op.substr(plus + 1), node.attrs);
}

Act activation_named(const std::string& post, const sy::Attrs& attrs) {
  const sy::Attrs& a = attrs;
  if (post == "aten::relu") return Act::Relu;
  if (post == "aten::silu") return Act::Silu;
  if (post == "aten::hardswish") return Act::Hardswish;
  if (post == "aten::gelu") {
    SY_AttrKind kind = a.kind("post.approximate");
    if (kind == SY_ATTR_MISSING || kind == SY_ATTR_NONE) return Act::GeluErf;
    if (kind != SY_ATTR_STRING) throw sy::Unsupported("attribute 'post.approximate' is not a string");
    const std::string approximate = a.s("post.approximate");
    if (approximate == "none") return Act::GeluErf;
    if (approximate == "tanh") return Act::GeluTanh;
    throw sy::Unsupported("gelu approximate='" + approximate + "': expected 'none' or 'tanh'");
  }
  throw sy::Unsupported("no epilogue for '" + post + "'");  // a table line without a case
}

// ---- prepared constants -----------------------------------------------------------------

void Prepared::prepare(const DLTensor* t, Dtype d) {
  if (t == nullptr || t->data == nullptr) return;  // not a constant
  View v = view_of(*t);
  const size_t n = v.shape.size();
  bool fits = n == 0 || (n == 1 ? blas_fits(1, v.shape[0], 0, v.strides[0])
                                : blas_fits(v.shape[n - 2], v.shape[n - 1], v.strides[n - 2], v.strides[n - 1]));
  if (fits) return;
  int64_t total = 1;
  for (int64_t s : v.shape) total *= s;
  copy_ = std::make_shared<std::vector<char>>(static_cast<size_t>(total) * elem_size(d));
  copy_contiguous(v, elem_size(d), copy_->data());
  source_ = v.data;
  shape_ = v.shape;
  source_strides_ = v.strides;
}

void Prepared::use(View& v) const {
  if (source_ == nullptr || v.data != source_ || v.shape != shape_ || v.strides != source_strides_) return;
  v.data = copy_->data();
  int64_t contiguous = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    v.strides[d] = contiguous;
    contiguous *= shape_[d];
  }
}

}  // namespace sy_linalg
