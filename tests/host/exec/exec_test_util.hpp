// Helpers shared by the executor tests: temp configs and small tensors.
#pragma once

#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sytest {

inline constexpr DLDataType kF32{kDLFloat, 32, 1};
inline constexpr DLDataType kI64{kDLInt, 64, 1};

// Writes `toml` to a fresh file in the test temp dir and returns its path.
inline std::string write_config(const std::string& name, const std::string& toml) {
  std::string path = (std::filesystem::path(testing::TempDir()) / (name + ".toml")).string();
  std::ofstream(path) << toml;
  return path;
}

inline switchyard::Tensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  auto t = switchyard::Tensor::empty(kF32, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

inline std::vector<float> values(const switchyard::Tensor& t) {
  switchyard::Tensor c = t.contiguous();
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}

// True when the aten plugin was built (a build with LibTorch), so that configs naming it
// load: a Runtime refuses a config whose backends are not among the plugins found. Looks
// where a Runtime without a config looks.
inline bool aten_plugin_built() {
  switchyard::Runtime rt{switchyard::Options{}};
  for (const auto& p : rt.plugins())
    if (p.name == "aten") return true;
  return false;
}

// Runs `f` and returns the switchyard::Error message it threw ("" if none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const switchyard::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace sytest
