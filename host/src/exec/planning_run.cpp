// The planning run (Executor::plan_and_run): the first run of an input-shape signature
// decides as it goes. Per node, in graph order: a sym:: node is evaluated by the host;
// any other node is bound to a kernel (planner.cpp: selection, fusion, storages, cost),
// then runs through the same per-node step as every later run, with conversions wherever
// its kernel cannot read a value where it is. A node of constants alone is folded into
// constants. What each value turned out to be (dtype, shape, owner) is recorded in the
// plan for finalize.cpp.
#include "exec/executor.hpp"

#include "ir/sym.hpp"

#include <switchyard/error.hpp>

#include <map>
#include <string>
#include <utility>

namespace switchyard::exec {
namespace {

// Ops whose result is not a function of their inputs: never folded into constants.
bool is_random_op(const std::string& op) {
  for (const char* word : {"rand", "bernoulli", "dropout", "normal", "uniform", "multinomial", "poisson", "empty"})
    if (op.find(word) != std::string::npos) return true;
  return false;
}

size_t at(ir::ValueId v) { return static_cast<size_t>(v); }

}  // namespace

class PlanningRun {
 public:
  PlanningRun(Executor& ex, Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options);
  RunResult run();

 private:
  const Tensor& tensor_of(ir::ValueId v) const;
  int32_t storage_of(ir::ValueId v) const;
  bool is_slot(ir::ValueId v) const { return &tensor_of(v) == &st_.slots[at(v)]; }
  std::vector<const DLTensor*> metadata(const std::vector<ir::ValueId>& ids);
  int32_t copy_to(ir::ValueId v, int32_t to, int32_t reader);
  void free_slot(int32_t slot);
  void free_value(ir::ValueId v);
  void run_sym_node(size_t n);
  void run_kernel_node(size_t n);
  Step kernel_step(size_t n, const ir::Node& run_node, const BoundKernel& bk);
  void fold(const ir::Node& run_node);
  void record_outputs(const ir::Node& run_node, const BoundKernel& bk);

  Executor& ex_;
  const ir::Graph& graph_;
  const StorageTable& storages_;
  Plan& plan_;
  std::vector<Step>& steps_;  // plan_.record.steps
  RunResult result_;
  RunState st_;
  Scratch scratch_;
  std::vector<int32_t> where_;  // per value: the storage of slot v
  ConvertedCopies copies_;
  std::vector<std::vector<int32_t>> slots_of_;  // per value: its copies' slots
  std::vector<char> shape_read_;                // per value: a sym node read its shape
  std::vector<DLTensor> proxies_;               // metadata of values not in host memory
};

PlanningRun::PlanningRun(Executor& ex, Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options)
    : ex_(ex), graph_(ex.graph_), storages_(ex.storages_), plan_(plan), steps_(plan.record.steps) {
  const size_t num_values = graph_.values.size();
  plan.record.nodes.resize(graph_.nodes.size());
  plan.record.scalars.resize(num_values);
  plan.value_constant.resize(num_values);
  plan.record.infos.resize(num_values);
  ex.runner_.begin_run(plan, inputs, options, st_, result_);
  st_.slots.resize(num_values);
  for (size_t i = 0; i < inputs.size(); ++i) {
    st_.slots[at(graph_.inputs[i])] = inputs[i];
    st_.held(inputs[i]);
    ValueInfo& info = plan.record.infos[at(graph_.inputs[i])];
    info.dtype = inputs[i].dtype();
    info.shape = inputs[i].shape();
  }
  where_.assign(num_values, kHost);
  slots_of_.resize(num_values);
  shape_read_.assign(num_values, 0);
}

RunResult PlanningRun::run() {
  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    if (plan_.record.nodes[n].folded_into >= 0) continue;  // runs inside its producer's fused kernel
    if (ir::is_sym_op(graph_.nodes[n].op))
      run_sym_node(n);  // the host's own shape arithmetic
    else
      run_kernel_node(n);
  }
  for (size_t v = 0; v < graph_.values.size(); ++v)
    if (shape_read_[v]) plan_.record.shape_reads.push_back(static_cast<ir::ValueId>(v));
  ex_.log_compute(plan_);
  result_.outputs.clear();
  for (ir::ValueId v : graph_.outputs) {
    const ir::Value& val = graph_.values[at(v)];
    if (val.kind == ir::ValueKind::Constant)
      result_.outputs.push_back(val.constant);
    else
      result_.outputs.push_back(storages_.to_host(storage_of(v), tensor_of(v), "output '" + val.name + "'"));
  }
  ex_.runner_.end_run(st_);
  return std::move(result_);
}

const Tensor& PlanningRun::tensor_of(ir::ValueId v) const {
  const ir::Value& val = graph_.values[at(v)];
  if (val.kind == ir::ValueKind::Constant) return val.constant;
  if (plan_.value_constant[at(v)].constant != nullptr) return *plan_.value_constant[at(v)].constant;
  return st_.slots[at(v)];
}

int32_t PlanningRun::storage_of(ir::ValueId v) const {
  const ir::Value& val = graph_.values[at(v)];
  if (val.kind == ir::ValueKind::Constant || plan_.value_constant[at(v)].constant != nullptr) return kHost;
  return where_[at(v)];
}

// Metadata a kernel is asked about (sdk.h: data only for constants): a constant itself; a
// run-time value in host memory without its data, else a plain-host description of it
// (device kCPU, compact, no data): where it lives is storage's business. With the
// planning run's data, kernels kept run-time weights as constants.
std::vector<const DLTensor*> PlanningRun::metadata(const std::vector<ir::ValueId>& ids) {
  std::vector<const DLTensor*> out;
  proxies_.clear();
  proxies_.reserve(ids.size());
  for (ir::ValueId v : ids) {
    if (v == ir::kNoValue) {
      out.push_back(nullptr);
      continue;
    }
    const Tensor& t = tensor_of(v);
    const bool host = storage_of(v) == kHost;
    if (host && !is_slot(v)) {  // a constant, or a value folded into one
      out.push_back(&t.dl());
      continue;
    }
    DLTensor proxy = t.dl();
    proxy.data = nullptr;
    proxy.byte_offset = 0;
    if (!host) {
      proxy.device = DLDevice{kDLCPU, 0};
      proxy.strides = nullptr;
    }
    proxies_.push_back(proxy);
    out.push_back(&proxies_.back());
  }
  return out;
}

// Runs a conversion step now and returns the slot holding value v in storage `to`.
int32_t PlanningRun::copy_to(ir::ValueId v, int32_t to, int32_t reader) {
  return copies_.slot_of(v, where_[at(v)], to, reader, [&](Step&& c) {
    c.dst = static_cast<int32_t>(st_.slots.size());
    st_.slots.emplace_back();
    steps_.push_back(std::move(c));
    ex_.runner_.run_step(steps_.back(), steps_.size() - 1, st_, scratch_);
    slots_of_[at(v)].push_back(steps_.back().dst);
    return steps_.back().dst;
  });
}

void PlanningRun::free_slot(int32_t slot) {
  Tensor& t = st_.slots[static_cast<size_t>(slot)];
  if (!t.defined()) return;
  st_.dropped(t);
  t = Tensor();
}

void PlanningRun::free_value(ir::ValueId v) {
  free_slot(v);
  for (int32_t s : slots_of_[at(v)]) free_slot(s);
}

void PlanningRun::run_sym_node(size_t n) {
  const ir::Node& node = graph_.nodes[n];
  NodeDecision& np = plan_.record.nodes[n];
  np.backend = "host";
  np.selection.reason = "sym op: evaluated by the host once per input-shape signature";
  std::vector<ir::SymArg> args;
  std::vector<Tensor> host_copies;
  host_copies.reserve(node.inputs.size());
  for (ir::ValueId v : node.inputs) {
    if (graph_.values[at(v)].type == ir::ValueType::Scalar) {
      args.push_back(ir::SymArg{&plan_.record.scalars[at(v)], nullptr});
      continue;
    }
    if (graph_.values[at(v)].kind == ir::ValueKind::NodeOutput && plan_.value_constant[at(v)].constant == nullptr)
      shape_read_[at(v)] = 1;
    const Tensor& t = tensor_of(v);
    host_copies.push_back(
        node.op == "sym::item" ? storages_.to_host(storage_of(v), t, "value '" + graph_.values[at(v)].name + "'") : t);
    args.push_back(ir::SymArg{nullptr, &host_copies.back()});
  }
  const ir::ValueId out = node.outputs[0];
  if (node.op == "sym::tensor") {
    plan_.constants.push_back(ir::eval_sym_tensor(node, *args[0].scalar));
    plan_.value_constant[at(out)] = InputRef{-1, &plan_.constants.back(), kHost};
  } else {
    plan_.record.scalars[at(out)] = ir::eval_sym(node, args);
  }
  for (ir::ValueId v : node.inputs)
    if (ex_.last_use_[at(v)] == static_cast<int32_t>(n) && graph_.values[at(v)].kind == ir::ValueKind::NodeOutput)
      free_value(v);
}

void PlanningRun::run_kernel_node(size_t n) {
  NodeDecision& np = plan_.record.nodes[n];
  const ir::Node& run_node =
      ex_.prepare_node(n, plan_, [this](const std::vector<ir::ValueId>& ids) { return metadata(ids); });
  const BoundKernel& bk = *np.bound;
  const int32_t end = np.fused ? np.fused_last : static_cast<int32_t>(n);  // the last node it runs
  Step s = kernel_step(n, run_node, bk);
  // A node of constants alone (a weight's transpose, a mask built from sizes) is
  // computed here, once per plan, and its outputs kept as constants.
  bool folds = !is_random_op(run_node.op);
  for (const InputRef& r : s.inputs) folds = folds && (r.absent() || r.constant != nullptr);
  for (const OutputPlace& o : s.outputs) folds = folds && o.storage == kHost;
  steps_.push_back(std::move(s));
  ex_.runner_.run_step(steps_.back(), steps_.size() - 1, st_, scratch_);
  if (folds) return fold(run_node);
  record_outputs(run_node, bk);
  const std::vector<int32_t>& last_use = ex_.last_use_;
  for (ir::ValueId v : run_node.inputs)  // inputs whose last reader this was
    if (v != ir::kNoValue && graph_.values[at(v)].kind == ir::ValueKind::NodeOutput && last_use[at(v)] != kForever &&
        last_use[at(v)] <= end && last_use[at(v)] >= static_cast<int32_t>(n))
      free_value(v);
}

// The step of a bound node: each input where its kernel reads it (converted if it must
// be), each output in the first storage its kernel writes.
Step PlanningRun::kernel_step(size_t n, const ir::Node& run_node, const BoundKernel& bk) {
  const loader::LoadedPlugin* plugin = bk.kernel.plugin.get();
  Step s;
  s.kind = Step::Kind::Kernel;
  s.node = static_cast<int32_t>(n);
  s.run_node = &run_node;
  s.kernel = &bk;
  s.backend = &plan_.record.nodes[n].backend;
  s.decided = &plan_.record.nodes[n];
  s.pass_storages = SY_STRUCT_HAS(bk.kernel.def, SY_KernelDef, storage) && bk.kernel.def->storage != nullptr;
  for (size_t i = 0; i < run_node.inputs.size(); ++i) {
    const ir::ValueId v = run_node.inputs[i];
    if (v == ir::kNoValue) {
      s.inputs.push_back(InputRef{});
      s.input_storage.push_back(SY_STORAGE_HOST);
      continue;
    }
    // A constant (or sym::tensor) lives in host memory, and a copy elsewhere is made once.
    const bool constant = !is_slot(v);
    const StorageTable::InputPlace place = storages_.input_place(constant ? kHost : storage_of(v), bk.input_reads[i],
                                                                 plugin, constant ? kHost : ex_.preferred_storage_);
    s.input_storage.push_back(place.local);
    if (constant)
      s.inputs.push_back(
          InputRef{-1, plan_.constant_in(place.storage, v, tensor_of(v), graph_, storages_), place.storage});
    else
      s.inputs.push_back(InputRef{copy_to(v, place.storage, static_cast<int32_t>(n)), nullptr, place.storage});
  }
  for (size_t o = 0; o < run_node.outputs.size(); ++o) {
    const ir::ValueId v = run_node.outputs[o];
    OutputPlace out;
    out.storage = storages_.first_in(bk.output_writes[o], plugin);
    out.local = storages_.local_of(out.storage, plugin);
    out.slot = v;  // kept for recording; freed after the run if nobody reads it
    s.outputs.push_back(out);
    where_[at(v)] = out.storage;
  }
  return s;
}

void PlanningRun::fold(const ir::Node& run_node) {
  steps_.back().folded = true;
  for (ir::ValueId v : run_node.outputs) {
    plan_.constants.push_back(st_.slots[at(v)]);
    plan_.value_constant[at(v)] = InputRef{-1, &plan_.constants.back(), kHost};
    free_slot(v);
  }
}

void PlanningRun::record_outputs(const ir::Node& run_node, const BoundKernel& bk) {
  for (ir::ValueId v : run_node.outputs) {
    ValueInfo& info = plan_.record.infos[at(v)];
    const Tensor& t = st_.slots[at(v)];
    info.dtype = t.dtype();
    info.shape = t.shape();
    info.produced = true;
    info.host_allocated = bk.kernel.def->output_mode == SY_OUTPUT_HOST_ALLOCATED;
    if (!info.host_allocated && t.numel() > 0 && storage_of(v) == kHost)
      for (ir::ValueId in : run_node.inputs) {  // a kernel's output may be a view of an input
        if (in == ir::kNoValue || storage_of(in) != kHost || !points_into(t.raw_data(), tensor_of(in))) continue;
        info.view_of = graph_.values[at(in)].kind == ir::ValueKind::NodeOutput ? in : ir::kNoValue;
        info.view_of_outside = info.view_of == ir::kNoValue;
        break;
      }
    if (ex_.last_use_[at(v)] == -1) free_slot(v);
  }
}

RunResult Executor::plan_and_run(Plan& plan, const std::vector<Tensor>& inputs, const RunOptions& options) {
  return PlanningRun(*this, plan, inputs, options).run();
}

}  // namespace switchyard::exec
