// A temp directory per test, and a small valid graph file that tests break on purpose.
#pragma once

#include "ir/graph_file.hpp"
#include "ir_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace switchyard::ir::test {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

class GraphFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("switchyard_ir_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    json_path_ = (dir_ / "model.json").string();
    bin_path_ = (dir_ / "model.bin").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  static std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  // x[-1,4] → aten::linear "fc1" (weight w[4,4], no bias) → y, with a 64-byte weights file.
  static Json minimal_graph() {
    return Json::parse(R"({
      "format": "switchyard-graph", "version": 1, "weights": "model.bin",
      "inputs": [{"name": "x", "dtype": "float32", "shape": [-1, 4]}],
      "outputs": ["y"],
      "constants": [{"name": "w", "dtype": "float32", "shape": [4, 4], "offset": 0, "nbytes": 64}],
      "nodes": [{"name": "fc1", "op": "aten::linear", "module_path": "fc1",
                 "inputs": ["x", "w", null], "outputs": ["y"], "attrs": {"alpha": {"int": 1}}}]
    })");
  }
  void write_graph(const Json& graph, size_t weight_bytes = 64) {
    write_bytes(json_path_, graph.dump(2));
    write_bytes(bin_path_, std::string(weight_bytes, '\x01'));
  }
  std::string read_error(ErrorKind kind) {
    return error_message([&] { read_graph_file(json_path_); }, kind);
  }

  fs::path dir_;
  std::string json_path_, bin_path_;
};

}  // namespace switchyard::ir::test
