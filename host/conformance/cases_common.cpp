// Tensor makers shared by the conformance case generators, and the table of them all.
#include "case_makers.hpp"
#include "families.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>

#include <cmath>
#include <cstring>

namespace switchyard::conformance {

uint16_t to_half_bits(float v) {
  const _Float16 h = static_cast<_Float16>(v);  // GCC/Clang on x86-64: round to nearest even
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

float from_half_bits(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}

uint16_t to_bfloat16_bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  if (std::isnan(v)) return 0x7FC0;
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even, as c10::BFloat16 does
  return static_cast<uint16_t>(u >> 16);
}

float from_bfloat16_bits(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

namespace {

// Writes `v` as element i of a contiguous buffer of `dtype`.
void store(void* data, DLDataType dtype, int64_t i, double v) {
  switch (dtype.code) {
    case kDLFloat:
      if (dtype.bits == 32) {
        static_cast<float*>(data)[i] = static_cast<float>(v);
        return;
      }
      if (dtype.bits == 64) {
        static_cast<double*>(data)[i] = v;
        return;
      }
      if (dtype.bits == 16) {
        static_cast<uint16_t*>(data)[i] = to_half_bits(static_cast<float>(v));
        return;
      }
      break;
    case kDLBfloat:
      if (dtype.bits == 16) {
        static_cast<uint16_t*>(data)[i] = to_bfloat16_bits(static_cast<float>(v));
        return;
      }
      break;
    case kDLInt:
      if (dtype.bits == 8) {
        static_cast<int8_t*>(data)[i] = static_cast<int8_t>(std::lround(v));
        return;
      }
      if (dtype.bits == 16) {
        static_cast<int16_t*>(data)[i] = static_cast<int16_t>(std::lround(v));
        return;
      }
      if (dtype.bits == 32) {
        static_cast<int32_t*>(data)[i] = static_cast<int32_t>(std::lround(v));
        return;
      }
      if (dtype.bits == 64) {
        static_cast<int64_t*>(data)[i] = std::llround(v);
        return;
      }
      break;
    case kDLUInt:
      if (dtype.bits == 8) {
        static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(std::lround(std::fabs(v)));
        return;
      }
      break;
    case SY_DL_BOOL: static_cast<uint8_t*>(data)[i] = v > 0 ? 1 : 0; return;
    default: break;
  }
  throw Error(ErrorKind::Input, "conformance: no random data for dtype " + dtype_name(dtype));
}

}  // namespace

Tensor random_tensor(Rng& rng, DLDataType dtype, std::vector<int64_t> shape, double lo, double hi) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  const bool boolean = dtype.code == SY_DL_BOOL;
  for (int64_t i = 0; i < t.numel(); ++i)
    store(t.raw_data(), dtype, i, boolean ? rng.uniform(-1, 1) : rng.uniform(lo, hi));
  return t;
}

Tensor transposed_layout(const Tensor& t) {
  const auto& shape = t.shape();
  if (shape.size() < 2) throw Error(ErrorKind::Input, "conformance: transposed_layout needs 2 dims");
  const size_t n = shape.size();
  std::vector<int64_t> swapped = shape;
  std::swap(swapped[n - 1], swapped[n - 2]);
  Tensor storage = Tensor::empty(t.dtype(), swapped);  // memory order: last two dims swapped
  const size_t bytes = dtype_size(t.dtype());
  const Tensor src = t.contiguous();
  const int64_t rows = shape[n - 2], cols = shape[n - 1], batch = t.numel() / std::max<int64_t>(1, rows * cols);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(static_cast<char*>(storage.raw_data()) + ((b * cols + c) * rows + r) * bytes,
                    static_cast<const char*>(src.raw_data()) + ((b * rows + r) * cols + c) * bytes, bytes);
  std::vector<int64_t> strides = storage.strides();
  std::swap(strides[n - 1], strides[n - 2]);
  Tensor view = Tensor::from_blob(storage.raw_data(), t.dtype(), shape, strides);
  view.keep_alive(storage.owner());
  return view;
}

Tensor strided_rows(Rng& rng, DLDataType dtype, std::vector<int64_t> shape) {
  if (shape.empty()) throw Error(ErrorKind::Input, "conformance: strided_rows needs 1 dim");
  std::vector<int64_t> doubled = shape;
  doubled[0] *= 2;
  Tensor storage = random_tensor(rng, dtype, doubled);
  std::vector<int64_t> strides = storage.strides();
  strides[0] *= 2;
  Tensor view = Tensor::from_blob(storage.raw_data(), dtype, std::move(shape), strides);
  view.keep_alive(storage.owner());
  return view;
}

const Attribute* find_attr(const Attributes& attrs, const std::string& name) {
  for (const auto& [attr_name, value] : attrs)
    if (attr_name == name) return &value;
  return nullptr;
}

namespace {

// The same values, each rounded to the nearest bfloat16 (kept as float32): converting them
// to bfloat16 is then exact, and so is every product of two of them in float32.
Tensor bf16_exact(const Tensor& t) {  // t contiguous
  Tensor out = Tensor::empty(t.dtype(), t.shape());
  std::memcpy(out.raw_data(), t.raw_data(), t.nbytes());
  float* v = out.data<float>();
  for (int64_t i = 0; i < out.numel(); ++i) v[i] = from_bfloat16_bits(to_bfloat16_bits(v[i]));
  return out;
}

// Ops whose kernels have a bfloat16 path ([precision] compute = "bf16", option "@compute").
bool has_bf16_path(const std::string& op) {
  for (const char* head :
       {"aten::linear", "aten::addmm", "aten::mm", "aten::matmul", "aten::conv", "aten::_conv", "switchyard::swiglu"})
    if (op.rfind(head, 0) == 0) return true;
  return false;
}

// Adds to each float32 generator of such an op up to kBf16Cases cases "bf16 products, ...":
// a case with a constant input (the weight), its inputs rounded to bfloat16 values, and
// the option "@compute" = "bf16". With exact conversions and products, accumulating in
// float32 keeps the float32 case's tolerance; check-plugin also checks that the kernel
// reports computing in bfloat16 (or says why not).
void add_bf16_variants(CaseTable& table) {
  constexpr size_t kBf16Cases = 3;
  for (const std::string& op : table.ops()) {
    if (!has_bf16_path(op)) continue;
    CaseGenerator plain = *table.find(op);
    // The fused MLP (A+act+C) also converts its hidden activation, which is no bfloat16
    // value: each hidden value moves by up to 2^-9 of itself, so the output moves by up to
    // 2^-9 of the sum of |hidden x weight| over the hidden width. In these cases (256
    // hidden values up to about 3, weights about 1/16) that sum is near 8: 1.6e-2 at
    // worst. We measured up to 6e-3.
    const bool rounds_inside = std::count(op.begin(), op.end(), '+') >= 2;
    table.add(op, [plain, rounds_inside](DLDataType dtype) {
      std::vector<Case> cases = plain(dtype);
      if (!is_f32(dtype)) return cases;
      std::vector<Case> variants;
      for (const Case& c : cases) {
        if (variants.size() == kBf16Cases) break;
        if (std::find(c.constant.begin(), c.constant.end(), true) == c.constant.end()) continue;
        if (!std::all_of(c.inputs.begin(), c.inputs.end(), [](const auto& in) { return !in || in->is_contiguous(); }))
          continue;  // the variant keeps the case's layouts
        Case v = c;
        v.label = "bf16 products, " + c.label;
        for (auto& in : v.inputs)
          if (in && is_f32(in->dtype())) in = bf16_exact(*in);
        v.attrs.emplace_back("@compute", text("bf16"));
        if (rounds_inside) v.atol = 2e-2, v.rtol = 0;
        variants.push_back(std::move(v));
      }
      cases.insert(cases.end(), variants.begin(), variants.end());
      return cases;
    });
  }
}

}  // namespace

CaseTable all_cases() {
  CaseTable table;
  add_elementwise_cases(table);
  add_linalg_cases(table);
  add_conv_cases(table);
  add_pool_norm_cases(table);
  add_attention_cases(table);
  add_shape_cases(table);
  add_bf16_variants(table);
  return table;
}

}  // namespace switchyard::conformance
