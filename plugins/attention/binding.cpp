// attention plugin: argument binding and tensor checks (see binding.hpp).
#include "binding.hpp"
#include <switchyard/shapes.hpp>

#include <algorithm>

namespace sy_attention {
namespace {
constexpr int kFromAttr = -1;
constexpr int kAbsent = -2;
}  // namespace

std::string str(const Shape& s) { return sy::shape_string(s); }

TensorArgs::TensorArgs(const sy::Node& n, std::vector<std::string> tensors, const std::vector<std::string>& others)
    : names_(std::move(tensors)), num_inputs_(n.num_inputs) {
  size_t next = 0;
  for (const std::string& name : names_) {
    if (n.attrs.kind(name.c_str()) == SY_ATTR_TENSOR) {
      slot_.push_back(kFromAttr);
      attr_.push_back(n.attrs.tensor(name.c_str()));
    } else {
      slot_.push_back(next < n.num_inputs ? static_cast<int>(next) : kAbsent);
      attr_.push_back(nullptr);
      ++next;
    }
  }
  if (next < n.num_inputs)
    throw sy::Unsupported("takes " + std::to_string(next) + " tensor inputs, node has " + std::to_string(n.num_inputs));
  const SY_HostApi* h = sy::host_api();
  for (size_t i = 0, count = h->attr_count(n.attrs.raw()); i < count; ++i) {
    const char* name = h->attr_name(n.attrs.raw(), i);
    // '@' attributes are config options (sdk.h, "Options"): read where known, never a refusal.
    if (name == nullptr || name[0] == '@' || n.attrs.kind(name) == SY_ATTR_NONE) continue;
    bool known = std::find(names_.begin(), names_.end(), name) != names_.end() ||
                 std::find(others.begin(), others.end(), name) != others.end();
    if (!known) throw sy::Unsupported(std::string("unexpected attribute '") + name + "'");
  }
}

const DLTensor* TensorArgs::get(size_t i, const DLTensor* const* inputs, size_t num_inputs) const {
  if (num_inputs != num_inputs_)
    throw sy::Error("created with " + std::to_string(num_inputs_) + " inputs, called with " +
                    std::to_string(num_inputs));
  if (slot_[i] == kFromAttr) return attr_[i];
  if (slot_[i] == kAbsent) return nullptr;
  return inputs[slot_[i]];
}

std::vector<const DLTensor*> TensorArgs::all(const DLTensor* const* inputs, size_t num_inputs) const {
  std::vector<const DLTensor*> out;
  out.reserve(names_.size());  // runs per node per run: one allocation, not one per growth
  for (size_t i = 0; i < names_.size(); ++i) out.push_back(get(i, inputs, num_inputs));
  return out;
}

bool is_f32(const DLTensor& t) { return sy::same_dtype(t.dtype, sy::kFloat32); }
bool is_bool(const DLTensor& t) { return sy::same_dtype(t.dtype, sy::kBool); }

void require_cpu(const DLTensor& t, const std::string& name) {
  if (t.device.device_type != kDLCPU) throw sy::Unsupported("'" + name + "' is not a CPU tensor");
}

void require_f32(const DLTensor& t, const std::string& name) {
  require_cpu(t, name);
  if (!is_f32(t)) throw sy::Unsupported("'" + name + "' is not float32 (only float32 is implemented)");
}

Shape broadcast(const Shape& a, const Shape& b, const std::string& what) {
  return sy::declining([&] { return sy::broadcast_shapes(a, b, what); });  // declined, not a failure
}

std::vector<int64_t> lead_strides(const DLTensor& t, int tail, const Shape& lead) {
  std::vector<int64_t> out(lead.size(), 0);
  const Shape strides = strides_of(t);
  const int own = t.ndim - tail;
  for (int d = 0; d < own; ++d) {
    const size_t at = lead.size() - static_cast<size_t>(own - d);
    if (t.shape[d] != 1) out[at] = strides[d];
  }
  return out;
}

void strides_over(const DLTensor& t, const Shape& lead, std::vector<int64_t>* lead_out, int64_t* row, int64_t* col) {
  const Shape st = strides_of(t);
  const int tail = t.ndim < 2 ? t.ndim : 2;
  *lead_out = lead_strides(t, tail, lead);
  *col = t.ndim >= 1 && t.shape[t.ndim - 1] != 1 ? st[t.ndim - 1] : 0;
  *row = t.ndim >= 2 && t.shape[t.ndim - 2] != 1 ? st[t.ndim - 2] : 0;
}

float* output_f32(const sy::Run& r, size_t i) {
  DLTensor& out = r.output(i);
  if (!is_f32(out) || !sy::is_contiguous(out))
    throw sy::Error("output " + std::to_string(i) + " is not a contiguous float32 tensor", SY_ERROR_INTERNAL);
  return sy::data<float>(out);
}

}  // namespace sy_attention
