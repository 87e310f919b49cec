// switchyard `aten` reference plugin: every op runs through LibTorch's ATen on the CPU.
//
// It is the last-resort fallback backend, so it must really accept what it claims:
// supports() binds the node to the op's ATen schema (inputs, attributes and their kinds,
// dtypes, device, number of outputs) and declines with a reason when anything is off.
//
// Argument convention (full text in aten_ops.hpp):
//   tensor arguments are inputs in schema order; all non-tensor arguments are attributes
//   named as in the ATen schema; an absent optional tensor argument is a NULL input.
//
// Memory: inputs are wrapped zero-copy (at::from_blob, honouring DLPack strides and
// byte_offset). Outputs are produced by ATen and handed to the host zero-copy as
// DLManagedTensor (SY_OUTPUT_KERNEL_ALLOCATED); the deleter drops the at::Tensor. An
// output that views an input (reshape, permute, ...) is handed over as a view: the SDK
// lets the host keep that input alive. A view of a constant attribute is copied, since
// attributes die with the model while outputs may outlive it.
//
// Threads: ATen's intra-op threads are the host's budget (SY_HostApi.num_threads): set at
// init, and matched per call on the calling thread (OpenMP's count is per thread).
#include "aten_ops.hpp"

#include "common/openmp_threads.hpp"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/ScalarOps.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sy_aten {

// ---- Call --------------------------------------------------------------------------------

at::Tensor Call::tos(size_t k) const {
  const at::Tensor& x = tensor_or_undefined(k);
  if (x.defined()) return x;
  return at::native::wrapped_scalar_tensor(scalar(k));
}

std::vector<at::Tensor> Call::list(size_t k) const {
  const ArgBinding& a = b_.args[k];
  std::vector<at::Tensor> out;
  out.reserve(a.count);
  for (int32_t j = 0; j < a.count; ++j) {
    if (!in_[a.slot + j].defined())
      throw sy::Error("input " + std::to_string(a.slot + j) + " of list '" + b_.ov->args[k].name + "' is missing");
    out.push_back(in_[a.slot + j]);
  }
  return out;
}

c10::List<c10::optional<at::Tensor>> Call::opt_list(size_t k) const {
  const ArgBinding& a = b_.args[k];
  c10::List<c10::optional<at::Tensor>> out;
  for (int32_t j = 0; j < a.count; ++j) {
    const at::Tensor& x = in_[a.slot + j];
    out.push_back(x.defined() ? c10::optional<at::Tensor>(x) : c10::nullopt);
  }
  return out;
}

void Call::missing(size_t k) const {
  const ArgBinding& a = b_.args[k];
  throw sy::Error("tensor argument '" + b_.ov->args[k].name + "'" +
                  (a.slot >= 0 ? " (input " + std::to_string(a.slot) + ")" : "") + " is missing");
}

namespace {

// ---- binding -----------------------------------------------------------------------------

at::Tensor wrap(const DLTensor& d) {
  at::ScalarType st;
  if (!to_scalar_type(d.dtype, &st)) throw sy::Error("unsupported input dtype " + dl_name(d.dtype));
  if (d.device.device_type != kDLCPU && d.device.device_type != kDLCUDAHost)
    throw sy::Error("input is not in CPU memory");
  if (d.data == nullptr && sy::numel(d) != 0) throw sy::Error("input has no data");
  void* p = static_cast<char*>(d.data) + d.byte_offset;
  at::IntArrayRef sizes(d.shape, static_cast<size_t>(d.ndim));
  auto opts = at::TensorOptions().dtype(st).device(at::kCPU);
  if (d.strides == nullptr) return at::from_blob(p, sizes, opts);
  return at::from_blob(p, sizes, at::IntArrayRef(d.strides, static_cast<size_t>(d.ndim)), opts);
}

void check_tensor(const DLTensor& d, DtypeMask allowed, const std::string& what) {
  if (d.device.device_type != kDLCPU && d.device.device_type != kDLCUDAHost)
    throw sy::Unsupported(what + " is on device type " + std::to_string(d.device.device_type) +
                          "; the aten plugin runs on the CPU only");
  at::ScalarType st;
  if (!to_scalar_type(d.dtype, &st) || !(allowed & bit(st)))
    throw sy::Unsupported(what + " has dtype " + dl_name(d.dtype) + "; accepted: " + mask_names(allowed));
  if (d.strides != nullptr)
    for (int i = 0; i < d.ndim; ++i)
      if (d.strides[i] < 0) throw sy::Unsupported(what + " has a negative stride");
}

bool takes_input_slot(const ArgSpec& a, const sy::Node& n) {
  if (a.type == ArgType::TensorList) return true;
  if (a.type != ArgType::Tensor && a.type != ArgType::TensorOrScalar) return false;
  SY_AttrKind kind = n.attrs.kind(a.name.c_str());
  if (kind == SY_ATTR_TENSOR) return false;
  return a.type == ArgType::Tensor || (kind != SY_ATTR_INT && kind != SY_ATTR_FLOAT);
}

// How many of the `remaining` inputs the tensor list ov.args[k] takes: the `<name>.len`
// attribute if the node has one, else the table's `Tensor[N]`, else (when only required
// tensors follow it) all but one input for each tensor argument after it.
size_t list_length(const Overload& ov, size_t k, const sy::Node& n, size_t remaining) {
  const ArgSpec& a = ov.args[k];
  const std::string len_name = a.name + ".len";
  SY_AttrKind kind = n.attrs.kind(len_name.c_str());
  size_t count = 0;
  if (kind == SY_ATTR_INT) {
    int64_t len = n.attrs.i(len_name.c_str());
    if (len < 0 || static_cast<uint64_t>(len) > remaining)
      throw sy::Unsupported("attribute '" + len_name + "' is " + std::to_string(len) + ", but " +
                            std::to_string(remaining) + " inputs remain for the list");
    return static_cast<size_t>(len);
  }
  if (kind != SY_ATTR_MISSING && kind != SY_ATTR_NONE)
    throw sy::Unsupported("attribute '" + len_name + "' is " + kind_name(kind) + ", expected an int");
  if (a.fixed_len > 0) {
    count = static_cast<size_t>(a.fixed_len);
  } else if (a.needs_len) {
    throw sy::Unsupported("tensor list '" + a.name +
                          "' is followed by other tensor arguments; "
                          "the node needs the int attribute '" +
                          len_name + "' to split its inputs");
  } else {
    size_t after = 0;
    for (size_t j = k + 1; j < ov.args.size(); ++j) after += takes_input_slot(ov.args[j], n);
    count = remaining > after ? remaining - after : 0;
  }
  if (count > remaining)
    throw sy::Unsupported("tensor list '" + a.name + "' takes " + std::to_string(count) + " inputs, " +
                          std::to_string(remaining) + " remain");
  return count;
}

// Matches node `n` to overload `ov`; throws sy::Unsupported with the reason if it can't.
// An attribute the schema doesn't name is a mismatch unless its value is None or its name
// starts with '@' (a config option): ignoring it could silently compute something else. `wrap_attrs`: wrap constant tensor attributes
// as at::Tensor (create time; supports() only looks at metadata).
Bound bind(const Overload& ov, const sy::Node& n, bool wrap_attrs) {
  Bound b;
  b.ov = &ov;
  b.inputs = n.inputs;
  b.num_inputs = n.num_inputs;
  b.args.resize(ov.args.size());
  size_t slot = 0;
  const size_t n_in = n.num_inputs;

  auto tensor_attr = [&](const ArgSpec& a, ArgBinding& ab) {
    const DLTensor* d = n.attrs.tensor(a.name.c_str());
    check_tensor(*d, a.dtypes ? a.dtypes : ov.dtypes, "tensor attribute '" + a.name + "'");
    ab.value.kind = Value::kTensor;
    if (wrap_attrs) ab.value.t = wrap(*d);
  };
  auto input = [&](const ArgSpec& a, ArgBinding& ab, bool optional) {
    if (slot < n_in && n.inputs[slot] != nullptr) {
      check_tensor(*n.inputs[slot], a.dtypes ? a.dtypes : ov.dtypes,
                   "input " + std::to_string(slot) + " ('" + a.name + "')");
    } else if (!optional) {
      throw sy::Unsupported("tensor argument '" + a.name + "' (input " + std::to_string(slot) + ") is missing");
    }
    if (slot < n_in) ab.slot = static_cast<int32_t>(slot++), ab.count = 1;
  };

  for (size_t k = 0; k < ov.args.size(); ++k) {
    const ArgSpec& a = ov.args[k];
    ArgBinding& ab = b.args[k];
    SY_AttrKind kind = n.attrs.kind(a.name.c_str());
    switch (a.type) {
      case ArgType::Tensor:
        if (kind == SY_ATTR_TENSOR)
          tensor_attr(a, ab);
        else
          input(a, ab, a.optional);
        break;
      case ArgType::TensorOrScalar:
        if (kind == SY_ATTR_TENSOR)
          tensor_attr(a, ab);
        else if (kind == SY_ATTR_INT || kind == SY_ATTR_FLOAT)
          ab.value = read_attr(n.attrs, a, kind);
        else if (kind != SY_ATTR_MISSING && kind != SY_ATTR_NONE)
          throw sy::Unsupported("attribute '" + a.name + "' is " + kind_name(kind) + ", expected a Scalar");
        else
          input(a, ab, false);
        break;
      case ArgType::TensorList: {
        size_t count = list_length(ov, k, n, n_in - slot);
        ab.slot = static_cast<int32_t>(slot);
        ab.count = static_cast<int32_t>(count);
        if (ab.count == 0 && !a.optional)
          throw sy::Unsupported("tensor list '" + a.name + "' (inputs " + std::to_string(slot) + "...) is empty");
        for (const size_t end = slot + count; slot < end; ++slot) {
          std::string what = "input " + std::to_string(slot) + " ('" + a.name + "')";
          if (n.inputs[slot] != nullptr)
            check_tensor(*n.inputs[slot], a.dtypes ? a.dtypes : ov.dtypes, what);
          else if (!a.elems_optional)
            throw sy::Unsupported(what + " is missing");
        }
        break;
      }
      default:
        if (kind == SY_ATTR_MISSING || kind == SY_ATTR_NONE) {
          if (kind == SY_ATTR_NONE && a.optional) break;  // None
          if (a.has_default)
            ab.value = a.def;
          else if (!a.optional)
            throw sy::Unsupported("attribute '" + a.name + "' (" + type_name(a) + ") is " +
                                  (kind == SY_ATTR_NONE ? "None" : "missing"));
        } else {
          ab.value = read_attr(n.attrs, a, kind);
          if (a.type == ArgType::ScalarType && !(ov.dtypes & bit(static_cast<at::ScalarType>(ab.value.i))))
            throw sy::Unsupported("attribute '" + a.name + "': dtype " +
                                  dl_name(to_dl_dtype(static_cast<at::ScalarType>(ab.value.i))) +
                                  " not supported; accepted: " + mask_names(ov.dtypes));
        }
    }
  }
  if (slot < n_in)
    throw sy::Unsupported("takes " + std::to_string(slot) + " tensor inputs, node has " + std::to_string(n_in));
  if (ov.returns >= 0 && n.num_outputs > static_cast<size_t>(ov.returns))
    throw sy::Unsupported("returns " + std::to_string(ov.returns) + " tensors, node has " +
                          std::to_string(n.num_outputs) + " outputs");
  {
    const SY_HostApi* h = sy::host_api();
    size_t count = h->attr_count(n.attrs.raw());
    for (size_t i = 0; i < count; ++i) {
      const char* name = h->attr_name(n.attrs.raw(), i);
      // '@' attributes are config options (SDK 1.1): never a reason to decline.
      if (name == nullptr || name[0] == '@' || n.attrs.kind(name) == SY_ATTR_NONE) continue;
      bool known = false;
      for (const ArgSpec& a : ov.args)
        known = known || a.name == name || (a.type == ArgType::TensorList && a.name + ".len" == name);
      if (!known) throw sy::Unsupported(std::string("unexpected attribute '") + name + "'");
    }
  }
  if (ov.check) ov.check(b);
  return b;
}

std::string overload_label(const Overload& ov) {
  std::string base = ov.op.substr(ov.op.find("::") + 2);
  return ov.overload.empty() ? base : base + "." + ov.overload;
}

struct OpDef {
  std::string op, family;
  std::vector<const Overload*> overloads;
  std::vector<DLDataType> dtypes;
};

std::string node_label(const sy::Node& n) { return std::string(n.op) + " (node '" + (n.name ? n.name : "?") + "')"; }

// ATen's products (matrix, convolution, attention, recurrent) take one floating dtype:
// mixing them, say a bfloat16 weight and a float32 activation in a trace made in float32
// and then converted, fails when run. Declined up front, so that the host can run the node
// as a float32 island.
void check_one_float_dtype(const OpDef& op, const sy::Node& n) {
  if (op.family != "linalg" && op.family != "conv" && op.family != "attention" && op.family != "rnn") return;
  const DLTensor* first = nullptr;
  for (size_t i = 0; i < n.num_inputs; ++i) {
    const DLTensor* t = n.inputs[i];
    if (t == nullptr || (t->dtype.code != kDLFloat && t->dtype.code != kDLBfloat)) continue;
    if (first == nullptr) first = t;
    if (t->dtype.code != first->dtype.code || t->dtype.bits != first->dtype.bits)
      throw sy::Unsupported(node_label(n) + ": inputs of two floating dtypes (" + dl_name(first->dtype) + ", " +
                            dl_name(t->dtype) + "); ATen's kernel takes one");
  }
}

// Picks the first overload the node matches. Throws sy::Unsupported with every
// overload's reason if none does.
Bound select(const sy::Node& n, bool wrap_attrs) {
  const OpDef& op = *static_cast<const OpDef*>(n.user_data);
  check_one_float_dtype(op, n);
  std::string reasons;
  for (const Overload* ov : op.overloads) {
    try {
      return bind(*ov, n, wrap_attrs);
    } catch (const sy::Unsupported& e) {
      if (op.overloads.size() == 1)
        reasons = e.what();
      else
        reasons += (reasons.empty() ? "" : "; ") + overload_label(*ov) + ": " + e.what();
    }
  }
  throw sy::Unsupported(node_label(n) + ": " +
                        (op.overloads.size() == 1 ? reasons : "no overload matches: " + reasons));
}

// ---- errors --------------------------------------------------------------------------------

std::string short_message(const char* what) {
  std::string m = what ? what : "";
  size_t nl = m.find('\n');
  if (nl != std::string::npos) m.resize(nl);
  if (m.size() > 400) m = m.substr(0, 397) + "...";
  return m;
}

template <typename F>
void translate_errors(const std::string& where, F&& f) {
  try {
    f();
  } catch (const sy::Error&) {
    throw;
  } catch (const c10::OutOfMemoryError& e) {
    throw sy::Error(where + ": " + short_message(e.what_without_backtrace()), SY_ERROR_OUT_OF_MEMORY);
  } catch (const c10::NotImplementedError& e) {
    throw sy::Error(where + ": " + short_message(e.what_without_backtrace()), SY_ERROR_UNSUPPORTED);
  } catch (const c10::Error& e) {
    std::string m = short_message(e.what_without_backtrace());
    if (m.find("can't allocate memory") != std::string::npos) throw sy::Error(where + ": " + m, SY_ERROR_OUT_OF_MEMORY);
    throw sy::Error(where + ": " + m, SY_ERROR_INVALID_ARGUMENT);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw sy::Error(where + ": " + short_message(e.what()), SY_ERROR_INTERNAL);
  }
}

// ---- outputs: at::Tensor -> DLManagedTensor (zero-copy) -------------------------------------

struct Holder {
  DLManagedTensor managed{};
  at::Tensor tensor;
};

void delete_holder(DLManagedTensor* m) {
  if (m != nullptr) delete static_cast<Holder*>(m->manager_ctx);
}

std::unique_ptr<Holder> to_managed(at::Tensor t) {
  if (t.layout() != at::kStrided || !t.device().is_cpu())
    throw sy::Error("result is not a strided CPU tensor", SY_ERROR_INTERNAL);
  auto h = std::make_unique<Holder>();
  DLTensor& d = h->managed.dl_tensor;
  d.dtype = to_dl_dtype(t.scalar_type());
  h->tensor = std::move(t);
  d.data = h->tensor.data_ptr();  // includes the storage offset
  // ATen gives empty tensors a NULL data pointer; hand out a valid (never read) address
  // instead, since some consumers treat NULL data as an error.
  if (d.data == nullptr) d.data = h.get();
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = static_cast<int32_t>(h->tensor.dim());
  d.shape = const_cast<int64_t*>(h->tensor.sizes().data());
  d.strides = const_cast<int64_t*>(h->tensor.strides().data());
  d.byte_offset = 0;
  h->managed.manager_ctx = h.get();
  h->managed.deleter = &delete_holder;
  return h;
}

// ---- the one generic kernel -----------------------------------------------------------------

class AtenKernel {
 public:
  static void supports(const sy::Node& n) { (void)select(n, false); }

  explicit AtenKernel(const sy::Node& n) : where_(node_label(n)), num_outputs_(n.num_outputs) {
    translate_errors(where_, [&] { bound_ = select(n, true); });
    bound_.inputs = nullptr;  // metadata pointers are only valid during create
  }

  void run(sy::Run& r) const {
    const size_t n_in = r.num_inputs();
    if (n_in != bound_.num_inputs)
      throw sy::Error(where_ + ": created with " + std::to_string(bound_.num_inputs) + " inputs, run with " +
                      std::to_string(n_in));
    if (r.args->produced == nullptr && num_outputs_ > 0)
      throw sy::Error(where_ + ": no slots for produced outputs", SY_ERROR_INTERNAL);

    std::vector<std::unique_ptr<Holder>> results;
    sy_omp::Threads threads;  // this thread's OpenMP team: the host's budget
    translate_errors(where_, [&] {
      c10::InferenceMode guard;
      c10::SmallVector<at::Tensor, 8> in(n_in);
      for (size_t i = 0; i < n_in; ++i)
        if (r.args->inputs[i] != nullptr) in[i] = wrap(*r.args->inputs[i]);
      Call call(bound_, in.data());

      std::vector<at::Tensor> outs;
      const Overload& ov = *bound_.ov;
      if (ov.fn != nullptr)
        outs.push_back(ov.fn(call));
      else
        outs = ov.fn_multi(call);

      if (outs.size() < num_outputs_ || (ov.returns < 0 && outs.size() != num_outputs_))
        throw sy::Error(where_ + ": produced " + std::to_string(outs.size()) + " tensors, node has " +
                        std::to_string(num_outputs_) + " outputs");
      for (size_t i = 0; i < num_outputs_; ++i) {
        at::Tensor& t = outs[i];
        // ATen's "no tensor" (e.g. attention weights when need_weights=False): the host
        // has no such value, so it gets an empty float tensor.
        if (!t.defined()) t = at::empty({0}, at::kFloat);
        if (aliases_attribute(t)) t = t.clone(at::MemoryFormat::Contiguous);
        results.push_back(to_managed(std::move(t)));
      }
    });
    for (size_t i = 0; i < results.size(); ++i) r.produce(i, &results[i].release()->managed);
  }

 private:
  bool aliases_attribute(const at::Tensor& t) const {
    for (const ArgBinding& a : bound_.args)
      if (a.value.t.defined() && t.is_alias_of(a.value.t)) return true;
    return false;
  }

  std::string where_;
  size_t num_outputs_;
  Bound bound_;
};

// ---- the plugin ------------------------------------------------------------------------------

struct AtenPlugin {
  Registry registry;
  std::deque<OpDef> ops;
  sy::PluginDef def{"aten", "0.1.0 (LibTorch 1.13)", "switchyard"};

  AtenPlugin() {
    // What `plugins` shows: the LibTorch it runs on and ATen's thread backend.
    def.attribute("libtorch", std::string(TORCH_VERSION) + ", " + (at::hasMKLDNN() ? "mkldnn" : "no mkldnn") + ", " +
                                  (at::hasMKL() ? "mkl" : "no mkl"));
    register_elementwise_ops(registry);
    register_linalg_ops(registry);
    register_nn_ops(registry);
    register_pool_ops(registry);
    register_loss_ops(registry);
    register_rnn_ops(registry);
    register_shape_ops(registry);
    register_index_ops(registry);
    register_reduce_ops(registry);
    for (const Overload& ov : registry.overloads()) {
      OpDef* op = nullptr;
      for (OpDef& o : ops)
        if (o.op == ov.op) op = &o;
      if (op == nullptr) {
        ops.emplace_back();
        op = &ops.back();
        op->op = ov.op;
        op->family = ov.family;
      }
      op->overloads.push_back(&ov);
    }
    for (OpDef& op : ops) {
      DtypeMask m = 0;
      for (const Overload* ov : op.overloads) {
        m |= ov->dtypes;
        for (const ArgSpec& a : ov->args) m |= a.dtypes;
      }
      def.add(sy::kernel<AtenKernel>(op.op, op.family, mask_dtypes(m), &op));
    }
  }
};

void apply_thread_setting() {
  const int n = sy::intra_op_threads();
  if (at::get_num_threads() != n) at::set_num_threads(n);
  sy::log(SY_LOG_DEBUG, "aten: intra-op threads set to " + std::to_string(at::get_num_threads()));
}

}  // namespace
}  // namespace sy_aten

// The plugin's one exported symbol. Written out (rather than SY_PLUGIN_FROM) so that a
// failure while building the op table is reported as a status, not thrown across the ABI.
extern "C" SY_EXPORT SY_Status switchyard_plugin_init(SY_PluginInitArgs* args) {
  if (args == nullptr || args->host == nullptr) return SY_ERROR_INVALID_ARGUMENT;
  const SY_HostApi* previous = sy::host_api();
  sy::host_api() = args->host;
  sy::PluginDef* def = nullptr;
  SY_Status s = sy::guarded(args->call, [&] {
    static sy_aten::AtenPlugin plugin;
    def = &plugin.def;
  });
  if (s == SY_OK) s = def->init(args);
  if (s != SY_OK) {
    // A refused host (e.g. another major version) must not stay our host: keep the one
    // that initialised us before, if any.
    if (previous != nullptr) sy::host_api() = previous;
    return s;
  }
  try {
    sy_aten::apply_thread_setting();
  } catch (const std::exception& e) {
    sy::log(SY_LOG_WARN, std::string("aten: could not set intra-op threads: ") + e.what());
  }
  return s;
}
