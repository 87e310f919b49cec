// conv plugin: the oneDNN-format storages (see formats.hpp).
#include "formats.hpp"

#include "finite_memo.hpp"

namespace syconv {

using tag = dnnl::memory::format_tag;
using type = dnnl::memory::data_type;

bool format_holds(DLDataType dtype, int32_t ndim) {
  return ndim == 4 && dtype.code == kDLFloat && dtype.bits == 32 && dtype.lanes == 1;
}

dnnl::memory::desc format_desc(const Dims& shape, tag t, type dt) {
  if (shape.size() != 4)
    throw sy::Error("oneDNN format storages hold rank-4 tensors, got " + to_string(shape), SY_ERROR_INTERNAL);
  return dnnl::memory::desc(shape, dt, t);
}

uint64_t format_nbytes(DLDataType dtype, const std::vector<int64_t>& shape, tag t, type dt) {
  if (!format_holds(dtype, static_cast<int32_t>(shape.size())))
    throw sy::Error("oneDNN format storages hold float32 rank-4 tensors only", SY_ERROR_INTERNAL);
  return format_desc(shape, t, dt).get_size();
}

void format_convert(const DLTensor& plain, const DLTensor& formatted, tag t, type dt, bool to_format) {
  const Dims shape = sy::shape_of(plain);
  sy_omp::Threads threads(static_cast<double>(sy::numel(plain)));
  try {
    dnnl::memory p(plain_desc(plain), engine(), handle(plain)),
        f(format_desc(shape, t, dt), engine(), handle(formatted));
    dnnl::stream& s = thread_stream();
    if (to_format)
      reorder_into(s, dnnl::reorder(p, f), p, f);
    else
      reorder_into(s, dnnl::reorder(f, p), f, p);
    s.wait();
    if (to_format) forget_finite(handle(formatted));  // a write into own storage (finite_memo.hpp)
  } catch (const dnnl::error& e) {
    throw sy::Error(std::string("conv plugin: ") + (to_format ? "from_host" : "to_host") + " of " + to_string(shape) +
                        " failed: " + error_message(e),
                    error_status(e));
  }
}

bool own_layouts_option(const sy::Attrs& attrs) {
  if (attrs.kind("@layout") != SY_ATTR_STRING) return true;
  const std::string layout = attrs.s("@layout");
  if (layout != "onednn" && layout != "plain")
    throw sy::Error("conv plugin: option layout = \"" + layout + "\" is not \"onednn\" or \"plain\"");
  return layout == "onednn";
}

uint64_t image_bytes(const DLTensor& t, SY_StorageIndex storage) {
  Dims one = sy::shape_of(t);
  one[0] = 1;
  if (storage != SY_STORAGE_HOST) return layout_of_storage(storage, one).get_size();
  return static_cast<uint64_t>(strides_of(t)[0]) * sizeof(float);
}

Dims element_strides(const DLTensor& t, SY_StorageIndex storage) {
  if (storage == ChannelsLast::kIndex)
    return {t.shape[1] * t.shape[2] * t.shape[3], 1, t.shape[3] * t.shape[1], t.shape[1]};
  if (storage != SY_STORAGE_HOST)
    throw sy::Error("conv plugin: a strided read of storage " + std::to_string(storage) + ", which was not offered",
                    SY_ERROR_INTERNAL);
  return strides_of(t);
}

SY_StorageIndex storage_of_layout(const dnnl::memory::desc& md, const Dims& shape) {
  if (shape.size() != 4 || md.data.ndims != 4) return SY_STORAGE_HOST;
  for (SY_StorageIndex k : {Blocked16::kIndex, ChannelsLast::kIndex, Blocked16Bf16::kIndex, ChannelsLastBf16::kIndex})
    if (md == layout_of_storage(k, shape)) return k;
  return SY_STORAGE_HOST;
}

dnnl::memory::desc layout_of_storage(SY_StorageIndex index, const Dims& shape) {
  if (index == Blocked16::kIndex) return Blocked16::desc(shape);
  if (index == ChannelsLast::kIndex) return ChannelsLast::desc(shape);
  if (index == Blocked16Bf16::kIndex) return Blocked16Bf16::desc(shape);
  if (index == ChannelsLastBf16::kIndex) return ChannelsLastBf16::desc(shape);
  return dnnl::memory::desc();
}

SY_StorageIndex bf16_twin(SY_StorageIndex index) {
  if (index == Blocked16::kIndex) return Blocked16Bf16::kIndex;
  if (index == ChannelsLast::kIndex) return ChannelsLastBf16::kIndex;
  return SY_STORAGE_HOST;
}

bool same_bytes(const dnnl::memory::desc& a, const dnnl::memory::desc& b) {
  if (a == b) return true;
  if (a.data.ndims != 4 || a.dims() != b.dims() || a.dims()[1] != 16 || a.data_type() != b.data_type()) return false;
  const Dims shape = a.dims();
  const dnnl::memory::desc blocked = format_desc(shape, tag::nChw16c, a.data_type()),
                           last = format_desc(shape, tag::nhwc, a.data_type());
  return (a == blocked || a == last) && (b == blocked || b == last);
}

}  // namespace syconv
