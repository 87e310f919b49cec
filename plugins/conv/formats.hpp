// conv plugin: storages (SDK 1.1 storages, host formats) for float32 4-D activations in
// the layouts oneDNN's convolutions choose for themselves on this CPU:
//   "nChw16c"  channels in blocks of 16 (the last block zero-padded), AVX-512 direct convs;
//   "nhwc"     channels last, oneDNN's brgemm convolutions (most shapes on AVX-512 cores).
// A value that passes from one convolution straight to another stays in the layout the
// first wrote, so the reorders to and from NCHW between them disappear. The host converts
// (to_host / from_host) only where another reader needs plain NCHW.
//
// "nChw16c.bf16" and "nhwc.bf16" hold the same float32 values rounded to bfloat16, for a
// value that passes between convolutions computing in bfloat16 ([precision] bf16): the
// reader would round its input so anyway, so the producer writes it rounded, and the
// reader's per-run conversion and half the bytes go. Only such convolutions read and write
// them. They come first among the storages: the host takes the lowest-numbered storage
// that the producer writes and every reader reads.
#pragma once

#include "conv_common.hpp"

namespace syconv {

// True for the tensors these storages hold: float32 values, rank 4.
bool format_holds(DLDataType dtype, int32_t ndim);
// `type`: what the bytes hold, f32 or (the .bf16 storages) bf16.
dnnl::memory::desc format_desc(const Dims& shape, dnnl::memory::format_tag tag, dnnl::memory::data_type type);
uint64_t format_nbytes(DLDataType dtype, const std::vector<int64_t>& shape, dnnl::memory::format_tag tag,
                       dnnl::memory::data_type type);
// One reorder between a plain (maybe strided) float32 host tensor and its twin in `tag`.
void format_convert(const DLTensor& plain, const DLTensor& formatted, dnnl::memory::format_tag tag,
                    dnnl::memory::data_type type, bool to_format);

// A storage per oneDNN format tag and element type; Index is its position among the
// plugin's storages.
template <dnnl::memory::format_tag Tag, dnnl::memory::data_type Type, SY_StorageIndex Index>
struct OneDnnFormat {
  static constexpr SY_StorageIndex kIndex = Index;
  // What the bytes hold (SY_EXTENSION_STORAGE_ELEMENTS): bfloat16, or the values' float32.
  static constexpr DLDataType kElement =
      Type == dnnl::memory::data_type::bf16 ? DLDataType{kDLBfloat, 16, 1} : DLDataType{0, 0, 0};
  // The oneDNN descriptor of a [N, C, H, W] tensor in this layout.
  static dnnl::memory::desc desc(const Dims& shape) { return format_desc(shape, Tag, Type); }

  // sy::storage<> hooks (plugin.hpp).
  static uint64_t nbytes(DLDataType dtype, const std::vector<int64_t>& shape) {
    return format_nbytes(dtype, shape, Tag, Type);
  }
  static void to_host(const DLTensor& src, DLTensor& dst) { format_convert(dst, src, Tag, Type, false); }
  static void from_host(const DLTensor& src, DLTensor& dst) { format_convert(src, dst, Tag, Type, true); }
};
using Blocked16Bf16 = OneDnnFormat<dnnl::memory::format_tag::nChw16c, dnnl::memory::data_type::bf16, 0>;
using ChannelsLastBf16 = OneDnnFormat<dnnl::memory::format_tag::nhwc, dnnl::memory::data_type::bf16, 1>;
using Blocked16 = OneDnnFormat<dnnl::memory::format_tag::nChw16c, dnnl::memory::data_type::f32, 2>;
using ChannelsLast = OneDnnFormat<dnnl::memory::format_tag::nhwc, dnnl::memory::data_type::f32, 3>;

// The float32 format storages, which every conv-plugin kernel that keeps layouts reads.
constexpr SY_StorageMask kFloatFormats = SY_STORAGE_MASK(Blocked16::kIndex) | SY_STORAGE_MASK(ChannelsLast::kIndex);
// The bfloat16 ones, which only convolutions computing in bfloat16 read and write.
constexpr SY_StorageMask kBf16Formats =
    SY_STORAGE_MASK(Blocked16Bf16::kIndex) | SY_STORAGE_MASK(ChannelsLastBf16::kIndex);
// The bfloat16 storage of float32 format storage `index`'s layout (SY_STORAGE_HOST: none).
SY_StorageIndex bf16_twin(SY_StorageIndex index);
inline bool holds_bf16(SY_StorageIndex index) {
  return index == Blocked16Bf16::kIndex || index == ChannelsLastBf16::kIndex;
}

// Config option `layout` of a node: "onednn" (default, true) lets values stay in these
// storages; "plain" (false) keeps every value NCHW. Another value is an error.
bool own_layouts_option(const sy::Attrs& attrs);

// Bytes from one image to the next of a [N, ...] tensor in `storage` (or as its strides say).
uint64_t image_bytes(const DLTensor& t, SY_StorageIndex storage);

// Element strides of a float32 [N, C, H, W] tensor in `storage`: nhwc's, or the tensor's
// own in host memory; sy::Error (internal) for a storage a kernel did not offer to read.
Dims element_strides(const DLTensor& t, SY_StorageIndex storage);

// The storage whose layout is `md` (of a [N, C, H, W] shape), or SY_STORAGE_HOST.
SY_StorageIndex storage_of_layout(const dnnl::memory::desc& md, const Dims& shape);
// The layout of a tensor in storage `index` (SY_STORAGE_HOST: none, an empty desc).
dnnl::memory::desc layout_of_storage(SY_StorageIndex index, const Dims& shape);

// True when `a` and `b` put every element at the same byte: equal descriptors, or nChw16c
// and nhwc of exactly 16 channels (both are [n][1][h][w][16]).
bool same_bytes(const dnnl::memory::desc& a, const dnnl::memory::desc& b);
// `user`, or `primitive` where the two are the same bytes: a reorder between them is a copy.
inline dnnl::memory::desc user_layout(const dnnl::memory::desc& user, const dnnl::memory::desc& primitive) {
  return same_bytes(user, primitive) ? primitive : user;
}

}  // namespace syconv
