// The conformance kit's helper plugin (not an op family): `check::feed(x)` copies x into
// a host-allocated output. The kit's in-place pass puts one before each run-time input of
// a case, so that the kernel under test reads values the host owns and that die at its
// node: only then may the host grant the in-place outputs its kernel declares (SDK
// output_inplace, 1.2 output_inplace_tail). Loaded by path, never from a plugin folder.
#include <switchyard/plugin.hpp>

#include <cstring>
#include <vector>

namespace {

class Feed {
 public:
  explicit Feed(const sy::Node&) {}
  void infer(sy::Infer& io) { io.set_output(0, io.input(0).dtype, sy::shape_of(io.input(0))); }
  void run(sy::Run& io) {
    const DLTensor& x = io.input(0);
    DLTensor& out = io.output(0);
    const size_t element = (x.dtype.bits * x.dtype.lanes + 7) / 8;
    const char* src = sy::data<const char>(x);
    char* dst = sy::data<char>(out);
    const int64_t n = sy::numel(x);
    if (sy::is_contiguous(x)) {
      std::memcpy(dst, src, static_cast<size_t>(sy::byte_size(x)));
      return;
    }
    std::vector<int64_t> index(static_cast<size_t>(x.ndim), 0);  // row-major walk over a strided input
    for (int64_t i = 0; i < n; ++i) {
      int64_t offset = 0;
      for (int32_t d = 0; d < x.ndim; ++d) offset += index[static_cast<size_t>(d)] * x.strides[d];
      std::memcpy(dst + static_cast<size_t>(i) * element, src + offset * static_cast<int64_t>(element), element);
      for (int32_t d = x.ndim - 1; d >= 0 && ++index[static_cast<size_t>(d)] == x.shape[d]; --d)
        index[static_cast<size_t>(d)] = 0;
    }
  }
};

}  // namespace

SY_PLUGIN("check_feed", "1.0.0", "switchyard conformance kit",
          sy::kernel<Feed>("check::feed", "check",
                           {sy::kFloat32, sy::kFloat64, sy::kFloat16, sy::kBFloat16, sy::kInt64, sy::kInt32, sy::kInt8,
                            sy::kUInt8, sy::kBool, DLDataType{kDLInt, 16, 1}}))
