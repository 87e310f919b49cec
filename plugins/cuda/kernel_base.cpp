// cuda plugin: dtypes, options, attribute checks, broadcasting and DeviceRun (kernel_base.hpp).
#include "kernel_base.hpp"

#include "allocator.hpp"
#include "host_copy.hpp"

#include <algorithm>

namespace sycuda {

// ---- dtypes ------------------------------------------------------------------------------------

std::string dtype_name(DLDataType dt) {
  if (dt.lanes != 1) return "a vector dtype (lanes " + std::to_string(dt.lanes) + ")";
  switch (dt.code) {
    case kDLFloat: return "float" + std::to_string(dt.bits);
    case kDLBfloat: return dt.bits == 16 ? "bfloat16" : "bfloat" + std::to_string(dt.bits);
    case kDLInt: return "int" + std::to_string(dt.bits);
    case kDLUInt: return "uint" + std::to_string(dt.bits);
    case SY_DL_BOOL: return "bool";
    default: return "dtype code " + std::to_string(dt.code);
  }
}

std::optional<launch::DT> dt_of(DLDataType dt) {
  using launch::DT;
  if (dt.lanes != 1) return std::nullopt;
  if (dt.code == kDLFloat && dt.bits == 32) return DT::F32;
  if (dt.code == kDLFloat && dt.bits == 16) return DT::F16;
  if (dt.code == kDLBfloat && dt.bits == 16) return DT::BF16;
  if (dt.code == kDLFloat && dt.bits == 64) return DT::F64;
  if (dt.code == kDLInt && dt.bits == 64) return DT::I64;
  if (dt.code == kDLInt && dt.bits == 32) return DT::I32;
  if (dt.code == kDLInt && dt.bits == 16) return DT::I16;
  if (dt.code == kDLInt && dt.bits == 8) return DT::I8;
  if (dt.code == kDLUInt && dt.bits == 8) return DT::U8;
  if (dt.code == SY_DL_BOOL && dt.bits == 8) return DT::Bool;
  return std::nullopt;
}

launch::DT need_dt(DLDataType dt, const std::string& what) {
  std::optional<launch::DT> d = dt_of(dt);
  if (!d) throw sy::Unsupported(what + " has dtype " + dtype_name(dt) + ", which the cuda plugin does not handle");
  return *d;
}

bool is_float(DLDataType dt) {
  std::optional<launch::DT> d = dt_of(dt);
  return d && (*d == launch::DT::F32 || *d == launch::DT::F16 || *d == launch::DT::BF16);
}

const std::vector<DLDataType>& float_dtypes() {
  static const std::vector<DLDataType> list{sy::kFloat32, sy::kFloat16, sy::kBFloat16};
  return list;
}

const std::vector<DLDataType>& all_dtypes() {
  static const std::vector<DLDataType> list{
      sy::kFloat32, sy::kFloat16, sy::kBFloat16, sy::kFloat64, sy::kInt64, sy::kInt32, DLDataType{kDLInt, 16, 1},
      sy::kInt8,    sy::kUInt8,   sy::kBool};
  return list;
}

// ---- precision ---------------------------------------------------------------------------------

Precision precision_of(const sy::Attrs& attrs) {
  const SY_AttrKind kind = attrs.kind("@precision");
  if (kind == SY_ATTR_MISSING || kind == SY_ATTR_NONE) return Precision::Float32;
  if (kind != SY_ATTR_STRING) throw sy::Unsupported("option '@precision' must be a string");
  const std::string v = attrs.s("@precision");
  if (v == "float32" || v == "fp32") return Precision::Float32;
  if (v == "tf32") return Precision::Tf32;
  if (v == "float16" || v == "fp16" || v == "half") return Precision::Float16;
  if (v == "bfloat16" || v == "bf16") return Precision::Bfloat16;
  throw sy::Unsupported("option precision = \"" + v +
                        "\" is not one the cuda plugin knows "
                        "(float32, tf32, float16, bfloat16)");
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Float32: return "float32";
    case Precision::Tf32: return "tf32";
    case Precision::Float16: return "float16";
    case Precision::Bfloat16: return "bfloat16";
  }
  return "?";
}

// ---- node checks -------------------------------------------------------------------------------

void check_attributes(const sy::Node& node, const std::vector<std::string>& known) {
  const SY_HostApi* h = sy::host_api();
  const SY_Attributes* raw = node.attrs.raw();
  for (size_t i = 0, n = h->attr_count(raw); i < n; ++i) {
    const char* name = h->attr_name(raw, i);
    if (name == nullptr || name[0] == '@' || h->attr_kind(raw, name) == SY_ATTR_NONE) continue;
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw sy::Unsupported(std::string("attribute '") + name + "' is not understood by the cuda kernel for " +
                            node.op);
  }
}

// ---- DeviceRun ---------------------------------------------------------------------------------

size_t DevTensor::bytes() const { return static_cast<size_t>(numel()) * element_size(dtype); }

namespace {
bool on_device(const DLTensor& t) { return t.device.device_type == kDLCUDA; }
}  // namespace

DeviceRun::DeviceRun(sy::Run& run) : run_(run), lock_(Device::get().lock()) {
  Device::get().require_real();
  Device::use_on_this_thread();
  inputs_.resize(run.num_inputs());
  for (size_t o = 0; o < run.num_outputs(); ++o) {
    DLTensor& t = run.output(o);
    DevTensor d;
    d.dtype = t.dtype;
    d.shape = sy::shape_of(t);
    if (on_device(t)) {
      if (!is_compact(t))
        throw sy::Error("output " + std::to_string(o) + " on the device is not compact", SY_ERROR_INTERNAL);
      d.data = static_cast<char*>(t.data) + t.byte_offset;
    } else {
      staged_.emplace_back(d.bytes());
      d.data = staged_.back().get();
      host_outputs_.push_back(o);
    }
    outputs_.push_back(std::move(d));
  }
}

DeviceRun::~DeviceRun() = default;

const DevTensor& DeviceRun::in(size_t i) {
  if (!has(i)) throw sy::Error("run: input " + std::to_string(i) + " is missing");
  if (inputs_[i]) return *inputs_[i];
  const DLTensor& t = run_.input(i);
  DevTensor d;
  d.dtype = t.dtype;
  d.shape = sy::shape_of(t);
  if (on_device(t)) {
    if (!is_compact(t))
      throw sy::Error("input " + std::to_string(i) + " on the device is not compact", SY_ERROR_INTERNAL);
    d.data = static_cast<char*>(t.data) + t.byte_offset;
  } else {
    staged_.emplace_back(d.bytes());
    d.data = staged_.back().get();
    if (d.numel() > 0) stage_to_device(t, d.data);
  }
  inputs_[i] = std::move(d);
  return *inputs_[i];
}

void DeviceRun::finish() {
  for (size_t o : host_outputs_)
    if (outputs_[o].numel() > 0) copy_to_host(outputs_[o].data, run_.output(o));
  host_outputs_.clear();
  if (lock_.owns_lock()) lock_.unlock();
}

void launched(cudaError_t err, const std::string& kernel, const std::string& node) {
  after_launch(err, kernel + " (node '" + node + "')");
}

// ---- TensorArgs --------------------------------------------------------------------------------

TensorArgs::TensorArgs(const sy::Node& node, const std::vector<std::string>& names, const std::vector<bool>& optional)
    : names_(names) {
  size_t slot = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const char* name = names[i].c_str();
    if (node.attrs.kind(name) == SY_ATTR_TENSOR) {
      slots_.push_back(-1);
      attrs_.push_back(node.attrs.tensor(name));
    } else if (slot < node.num_inputs && (node.inputs[slot] != nullptr || optional[i])) {
      slots_.push_back(static_cast<int>(slot++));
      attrs_.push_back(nullptr);
    } else if (optional[i]) {
      slots_.push_back(-1);
      attrs_.push_back(nullptr);
    } else {
      throw sy::Unsupported("tensor argument '" + names[i] + "' (input " + std::to_string(slot) + ") is missing");
    }
  }
  if (slot < node.num_inputs)
    throw sy::Unsupported("takes " + std::to_string(slot) + " tensor inputs, node has " +
                          std::to_string(node.num_inputs));
  uploaded_.resize(names.size());
}

const DLTensor* TensorArgs::meta(size_t i, const DLTensor* const* inputs, size_t num_inputs) const {
  if (slots_[i] >= 0) return static_cast<size_t>(slots_[i]) < num_inputs ? inputs[slots_[i]] : nullptr;
  return attrs_[i];
}

DevTensor TensorArgs::device(size_t i, DeviceRun& run) {
  if (slots_[i] >= 0) {
    if (!run.has(static_cast<size_t>(slots_[i]))) return DevTensor{};
    return run.in(static_cast<size_t>(slots_[i]));
  }
  const DLTensor* t = attrs_[i];
  if (t == nullptr) return DevTensor{};
  DevTensor d;
  d.dtype = t->dtype;
  d.shape = sy::shape_of(*t);
  // Under the device lock (DeviceRun holds it), so one thread uploads.
  if (!uploaded_[i]) {
    auto buffer = std::make_shared<DeviceBuffer>(d.bytes());
    if (d.numel() > 0) stage_to_device(*t, buffer->get());
    uploaded_[i] = std::move(buffer);
  }
  d.data = uploaded_[i]->get();
  return d;
}

// ---- CudaKernel --------------------------------------------------------------------------------

void CudaKernel::host_only(size_t i) {
  if (host_only_.size() <= i) host_only_.resize(i + 1, false);
  host_only_[i] = true;
}

void CudaKernel::storage(sy::StorageQuery& q) {
  const SY_StorageMask cuda = SY_STORAGE_MASK(kCudaStorage);
  for (size_t i = 0; i < q.num_inputs(); ++i) {
    const bool any = i < host_only_.size() && host_only_[i];
    q.reads(i, any ? (SY_STORAGE_MASK_HOST | cuda) : cuda);
  }
  for (size_t o = 0; o < q.num_outputs(); ++o) q.writes(o, cuda);
  if (in_place_input_ >= 0 && static_cast<size_t>(in_place_input_) < q.num_inputs() && q.num_outputs() >= 1)
    q.in_place(0, static_cast<size_t>(in_place_input_));
}

}  // namespace sycuda
