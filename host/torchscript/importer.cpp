// TorchScript importer: loads a .pt file with LibTorch, freezes it (eval mode: attributes
// become constants, batch-norm folds into convolution, dropout goes), inlines it, removes
// the mutation it can prove safe to remove, and hands the graph to the lowering
// (lower.cpp). No LibTorch error escapes as anything but switchyard::Error.
//
// Input dtypes and shapes. A traced module saved to a file keeps neither its example
// inputs' shapes nor their dtypes, and needs neither: sizes are computed at run time from
// the actual inputs (docs/shapes.md). Each input's dtype comes, in this order, from
//   1. a complete tensor type on the graph input (rare after save/load);
//   2. an optional extra file "switchyard_inputs.json" in the archive, a hint written at
//      save time:
//        torch.jit.save(traced, "m.pt", _extra_files={"switchyard_inputs.json": json.dumps(
//            {"inputs": [{"name": "x", "dtype": "float32", "shape": [1, 3, 224, 224]}]})})
//      (or a bare list of such objects), matched to the inputs by position; its shapes
//      become example shapes (for `plan` and sample inputs), never constraints;
//   3. otherwise how the input is used (rewrites.cpp): pinned only where an op refuses any
//      other dtype (token ids -> int64, masked_fill / where masks -> bool, a conv's or
//      linear's input -> its weights' dtype), else kAnyDtype: PyTorch promotes, so an
//      int64 mask in `1.0 - mask` or `mask == 0` runs as it does in PyTorch.
// What shapes an input takes is derived from the graph itself (ir/input_spec.hpp): its rank
// and the dimensions the weights fix, e.g. [B, 3, H, W] for a convolution's input.
#include "api/internal.hpp"  // register_model_loader
#include "ir/input_spec.hpp"
#include "lower_internal.hpp"
#include "util/log.hpp"

#include <switchyard/torchscript.hpp>

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/script.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <mutex>

namespace switchyard::torchscript {

namespace jit = torch::jit;

namespace {

constexpr const char* kInputsFile = "switchyard_inputs.json";

// Reads switchyard_inputs.json into `infos` (by position). Bad content is an Io error.
void read_input_hints(const std::string& path, const std::string& text, std::vector<InputInfo>& infos) {
  auto bad = [&](const std::string& why) { return Error(ErrorKind::Io, path + ": " + kInputsFile + ": " + why); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw bad(first_line(e.what()));
  }
  if (j.is_object() && j.contains("inputs")) j = j["inputs"];
  if (!j.is_array()) throw bad("expected a list of inputs");
  if (j.size() != infos.size())
    throw bad("describes " + std::to_string(j.size()) + " inputs, the model takes " + std::to_string(infos.size()));
  for (size_t i = 0; i < j.size(); ++i) {
    const nlohmann::json& e = j[i];
    InputInfo& info = infos[i];
    if (!e.is_object()) throw bad("input #" + std::to_string(i) + " is not an object");
    if (e.contains("dtype")) {
      if (!e["dtype"].is_string() || !parse_dtype(e["dtype"].get<std::string>(), &info.dtype))
        throw bad("input #" + std::to_string(i) + ": unknown dtype " + e["dtype"].dump());
      info.known_dtype = true;
    }
    if (e.contains("shape")) {
      if (!e["shape"].is_array()) throw bad("input #" + std::to_string(i) + ": shape is not a list");
      info.example_shape.clear();
      for (const auto& d : e["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0)
          throw bad("input #" + std::to_string(i) + ": bad dimension " + d.dump());
        info.example_shape.push_back(d.get<int64_t>());
      }
    }
  }
}

jit::Module load_module(const std::string& path, jit::ExtraFilesMap& extra) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(ErrorKind::Io, path + ": no such file");
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(ErrorKind::Io, path + ": not a regular file");
  if (!std::ifstream(path, std::ios::binary)) throw Error(ErrorKind::Io, path + ": cannot open the file");
  try {
    return jit::load(path, torch::kCPU, extra);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Io, path + ": not a TorchScript file: " + first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Io, path + ": not a TorchScript file: " + first_line(e.what()));
  }
}

}  // namespace

namespace {

bool has_half_weights(const jit::Module& module) {
  for (const at::Tensor& t : module.parameters())
    if (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16) return true;
  for (const at::Tensor& t : module.buffers())
    if (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16) return true;
  return false;
}

}  // namespace

void import_model(const std::string& path, ir::Graph& out) {
  jit::ExtraFilesMap extra{{kInputsFile, ""}};
  jit::Module module = load_module(path, extra);

  std::shared_ptr<jit::Graph> graph;
  std::vector<InputInfo> infos;
  try {
    if (!module.find_method("forward")) throw Error(ErrorKind::Graph, path + ": the module has no forward method");
    module.eval();
    // Folding batch norms into convolutions computes in the weights' dtype: a half-precision
    // model keeps them apart here, and the host folds them in float32 when [precision]
    // compute = "fp32" applies (ir/precision.cpp, then ir/fold_batch_norm.cpp).
    jit::Module frozen = jit::freeze(module, c10::nullopt, /*optimize_numerics=*/!has_half_weights(module));
    jit::Method forward = frozen.get_method("forward");
    graph = forward.graph();
    jit::Inline(*graph);
    jit::RemoveListMutation(graph);
    jit::RemoveTensorMutation(graph);
    jit::ConstantPropagation(graph);
    jit::EliminateDeadCode(graph);

    const auto& args = forward.function().getSchema().arguments();
    for (size_t i = 1; i < graph->inputs().size(); ++i) {
      InputInfo info;
      info.name = i < args.size() ? args[i].name() : graph->inputs()[i]->debugName();
      if (auto tt = graph->inputs()[i]->type()->cast<c10::TensorType>()) {
        if (auto st = tt->scalarType()) info.known_dtype = to_dl_dtype(*st, &info.dtype);
        if (auto sizes = tt->sizes().concrete_sizes()) info.example_shape = *sizes;
      }
      infos.push_back(std::move(info));
    }
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Graph,
                path + ": cannot prepare the TorchScript module: " + first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Graph, path + ": cannot prepare the TorchScript module: " + first_line(e.what()));
  }
  if (!extra[kInputsFile].empty()) read_input_hints(path, extra[kInputsFile], infos);

  ir::Graph result;
  try {
    lower_graph(path, graph, module.type(), infos, result);
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Graph, path + ": " + first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Graph, path + ": " + first_line(e.what()));
  }
  ir::derive_input_specs(result);
  size_t constants = 0;
  for (const ir::Value& v : result.values) constants += v.kind == ir::ValueKind::Constant ? 1 : 0;
  log::get().debug("torchscript: {}: {} nodes, {} constants", path, result.nodes.size(), constants);
  out = std::move(result);
}

void register_loader() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_model_loader(".pt", [](const std::string& path, ir::Graph& out) { import_model(path, out); });
  });
}

}  // namespace switchyard::torchscript
