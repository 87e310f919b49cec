// switchyard's embedding API: load plugins and a model with a config, run it on
// tensors, read the outputs, the plan and node_io, and watch each node as it runs.
// The CLI is a thin shell over this header (and graph.hpp, torchscript.hpp). Errors are
// thrown as switchyard::Error.
#pragma once

#include <switchyard/error.hpp>
#include <switchyard/graph.hpp>
#include <switchyard/tensor.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace switchyard {

// ---- plugins -------------------------------------------------------------------

struct KernelInfo {
  std::string op, family, device;
  std::vector<std::string> dtypes;
  bool host_allocated_outputs = false;
};

struct PluginInfo {
  std::string name, version, vendor, path;
  unsigned sdk_major = 0, sdk_minor = 0;
  std::vector<KernelInfo> kernels;
  // The storages it declares (SDK 1.1), named "plugin/storage", e.g. "conv/nChw16c".
  std::vector<std::string> storages;
  // What it was built with and runs on (SDK 1.3), e.g. {"onednn", "2.6.3, isa avx2"};
  // empty for a plugin of an earlier SDK.
  std::vector<std::pair<std::string, std::string>> attributes;
  // Per storage, in `storages` order: the dtype its bytes hold where narrower than its
  // values (SY_EXTENSION_STORAGE_ELEMENTS), e.g. "bfloat16"; "" where they are exact.
  std::vector<std::string> storage_elements;
};

// ---- results -------------------------------------------------------------------

// One node's record, with DLBacktrace's fields.
struct NodeIO {
  std::string node, op, backend, module_path;
  std::vector<std::string> input_sources;  // value names; "" for an absent optional input
  std::vector<Tensor> inputs;              // empty in capture mode "outputs"
  std::vector<Tensor> outputs;
};

struct Rejected {
  std::string backend, reason;
};

struct PlanEntry {
  std::string node, op, module_path;
  std::string backend;  // "" if no backend accepted the node
  std::string reason;   // why it won, e.g. "rule #1 (x.toml:7:1)"
  std::vector<Rejected> rejected;
  // A fused node: the graph nodes its one kernel runs, e.g. {"fc", "fc.gelu"}; `op` is
  // then the fused op ("aten::linear+aten::gelu"). The consumer's own entry says
  // "fused into 'fc'" in `reason`.
  std::vector<std::string> fused_from;
  // The node's output shapes at the planned input shapes (empty where not known, e.g. a
  // constant folded at planning).
  std::vector<std::vector<int64_t>> output_shapes;
  // The node's input and output values by name ("" for an absent optional input), so that
  // a picture of the plan can draw its edges (`switchyard plan --dot`).
  std::vector<std::string> inputs, outputs;
  // The kernel's own cost of one run at the planned shapes (SDK 1.1 SY_KernelDef.cost),
  // asked once per plan. False where the kernel has no `cost` or it failed (a warning
  // is logged); `flops` and `bytes` below then hold the host's estimate.
  bool has_kernel_cost = false;
  double kernel_flops = 0;          // a multiply-add counts 2
  double kernel_bytes = 0;          // read from and written to memory
  size_t kernel_scratch_bytes = 0;  // temporary memory one run allocates
  // The node's cost of one run at the planned shapes: its kernel's own where it reports
  // one, else the host's estimate from the op and its shapes (2 FLOPs per multiply-add in
  // linear, matmul, conv and attention; one per output element elsewhere; every input and
  // output's bytes once). 0 for a node fused into another, and for sym nodes.
  double flops = 0, bytes = 0;
  // Precision ([precision] compute): "bfloat16" where the config asked this node for
  // bfloat16 products, else "". `compute` is what the kernel says it multiplies in
  // (SY_ComputeReport), "" where it said nothing (its tensors' own dtype); with it the bytes
  // it converts per run, those it converted once (weights), and its reason.
  std::string compute_asked, compute, compute_note;
  size_t compute_converted_bytes = 0, compute_constant_bytes = 0;
  // A float32 island (a half-precision model computing as-is): the model's dtype,
  // "bfloat16" or "float16", which the node's inputs are converted from and its outputs
  // back to; "" for any other node. `compute` is then "float32", with its bytes and reason.
  std::string island;
};

// A value converted between storages in a plan: a device copy or a layout change
// (SDK 1.1 storages). Storages are named "host" or "plugin/storage", e.g. "cuda/cuda".
struct StorageCopy {
  std::string value, from, to;
  std::string reader;  // the node it is converted for ("" for a constant)
  size_t bytes = 0;
  bool once = false;  // a constant: converted when the plan was made
};

// A value a plan keeps in a plugin's storage (a device, or a layout such as "conv/nhwc")
// from its producer to all its readers, with no conversion between them.
struct StoredValue {
  std::string value, storage;  // storage named "plugin/storage"
};

struct RunStats {
  size_t nodes_run = 0;
  // True for the run that planned its input shapes: the first of each signature, or the
  // first after that signature's plan left the bounded cache ([runtime] plan_cache).
  bool planned = false;
  size_t peak_live_tensors = 0;  // activations alive at once (inputs included)
  size_t peak_live_bytes = 0;    // their sizes summed (a view counts its full size)
  size_t arena_bytes = 0;        // the activation arena this run used; 0: none
  // With RunContext::set_memory_measurement: the most heap bytes in use (malloc's count,
  // all threads) as any node returns, less those in use when the run began. 0 if off.
  size_t measured_peak_bytes = 0;
};

// The memory plan of one input-shape signature (Model::memory_plan). Sizes in bytes.
struct MemoryValue {
  std::string value, producer;  // the value and the node that makes it
  size_t bytes = 0;             // its own bytes (0 for a view)
  // "arena", "arena, at the end of X" (its bytes end where X's do: X's producer writes X
  // over it), "heap" (kernel-produced memory, or a host-allocated value that fits under the
  // heap's peak), "output" (a graph output or what one views, on the heap), "output, in
  // the arena" (the arena is no larger than it: holding it holds the arena), or "view of
  // X" (it owns nothing; X lives as long as it does).
  std::string placement;
  int64_t offset = -1;            // in the arena; -1 elsewhere
  int32_t first = -1, last = -1;  // producing node and last reader (node indices;
                                  // last = -1: never read; INT32_MAX: an output)
  bool in_place = false;          // a "view of X" that its producer wrote over X's
                                  // buffer (in place), not a view a kernel returned
};

struct MemoryReport {
  bool arena_enabled = false;         // false: capture, parallel runs or config disabled it
  size_t arena_bytes = 0;             // the arena
  size_t arena_values_bytes = 0;      // its values' sizes, summed (what they take unshared)
  size_t heap_peak_bytes = 0;         // most bytes alive at once outside the arena
  size_t estimated_peak_bytes = 0;    // arena + heap peak: peak activation memory
  size_t total_activation_bytes = 0;  // every activation's size, summed (no reuse at all)
  std::vector<MemoryValue> values;    // in graph value order, activations only
};

// One node of a profiled run (RunContext::set_profiling). Wall-clock milliseconds from
// the run's start. In a sequential run a node's span runs from the end of the node before
// it to its own end, so it holds the host's work for it too (input lookup, checks, frees,
// capture); in a parallel run ([runtime] inter_op_threads > 1) spans may overlap.
struct NodeProfile {
  std::string node, op, backend, module_path;
  double start_ms = 0, duration_ms = 0;
  int lane = 0;  // the worker that ran it (always 0 in a sequential run)
};

// Writes a profile as a Chrome trace (one complete event per node: ts and dur in
// microseconds, name = node, cat = backend, args op and module_path); Perfetto and
// chrome://tracing open it. Throws Error (Io) if the file cannot be written.
void write_chrome_trace(const std::string& path, const std::vector<NodeProfile>& profile);

// Called after each node runs, with its inputs and outputs (valid during the call), and
// everything a consumer needs to place it without looking the node up: its index, its
// inputs' value names and, for a fused kernel, the graph nodes it ran. A fused node
// (fusion on) is named after its producer and reads the producer's inputs, then the
// consumer's after its first.
struct NodeEvent {
  const std::string& node;
  const std::string& op;
  const std::string& backend;
  const std::string& module_path;
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
  const std::vector<std::string>* input_sources = nullptr;  // per input: its value's name ("" if absent)
  size_t index = 0;                                         // the node's position in the graph
  // (optional) A fused kernel's graph nodes, producer first: `node` is the first, and its
  // outputs are the last one's. Null for a node that ran alone.
  const std::vector<std::string>* fused_members = nullptr;
};
using NodeCallback = std::function<void(const NodeEvent&)>;

// ---- configuration -------------------------------------------------------------

// One [[rules]] entry of a config: the non-empty fields must all match a node.
struct ConfigRule {
  std::string op, node, module, family;  // exact op, node-name glob, module-path glob, op family
  std::vector<std::string> backends;     // in order of preference
  std::string where;                     // "file:line:column" of the rule
};

// A config as the runtime reads it (docs/config.md names every key): the file's values,
// defaults where it is silent, and, from Runtime::config(), the Options that override it.
struct RuntimeConfig {
  std::string source;                         // the file ("" = built-in defaults)
  std::vector<std::string> plugin_paths;      // [plugins] paths, resolved against the file's folder
  std::vector<std::string> load;              // [plugins] load: names or .so paths; empty = all found
  std::vector<std::string> default_backends;  // [selection] default (Runtime::config(): as resolved)
  bool builtin_default = false;               // the config names no default: the built-in routing
  bool strict = false;                        // [selection] strict
  bool fuse = true;                           // [selection] fuse
  std::vector<ConfigRule> rules;              // [[rules]], first match wins
  int intra_op_threads = 0;                   // [runtime]; 0 = the library default
  int inter_op_threads = 1;                   // [runtime]; > 1 runs independent nodes at once; 0 = all cores
  bool deterministic = false;                 // [runtime]
  bool memory_planner = true;                 // [runtime]
  int plan_cache = 16;                        // [runtime] plans kept, one per input-shape signature
  bool preflight = true;                      // [runtime] memory pre-flight (docs/reliability.md)
  double copy_warning_share = 0.25;           // [runtime] warn when conversions move more of a run's bytes
  std::string capture = "none";               // [runtime] node_io: none|outputs|all|stream
  std::string log_level = "info";             // [runtime] log_level
  std::vector<std::string> warnings;          // unknown keys, "file:line:column: ..."
};

// Reads a config file without loading anything or logging (its warnings are returned).
// Throws Error (Config) citing file:line:column, as Runtime does for the same file.
RuntimeConfig read_config(const std::string& path);

// The host's log level: trace|debug|info|warn|error|off. Returns false (and changes
// nothing) for another name. Options::log_level sets it too, when a Runtime is made.
bool set_log_level(const std::string& level);

// ---- the runtime ---------------------------------------------------------------

struct Options {
  std::string config_path;                // "" = built-in defaults (every plugin found)
  std::vector<std::string> plugin_paths;  // searched before the config's and defaults
  // overrides the config: none|outputs|all|stream. "stream" keeps nothing in node_io():
  // each node's record goes to the run's node callback, which must be set (Model::run
  // throws otherwise); torchscript::NodeIoStreamWriter writes them to a .pt file.
  std::string capture;
  bool strict = false;        // forces strict selection on
  std::string log_level;      // wins over $SWITCHYARD_LOG_LEVEL and the config
  bool check_finite = false;  // fail at the first node that makes a NaN or Inf
  bool no_preflight = false;  // turns the memory pre-flight off (CLI --no-preflight)
};

class Runtime;
class Model;

// What one caller's runs produce besides their outputs: node_io and stats of the last
// run made with this context, and the callback its runs call after each node. Give each
// thread its own RunContext and any number of threads may run one Model at once:
//   switchyard::RunContext ctx;               // one per thread (or per request)
//   auto outputs = model->run(inputs, ctx);   // thread-safe
//   ctx.node_io(); ctx.last_stats();          // this caller's, untouched by the others
// A RunContext is not itself thread-safe: one run at a time per context. It may be used
// with several models; its records are those of the last run made with it.
class RunContext {
 public:
  RunContext() = default;
  const std::vector<NodeIO>& node_io() const { return node_io_; }  // per the capture mode
  const RunStats& last_stats() const { return stats_; }
  // Called on the running thread after each node of this context's runs.
  void set_node_callback(NodeCallback callback) { callback_ = std::move(callback); }
  // Profiling: when on, each run records every node's start and duration, read back with
  // profile() (empty after a run with profiling off). Off by default: a run then reads
  // no clock, and pays one predictable branch per node.
  void set_profiling(bool on) { profiling_ = on; }
  bool profiling() const { return profiling_; }
  // Memory measurement: when on, each run samples malloc's bytes in use as each node
  // returns, before its inputs are freed (RunStats::measured_peak_bytes), and takes a
  // fresh arena, so that the arena counts.
  // Costs a few microseconds per node; the count covers every thread of the process.
  void set_memory_measurement(bool on) { measure_memory_ = on; }
  const std::vector<NodeProfile>& profile() const { return profile_; }

 private:
  friend class Model;
  std::vector<NodeIO> node_io_;
  RunStats stats_;
  NodeCallback callback_;
  bool profiling_ = false;
  bool measure_memory_ = false;
  std::vector<NodeProfile> profile_;
};

class Model {
 public:
  ~Model();
  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;
  // Input shapes for sample inputs: an input's example shape where the model gives one
  // (switchyard_inputs.json, a graph file's example_shape), else its declared shape (-1 for
  // a free dimension, empty when nothing is known); and the input dtypes, kAnyDtype for an
  // input whose dtype the model leaves free (tensor.hpp; sample_dtype() gives float32).
  std::vector<std::vector<int64_t>> input_shapes() const;
  std::vector<DLDataType> input_dtypes() const;
  // What shapes each input takes, with symbolic dims: "[B, 3, H, W]", "[..., 768]", "[...]".
  std::vector<std::string> input_specs() const;

  // Runs the graph. Plans (selection, kernel instances) are cached per input-shape
  // signature. Throws Error naming the node, op and plugin when a kernel fails, and
  // Error (Config) in capture mode "stream" when the context has no node callback.
  // Thread-safe: several threads may call it on one Model at once, each with its own
  // `context`, which receives that run's node_io and stats (and supplies its callback).
  // The first run of a new input-shape signature plans under a lock; runs of other
  // threads with that signature wait for it, runs of planned signatures do not.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunContext& context) const;

  // Single-caller form: runs with the Model's own context, read back through node_io(),
  // last_stats() and set_node_callback() below. Not thread-safe (two threads calling it
  // at once race on that one context); from several threads use the form above.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);

  // The selection for the given inputs (plans if needed; runs nothing new if cached).
  // Thread-safe, like run(inputs, context).
  std::vector<PlanEntry> plan(const std::vector<Tensor>& inputs) const;
  // The memory plan for these inputs: which activations share the arena, and the peak
  // activation memory it predicts. Plans like plan() (one run if not planned yet).
  MemoryReport memory_plan(const std::vector<Tensor>& inputs) const;
  // The conversions between storages the plan for these inputs makes, in step order,
  // each with its bytes. Plans like plan().
  std::vector<StorageCopy> storage_copies(const std::vector<Tensor>& inputs) const;
  // The values the plan for these inputs keeps in plugin storages, in value order.
  std::vector<StoredValue> stored_values(const std::vector<Tensor>& inputs) const;
  const std::vector<NodeIO>& node_io() const;       // of the last run(inputs), per capture mode
  const RunStats& last_stats() const;               // of the last run(inputs)
  void set_node_callback(NodeCallback callback);    // for run(inputs)
  void set_profiling(bool on);                      // for run(inputs); see RunContext
  const std::vector<NodeProfile>& profile() const;  // of the last run(inputs)

  // Runs one node of this model alone, as the model's graph holds it after loading (its
  // precision conversions made, unfused, batch norms not folded), on `inputs` given per
  // node input in order; the constants the node reads are its own, whatever `inputs`
  // holds in their places. Plans a one-node model on every call: for tools such as
  // `switchyard diff --added`, not for speed. Throws Error (Input) for an unknown node.
  std::vector<Tensor> run_node(const std::string& node, const std::vector<Tensor>& inputs) const;

  struct Impl;

 private:
  friend class Runtime;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Runtime {
 public:
  explicit Runtime(const Options& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  std::vector<PluginInfo> plugins() const;
  // The config this runtime runs with, Options' overrides (capture, strict, log level) applied.
  const RuntimeConfig& config() const;
  // Loads a graph file (.json portable format; .pt TorchScript where built with it).
  std::unique_ptr<Model> load(const std::string& model_path) const;
  // Takes a graph read or built in memory (see graph.hpp); validates it first.
  std::unique_ptr<Model> load(Graph graph) const;

  struct Impl;

 private:
  friend class Model;  // run_node makes models of one node
  static std::unique_ptr<Model> make_model(const std::shared_ptr<Impl>& runtime, std::unique_ptr<Model::Impl> impl);
  std::shared_ptr<Impl> impl_;  // models share it: a Model may outlive its Runtime
};

}  // namespace switchyard
