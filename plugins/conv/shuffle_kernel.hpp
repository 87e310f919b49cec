// conv plugin: switchyard::channel_shuffle(Tensor[] inputs, int groups), which the host's
// pattern pass writes for a trace's channel shuffle (ShuffleNet):
//   view(cat(inputs, 1), [N, groups, C / groups, H, W]).transpose(1, 2) viewed [N, C, H, W].
// Output channel k * groups + j is channel j * (C / groups) + k of the concatenation, so
// each input goes to the output in one strided copy per group it spans. The inputs are
// read in the layout their convolutions wrote (formats.hpp) and the output is written in
// nhwc or NCHW, so the block keeps no NCHW round trip between its convolutions.
// aten::cat along channels is its one-group case: the parts are copied from the layout
// their convolutions wrote into an nhwc output, where placing them in one NCHW buffer
// (batch 1) would cost a reorder into NCHW after each producer and out of it before each
// reader (GoogLeNet's inception blocks: four readers each).
// Float32 [N, C, H, W] only; another rank or dtype is declined (sy::Unsupported).
#pragma once

#include "conv_common.hpp"

namespace syconv {

class ShuffleKernel {
 public:
  explicit ShuffleKernel(const sy::Node& node);
  static void supports(const sy::Node& node);
  void infer(sy::Infer& infer);
  void storage(sy::StorageQuery& q);
  void run(sy::Run& run);

 private:
  struct Prepared;
  std::shared_ptr<const Prepared> prepare(const sy::Run& run);

  int64_t groups_ = 1;
  bool own_layouts_ = true;  // option "@layout"
  ShapeCache<Prepared> cache_;
};

}  // namespace syconv
