// conv plugin: aten::mul of a float32 [N, C, H, W] activation by a per-channel scale
// [N or 1, C, 1, 1], in either operand order: the last step of a squeeze-and-excitation
// block (MobileNetV3, EfficientNet). It reads and writes the plugin's storages
// (formats.hpp), so an SE block between two convolutions keeps their layout instead of
// converting to NCHW and back around the multiply; oneDNN's binary primitive computes it.
// Every other mul is declined (sy::Unsupported), so the elementwise plugin takes it.
// Option `layout = "plain"` keeps input and output NCHW.
#pragma once

#include "conv_common.hpp"

namespace syconv {

class ScaleKernel {
 public:
  explicit ScaleKernel(const sy::Node& node);
  static void supports(const sy::Node& node);
  void infer(sy::Infer& infer);
  void storage(sy::StorageQuery& q);
  void run(sy::Run& run);

 private:
  struct Prepared;
  std::shared_ptr<const Prepared> prepare(const DLTensor& x, const DLTensor& s, const DLTensor& out,
                                          SY_StorageIndex in_x, SY_StorageIndex in_s, SY_StorageIndex to);

  size_t x_ = 0, s_ = 1;     // which input is the activation and which the scale
  bool own_layouts_ = true;  // option "@layout"
  ShapeCache<Prepared> cache_;
};

}  // namespace syconv
