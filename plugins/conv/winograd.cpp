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

int64_t ConvKernel::winograd_chunk(const Geometry& g, bool has_bias) const {
  {
    std::lock_guard<std::mutex> lock(chunks_mutex_);
    auto it = winograd_chunks_.find(g.src);
    if (it != winograd_chunks_.end()) return it->second;
  }
  // The largest divisor of the batch for which oneDNN has a Winograd kernel with the tiles
  // the option allows (it picks F(4x4,3x3) for larger problems, F(2x2,3x3) for smaller).
  int64_t chunk = 0;
  const int64_t batch = g.src[0];
  for (int64_t c = batch; c >= 1 && chunk == 0; --c) {
    if (batch % c != 0) continue;
    Geometry call = g;
    call.src[0] = call.dst[0] = c;
    try {
      sy_omp::Threads threads(conv_work(call));  // oneDNN picks its kernel for the thread count
      const std::string impl = describe(call, has_bias, kWinograd).impl_info_str();
      if (params_.winograd_tiles >= 4 || impl.find("wino_2x3") != std::string::npos) chunk = c;
    } catch (const dnnl::error&) {
      break;  // no Winograd kernel for these channels on this CPU
    }
  }
  sy::log(SY_LOG_DEBUG, "conv: node '" + params_.node + "' (" + params_.producer + ") on " + to_string(g.src) + ": " +
                            (chunk == 0 ? std::string("direct (no Winograd kernel with the allowed tiles)")
                                        : "Winograd, " + std::to_string(chunk) + " image(s) per call"));
  std::lock_guard<std::mutex> lock(chunks_mutex_);
  winograd_chunks_[g.src] = chunk;
  return chunk;
}

int64_t ConvKernel::winograd_call(const Args& a, Geometry* g) const {
  // Cheap tests first: this runs before every convolution of the plugin.
  if (params_.winograd_tiles == 0 || !winograd_weights_ || !consts_finite_ || (a[2] != nullptr && !const_bias_) ||
      a[0]->ndim != 4 || a[1]->ndim != 4 || a[1]->shape[2] != 3 || a[1]->shape[3] != 3)
    return 0;
  *g = conv_geometry(params_, *a[0], *a[1], a[2]);
  return winograd_shape(*g) ? winograd_chunk(*g, a[2] != nullptr) : 0;
}

bool ConvKernel::prepare_winograd(const Args& a) {
  Geometry g;
  const int64_t chunk = winograd_call(a, &g);
  if (chunk == 0) return false;
  BatchChunk part(a, nullptr, chunk, SY_STORAGE_HOST, SY_STORAGE_HOST, SY_STORAGE_HOST);
  prepare(part.args(), nullptr, kWinograd);
  return true;
}

bool ConvKernel::run_winograd(const Args& a, DLTensor& out, SY_StorageIndex in, SY_StorageIndex to,
                              SY_StorageIndex res) {
  Geometry g;
  const int64_t chunk = winograd_call(a, &g);
  if (chunk == 0) return false;
  const int64_t batch = g.src[0];
  sy_omp::Threads threads(conv_work(g) * static_cast<double>(chunk) / static_cast<double>(batch));
  // What Winograd may not take goes to the direct convolution (winograd.hpp).
  auto fits = [](const DLTensor& t, SY_StorageIndex storage, const Dims& dims, const Dims& strides, uint32_t bound) {
    const memory::desc md = storage != SY_STORAGE_HOST ? layout_of_storage(storage, dims) : strided_desc(dims, strides);
    return values_below(t, md, storage, memory(md, engine(), handle(t)), bound);
  };
  if (!fits(*a[0], in, g.src, g.src_strides, kWinogradInputBelow)) return false;
  if (a[3] != nullptr && !fits(*a[3], res, g.dst, residual_strides(g, *a[3]), kNonFinite)) return false;
  if (chunk == batch) {
    std::shared_ptr<const Prepared> p = prepare(a, &out, kWinograd, in, to, res);
    execute(*p, a, handle(out), /*check_finite=*/false, in, res);
    return true;
  }
  BatchChunk part(a, &out, chunk, in, to, res);  // in place over the residual stays in place
  for (int64_t n0 = 0; n0 < batch; n0 += chunk) {
    part.at(n0);
    std::shared_ptr<const Prepared> p = prepare(part.args(), &part.out(), kWinograd, in, to, res);
    execute(*p, part.args(), handle(part.out()), /*check_finite=*/false, in, res);
  }
  return true;
}

}  // namespace syconv
