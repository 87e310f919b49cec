// conv plugin: a convolution call's tensors cut to `chunk` images, for a primitive built for
// `chunk` images that runs over the batch a chunk at a time (winograd.cpp, split_epilogue.cpp).
#pragma once

#include "conv_kernel.hpp"
#include "formats.hpp"

#include <algorithm>

namespace syconv {

// Views of the input, the output (if any) and the residual (if any) of `chunk` images,
// starting at image n0 (at()); they share the tensors' data, in their storages.
class BatchChunk {
 public:
  BatchChunk(const ConvKernel::Args& a, const DLTensor* out, int64_t chunk, SY_StorageIndex in, SY_StorageIndex to,
             SY_StorageIndex res)
      : args_(a) {
    args_[0] = &x_.cut(*a[0], chunk, in);
    if (out != nullptr) y_.cut(*out, chunk, to);
    if (a[3] != nullptr) args_[3] = &r_.cut(*a[3], chunk, res);
  }
  // input, weight, bias, residual (NULL unless the call has one)
  const ConvKernel::Args& args() const { return args_; }
  DLTensor& out() { return y_.view; }
  void at(int64_t n0) {
    for (View* v : {&x_, &y_, &r_}) v->view.byte_offset = v->base + static_cast<uint64_t>(n0) * v->image;
  }

 private:
  struct View {
    DLTensor view{};
    int64_t shape[4] = {};
    uint64_t base = 0, image = 0;  // the tensor's byte offset, and bytes per image
    DLTensor& cut(const DLTensor& t, int64_t chunk, SY_StorageIndex storage) {
      view = t;
      std::copy(t.shape, t.shape + 4, shape);
      shape[0] = chunk;
      view.shape = shape;
      base = t.byte_offset;
      image = t.data != nullptr ? image_bytes(t, storage) : 0;  // create-time metadata has no data
      return view;
    }
  };
  ConvKernel::Args args_;
  View x_, y_, r_;
};

}  // namespace syconv
