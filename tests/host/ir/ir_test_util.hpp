// Helpers shared by the IR tests: small tensors and "this throws an Error of that kind".
#pragma once

#include "ir/graph.hpp"

#include <switchyard/error.hpp>
#include <switchyard/tensor.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace switchyard::ir::test {

inline const DLDataType kFloat32{kDLFloat, 32, 1};

// A float32 tensor holding 0, 1, 2, ... scaled by `scale`.
inline Tensor iota_tensor(std::vector<int64_t> shape, float scale = 1.0f) {
  Tensor t = Tensor::empty(kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i) * scale;
  return t;
}

// Runs `action`, expects a switchyard::Error of `kind`, and returns its message ("" if none).
template <typename Action>
std::string error_message(Action&& action, ErrorKind kind) {
  try {
    action();
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected a switchyard::Error, but nothing was thrown";
  return "";
}

}  // namespace switchyard::ir::test
