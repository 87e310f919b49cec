// conv plugin: a 2-D convolution, relu and max pooling as one kernel,
// "<conv op>+aten::relu+aten::max_pool2d" (ResNet's stem).
//
// Each thread takes whole bands of pooled output rows: it runs the bare convolution (bias,
// no post-op) for just the rows those windows read, single-threaded, into a buffer of its
// own, then pools them and applies relu by the plugin's loop (max_pool_loop.cpp) while
// they are still in its cache. The convolution's output is never written whole: unfused,
// ResNet's stem wrote 25.7 MB at batch 8 for the pool to read back
// (docs/benchmarks-history.md, the stem fused with its pool). relu after the max equals
// the max of relu (relu is monotone), and both keep NaN as ATen does, so no run scans its
// input for NaN.
//
// Bands: a batch's images are shared out whole where there are enough of them for the
// threads; otherwise an image's rows are cut into bands, and where windows overlap (3x3,
// stride 2) a band recomputes the convolution row it shares with the next.
//
// Declined (sy::Unsupported; the host then runs the unfused kernels): weights or a bias
// that arrive per run, unbatched input, other than 2-D, convolution padding as large as
// the kernel, and a few-channel convolution with little work per input element
// (plain_stem, a 3x3 stem): the bands' nhwc convolution would need its input reordered,
// where the unfused one reads it plain (ShuffleNet's stem at batch 8: 0.26 -> 0.11-0.18 ms).
#pragma once

#include "conv_kernel.hpp"
#include "pool_kernel.hpp"

#include <memory>
#include <mutex>
#include <vector>

namespace syconv {

class ConvPoolKernel {
 public:
  explicit ConvPoolKernel(const sy::Node& node);
  static void supports(const sy::Node& node);
  void infer(sy::Infer& infer);
  // Reads plain NCHW or either storage (reordered to nhwc whole first, unless nhwc); writes
  // nhwc, or plain NCHW where the host asks.
  void storage(sy::StorageQuery& q);
  void run(sy::Run& run);

 private:
  struct Prepared;
  // Everything that depends on the input's shape and layout, built once per both.
  std::shared_ptr<const Prepared> prepare(const ConvKernel::Args& a, SY_StorageIndex in);
  std::shared_ptr<Prepared> build(const ConvKernel::Args& a, SY_StorageIndex in);
  // The constant weights `w` (laid out as `user_md`) in layout `md`, reordered once per
  // layout and kept.
  dnnl::memory weights_in(const dnnl::memory::desc& md, const dnnl::memory::desc& user_md, const DLTensor& w);

  ConvKernel::Params conv_;
  PoolKernel::Params pool_;
  std::mutex weights_mutex_;
  std::vector<sy_onednn::ConstantMemory> weights_;  // per layout a band's primitive asked for
  ShapeCache<Prepared> cache_;
};

}  // namespace syconv
