// Shared by the TorchScript importer's test files (one gtest binary): fixtures written by
// make_fixtures.py, conversions, LibTorch's reference forward, and `check`, which runs an
// imported model at given inputs and compares every output with the module's own forward
// within 1e-4 * max(1, max|ref|): through switchyard's Runtime on the aten plugin, and
// through the IR interpreter (ir_interpreter.hpp), which evaluates the importer's graph
// (sym nodes included) directly on LibTorch.
#pragma once

#include "import_model.hpp"
#include "ir/graph.hpp"
#include "ir/sym.hpp"
#include "ir_interpreter.hpp"

#include <switchyard/runtime.hpp>
#include <switchyard/torchscript.hpp>

#include <torch/script.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace switchyard::test {

inline std::string fixture(const std::string& name) { return std::string(SY_TS_FIXTURES) + "/" + name; }

#define REQUIRE_FIXTURE(name)                  \
  if (!std::filesystem::exists(fixture(name))) \
  GTEST_SKIP() << "missing resource: no fixture " << name << " (no Python with torch at build time)"

inline Tensor to_sy(const at::Tensor& src) { return to_sy_tensor(src).contiguous(); }
inline at::Tensor to_at(const Tensor& src) { return to_at_tensor(src); }

inline std::string config_path() {
  std::string path = (std::filesystem::path(testing::TempDir()) / "ts_aten.toml").string();
  std::ofstream(path) << "[plugins]\nload = [\"aten\"]\n";
  return path;
}

// The module's own forward (not frozen), outputs flattened.
inline std::vector<at::Tensor> reference(const std::string& path, const std::vector<at::Tensor>& inputs) {
  torch::jit::Module m = torch::jit::load(path);
  m.eval();
  torch::NoGradGuard no_grad;
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  std::vector<at::Tensor> out;
  std::vector<c10::IValue> todo{m.forward(args)};
  while (!todo.empty()) {
    c10::IValue v = todo.front();
    todo.erase(todo.begin());
    if (v.isTuple()) {
      auto elems = v.toTupleRef().elements();
      todo.insert(todo.begin(), elems.begin(), elems.end());
    } else {
      out.push_back(v.toTensor());
    }
  }
  return out;
}

inline void expect_close(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& ref,
                         const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(got[i].sizes(), ref[i].sizes()) << what << " output " << i;
    ASSERT_EQ(got[i].scalar_type(), ref[i].scalar_type()) << what << " output " << i;
    at::Tensor r = ref[i].to(at::kDouble), g = got[i].to(at::kDouble);
    double scale = std::max(1.0, r.numel() ? r.abs().max().item<double>() : 0.0);
    double diff = r.numel() ? (g - r).abs().max().item<double>() : 0.0;
    EXPECT_LE(diff, 1e-4 * scale) << what << " output " << i;
  }
}

// A bool [B, S] key-padding mask from 0/1 rows.
inline at::Tensor mask_rows(std::vector<std::vector<int>> rows) {
  at::Tensor m = at::zeros({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}, at::kBool);
  for (size_t b = 0; b < rows.size(); ++b)
    for (size_t s = 0; s < rows[b].size(); ++s) m[static_cast<int64_t>(b)][static_cast<int64_t>(s)] = rows[b][s] != 0;
  return m;
}

inline bool has_sym_nodes(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes)
    if (ir::is_sym_op(n.op)) return true;
  return false;
}

class TorchScript : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    torchscript::register_loader();
    runtime_ = new Runtime(Options{config_path()});
    runtime_runs_sym_ = probe_sym_support();
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }
  void SetUp() override { at::manual_seed(3); }

  // Whether this build's executor evaluates sym nodes and bound attributes (it does once
  // the executor's run-time shapes land); until then graphs with sym nodes are checked
  // through the IR interpreter only.
  static bool probe_sym_support() {
    const std::string path = (std::filesystem::path(testing::TempDir()) / "ts_sym_probe.json").string();
    std::ofstream(path) << R"({"format": "switchyard-graph", "version": 2,
      "inputs": [{"name": "x", "dtype": "float32", "shape": [-1]}], "outputs": ["y"],
      "nodes": [{"name": "n", "op": "sym::size", "inputs": ["x"], "outputs": ["n"], "attrs": {"dim": {"int": 0}}},
                {"name": "y", "op": "aten::mul", "inputs": ["x"], "outputs": ["y"],
                 "attrs": {"other": {"ref": "n", "kind": "int"}}}]})";
    try {
      auto model = runtime_->load(path);
      at::Tensor x = at::arange(3, at::kFloat);
      std::vector<Tensor> out = model->run({to_sy(x)});
      return out.size() == 1 && at::equal(to_at(out[0]), x * 3);
    } catch (const Error& e) {
      std::fprintf(stderr,
                   "note: the runtime does not run sym nodes yet (%s); graphs with sym nodes are "
                   "checked through the IR interpreter only\n",
                   e.what());
      return false;
    }
  }

  static ir::Graph import(const std::string& name) {
    ir::Graph g;
    torchscript::import_model(fixture(name), g);
    ir::validate(g);
    return g;
  }

  // Runs `name` on `inputs` in switchyard (and through the IR interpreter) and compares
  // every output with LibTorch's.
  static void check(const std::string& name, const std::vector<at::Tensor>& inputs) {
    std::vector<at::Tensor> ref_in;
    for (const at::Tensor& t : inputs) ref_in.push_back(t.clone());  // forward may write to them
    std::vector<at::Tensor> ref = reference(fixture(name), ref_in);
    std::string shapes;
    for (const at::Tensor& t : inputs) shapes += shape_string(t.sizes().vec());
    const ir::Graph g = import(name);
    std::vector<at::Tensor> interp_in;
    for (const at::Tensor& t : inputs) interp_in.push_back(t.clone());
    expect_close(IrInterpreter(g).run(interp_in), ref, name + " " + shapes + " (IR interpreter)");
    if (has_sym_nodes(g) && !runtime_runs_sym_) return;
    auto model = runtime_->load(fixture(name));
    std::vector<Tensor> in;
    for (const at::Tensor& t : inputs) in.push_back(to_sy(t.clone()));
    std::vector<Tensor> out = model->run(in);
    std::vector<at::Tensor> got;
    for (const Tensor& t : out) got.push_back(to_at(t));
    expect_close(got, ref, name + " " + shapes + " (runtime)");
  }

  static const ir::Node* node(const ir::Graph& g, const std::string& name) {
    for (const ir::Node& n : g.nodes)
      if (n.name == name) return &n;
    return nullptr;
  }

  static Error error_of(const std::string& name) {
    try {
      ir::Graph g;
      torchscript::import_model(fixture(name), g);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << name << " imported without an error";
    return Error(ErrorKind::Internal, "");
  }

  static Runtime* runtime_;
  static bool runtime_runs_sym_;
};
inline Runtime* TorchScript::runtime_ = nullptr;
inline bool TorchScript::runtime_runs_sym_ = false;

}  // namespace switchyard::test
