// conv plugin: a convolution call's tensors cut to `images` images (and to a part of the
// output channels), for a primitive built for that much, run over the batch a chunk at a
// time (winograd.cpp, split_epilogue.cpp).
#pragma once

#include "conv_kernel.hpp"
#include "formats.hpp"

#include <algorithm>

namespace syconv {

// Views of the input, the output (if any) and the residual (if any) of `images` images
// starting at image n0, and with `parts` > 1, of output channels [part * C / parts,
// (part + 1) * C / parts) of the output, residual, weight and bias (at()). They share the
// tensors' data, in their storages. Parts need one image per view and an output (and
// residual) whose channels of an image lie in order: nChw16c with C / parts a multiple of
// 16, or compact NCHW.
class BatchChunk {
 public:
  BatchChunk(const ConvKernel::Args& a, const DLTensor* out, int64_t images, SY_StorageIndex in, SY_StorageIndex to,
             SY_StorageIndex res, int64_t parts = 1)
      : args_(a) {
    args_[0] = &x_.images(*a[0], images, 1, in);
    if (out != nullptr) y_.images(*out, images, parts, to);
    if (a[3] != nullptr) args_[3] = &r_.images(*a[3], images, parts, res);
    if (parts > 1) {
      args_[1] = &w_.rows(*a[1], parts);
      if (a[2] != nullptr) args_[2] = &b_.rows(*a[2], parts);
    }
  }
  // input, weight, bias, residual (NULL unless the call has one)
  const ConvKernel::Args& args() const { return args_; }
  // The first output channel of part `part` (ConvKernel::prepare's `first_channel`).
  int64_t first_channel(int64_t part) const { return part * y_.shape[1]; }
  DLTensor& out() { return y_.view; }
  void at(int64_t n0, int64_t part = 0) {
    for (View* v : {&x_, &y_, &r_, &w_, &b_})
      v->view.byte_offset = v->base + static_cast<uint64_t>(n0) * v->image + static_cast<uint64_t>(part) * v->part;
  }

 private:
  struct View {
    DLTensor view{};
    int64_t shape[4] = {};
    uint64_t base = 0, image = 0, part = 0;  // the tensor's byte offset; bytes per image, per part
    DLTensor& start(const DLTensor& t) {
      view = t;
      std::copy(t.shape, t.shape + std::min(t.ndim, 4), shape);
      view.shape = shape;
      base = t.byte_offset;
      return view;
    }
    // An activation [N, C, H, W]: `images` images, C / `parts` channels.
    DLTensor& images(const DLTensor& t, int64_t count, int64_t parts, SY_StorageIndex storage) {
      start(t);
      shape[0] = count;
      shape[1] /= parts;
      image = t.data != nullptr ? image_bytes(t, storage) : 0;      // create-time metadata has no data
      part = parts > 1 ? image / static_cast<uint64_t>(parts) : 0;  // the input is read whole by every part
      return view;
    }
    // A weight [O, ...] or bias [O]: O / `parts` rows.
    DLTensor& rows(const DLTensor& t, int64_t parts) {
      start(t);
      shape[0] /= parts;
      part = static_cast<uint64_t>(shape[0] * strides_of(t)[0]) * sizeof(float);
      return view;
    }
  };
  ConvKernel::Args args_;
  View x_, y_, r_, w_, b_;
};

}  // namespace syconv
