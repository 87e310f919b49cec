// switchyard's LibTorch bridge: the TorchScript importer and .pt tensor files. This is
// the only host code that links LibTorch; the core and its API never include torch.
#pragma once

#include <switchyard/runtime.hpp>

#include <memory>
#include <string>
#include <vector>

namespace switchyard::torchscript {

// Makes Runtime::load and Graph::read accept ".pt" TorchScript files (idempotent): the
// importer runs torch::jit::load, freeze and inline, then lowers every aten:: node. Weights
// are shared with the loaded module, not copied. Unsupported constructs (prim::If,
// prim::Loop) are errors naming the construct and its source range.
void register_loader();

// Imports a TorchScript file, whatever its name, as a validated Graph (e.g. to save it as a
// portable graph file: read_model(pt).save(json)). Throws Error as Graph::read does.
Graph read_model(const std::string& path);

// Tensors saved by Python's torch.save: one tensor, or a tuple/list of tensors.
std::vector<Tensor> load_tensors(const std::string& path);
// Writes a tuple of tensors that Python's torch.load reads (one tensor alone if `single`).
void save_tensors(const std::string& path, const std::vector<Tensor>& tensors, bool single = false);
// Writes node_io as a dict keyed by node name, read by Python's torch.load:
// {node: {"op", "backend", "module_path", "input_sources", "inputs", "outputs"}}.
void save_node_io(const std::string& path, const std::vector<NodeIO>& records);

// node_io capture "stream": writes each node's record to `path` as the node runs, in
// save_node_io's format, so that torch.load reads the finished file as the same dict
// (graph order, each tensor stored once). A tensor's bytes go to the file when it first
// appears and are not kept; what is kept until finish() is each record's names, dtypes,
// shapes and strides, from which finish() writes the dict. Use write() as the node
// callback (Model::set_node_callback; a parallel run calls it one node at a time, and
// calls must not overlap). tools/node_io_stream.py reads the file one record at a time.
// Throws Error (Io) when the file cannot be written.
class NodeIoStreamWriter {
 public:
  explicit NodeIoStreamWriter(const std::string& path);  // creates or truncates the file
  // Finishes the file if finish() was not called (e.g. a run failed part-way: the file
  // then holds the nodes that ran); errors are logged, not thrown.
  ~NodeIoStreamWriter();
  NodeIoStreamWriter(const NodeIoStreamWriter&) = delete;
  NodeIoStreamWriter& operator=(const NodeIoStreamWriter&) = delete;

  // One node's record; the event needs input_sources (Model::run sets them).
  void write(const NodeEvent& event);
  // Writes the dict and closes the file; returns the number of records. Once only.
  size_t finish();
  size_t records() const;  // written so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// LibTorch's own forward of a TorchScript file, for `switchyard verify`.
std::vector<Tensor> reference_forward(const std::string& path, const std::vector<Tensor>& inputs);

}  // namespace switchyard::torchscript
