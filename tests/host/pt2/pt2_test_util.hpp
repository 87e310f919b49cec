// Helpers of the .pt2 tests: the fixtures' JSON tensors and the parity criterion.
#pragma once

#include <switchyard/tensor.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace switchyard::pt2_test {

using Json = nlohmann::ordered_json;  // outputs keep their file order

inline std::string source_dir() {
  const char* dir = std::getenv("SWITCHYARD_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}
inline std::string fixtures_dir() { return source_dir() + "/tests/host/pt2/fixtures"; }
inline std::string config_path(const char* name) { return source_dir() + "/configs/" + name; }

inline Json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return Json::parse(in);
}

// {"dtype", "shape", "data"} (tools/torch2/make_fixtures.py) as a tensor.
inline Tensor tensor_from_json(const Json& j) {
  DLDataType dtype{};
  if (!parse_dtype(j["dtype"].get<std::string>(), &dtype)) throw std::runtime_error("bad dtype " + j["dtype"].dump());
  Tensor t = Tensor::empty(dtype, j["shape"].get<std::vector<int64_t>>());
  const Json& data = j["data"];
  if (static_cast<int64_t>(data.size()) != t.numel()) throw std::runtime_error("data does not fit the shape");
  for (int64_t i = 0; i < t.numel(); ++i) {
    const Json& v = data[static_cast<size_t>(i)];
    const std::string name = dtype_name(dtype);
    if (name == "float32")
      t.data<float>()[i] = v.is_string() ? std::stof(v.get<std::string>()) : v.get<float>();
    else if (name == "int64")
      t.data<int64_t>()[i] = v.get<int64_t>();
    else if (name == "bool")
      t.data<uint8_t>()[i] = v.get<int64_t>() != 0;
    else
      throw std::runtime_error("fixtures hold float32, int64 and bool, not " + name);
  }
  return t;
}

// A fixture's tensors: in the order of `names` where given, else in file order.
inline std::vector<Tensor> read_tensors(const std::string& path, const std::vector<std::string>& names = {}) {
  const Json j = read_json(path);
  std::vector<Tensor> out;
  if (names.empty()) {
    for (const auto& [name, value] : j.items()) out.push_back(tensor_from_json(value));
  } else {
    for (const std::string& name : names) out.push_back(tensor_from_json(j.at(name)));
  }
  return out;
}

inline std::string describe(const Tensor& t) { return dtype_name(t.dtype()) + shape_string(t.shape()); }

// "" when every output is within 1e-4 * max(1, max|ref|) of the reference, else why not.
inline std::string compare(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " outputs, torch gives " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (describe(got[i]) != describe(want[i]))
      return "output " + std::to_string(i) + " is " + describe(got[i]) + ", torch gives " + describe(want[i]);
    Tensor a = got[i].contiguous(), b = want[i].contiguous();
    double diff = 0, scale = 0;
    for (int64_t k = 0; k < b.numel(); ++k) {
      double x, y;
      if (dtype_name(b.dtype()) == "float32")
        x = a.data<float>()[k], y = b.data<float>()[k];
      else if (dtype_name(b.dtype()) == "int64")
        x = static_cast<double>(a.data<int64_t>()[k]), y = static_cast<double>(b.data<int64_t>()[k]);
      else
        x = a.data<uint8_t>()[k], y = b.data<uint8_t>()[k];
      diff = std::max(diff, std::abs(x - y));
      if (std::isnan(x) != std::isnan(y)) diff = INFINITY;
      scale = std::max(scale, std::abs(y));
    }
    const double bound = 1e-4 * std::max(1.0, scale);
    if (!(diff <= bound)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "output %zu: max|diff| %.3g > bound %.3g (max|ref| %.3g)", i, diff, bound, scale);
      return msg;
    }
  }
  return "";
}

}  // namespace switchyard::pt2_test
