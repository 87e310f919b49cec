// conv plugin: the channel shuffle of a concatenation (see shuffle_kernel.hpp), one strided
// copy per input and group between views of the input and the output.
#include "shuffle_kernel.hpp"

#include "formats.hpp"

#include <algorithm>
#include <array>
#include <numeric>

namespace syconv {

namespace {

// A [N, C, H, W] block between two strided views, in elements. Innermost is the longest
// dim that one side holds in order (a pixel's channels in nhwc, a row in NCHW); the others
// go from the output's largest stride to its smallest.
struct StridedCopy {
  std::array<int64_t, 4> dims{}, src{}, dst{};
  int64_t src_offset = 0, dst_offset = 0;  // from the tensors' first elements
  size_t input = 0;
};

StridedCopy ordered_copy(const Dims& dims, const Dims& src, const Dims& dst) {
  std::array<size_t, 4> order{};
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return dst[a] > dst[b]; });
  auto in_order = [&](size_t d) { return src[d] == 1 || dst[d] == 1 ? dims[d] : 0; };
  std::stable_partition(order.begin(), order.end(), [&](size_t d) {
    return d != *std::max_element(order.begin(), order.end(), [&](size_t a, size_t b) {
             return in_order(a) < in_order(b) || (in_order(a) == in_order(b) && dst[a] < dst[b]);
           });
  });
  StridedCopy c;
  for (size_t k = 0; k < 4; ++k) c.dims[k] = dims[order[k]], c.src[k] = src[order[k]], c.dst[k] = dst[order[k]];
  return c;
}

inline void copy_run(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = src[i * src_stride];
}

// Rows [from, to) of the outer two dims. oneDNN's reorder between such views (jit:uni) took
// 13 us for ShuffleNet's [8, 24, 8, 8] nhwc half into NCHW; these loops take a few.
void copy_rows(const StridedCopy& c, const float* src, float* dst, int64_t from, int64_t to) {
  for (int64_t r = from; r < to; ++r) {
    const int64_t a = r / c.dims[1], b = r % c.dims[1];
    const float* s = src + a * c.src[0] + b * c.src[1];
    float* d = dst + a * c.dst[0] + b * c.dst[1];
    for (int64_t k = 0; k < c.dims[2]; ++k) copy_run(s + k * c.src[2], c.src[3], d + k * c.dst[2], c.dst[3], c.dims[3]);
  }
}

void strided_copy(const StridedCopy& c, const float* src, float* dst) {
  const int64_t rows = c.dims[0] * c.dims[1];
  const double work = static_cast<double>(rows * c.dims[2] * c.dims[3]);
  if (work < sy_omp::kSerialWork) return copy_rows(c, src, dst, 0, rows);  // the team stays as it is
  sy_omp::Threads threads(work);
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    copy_rows(c, src, dst, rows * t / team, rows * (t + 1) / team);
  }
}

// The inputs' common [N, _, H, W] and their channels' sum; Unsupported when they differ.
int64_t concatenated_channels(const std::vector<const DLTensor*>& inputs) {
  if (inputs.empty()) throw sy::Unsupported("no inputs");
  int64_t channels = 0;
  for (const DLTensor* t : inputs) {
    if (t == nullptr || t->ndim != 4) throw sy::Unsupported("inputs are not [N, C, H, W] tensors");
    const DLTensor& first = *inputs[0];
    if (t->shape[0] != first.shape[0] || t->shape[2] != first.shape[2] || t->shape[3] != first.shape[3])
      throw sy::Unsupported("inputs differ in more than their channels: " + to_string(sy::shape_of(first)) + " and " +
                            to_string(sy::shape_of(*t)));
    channels += t->shape[1];
  }
  return channels;
}

std::vector<const DLTensor*> inputs_of(const DLTensor* const* inputs, size_t n) {
  return std::vector<const DLTensor*>(inputs, inputs + n);
}

// aten::cat along channels is the shuffle of one group: each input one strided copy.
int64_t groups_of(const sy::Node& node) {
  const sy::Attrs& attrs = node.attrs;
  if (std::string(node.op) == "aten::cat") {
    const int64_t dim = attrs.i("dim", 0);
    if (dim != 1 && dim != -3) throw sy::Unsupported("a concatenation along dim " + std::to_string(dim) + ", not 1");
    return 1;
  }
  const int64_t groups = attrs.i("groups");
  if (groups < 1) throw sy::Error("channel_shuffle: groups = " + std::to_string(groups) + " is not positive");
  return groups;
}

Dims output_shape(const std::vector<const DLTensor*>& inputs, int64_t groups) {
  const int64_t channels = concatenated_channels(inputs);
  if (channels % groups != 0)
    throw sy::Error("channel_shuffle: " + std::to_string(channels) + " channels do not split into " +
                    std::to_string(groups) + " groups");
  return {inputs[0]->shape[0], channels, inputs[0]->shape[2], inputs[0]->shape[3]};
}

}  // namespace

struct ShuffleKernel::Prepared {
  std::vector<StridedCopy> pieces;
};

void ShuffleKernel::supports(const sy::Node& node) {
  check_attr_names(node, {std::string(node.op) == "aten::cat" ? "dim" : "groups"}, {});
  const std::vector<const DLTensor*> inputs = inputs_of(node.inputs, node.num_inputs);
  for (const DLTensor* t : inputs) {
    if (t == nullptr) throw sy::Unsupported("an input is absent");
    check_tensor(*t, "input");
  }
  output_shape(inputs, groups_of(node));
  own_layouts_option(node.attrs);  // an unknown layout value is an error, here as at create
}

ShuffleKernel::ShuffleKernel(const sy::Node& node)
    : groups_(groups_of(node)), own_layouts_(own_layouts_option(node.attrs)) {}

void ShuffleKernel::infer(sy::Infer& infer) {
  infer.set_output(0, sy::kFloat32, output_shape(inputs_of(infer.args->inputs, infer.num_inputs()), groups_));
}

void ShuffleKernel::storage(sy::StorageQuery& q) {
  if (!own_layouts_ || !format_holds(q.input(0).dtype, q.input(0).ndim)) return;  // plain only
  for (size_t i = 0; i < q.num_inputs(); ++i) q.reads(i, SY_STORAGE_MASK_HOST | SY_STORAGE_MASK(ChannelsLast::kIndex));
  q.writes(0, SY_STORAGE_MASK(ChannelsLast::kIndex) | SY_STORAGE_MASK_HOST);
}

// Concatenated channel c of group j = c / per_group goes to output channel
// (c - j * per_group) * groups + j: each input's channels within one group are one
// strided run of the output's, `groups` channels apart.
std::shared_ptr<const ShuffleKernel::Prepared> ShuffleKernel::prepare(const sy::Run& run) {
  const DLTensor& out = run.output(0);
  const Dims out_strides = element_strides(out, run.output_storage(0));
  Dims key = {run.output_storage(0)};
  key.insert(key.end(), out_strides.begin(), out_strides.end());
  for (size_t i = 0; i < run.num_inputs(); ++i) {
    const Dims s = element_strides(run.input(i), run.input_storage(i));
    key.push_back(run.input(i).shape[1]);
    key.insert(key.end(), s.begin(), s.end());
  }
  key.insert(key.end(), out.shape, out.shape + 4);
  return cache_.get(key, [&] {
    auto p = std::make_shared<Prepared>();
    const int64_t per_group = out.shape[1] / groups_;
    const Dims out_piece = {out_strides[0], out_strides[1] * groups_, out_strides[2], out_strides[3]};
    int64_t first = 0;  // the input's first channel in the concatenation
    for (size_t i = 0; i < run.num_inputs(); ++i) {
      const DLTensor& t = run.input(i);
      const Dims in_strides = element_strides(t, run.input_storage(i));
      for (int64_t c = first; c < first + t.shape[1];) {
        const int64_t group = c / per_group, end = std::min(first + t.shape[1], (group + 1) * per_group);
        StridedCopy piece = ordered_copy({out.shape[0], end - c, out.shape[2], out.shape[3]}, in_strides, out_piece);
        piece.input = i;
        piece.src_offset = (c - first) * in_strides[1];
        piece.dst_offset = ((c - group * per_group) * groups_ + group) * out_strides[1];
        p->pieces.push_back(piece);
        c = end;
      }
      first += t.shape[1];
    }
    return p;
  });
}

void ShuffleKernel::run(sy::Run& run) {
  DLTensor& out = run.output(0);
  if (sy::numel(out) == 0) return;  // empty batch or image: nothing to copy
  if (out.shape[1] % groups_ != 0)
    throw sy::Error("channel_shuffle: " + std::to_string(out.shape[1]) + " channels do not split into " +
                    std::to_string(groups_) + " groups");
  std::shared_ptr<const Prepared> p = prepare(run);
  float* base = static_cast<float*>(handle(out));
  for (const StridedCopy& piece : p->pieces)
    strided_copy(piece, static_cast<const float*>(handle(run.input(piece.input))) + piece.src_offset,
                 base + piece.dst_offset);
}

}  // namespace syconv
