// The embedding API: wires config, plugins, graph loading and the executor together.
#include <switchyard/runtime.hpp>

#include "api/config_view.hpp"
#include "api/internal.hpp"
#include "config/config.hpp"
#include "exec/executor.hpp"
#include "exec/op_cost.hpp"
#include "ir/fold_batch_norm.hpp"
#include "ir/input_spec.hpp"
#include "ir/patterns.hpp"
#include "ir/precision.hpp"
#include "ir/sym.hpp"
#include "loader/plugin_manager.hpp"
#include "util/intra_op_pool.hpp"
#include "util/log.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

namespace switchyard {
namespace {

exec::Capture to_capture(config::CaptureMode mode) {
  switch (mode) {
    case config::CaptureMode::Outputs: return exec::Capture::Outputs;
    case config::CaptureMode::All: return exec::Capture::All;
    case config::CaptureMode::Stream:  // records go to the node callback only
    case config::CaptureMode::None: break;
  }
  return exec::Capture::None;
}

std::string device_name(int32_t type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    default: return "device" + std::to_string(type);
  }
}

}  // namespace

// ---- Runtime ---------------------------------------------------------------------

struct Runtime::Impl {
  config::Config config;
  RuntimeConfig public_config;  // config, as Runtime::config() shows it
  bool check_finite = false;
  loader::PluginManager plugins;
};

Runtime::Runtime(const Options& options) : impl_(std::make_shared<Impl>()) {
  config::Config& cfg = impl_->config;
  if (!options.config_path.empty()) cfg = config::load_config(options.config_path);
  log::set_level(cfg.log_level);
  log::apply_env_level();
  if (!options.log_level.empty() && !log::set_level(options.log_level))
    throw Error(ErrorKind::Config, "log level '" + options.log_level + "' is not trace|debug|info|warn|error|off");
  if (!options.capture.empty()) {
    if (options.capture == "none")
      cfg.capture = config::CaptureMode::None;
    else if (options.capture == "outputs")
      cfg.capture = config::CaptureMode::Outputs;
    else if (options.capture == "all")
      cfg.capture = config::CaptureMode::All;
    else if (options.capture == "stream")
      cfg.capture = config::CaptureMode::Stream;
    else
      throw Error(ErrorKind::Config, "capture mode '" + options.capture + "' is not none, outputs, all or stream");
  }
  if (options.strict) cfg.strict = true;
  if (options.no_preflight) cfg.preflight = false;
  impl_->check_finite = options.check_finite;
  // Plugins read the pool's size through SY_HostApi.num_threads (at init and per call) and
  // size their libraries from it (oneDNN's and ATen's OpenMP teams; OpenBLAS held to one).
  threads::configure_intra_op_pool(cfg.intra_op_threads);

  std::vector<std::string> dirs = options.plugin_paths;
  dirs.insert(dirs.end(), cfg.plugin_paths.begin(), cfg.plugin_paths.end());
  for (const std::string& d : loader::PluginManager::default_search_paths()) dirs.push_back(d);
  impl_->plugins.load_all(dirs, cfg.load);
  if (impl_->plugins.plugins().empty())
    log::get().warn("no plugins loaded (searched {} director{})", dirs.size(), dirs.size() == 1 ? "y" : "ies");

  std::vector<std::string> names;
  for (const auto& p : impl_->plugins.plugins()) names.push_back(p->name());
  config::check_backends(cfg, names);
  if (cfg.default_backends.empty()) {
    cfg.default_backends = config::builtin_routing(names);
    cfg.builtin_default = true;
  }
  impl_->public_config = to_public(cfg);
  impl_->public_config.log_level = log::level_name();  // after Options and $SWITCHYARD_LOG_LEVEL
}

Runtime::~Runtime() = default;

const RuntimeConfig& Runtime::config() const { return impl_->public_config; }

std::vector<PluginInfo> Runtime::plugins() const {
  std::vector<PluginInfo> out;
  for (const auto& p : impl_->plugins.plugins()) {
    PluginInfo info{p->name(),      p->version(), p->vendor(), p->path(),       p->sdk_major(),
                    p->sdk_minor(), {},           {},          p->attributes(), {}};
    const SY_Plugin& t = p->table();
    if (SY_STRUCT_HAS(&t, SY_Plugin, num_storages) && t.storages != nullptr)
      for (size_t k = 0; k < t.num_storages && k < SY_MAX_STORAGES; ++k)
        if (t.storages[k] != nullptr && t.storages[k]->name != nullptr) {
          info.storages.push_back(p->name() + "/" + t.storages[k]->name);
          const DLDataType element = p->storage_element(k);
          info.storage_elements.push_back(element.bits != 0 ? dtype_name(element) : "");
        }
    for (size_t i = 0; i < t.num_kernels; ++i) {
      const SY_KernelDef& k = *t.kernels[i];
      KernelInfo ki{k.op,
                    k.family != nullptr ? k.family : "",
                    device_name(k.device_type),
                    {},
                    k.output_mode == SY_OUTPUT_HOST_ALLOCATED};
      for (size_t d = 0; d < k.num_dtypes; ++d) ki.dtypes.push_back(dtype_name(k.dtypes[d]));
      info.kernels.push_back(std::move(ki));
    }
    out.push_back(std::move(info));
  }
  return out;
}

// ---- Model -----------------------------------------------------------------------

struct Model::Impl {
  std::shared_ptr<Runtime::Impl> runtime;  // first member: released last, after the kernels
  ir::Graph graph;
  std::unique_ptr<exec::Executor> executor;
  exec::Capture capture = exec::Capture::None;
  bool stream = false;  // capture "stream": the node callback is the only sink, and required
  RunContext context;   // of run(inputs), the single-caller form
  std::vector<std::string> input_names, output_names;
};

std::unique_ptr<Model> Runtime::load(Graph graph) const {
  Graph::Impl& g = detail::GraphAccess::impl(graph);
  if (!g.validated) ir::validate(g.graph);
  auto impl = std::make_unique<Model::Impl>();
  impl->graph = std::move(g.graph);
  return make_model(impl_, std::move(impl));
}

std::unique_ptr<Model> Runtime::load(const std::string& model_path) const { return load(Graph::read(model_path)); }

namespace {

// [precision] compute: a model with float16 or bfloat16 weights computes in float32 unless
// the config says "as-is"; one that only takes half-precision inputs stays as it is. The
// log says what was chosen.
void apply_precision(ir::Graph& graph, const config::Config& config) {
  const DLDataType half = ir::half_dtype_of(graph);
  if (half.lanes == 0) return;
  const bool weights = ir::has_half_weights(graph);
  const config::Compute compute = config.compute ? *config.compute
                                  : weights      ? config::Compute::Float32
                                                 : config::Compute::AsIs;
  const std::string why = config.compute ? "[precision] compute at " + config.compute_pos.str()
                          : weights      ? "the default for a model with half-precision weights"
                                         : "the default for a model whose weights are not half-precision";
  if (compute == config::Compute::AsIs) {
    log::get().info(
        "the model holds {}: computing as-is ({}); nodes run where a kernel takes {}, and "
        "[precision] compute = \"fp32\" computes in float32",
        dtype_name(half), why, dtype_name(half));
    return;
  }
  const ir::Float32Upcast up = ir::compute_in_float32(graph);
  ir::validate(graph);  // the inputs' conversions go before their readers
  std::string inputs;
  for (const std::string& name : up.inputs) inputs += (inputs.empty() ? "" : ", ") + name;
  log::get().info(
      "the model holds {}: computing in float32{} ({}; [precision] compute = \"as-is\" keeps its dtypes): {} "
      "constant(s) converted once ({} bytes as float32), input(s) {} converted as they enter, {} dtype argument(s) "
      "now float32; outputs are float32",
      dtype_name(half), compute == config::Compute::BFloat16 ? ", bfloat16 products where a kernel has them" : "", why,
      up.constants, up.constant_bytes, inputs.empty() ? "(none)" : inputs, up.dtype_arguments);
}

}  // namespace

std::unique_ptr<Model> Runtime::make_model(const std::shared_ptr<Impl>& runtime, std::unique_ptr<Model::Impl> impl) {
  apply_precision(impl->graph, runtime->config);
  for (ir::ValueId v : impl->graph.inputs) impl->input_names.push_back(impl->graph.values[v].name);
  for (ir::ValueId v : impl->graph.outputs) impl->output_names.push_back(impl->graph.values[v].name);
  impl->runtime = runtime;
  impl->capture = to_capture(runtime->config.capture);
  impl->stream = runtime->config.capture == config::CaptureMode::Stream;
  // node_io "all" and "stream" record every node's tensors, so they see the graph unfused.
  const bool fuse = impl->capture != exec::Capture::All && !impl->stream;
  if (fuse) {
    ir::fold_batch_norm(impl->graph);
    const select::Catalog catalog = exec::plugin_catalog(runtime->plugins);
    if (runtime->config.patterns)
      ir::recognise_patterns(impl->graph, [&](const ir::Node& replacement) {
        return select::routing_offers(runtime->config, catalog, replacement);
      });
  }
  impl->executor = std::make_unique<exec::Executor>(impl->graph, runtime->config, runtime->plugins, fuse);
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

std::vector<Tensor> Model::run_node(const std::string& name, const std::vector<Tensor>& inputs) const {
  const ir::Graph& g = impl_->graph;
  const auto it = std::find_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) { return n.name == name; });
  if (it == g.nodes.end()) throw Error(ErrorKind::Input, "run_node: the model has no node '" + name + "'");
  if (ir::is_sym_op(it->op) || ir::has_bound_attrs(*it))  // its scalars live in the whole model's plan
    throw Error(ErrorKind::Unsupported, "run_node: node '" + name + "' (" + it->op +
                                            ") takes shape arithmetic from the rest of the model; it runs only there");
  auto one = std::make_unique<Model::Impl>();
  std::vector<ir::ValueId> ids;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < it->inputs.size(); ++i) {
    const ir::ValueId v = it->inputs[i];
    if (v == ir::kNoValue) {
      ids.push_back(ir::kNoValue);
      continue;
    }
    const ir::Value& value = g.values[static_cast<size_t>(v)];
    if (value.kind == ir::ValueKind::Constant) {
      ids.push_back(one->graph.add_constant(value.name, value.constant));
      continue;
    }
    if (i >= inputs.size() || !inputs[i].defined())
      throw Error(ErrorKind::Input, "run_node: node '" + name + "' reads '" + value.name + "' as input " +
                                        std::to_string(i) + ", and no tensor was given for it");
    ids.push_back(one->graph.add_input(value.name, inputs[i].dtype(), inputs[i].shape()));
    feeds.push_back(inputs[i]);
  }
  std::vector<std::string> outputs;
  for (ir::ValueId v : it->outputs) outputs.push_back(g.values[static_cast<size_t>(v)].name);
  one->graph.add_node(it->name, it->op, ids, outputs, it->attrs, it->module_path);
  for (const std::string& o : outputs) one->graph.outputs.push_back(one->graph.find_value(o));
  ir::validate(one->graph);
  return Runtime::make_model(impl_->runtime, std::move(one))->run(feeds);
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const std::vector<std::string>& Model::input_names() const { return impl_->input_names; }
const std::vector<std::string>& Model::output_names() const { return impl_->output_names; }

std::vector<std::vector<int64_t>> Model::input_shapes() const {
  std::vector<std::vector<int64_t>> out;
  for (ir::ValueId v : impl_->graph.inputs) {
    const ir::Value& value = impl_->graph.values[v];
    out.push_back(value.example_shape.empty() ? value.shape : value.example_shape);  // the hint, where given
  }
  return out;
}

std::vector<std::string> Model::input_specs() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < impl_->graph.inputs.size(); ++i) out.push_back(ir::expected_shape(impl_->graph, i));
  return out;
}

std::vector<DLDataType> Model::input_dtypes() const {
  std::vector<DLDataType> out;
  for (ir::ValueId v : impl_->graph.inputs) out.push_back(impl_->graph.values[v].dtype);
  return out;
}

std::vector<Tensor> Model::run(const std::vector<Tensor>& inputs, RunContext& context) const {
  // Everything per run lives on this stack or in `context`; the Model is only read (the
  // executor guards its plan cache itself).
  exec::RunOptions options;
  options.capture = impl_->capture;
  if (!context.callback_ && impl_->stream) {
    throw Error(ErrorKind::Config,
                "node_io capture 'stream' hands each node's record to the run's node callback, and none is set: "
                "set one (RunContext::set_node_callback or Model::set_node_callback; "
                "torchscript::NodeIoStreamWriter writes the records to a .pt file), or on the CLI pass "
                "--save-node-io FILE.pt");
  }
  options.callback = context.callback_ ? &context.callback_ : nullptr;
  options.check_finite = impl_->runtime->check_finite;
  options.profile = context.profiling_;
  options.recycled_profile = &context.profile_;  // replaced below: its storage is free to take
  options.measure_memory = context.measure_memory_;
  exec::RunResult result = impl_->executor->run(inputs, options);
  context.node_io_ = std::move(result.node_io);
  context.stats_ = result.stats;
  context.profile_ = std::move(result.profile);
  return std::move(result.outputs);
}

std::vector<Tensor> Model::run(const std::vector<Tensor>& inputs) { return run(inputs, impl_->context); }

namespace {
std::shared_ptr<const exec::Plan> plan_of(exec::Executor& executor, const std::vector<Tensor>& inputs) {
  std::shared_ptr<const exec::Plan> plan = executor.cached_plan(inputs);
  if (!plan) {  // selection needs real shapes: build the plan by running once
    exec::RunOptions options;
    executor.run(inputs, options);
    plan = executor.cached_plan(inputs);
  }
  if (!plan) throw Error(ErrorKind::Internal, "no plan was kept for these input shapes");
  return plan;
}
}  // namespace

MemoryReport Model::memory_plan(const std::vector<Tensor>& inputs) const {
  const std::shared_ptr<const exec::Plan> keep = plan_of(*impl_->executor, inputs);
  const exec::Plan& plan = *keep;
  const exec::MemoryPlan& m = plan.memory;
  MemoryReport r;
  r.arena_enabled = m.arena_on;
  r.arena_bytes = m.arena_bytes;
  r.arena_values_bytes = m.arena_values_bytes;
  r.heap_peak_bytes = m.heap_peak_bytes;
  r.estimated_peak_bytes = m.estimated_peak_bytes();
  r.total_activation_bytes = m.total_activation_bytes;
  // Lives are in step order; the report speaks of graph nodes.
  auto node_of = [&](int32_t step) {
    return step < 0 || step == exec::kForever ? step : plan.steps[static_cast<size_t>(step)].node;
  };
  std::vector<char> in_place(plan.lives.size(), 0);
  for (const exec::Step& s : plan.steps)
    for (const exec::OutputPlace& o : s.outputs)
      if (o.inplace_input >= 0 && o.slot >= 0) in_place[static_cast<size_t>(o.slot)] = 1;
  for (size_t slot = 0; slot < plan.lives.size(); ++slot) {
    const exec::ValueLife& life = plan.lives[slot];
    if (life.kind == exec::ValueLife::Kind::Unused) continue;
    const exec::MemoryPlan* group = &m;  // host memory, or the value's device arena
    for (const exec::Plan::DeviceArena& d : plan.device_arenas)
      if (d.storage == plan.slot_storage[slot]) group = &d.memory;
    const int32_t producer = node_of(life.first);
    MemoryValue mv{plan.slot_names[slot],
                   producer >= 0 ? impl_->graph.nodes[static_cast<size_t>(producer)].name : "",
                   life.bytes,
                   "",
                   group->offset.size() > slot ? group->offset[slot] : -1,
                   producer,
                   group->last.size() > slot ? node_of(group->last[slot]) : -1,
                   in_place[slot] != 0};
    if (life.kind == exec::ValueLife::Kind::View && mv.offset >= 0 && life.view_of != ir::kNoValue)
      mv.placement = "arena, inside " + plan.slot_names[static_cast<size_t>(life.view_of)] + " at byte " +
                     std::to_string(mv.offset - group->offset[static_cast<size_t>(life.view_of)]) +
                     " (a part of a cat, written there)";
    else if (life.kind == exec::ValueLife::Kind::View)
      mv.placement = life.view_of == ir::kNoValue ? "view of an input"
                                                  : "view of " + plan.slot_names[static_cast<size_t>(life.view_of)];
    else if (mv.offset >= 0 && group->tail_host.size() > slot && group->tail_host[slot] >= 0)
      mv.placement = "arena, at the end of " + plan.slot_names[static_cast<size_t>(group->tail_host[slot])];
    else if (mv.offset >= 0)
      mv.placement =
          group->last.size() > slot && group->last[slot] == exec::kForever ? "output, in the arena" : "arena";
    else
      mv.placement = group->last.size() > slot && group->last[slot] == exec::kForever ? "output" : "heap";
    if (plan.slot_storage[slot] != exec::kHost)
      mv.placement += " (" + impl_->executor->storages().name_of(plan.slot_storage[slot]) + ")";
    r.values.push_back(std::move(mv));
  }
  return r;
}

std::vector<StorageCopy> Model::storage_copies(const std::vector<Tensor>& inputs) const {
  const std::shared_ptr<const exec::Plan> plan = plan_of(*impl_->executor, inputs);
  std::vector<StorageCopy> out;
  for (const exec::Crossing& c : plan->crossings)
    out.push_back(StorageCopy{c.value, c.from, c.to, c.reader, static_cast<size_t>(c.bytes), c.constant});
  return out;
}

std::vector<StoredValue> Model::stored_values(const std::vector<Tensor>& inputs) const {
  const std::shared_ptr<const exec::Plan> plan = plan_of(*impl_->executor, inputs);
  std::vector<StoredValue> out;
  for (size_t v = 0; v < plan->value_storage.size() && v < impl_->graph.values.size(); ++v)
    if (plan->value_storage[v] != exec::kHost)
      out.push_back(
          StoredValue{impl_->graph.values[v].name, impl_->executor->storages().name_of(plan->value_storage[v])});
  return out;
}

std::vector<PlanEntry> Model::plan(const std::vector<Tensor>& inputs) const {
  const std::shared_ptr<const exec::Plan> plan = plan_of(*impl_->executor, inputs);
  std::vector<PlanEntry> out;
  auto shape_of = [&](ir::ValueId v) {
    const auto i = static_cast<size_t>(v);
    const Tensor* constant = i < plan->value_constant.size() ? plan->value_constant[i].constant : nullptr;
    return constant != nullptr             ? constant->shape()
           : i < plan->record.infos.size() ? plan->record.infos[i].shape
                                           : std::vector<int64_t>{};
  };
  auto tensor_at = [&](ir::ValueId v) {
    exec::TensorShape t;
    if (v == ir::kNoValue) return t;
    const auto i = static_cast<size_t>(v);
    const ir::Value& value = impl_->graph.values[i];
    t.defined = true;
    t.dtype = value.kind == ir::ValueKind::Constant ? value.constant.dtype()
              : plan->value_constant[i].constant    ? plan->value_constant[i].constant->dtype()
                                                    : plan->record.infos[i].dtype;
    t.shape = value.kind == ir::ValueKind::Constant ? value.constant.shape() : shape_of(v);
    return t;
  };
  for (size_t n = 0; n < impl_->graph.nodes.size(); ++n) {
    const ir::Node& node = impl_->graph.nodes[n];
    const exec::NodeDecision& np = plan->record.nodes[n];
    PlanEntry e;
    e.node = node.name;
    e.op = node.op;
    e.module_path = node.module_path;
    e.backend = np.backend;
    e.reason = np.selection.reason;
    if (np.bf16_asked) e.compute_asked = "bfloat16";
    if (np.bound && np.bound->island.lanes != 0) e.island = dtype_name(np.bound->island);
    if (np.bound && np.bound->compute.lanes != 0) {
      e.compute = dtype_name(np.bound->compute);
      const uint64_t arrives = n < plan->compute_arrives_bytes.size() ? plan->compute_arrives_bytes[n] : 0;
      e.compute_converted_bytes =
          static_cast<size_t>(np.bound->compute_converted_bytes - std::min(arrives, np.bound->compute_converted_bytes));
      e.compute_constant_bytes = static_cast<size_t>(np.bound->compute_constant_bytes);
      e.compute_note = np.bound->compute_note;
    }
    for (const auto& r : np.selection.rejected) e.rejected.push_back(Rejected{r.backend, r.reason});
    if (np.bound && np.bound->has_cost) {
      e.has_kernel_cost = true;
      e.kernel_flops = np.bound->flops;
      e.kernel_bytes = np.bound->bytes;
      e.kernel_scratch_bytes = static_cast<size_t>(np.bound->scratch_bytes);
    }
    for (ir::ValueId v : node.inputs) e.inputs.push_back(v == ir::kNoValue ? "" : impl_->graph.values[v].name);
    for (ir::ValueId v : node.outputs) e.outputs.push_back(impl_->graph.values[v].name);
    for (ir::ValueId v : node.outputs)  // a value inside a fused chain is never made: no shape
      if (np.folded_into < 0 || plan->record.infos[static_cast<size_t>(v)].produced)
        e.output_shapes.push_back(shape_of(v));
    if (np.fused) {
      e.op = np.fused->op;
      e.fused_from = {node.name};
      size_t last = n;
      for (size_t m = n + 1; m < plan->record.nodes.size(); ++m)
        if (plan->record.nodes[m].folded_into == static_cast<int32_t>(n)) {
          e.fused_from.push_back(impl_->graph.nodes[m].name);
          last = m;
        }
      e.output_shapes.clear();  // the fused kernel's outputs are its last node's
      for (ir::ValueId v : impl_->graph.nodes[last].outputs) e.output_shapes.push_back(shape_of(v));
    }
    e.flops = e.kernel_flops;
    e.bytes = e.kernel_bytes;
    if (np.bound && !e.has_kernel_cost) {
      const ir::Node& run = np.as_run(node);
      const ir::Node& last_node = np.fused ? impl_->graph.nodes[static_cast<size_t>(np.fused_last)] : node;
      std::vector<exec::TensorShape> ins, outs;
      for (ir::ValueId v : run.inputs) ins.push_back(tensor_at(v));
      for (ir::ValueId v : last_node.outputs) outs.push_back(tensor_at(v));
      const exec::OpCost c = exec::estimate_op_cost(run.op, ins, outs);
      e.flops = c.flops;
      e.bytes = c.bytes;
    }
    out.push_back(std::move(e));
  }
  return out;
}

const std::vector<NodeIO>& Model::node_io() const { return impl_->context.node_io(); }
const RunStats& Model::last_stats() const { return impl_->context.last_stats(); }
void Model::set_node_callback(NodeCallback callback) { impl_->context.set_node_callback(std::move(callback)); }
void Model::set_profiling(bool on) { impl_->context.set_profiling(on); }
const std::vector<NodeProfile>& Model::profile() const { return impl_->context.profile(); }

}  // namespace switchyard
