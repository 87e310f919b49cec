// switchyard's Python extension (_core): the public embedding API (runtime.hpp, graph.hpp)
// over pybind11, with no LibTorch (the .pt loader is _torchscript, torchscript_module.cpp). Tensors cross as DLPack capsules through torch's own
// converters, so inputs and outputs share memory with torch. switchyard/__init__.py adds
// the Python-side conveniences (default plugin paths, tracing an nn.Module).
#include <switchyard/runtime.hpp>

#include "tensor_import.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace pybind11::literals;
using namespace switchyard;

namespace {

// ---- tensors: DLPack both ways, no copies --------------------------------------

// torch's converters and the dtypes DLPack 0.6 lacks, fetched once (leaked references:
// they live as long as torch).
struct Torch {
  py::handle to_dlpack, from_dlpack, bool_dtype, uint8_dtype, tensor_type;
};
const Torch& torch_api() {
  static const Torch api = [] {
    py::module_ torch = py::module_::import("torch");
    py::object c = torch.attr("_C");
    return Torch{py::object(c.attr("_to_dlpack")).release(), py::object(c.attr("_from_dlpack")).release(),
                 py::object(torch.attr("bool")).release(), py::object(torch.attr("uint8")).release(),
                 py::object(torch.attr("Tensor")).release()};
  }();
  return api;
}

// switchyard's bool (DLPack's later kDLBool).
DLDataType bool_dtype() {
  static const DLDataType dtype = [] {
    DLDataType d{};
    parse_dtype("bool", &d);
    return d;
  }();
  return dtype;
}

// torch -> switchyard: the capsule's DLManagedTensor is checked and adopted
// (tensor_import.cpp; its deleter drops an at::Tensor; torch takes the GIL itself if that
// frees a Python object, so any thread may). torch 1.13 exports no bool tensors: they
// cross as uint8 bytes, relabelled bool.
Tensor from_torch(const py::handle& tensor, size_t index) {
  const Torch& api = torch_api();
  if (!py::isinstance(tensor, api.tensor_type))
    throw py::type_error("input " + std::to_string(index) + ": expected a torch.Tensor, got " +
                         std::string(py::str(tensor.get_type().attr("__name__"))));
  const bool is_bool = py::object(tensor.attr("dtype")).is(api.bool_dtype);
  py::object source = is_bool ? tensor.attr("view")(api.uint8_dtype) : py::reinterpret_borrow<py::object>(tensor);
  py::object capsule = api.to_dlpack(source);
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) throw py::error_already_set();
  // A refused tensor stays with the capsule, whose destructor frees it.
  Tensor adopted = python::import_dlpack(managed, index, is_bool);
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // consumed: its destructor now does nothing
  return adopted;
}

// switchyard -> torch: a DLManagedTensor that holds a handle on the tensor (and its own
// shape and strides, which torch reads). Its deleter touches no Python.
struct Exported {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};

void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;  // torch took it
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  managed->deleter(managed);
}

py::object to_torch(const Tensor& tensor) {
  if (!tensor.defined()) return py::none();
  auto* e = new Exported{tensor, tensor.shape(), tensor.strides()};
  e->managed.dl_tensor = tensor.dl();
  e->managed.dl_tensor.shape = e->shape.data();
  e->managed.dl_tensor.strides = e->strides.data();
  const bool is_bool = same_dtype(tensor.dtype(), bool_dtype());
  if (is_bool) e->managed.dl_tensor.dtype = DLDataType{kDLUInt, 8, 1};
  e->managed.manager_ctx = e;
  e->managed.deleter = [](DLManagedTensor* m) { delete static_cast<Exported*>(m->manager_ctx); };
  py::capsule capsule(&e->managed, "dltensor", &capsule_destructor);
  const Torch& api = torch_api();
  py::object out = api.from_dlpack(capsule);
  return is_bool ? py::object(out.attr("view")(api.bool_dtype)) : out;
}

std::vector<Tensor> tensors_from(const py::args& args) {
  std::vector<Tensor> out;
  out.reserve(args.size());
  for (const py::handle& a : args) out.push_back(from_torch(a, out.size()));
  return out;
}

py::tuple tuple_of(const std::vector<Tensor>& tensors) {
  py::tuple out(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) out[i] = to_torch(tensors[i]);
  return out;
}

py::list list_of(const std::vector<Tensor>& tensors) {
  py::list out;
  for (const Tensor& t : tensors) out.append(to_torch(t));
  return out;
}

// ---- runtime and model ---------------------------------------------------------

// A Runtime per node_io capture mode: capture is a runtime setting (it decides fusion when
// a model loads), so node_io="all" runs a second load of the same graph (weights shared).
class PyRuntime {
 public:
  explicit PyRuntime(Options options) : options_(std::move(options)) {
    runtimes_[""] = std::make_shared<Runtime>(options_);
  }
  const Runtime& base() const { return *runtimes_.at(""); }
  // The runtime that records `capture` ("" = as configured). Made on first use, GIL held.
  const Runtime& for_capture(const std::string& capture) {
    auto it = runtimes_.find(capture);
    if (it != runtimes_.end()) return *it->second;
    Options o = options_;
    o.capture = capture;
    return *(runtimes_[capture] = std::make_shared<Runtime>(o));
  }

 private:
  Options options_;
  std::map<std::string, std::shared_ptr<Runtime>> runtimes_;
};

class PyModel {
 public:
  PyModel(std::shared_ptr<PyRuntime> runtime, Graph graph) : runtime_(std::move(runtime)), graph_(std::move(graph)) {
    models_[""] = runtime_->base().load(Graph(graph_));
  }

  const Model& base() const { return *models_.at(""); }

  // The model whose runs record `node_io` (None, "outputs" or "all"); loaded on first use.
  const Model& for_node_io(const py::object& node_io) {
    if (node_io.is_none()) return base();
    std::string mode = py::str(node_io);
    if (mode != "outputs" && mode != "all")
      throw py::value_error("node_io='" + mode + "': expected None, 'outputs' or 'all'");
    if (runtime_->base().config().capture == mode) return base();
    auto it = models_.find(mode);
    if (it != models_.end()) return *it->second;
    return *(models_[mode] = runtime_->for_capture(mode).load(Graph(graph_)));
  }

  py::object run(const py::args& args, const py::object& node_io) {
    const Model& model = for_node_io(node_io);
    std::vector<Tensor> inputs = tensors_from(args);
    RunContext context;  // per call: concurrent calls from several threads are safe
    std::vector<Tensor> outputs;
    {
      py::gil_scoped_release unlocked;
      outputs = model.run(inputs, context);
    }
    py::tuple result = tuple_of(outputs);
    if (node_io.is_none()) return std::move(result);
    return py::make_tuple(result, node_io_dict(context.node_io()));
  }

  py::list plan(const py::args& args) const {
    std::vector<Tensor> inputs = args.size() > 0 ? tensors_from(args) : sample_inputs();
    std::vector<PlanEntry> entries;
    {
      py::gil_scoped_release unlocked;
      entries = base().plan(inputs);
    }
    py::list out;
    for (const PlanEntry& e : entries) {
      py::list rejections;
      for (const Rejected& r : e.rejected) rejections.append(py::dict("backend"_a = r.backend, "reason"_a = r.reason));
      // The kernel's own cost of one run (SDK 1.1), where its plugin reports one.
      py::object cost = py::none();
      if (e.has_kernel_cost)
        cost = py::dict("flops"_a = e.kernel_flops, "bytes"_a = e.kernel_bytes,
                        "scratch_bytes"_a = e.kernel_scratch_bytes);
      // [precision]: what the node was asked and computes in, where either is known.
      py::object compute = py::none();
      if (!e.compute_asked.empty() || !e.compute.empty() || !e.island.empty())
        compute = py::dict("asked"_a = e.compute_asked, "computes"_a = e.compute, "island"_a = e.island,
                           "note"_a = e.compute_note, "bytes_per_run"_a = e.compute_converted_bytes,
                           "bytes_once"_a = e.compute_constant_bytes);
      out.append(py::dict("node"_a = e.node, "op"_a = e.op, "module"_a = e.module_path, "backend"_a = e.backend,
                          "why"_a = e.reason, "rejections"_a = rejections, "fused_from"_a = e.fused_from,
                          "kernel_cost"_a = cost, "cost"_a = py::dict("flops"_a = e.flops, "bytes"_a = e.bytes),
                          "compute"_a = compute));
    }
    return out;
  }

  // Runs `repeat` times with profiling on; per node, the mean and least duration.
  py::list profile(const py::args& args, int repeat) const {
    if (repeat < 1) throw py::value_error("repeat must be at least 1");
    std::vector<Tensor> inputs = tensors_from(args);
    std::vector<std::vector<NodeProfile>> runs;
    {
      py::gil_scoped_release unlocked;
      RunContext context;
      context.set_profiling(true);
      for (int i = 0; i < repeat; ++i) {
        base().run(inputs, context);
        runs.push_back(context.profile());
      }
    }
    py::list out;
    for (size_t n = 0; n < runs[0].size(); ++n) {
      const NodeProfile& p = runs[0][n];
      double total = 0, least = p.duration_ms;
      for (const auto& run : runs) {
        const NodeProfile& q = n < run.size() ? run[n] : p;
        total += q.duration_ms;
        least = std::min(least, q.duration_ms);
      }
      out.append(py::dict("node"_a = p.node, "op"_a = p.op, "backend"_a = p.backend, "module"_a = p.module_path,
                          "mean_ms"_a = total / static_cast<double>(runs.size()), "min_ms"_a = least,
                          "lane"_a = p.lane));
    }
    return out;
  }

  py::list input_specs() const {
    py::list out;
    auto shapes = base().input_shapes();
    auto dtypes = base().input_dtypes();
    for (size_t i = 0; i < shapes.size(); ++i)
      out.append(
          py::dict("name"_a = base().input_names()[i], "dtype"_a = dtype_name(dtypes[i]), "shape"_a = shapes[i]));
    return out;
  }

 private:
  // Zero-filled inputs at the declared shapes, free dimensions at 1 (plan() with no inputs).
  std::vector<Tensor> sample_inputs() const {
    std::vector<Tensor> out;
    auto shapes = base().input_shapes();
    auto dtypes = base().input_dtypes();
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (shapes[i].empty())  // unknown (a traced .pt declares none): 0-d would plan nonsense
        throw py::value_error("input " + std::to_string(i) + " '" + base().input_names()[i] +
                              "' has no declared shape: pass sample inputs, plan(*tensors)");
      for (int64_t& d : shapes[i]) d = d < 0 ? 1 : d;
      out.push_back(Tensor::empty(sample_dtype(dtypes[i]), shapes[i]));  // float32 where any dtype goes
    }
    return out;
  }

  static py::object node_io_dict(const std::vector<NodeIO>& records) {
    py::object dict = py::module_::import("collections").attr("OrderedDict")();
    for (const NodeIO& r : records) {
      dict[py::str(r.node)] = py::dict("op"_a = r.op, "backend"_a = r.backend, "module"_a = r.module_path,
                                       "input_sources"_a = r.input_sources, "inputs"_a = list_of(r.inputs),
                                       "outputs"_a = list_of(r.outputs));
    }
    return dict;
  }

  std::shared_ptr<PyRuntime> runtime_;
  Graph graph_;
  std::map<std::string, std::unique_ptr<Model>> models_;
};

// ---- errors --------------------------------------------------------------------

const char* kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Config: return "ConfigError";
    case ErrorKind::Graph: return "GraphError";
    case ErrorKind::Plugin: return "PluginError";
    case ErrorKind::Input: return "InputError";
    case ErrorKind::Kernel: return "KernelError";
    case ErrorKind::Unsupported: return "UnsupportedError";
    case ErrorKind::Io: return "IoError";
    case ErrorKind::Internal: return "InternalError";
    case ErrorKind::OutOfMemory: return "OutOfMemoryError";
  }
  return "InternalError";
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "switchyard's C++ embedding API (use the `switchyard` package, not this module)";

  // switchyard.Error (a RuntimeError) and one subclass per ErrorKind; the text is the CLI's.
  static py::handle error = PyErr_NewException("switchyard.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = error;
  static std::map<ErrorKind, py::handle> by_kind;
  for (ErrorKind k : {ErrorKind::Config, ErrorKind::Graph, ErrorKind::Plugin, ErrorKind::Input, ErrorKind::Kernel,
                      ErrorKind::Unsupported, ErrorKind::Io, ErrorKind::Internal, ErrorKind::OutOfMemory}) {
    std::string name = std::string("switchyard.") + kind_name(k);
    by_kind[k] = PyErr_NewException(name.c_str(), error.ptr(), nullptr);
    m.attr(kind_name(k)) = by_kind[k];
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(by_kind[e.kind()].ptr(), e.what());
    }
  });

  py::class_<PyRuntime, std::shared_ptr<PyRuntime>>(m, "Runtime")
      .def(py::init([](const py::object& config, std::vector<std::string> plugin_paths, bool strict,
                       const py::object& log_level, bool check_finite) {
             Options o;
             if (!config.is_none()) o.config_path = py::str(config);
             o.plugin_paths = std::move(plugin_paths);
             o.strict = strict;
             if (!log_level.is_none()) o.log_level = py::str(log_level);
             o.check_finite = check_finite;
             return std::make_shared<PyRuntime>(o);
           }),
           "config"_a = py::none(), "plugin_paths"_a = std::vector<std::string>{}, "strict"_a = false,
           "log_level"_a = py::none(), "check_finite"_a = false)
      .def("_load_file", [](std::shared_ptr<PyRuntime> self,
                            const std::string& path) { return std::make_shared<PyModel>(self, Graph::read(path)); })
      .def_property_readonly(
          "plugins",
          [](const PyRuntime& self) {
            py::list out;
            for (const PluginInfo& p : self.base().plugins())
              out.append(py::dict(
                  "name"_a = p.name, "version"_a = p.version, "path"_a = p.path, "kernels"_a = p.kernels.size(),
                  "sdk"_a = std::to_string(p.sdk_major) + "." + std::to_string(p.sdk_minor),
                  "attributes"_a = py::dict(
                      py::cast(std::map<std::string, std::string>(p.attributes.begin(), p.attributes.end())))));
            return out;
          })
      .def_property_readonly("config_source", [](const PyRuntime& self) { return self.base().config().source; });

  py::class_<PyModel, std::shared_ptr<PyModel>>(m, "Model")
      .def("run", &PyModel::run, "node_io"_a = py::none(),
           "Runs the model on torch tensors; returns a tuple of outputs, or (outputs, node_io)")
      .def("plan", &PyModel::plan, "The backend chosen for each node, for these inputs (default: declared shapes)")
      .def("profile", &PyModel::profile, "repeat"_a = 1, "Per-node timings over `repeat` runs")
      .def_property_readonly("inputs", &PyModel::input_specs)
      .def_property_readonly("output_names", [](const PyModel& self) { return self.base().output_names(); });
}
