// shape plugin: aten::embedding, rows of a table picked by index, for every dtype.
//
//   embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False,
//             bool sparse=False)
//   out[i..., :] = weight[indices[i...], :], shaped indices.shape + [weight.size(1)]
// padding_idx, scale_grad_by_freq and sparse only change the gradient, so inference
// ignores them. An index outside [0, rows) is an error naming it, as ATen's "index out of
// range in self": never a read outside the table.
#include "shape_ops.hpp"

#include <cstring>

namespace sy_shape {
namespace {

bool is_index_dtype(DLDataType t) { return sy::same_dtype(t, sy::kInt64) || sy::same_dtype(t, sy::kInt32); }

int64_t index_at(const DLTensor& ids, int64_t offset) {
  const char* base = static_cast<const char*>(ids.data) + ids.byte_offset;
  if (ids.dtype.bits == 64) return reinterpret_cast<const int64_t*>(base)[offset];
  return reinterpret_cast<const int32_t*>(base)[offset];
}

class EmbeddingKernel {
 public:
  static constexpr SY_OutputMode output_mode = SY_OUTPUT_HOST_ALLOCATED;

  static void supports(const sy::Node& n) {
    if (n.num_inputs != 2 || !n.has_input(0) || !n.has_input(1) || n.num_outputs != 1)
      throw sy::Unsupported("takes weight and indices as inputs and makes 1 output");
    for (size_t i = 0; i < 2; ++i)
      if (n.input(i).device.device_type != kDLCPU)
        throw sy::Unsupported("input " + std::to_string(i) + " is not in CPU memory");
    check(n.input(0), n.input(1), true);
  }

  explicit EmbeddingKernel(const sy::Node&) {}

  void infer(sy::Infer& inf) {
    check(inf.input(0), inf.input(1), false);
    inf.set_output(0, inf.input(0).dtype, out_shape(inf.input(0), inf.input(1)));
  }

  void run(sy::Run& r) {
    const DLTensor& weight = r.input(0);
    const DLTensor& ids = r.input(1);
    check(weight, ids, false);
    const int64_t rows = weight.shape[0], cols = weight.shape[1];
    const size_t es = (static_cast<size_t>(weight.dtype.bits) * weight.dtype.lanes + 7) / 8;
    const Shape ws = sy::strides_of(weight);
    const Shape is = sy::strides_of(ids);
    const Shape id_shape = sy::shape_of(ids);
    const char* table = static_cast<const char*>(weight.data) + weight.byte_offset;
    char* out = static_cast<char*>(r.output(0).data) + r.output(0).byte_offset;
    const size_t row_bytes = static_cast<size_t>(cols) * es;
    // Odometer over the indices (any strides), one output row each.
    Shape at(id_shape.size(), 0);
    const int64_t count = product(id_shape);
    int64_t offset = 0;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t row = index_at(ids, offset);
      if (row < 0 || row >= rows)
        throw sy::Error("index " + std::to_string(row) + " is out of range for a table of " + std::to_string(rows) +
                        " rows (index out of range in self)");
      const char* src = table + row * ws[0] * static_cast<int64_t>(es);
      char* dst = out + i * static_cast<int64_t>(row_bytes);
      if (ws[1] == 1 || cols <= 1) {
        std::memcpy(dst, src, row_bytes);
      } else {
        for (int64_t c = 0; c < cols; ++c)
          std::memcpy(dst + c * static_cast<int64_t>(es), src + c * ws[1] * static_cast<int64_t>(es), es);
      }
      for (size_t d = at.size(); d-- > 0;) {
        offset += is[d];
        if (++at[d] < id_shape[d]) break;
        offset -= is[d] * id_shape[d];
        at[d] = 0;
      }
    }
  }

 private:
  // declining: supports() turns the reason into a rejection; otherwise an error.
  static void check(const DLTensor& weight, const DLTensor& ids, bool declining) {
    std::string why;
    if (weight.ndim != 2)
      why = "weight must be 2-D, got " + std::to_string(weight.ndim) + "-D";
    else if (!is_index_dtype(ids.dtype))
      why = "indices must be int64 or int32";
    if (weight.strides != nullptr && (weight.strides[0] < 0 || weight.strides[1] < 0))
      why = "weight has a negative stride";
    if (ids.strides != nullptr)
      for (int d = 0; d < ids.ndim; ++d)
        if (ids.strides[d] < 0) why = "indices have a negative stride";
    if (why.empty()) return;
    if (declining) throw sy::Unsupported(why);
    throw sy::Error(why);
  }

  static Shape out_shape(const DLTensor& weight, const DLTensor& ids) {
    Shape s = sy::shape_of(ids);
    s.push_back(weight.shape[1]);
    return s;
  }
};

}  // namespace

void add_embedding_kernels(sy::PluginDef& def, const std::vector<DLDataType>& dtypes) {
  def.add(sy::kernel<EmbeddingKernel>("aten::embedding", "shape", dtypes));
}

}  // namespace sy_shape
