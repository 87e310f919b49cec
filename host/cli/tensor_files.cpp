#include "tensor_files.hpp"

#include "tensor_json.hpp"

#include <nlohmann/json.hpp>

#ifdef SWITCHYARD_WITH_TORCHSCRIPT
#include <switchyard/torchscript.hpp>
#endif

#include <fstream>

namespace switchyard::cli {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void require_torchscript(const std::string& path) {
  if (!have_torchscript())
    throw Error(ErrorKind::Unsupported, path +
                                            ": .pt files need switchyard built with LibTorch "
                                            "(SWITCHYARD_WITH_TORCH=ON); use a .json tensor file");
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void write_node_io_json(const std::string& path, const std::vector<NodeIO>& records) {
  nlohmann::json doc = nlohmann::json::object();
  for (const NodeIO& r : records) {
    nlohmann::json node = {
        {"op", r.op}, {"backend", r.backend}, {"module_path", r.module_path}, {"input_sources", r.input_sources}};
    auto tensors = [](const std::vector<Tensor>& ts) {
      nlohmann::json arr = nlohmann::json::array();
      for (const Tensor& t : ts)
        arr.push_back(t.defined() ? nlohmann::json{{"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}}
                                  : nlohmann::json(nullptr));
      return arr;
    };
    node["inputs"] = tensors(r.inputs);
    node["outputs"] = tensors(r.outputs);
    doc[r.node] = node;
  }
  std::ofstream out(path);
  if (!out) throw Error(ErrorKind::Io, path + ": cannot write");
  out << doc.dump(1) << "\n";
}

}  // namespace

bool is_pt_file(const std::string& path) { return ends_with(path, ".pt") || ends_with(path, ".pth"); }

bool have_torchscript() {
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
  return true;
#else
  return false;
#endif
}

std::vector<Tensor> read_inputs(const std::string& path, const Model& model) {
  if (!is_pt_file(path)) return read_tensors_json(path, model.input_names());
  require_torchscript(path);
  std::vector<Tensor> tensors;
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
  tensors = torchscript::load_tensors(path);
#endif
  const auto& names = model.input_names();
  if (tensors.size() != names.size())
    throw Error(ErrorKind::Input, path + ": holds " + std::to_string(tensors.size()) + " tensor(s); the model takes " +
                                      std::to_string(names.size()) + " input(s) (" + joined(names) +
                                      "). Save them in order: torch.save((x, ...), path)");
  return tensors;
}

void write_outputs(const std::string& path, const std::vector<std::string>& names, const std::vector<Tensor>& tensors) {
  if (!is_pt_file(path)) return write_tensors_json(path, names, tensors);
  require_torchscript(path);
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
  torchscript::save_tensors(path, tensors);
#endif
}

void write_node_io(const std::string& path, const std::vector<NodeIO>& records) {
  if (!is_pt_file(path)) return write_node_io_json(path, records);
  require_torchscript(path);
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
  torchscript::save_node_io(path, records);
#endif
}

#ifdef SWITCHYARD_WITH_TORCHSCRIPT
namespace {
class PtNodeIoStream : public NodeIoStream {
 public:
  explicit PtNodeIoStream(const std::string& path) : writer_(path) {}
  void write(const NodeEvent& event) override { writer_.write(event); }
  size_t finish() override { return writer_.finish(); }

 private:
  torchscript::NodeIoStreamWriter writer_;
};
}  // namespace
#endif

std::unique_ptr<NodeIoStream> open_node_io_stream(const std::string& path) {
  if (!is_pt_file(path))
    throw Error(ErrorKind::Input, path +
                                      ": node_io capture 'stream' writes a .pt file (torch.load reads it); "
                                      "name it FILE.pt, or use --node-io all for a .json summary");
  require_torchscript(path);
#ifdef SWITCHYARD_WITH_TORCHSCRIPT
  return std::make_unique<PtNodeIoStream>(path);
#else
  return nullptr;
#endif
}

}  // namespace switchyard::cli
