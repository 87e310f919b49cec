// conv plugin: 3x3 convolutions by Winograd's algorithm (see winograd.hpp).
#include "winograd.hpp"

#include "batch_chunk.hpp"
#include "finite_memo.hpp"
#include "formats.hpp"

#include <string>

namespace syconv {

using dnnl::memory;

int winograd_option(const sy::Attrs& attrs) {
  if (!attrs.has("@winograd")) return 2;
  if (attrs.kind("@winograd") == SY_ATTR_INT && (attrs.i("@winograd") == 0 || attrs.i("@winograd") == 1))
    return attrs.i("@winograd") == 1 ? 2 : 0;  // a TOML boolean
  const std::string value = attrs.kind("@winograd") == SY_ATTR_STRING ? attrs.s("@winograd") : "";
  if (value == "2x2") return 2;
  if (value == "4x4") return 4;
  if (value == "off") return 0;
  throw sy::Error("conv plugin: option winograd is not \"2x2\", \"4x4\" or \"off\" (or true / false)" +
                  (value.empty() ? std::string() : ": got \"" + value + "\""));
}

ConvKernel::Geometry ConvKernel::winograd_geometry(const Geometry& g, const WinogradPlan& plan) {
  Geometry call = g;
  call.src[0] = call.dst[0] = plan.images;
  call.dst[1] /= plan.parts;
  call.wts[0] /= plan.parts;
  call.out_channels /= plan.parts;
  return call;
}

ConvKernel::WinogradPlan ConvKernel::winograd_plan(const Geometry& g, bool has_bias) const {
  {
    std::lock_guard<std::mutex> lock(plans_mutex_);
    auto it = winograd_plans_.find(g.src);
    if (it != winograd_plans_.end()) return it->second;
  }
  // oneDNN picks F(4x4,3x3) for larger problems, F(2x2,3x3) for smaller: fewer images per
  // call, then (one image) fewer output channels, until it takes the tiles the option
  // allows. Parts keep 16-channel blocks whole, so that a part of an image is contiguous.
  auto takes = [&](const WinogradPlan& plan) {
    const Geometry call = winograd_geometry(g, plan);
    sy_omp::Threads threads(conv_work(call));  // oneDNN picks its kernel for the thread count
    const std::string impl = describe(call, has_bias, kWinograd).impl_info_str();
    return params_.winograd_tiles >= 4 || impl.find("wino_2x3") != std::string::npos;
  };
  WinogradPlan plan, found;
  const int64_t batch = g.src[0], channels = g.dst[1];
  try {
    for (plan.images = batch; plan.images >= 1 && found.images == 0; --plan.images)
      if (batch % plan.images == 0 && takes(plan)) found = plan;
    plan.images = 1;
    for (plan.parts = 2; found.images == 0 && channels % (16 * plan.parts) == 0; plan.parts *= 2)
      if (takes(plan)) found = plan;
  } catch (const dnnl::error&) {
    found = WinogradPlan{};  // no Winograd kernel for these channels on this CPU
  }
  sy::log(SY_LOG_DEBUG,
          "conv: node '" + params_.node + "' (" + params_.producer + ") on " + to_string(g.src) + ": " +
              (found.images == 0 ? std::string("direct (no Winograd kernel with the allowed tiles)")
                                 : "Winograd, " + std::to_string(found.images) + " image(s) and " +
                                       std::to_string(channels / found.parts) + " output channels per call"));
  std::lock_guard<std::mutex> lock(plans_mutex_);
  winograd_plans_[g.src] = found;
  return found;
}

ConvKernel::WinogradPlan ConvKernel::winograd_call(const Args& a, Geometry* g) const {
  // Cheap tests first: this runs before every convolution of the plugin.
  if (params_.winograd_tiles == 0 || !winograd_weights_ || !consts_finite_ || (a[2] != nullptr && !const_bias_) ||
      a[0]->ndim != 4 || a[1]->ndim != 4 || a[1]->shape[2] != 3 || a[1]->shape[3] != 3)
    return {};
  *g = conv_geometry(params_, *a[0], *a[1], a[2]);
  return winograd_shape(*g) ? winograd_plan(*g, a[2] != nullptr) : WinogradPlan{};
}

bool ConvKernel::prepare_winograd(const Args& a) {
  Geometry g;
  const WinogradPlan plan = winograd_call(a, &g);
  if (plan.images == 0) return false;
  BatchChunk cut(a, nullptr, plan.images, SY_STORAGE_HOST, SY_STORAGE_HOST, SY_STORAGE_HOST, plan.parts);
  for (int64_t part = 0; part < plan.parts; ++part) {
    cut.at(0, part);
    prepare(cut.args(), nullptr, kWinograd, SY_STORAGE_HOST, SY_STORAGE_HOST, SY_STORAGE_HOST,
            part * g.out_channels / plan.parts);
  }
  return true;
}

bool ConvKernel::run_winograd(const Args& a, DLTensor& out, SY_StorageIndex in, SY_StorageIndex to,
                              SY_StorageIndex res) {
  Geometry g;
  const WinogradPlan plan = winograd_call(a, &g);
  if (plan.images == 0) return false;
  // Parts of an image's channels are contiguous in nChw16c (whole blocks) and compact NCHW;
  // the residual must be cut the same way.
  auto cuts = [&](const DLTensor& t, SY_StorageIndex storage) {
    return storage == Blocked16::kIndex ||
           (storage == SY_STORAGE_HOST && strides_of(t) == compact_strides(sy::shape_of(t)));
  };
  if (plan.parts > 1 && (!cuts(out, to) || (a[3] != nullptr && (res != to || !cuts(*a[3], res))))) return false;
  const int64_t batch = g.src[0];
  sy_omp::Threads threads(conv_work(winograd_geometry(g, plan)));
  // What Winograd may not take goes to the direct convolution (winograd.hpp).
  auto fits = [](const DLTensor& t, SY_StorageIndex storage, const Dims& dims, const Dims& strides, uint32_t bound) {
    const memory::desc md = storage != SY_STORAGE_HOST ? layout_of_storage(storage, dims) : strided_desc(dims, strides);
    return values_below(t, md, storage, memory(md, engine(), handle(t)), bound);
  };
  if (!fits(*a[0], in, g.src, g.src_strides, kWinogradInputBelow)) return false;
  if (a[3] != nullptr && !fits(*a[3], res, g.dst, residual_strides(g, *a[3]), kNonFinite)) return false;
  if (plan.images == batch && plan.parts == 1) {
    std::shared_ptr<const Prepared> p = prepare(a, &out, kWinograd, in, to, res);
    execute(*p, a, handle(out), /*check_finite=*/false, in, res);
    return true;
  }
  BatchChunk cut(a, &out, plan.images, in, to, res, plan.parts);  // in place over the residual stays in place
  for (int64_t n0 = 0; n0 < batch; n0 += plan.images)
    for (int64_t part = 0; part < plan.parts; ++part) {
      cut.at(n0, part);
      std::shared_ptr<const Prepared> p =
          prepare(cut.args(), &cut.out(), kWinograd, in, to, res, cut.first_channel(part));
      execute(*p, cut.args(), handle(cut.out()), /*check_finite=*/false, in, res);
    }
  return true;
}

}  // namespace syconv
