#include "exec/island.hpp"

#include "ir/precision.hpp"
#include "loader/host_api.hpp"
#include "util/log.hpp"

#include <switchyard/half.hpp>

#include <exception>
#include <map>
#include <new>
#include <utility>

namespace switchyard::exec {
namespace {

constexpr DLDataType kF32{kDLFloat, 32, 1};

bool same_dtype(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }
bool is_f32(DLDataType d) { return same_dtype(d, kF32); }

const void* first_element(const DLTensor& t) { return static_cast<const char*>(t.data) + t.byte_offset; }

std::vector<int64_t> shape_of(const DLTensor& t) { return {t.shape, t.shape + t.ndim}; }

// A float32 copy of a half-precision host tensor, whatever its strides.
Tensor converted_copy(const DLTensor& t) {
  std::vector<int64_t> strides;
  if (t.strides != nullptr) strides.assign(t.strides, t.strides + t.ndim);
  return ir::to_float32(Tensor::from_blob(const_cast<void*>(first_element(t)), t.dtype, shape_of(t), strides));
}

// Writes contiguous float32 values into a half-precision tensor, whatever its strides.
void write_half(const float* src, const DLTensor& dst) {
  auto* base = static_cast<uint16_t*>(const_cast<void*>(first_element(dst)));
  const bool bf16 = dst.dtype.code == kDLBfloat;
  auto put = [bf16](float v) { return bf16 ? float_to_bfloat16(v) : float_to_half(v); };
  int64_t n = 1;
  for (int32_t d = 0; d < dst.ndim; ++d) n *= dst.shape[d];
  if (dst.strides == nullptr) {
    for (int64_t i = 0; i < n; ++i) base[i] = put(src[i]);
    return;
  }
  std::vector<int64_t> index(static_cast<size_t>(dst.ndim), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = 0;
    for (int32_t d = 0; d < dst.ndim; ++d) at += index[static_cast<size_t>(d)] * dst.strides[d];
    base[at] = put(src[i]);
    for (int32_t d = dst.ndim - 1; d >= 0 && ++index[static_cast<size_t>(d)] == dst.shape[d]; --d)
      index[static_cast<size_t>(d)] = 0;
  }
}

// One call's inputs as the inner kernel takes them: half-precision ones described as
// float32, pointing at the constant's converted copy or (with `convert`, at run) at a
// float32 copy made now; without data (metadata) otherwise.
struct Float32Inputs {
  std::vector<DLTensor> described;
  std::vector<Tensor> copies;
  std::vector<const DLTensor*> pointers;

  Float32Inputs(const DLTensor* const* inputs, size_t n, const Float32Twin& twin, bool convert) {
    described.reserve(n);
    copies.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const DLTensor* in = inputs[i];
      if (in == nullptr || !ir::is_half(in->dtype)) {
        pointers.push_back(in);
        continue;
      }
      DLTensor t = *in;
      t.dtype = kF32;
      if (in->data != nullptr) {
        const Tensor* constant = twin.converted(first_element(*in));
        const Tensor* copy = constant;
        if (copy == nullptr && convert) copy = &copies.emplace_back(converted_copy(*in));
        t.data = copy != nullptr ? copy->raw_data() : nullptr;
        t.byte_offset = 0;
        t.strides = nullptr;  // the copies are compact
      }
      described.push_back(t);
      pointers.push_back(&described.back());
    }
  }
};

struct Instance {
  const Island* island;
  SY_KernelInstance* inner = nullptr;
};

Instance* of(SY_KernelInstance* instance) { return reinterpret_cast<Instance*>(instance); }
const Island& island_of(void* context) { return *static_cast<const Island*>(context); }

// A call's arguments as the inner kernel takes them: its instance, the float32 inputs.
template <typename Args>
Args for_inner(const Args& args, const Float32Inputs& in) {
  Args inner = args;
  inner.instance = of(args.instance)->inner;
  inner.inputs = in.pointers.data();
  return inner;
}

// Runs `body`, turning an exception thrown on the host's side into a status and message.
template <typename Body>
SY_Status guarded(SY_CallContext* call, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    call->message = "float32 island: out of memory converting its tensors";
    return call->status = SY_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    call->message = std::string("float32 island: ") + e.what();
    return call->status = SY_ERROR_INTERNAL;
  }
}

SY_Status island_create(void* context, SY_KernelCreateArgs* args) {
  return guarded(args->call, [&] {
    const Island& island = island_of(context);
    Float32Inputs in(args->inputs, args->num_inputs, island.twin(), false);
    SY_KernelCreateArgs inner = *args;
    inner.inputs = in.pointers.data();
    const SY_Status s = island.inner().create(island.inner().context, &inner);
    if (s != SY_OK) return s;
    args->instance = reinterpret_cast<SY_KernelInstance*>(new Instance{&island, inner.instance});
    return SY_OK;
  });
}

// The inner kernel's outputs, float32 ones given as the model's dtype.
SY_Status island_infer(void* context, SY_KernelInferArgs* args) {
  return guarded(args->call, [&] {
    const Island& island = island_of(context);
    const Float32Inputs in(args->inputs, args->num_inputs, island.twin(), false);
    SY_KernelInferArgs inner = for_inner(*args, in);
    const SY_Status s = island.inner().infer(island.inner().context, &inner);
    if (s != SY_OK) return s;
    for (size_t o = 0; o < args->num_outputs; ++o)
      if (is_f32(args->outputs[o].dtype)) args->outputs[o].dtype = island.half();
    return SY_OK;
  });
}

// Host-allocated outputs: the inner kernel writes float32 buffers of its own, converted
// into the host's half-precision outputs after it ran.
SY_Status run_host_allocated(const Island& island, SY_KernelRunArgs* args, SY_KernelRunArgs& inner) {
  std::vector<Tensor> float_outputs(args->num_outputs);
  std::vector<DLTensor*> outputs(args->outputs, args->outputs + args->num_outputs);
  for (size_t o = 0; o < args->num_outputs; ++o)
    if (same_dtype(args->outputs[o]->dtype, island.half())) {  // float32 from the inner kernel (island_infer)
      float_outputs[o] = Tensor::uninitialized(kF32, shape_of(*args->outputs[o]));
      outputs[o] = const_cast<DLTensor*>(&float_outputs[o].dl());
    }
  inner.outputs = outputs.data();
  const SY_Status s = island.inner().run(island.inner().context, &inner);
  if (s != SY_OK) return s;
  for (size_t o = 0; o < args->num_outputs; ++o)
    if (float_outputs[o].defined()) write_half(float_outputs[o].data<float>(), *args->outputs[o]);
  return SY_OK;
}

// Kernel-allocated outputs: each float32 tensor the inner kernel hands over becomes one
// of the model's dtype, which the host then owns.
struct HalfOutput {
  DLManagedTensor managed{};
  Tensor tensor;
};

SY_Status run_kernel_allocated(const Island& island, SY_KernelRunArgs* args, SY_KernelRunArgs& inner) {
  const SY_Status s = island.inner().run(island.inner().context, &inner);
  if (s != SY_OK) return s;
  for (size_t o = 0; o < args->num_outputs; ++o) {
    DLManagedTensor* made = args->produced[o];
    if (made == nullptr || !is_f32(made->dl_tensor.dtype)) continue;
    auto* half = new HalfOutput;
    half->tensor = Tensor::uninitialized(island.half(), shape_of(made->dl_tensor));
    const Tensor compact = Tensor::adopt(made).contiguous();  // releases the float32 one when done
    write_half(compact.data<float>(), half->tensor.dl());
    half->managed.dl_tensor = half->tensor.dl();
    half->managed.manager_ctx = half;
    half->managed.deleter = [](DLManagedTensor* m) { delete static_cast<HalfOutput*>(m->manager_ctx); };
    args->produced[o] = &half->managed;
  }
  return SY_OK;
}

SY_Status island_run(void* context, SY_KernelRunArgs* args) {
  return guarded(args->call, [&] {
    const Island& island = island_of(context);
    const Float32Inputs in(args->inputs, args->num_inputs, island.twin(), true);
    SY_KernelRunArgs inner = for_inner(*args, in);
    inner.input_storage = nullptr;  // the island reads and writes plain host memory only
    inner.output_storage = nullptr;
    return island.inner().output_mode == SY_OUTPUT_HOST_ALLOCATED ? run_host_allocated(island, args, inner)
                                                                  : run_kernel_allocated(island, args, inner);
  });
}

void island_destroy(void* context, SY_KernelInstance* instance) {
  const Island& island = island_of(context);
  Instance* self = of(instance);
  if (self->inner != nullptr) island.inner().destroy(island.inner().context, self->inner);
  delete self;
}

}  // namespace

DLDataType island_dtype(const std::vector<const DLTensor*>& inputs) {
  for (const DLTensor* t : inputs)
    if (t != nullptr && ir::is_half(t->dtype)) return t->dtype;
  return DLDataType{0, 0, 0};
}

Float32Twin::Float32Twin(const std::vector<const DLTensor*>& inputs) {
  described_.reserve(inputs.size());
  for (const DLTensor* in : inputs) {
    if (in == nullptr || !ir::is_half(in->dtype)) {
      pointers_.push_back(in);
      continue;
    }
    DLTensor t = *in;
    t.dtype = kF32;
    if (in->data != nullptr) {  // a constant: converted now, once
      const Tensor& copy = constants_.emplace_back(first_element(*in), converted_copy(*in)).second;
      t.data = copy.raw_data();
      t.byte_offset = 0;
      t.strides = nullptr;
    }
    described_.push_back(t);
    pointers_.push_back(&described_.back());
  }
}

const Tensor* Float32Twin::converted(const void* data) const {
  for (const auto& [half, copy] : constants_)
    if (half == data) return &copy;
  return nullptr;
}

uint64_t Float32Twin::constant_bytes() const {
  uint64_t bytes = 0;
  for (const auto& c : constants_) bytes += c.second.nbytes();
  return bytes;
}

Island::Island(const select::Candidate& inner, DLDataType half, std::unique_ptr<Float32Twin> twin)
    : inner_(inner.def), half_(half), twin_(std::move(twin)) {
  def_.struct_size = SY_KernelDef_STRUCT_SIZE;
  def_.op = inner_->op;
  def_.family = inner_->family;
  def_.device_type = inner_->device_type;
  dtypes_.assign(inner_->dtypes, inner_->dtypes + inner_->num_dtypes);
  dtypes_.push_back(half);
  def_.dtypes = dtypes_.data();
  def_.num_dtypes = dtypes_.size();
  def_.output_mode = inner_->output_mode;
  def_.context = this;
  def_.create = island_create;
  def_.infer = inner_->infer != nullptr ? island_infer : nullptr;
  def_.run = island_run;
  def_.destroy = island_destroy;
}

uint64_t island_bytes_per_run(const std::vector<const DLTensor*>& inputs, const std::vector<SY_TensorDesc>& outputs) {
  uint64_t bytes = 0;
  for (const DLTensor* t : inputs)
    if (t != nullptr && t->data == nullptr && ir::is_half(t->dtype)) {
      uint64_t n = 4;
      for (int32_t d = 0; d < t->ndim; ++d) n *= static_cast<uint64_t>(t->shape[d]);
      bytes += n;
    }
  for (const SY_TensorDesc& d : outputs)
    if (ir::is_half(d.dtype)) {
      uint64_t n = 4;
      for (int32_t k = 0; k < d.ndim; ++k) n *= static_cast<uint64_t>(d.shape[k]);
      bytes += n;
    }
  return bytes;
}

void log_islands(const Plan& plan, const ir::Graph& graph) {
  std::map<std::string, size_t> ops;
  size_t islands = 0;
  uint64_t per_run = 0, once = 0;
  DLDataType half{0, 0, 0};
  for (size_t n = 0; n < plan.record.nodes.size(); ++n) {
    const NodeDecision& np = plan.record.nodes[n];
    if (!np.bound || np.bound->island.lanes == 0) continue;
    ++islands;
    ++ops[graph.nodes[n].op];
    per_run += np.bound->compute_converted_bytes;
    once += np.bound->compute_constant_bytes;
    half = np.bound->island;
  }
  if (islands == 0) return;
  std::string which;
  for (const auto& [op, count] : ops) which += (which.empty() ? "" : ", ") + op + " x" + std::to_string(count);
  log::get().warn(
      "[precision] {} node(s) of this {} model run as float32 islands ({}): their {} inputs are converted to "
      "float32 and their outputs back, {} bytes per run, {} bytes of weights once; `switchyard plan` shows each",
      islands, dtype_name(half), which, dtype_name(half), per_run, once);
}

}  // namespace switchyard::exec
