// TorchScript importer: nested tensors, node and value names, input dtypes.
//
// Nested tensors. nn.TransformerEncoder traced in eval mode under no_grad with a
// src_key_padding_mask records its fast path:
//     nt = aten::_nested_tensor_from_mask(x, valid_mask, mask_check)
//     nt = aten::_transformer_encoder_layer_fwd(nt, ..., mask=None, mask_type=None)   (per layer)
//     y  = aten::to_padded_tensor(nt, 0.0, output_size=None)
// DLPack cannot carry a nested tensor, so the importer keeps it dense (padded) and carries
// its masks beside it, computed in the graph from the run-time mask:
//     len   = sum(valid_mask, dim=1, keepdim)          row lengths, as ATen's nested tensor
//     valid = cumsum(ones_like(mask), 1) <= len        uses them (the first len positions)
//     pad   = logical_not(valid)
//     dense = masked_fill(x, pad[..., None], 0)        padding never feeds valid positions
//   each layer: _transformer_encoder_layer_fwd(dense, ..., mask=pad, mask_type=1)
//     (a key-padding mask: the padded keys are ignored, exactly what nesting does)
//   to_padded_tensor(nt, p): masked_fill(dense, pad[..., None], p), then the columns up
//     to the longest row: index_select(_, 1, flatten(nonzero(any(valid, 0))))
//     (to_padded_tensor without output_size pads to the longest row, not to S)
#include "lower_state.hpp"
#include "util/log.hpp"

#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace switchyard::torchscript {

namespace jit = torch::jit;
using ir::Attribute;

namespace {

constexpr int64_t kLongCode = 4;  // c10::ScalarType::Long

int schema_index(const jit::Node* n, const std::string& name) {
  const c10::FunctionSchema* s = n->maybeSchema();
  if (s == nullptr) return -1;
  auto i = s->argumentIndexWithName(name);
  return i ? static_cast<int>(*i) : -1;
}

}  // namespace

void Lowerer::lower_nested(const jit::Node* n) {
  const c10::Symbol k = n->kind();
  const std::string path = path_of(n);
  if (k == c10::aten::_nested_tensor_from_mask) {
    for (const jit::Value* in : n->inputs())
      if (nested_.count(in)) fail(n, "its input is already a nested tensor");
    ir::ValueId x = tensor(n->input(0), n, "t");
    ir::ValueId mask = tensor(n->input(1), n, "mask");
    ir::ValueId ones = emit1("aten::ones_like", {mask}, {{"dtype", Attribute::of_int(kLongCode)}}, path);
    ir::ValueId pos = emit1("aten::cumsum", {ones}, {{"dim", Attribute::of_int(1)}}, path);
    ir::ValueId len = emit1(
        "aten::sum", {mask},
        {{"dim", Attribute::of_ints({1})}, {"keepdim", Attribute::of_int(1)}, {"dtype", Attribute::of_int(kLongCode)}},
        path);
    Nested nt;
    nt.valid = emit1("aten::le", {pos, len}, {}, path);
    nt.pad = emit1("aten::logical_not", {nt.valid}, {}, path);
    nt.pad_rows = emit1("aten::unsqueeze", {nt.pad}, {{"dim", Attribute::of_int(-1)}}, path);
    ir::ValueId dense = emit1("aten::masked_fill", {x, nt.pad_rows}, {{"value", Attribute::of_float(0.0)}}, path);
    tensors_[n->output()] = dense;
    nested_[n->output()] = nt;
    return;
  }
  const jit::Value* src = n->inputs().empty() ? nullptr : n->input(0);
  for (size_t i = 1; i < n->inputs().size(); ++i)
    if (nested_.count(n->input(i)))
      fail(n, "argument #" + std::to_string(i) +
                  " is a nested tensor; only the first argument of "
                  "aten::_transformer_encoder_layer_fwd and aten::to_padded_tensor may be one");
  if (src == nullptr || !nested_.count(src)) fail(n, "unexpected nested tensor");
  const Nested nt = nested_.at(src);

  if (k == c10::aten::_transformer_encoder_layer_fwd) {
    const int mask = schema_index(n, "mask");
    if (mask < 0 || schema_index(n, "mask_type") < 0) fail(n, "unexpected schema");
    if (n->input(static_cast<size_t>(mask))->type()->kind() != c10::TypeKind::NoneType)
      fail(n, "a nested tensor with an attention mask as well is not supported");
    Overrides over;
    over.inputs[0] = tensors_.at(src);
    over.inputs[static_cast<size_t>(mask)] = nt.pad;
    over.attrs.emplace_back("mask_type", Attribute::of_int(1));  // key-padding mask [B, S]
    lower_aten(n, over);
    nested_[n->output()] = nt;
    return;
  }
  if (k == c10::aten::to_padded_tensor) {
    Attribute padding = attribute(n->input(1), n, "padding", n->schema().arguments()[1].type());
    ir::ValueId filled = emit1("aten::masked_fill", {tensors_.at(src), nt.pad_rows}, {{"value", padding}}, path);
    ir::ValueId out = filled;
    if (n->input(2)->type()->kind() == c10::TypeKind::NoneType) {
      ir::ValueId any = emit1("aten::any", {nt.valid}, {{"dim", Attribute::of_int(0)}}, path);
      ir::ValueId nz = emit1("aten::nonzero", {any}, {}, path);
      ir::ValueId idx =
          emit1("aten::flatten", {nz}, {{"start_dim", Attribute::of_int(0)}, {"end_dim", Attribute::of_int(-1)}}, path);
      out = emit1("aten::index_select", {filled, idx}, {{"dim", Attribute::of_int(1)}}, path);
    } else {
      log::get().debug("torchscript: {}: {}: output_size taken to be the padded input's size", path_, where(n));
    }
    tensors_[n->output()] = out;
    return;
  }
  fail(n,
       "it takes a nested tensor (from aten::_nested_tensor_from_mask); switchyard keeps "
       "nested tensors dense and supports only aten::_transformer_encoder_layer_fwd and "
       "aten::to_padded_tensor on them");
}

// ---- input dtypes ---------------------------------------------------------------------------

namespace {

// The dtype of the first floating-point weight a node takes (a constant tensor, or one in a
// constant list such as an LSTM's parameters), if any.
std::optional<DLDataType> weight_dtype(const jit::Node* n) {
  auto floating = [](const at::Tensor& t) -> std::optional<DLDataType> {
    DLDataType d{};
    if (t.defined() && t.is_floating_point() && to_dl_dtype(t.scalar_type(), &d)) return d;
    return std::nullopt;
  };
  auto of = [&](const jit::Value* v) -> std::optional<DLDataType> {
    const std::optional<c10::IValue> c = jit::toIValue(v);
    if (c && c->isTensor()) return floating(c->toTensor());
    if (c && c->isTensorList())
      for (const at::Tensor& t : c->toTensorVector())
        if (auto d = floating(t)) return d;
    return std::nullopt;
  };
  for (const jit::Value* in : n->inputs()) {
    if (auto d = of(in)) return d;
    if (in->node()->kind() == c10::prim::ListConstruct)
      for (const jit::Value* e : in->node()->inputs())
        if (auto d = of(e)) return d;
  }
  return std::nullopt;
}

}  // namespace

// The dtype an input must have, read from how it is used (through views), or kAnyDtype.
// PyTorch promotes types, so most uses take any dtype: `1.0 - mask`, `mask == 0`,
// `h * mask`, `mask.to(torch.float32)`. A dtype is pinned only where an op refuses all
// others: indices (embedding, gather, ...) are int64; masks of masked_fill / where are bool;
// the data input of an op with weights (conv, linear, norms, RNNs) has its weights' dtype.
// A conversion (`pixel_values.to(dtype)`) pins nothing: what follows sees the dtype it names.
// (The walk is breadth-first through views, at most 64 values; the first pin found wins.)
DLDataType infer_input_dtype(const jit::Value* v) {
  constexpr DLDataType kLong{kDLInt, 64, 1}, kBool{6, 8, 1};
  static const std::unordered_map<std::string, std::pair<size_t, DLDataType>> kPins = {
      // op -> (argument index, dtype)
      {"aten::embedding", {1, kLong}},
      {"aten::embedding_bag", {1, kLong}},
      {"aten::index_select", {2, kLong}},
      {"aten::gather", {2, kLong}},
      {"aten::one_hot", {0, kLong}},
      {"aten::masked_fill", {1, kBool}},
      {"aten::masked_fill_", {1, kBool}},
      {"aten::where", {0, kBool}},
      {"aten::_nested_tensor_from_mask", {1, kBool}},
      {"aten::_transformer_encoder_layer_fwd", {18, kBool}},
      {"aten::_native_multi_head_attention", {9, kBool}}};
  // No type promotion: the other tensors must have the dtype of the weights.
  static const std::unordered_set<std::string> kWeighted = {"aten::_convolution",
                                                            "aten::convolution",
                                                            "aten::conv1d",
                                                            "aten::conv2d",
                                                            "aten::conv3d",
                                                            "aten::conv_transpose1d",
                                                            "aten::conv_transpose2d",
                                                            "aten::conv_transpose3d",
                                                            "aten::linear",
                                                            "aten::matmul",
                                                            "aten::mm",
                                                            "aten::bmm",
                                                            "aten::addmm",
                                                            "aten::batch_norm",
                                                            "aten::layer_norm",
                                                            "aten::group_norm",
                                                            "aten::instance_norm",
                                                            "aten::lstm",
                                                            "aten::gru",
                                                            "aten::rnn_tanh",
                                                            "aten::rnn_relu",
                                                            "aten::prelu"};
  // Conversions: what follows sees the dtype they name. (A trace records even `x.to(device)`
  // with the traced dtype, so it converts too.)
  static const std::unordered_set<std::string> kConversions = {"aten::to", "aten::type_as"};
  std::deque<const jit::Value*> todo{v};
  for (int steps = 0; !todo.empty() && steps < 64; ++steps) {
    const jit::Value* w = todo.front();
    todo.pop_front();
    for (const jit::Use& u : w->uses()) {
      const std::string op = u.user->kind().toQualString();
      if (auto it = kPins.find(op); it != kPins.end() && it->second.first == u.offset) return it->second.second;
      if (kWeighted.count(op))
        if (std::optional<DLDataType> d = weight_dtype(u.user)) return *d;
      if (kConversions.count(op)) continue;
      const c10::FunctionSchema* s = u.user->maybeSchema();
      if (u.offset == 0 && s != nullptr && !s->returns().empty() && s->returns()[0].alias_info() && !s->is_mutable())
        for (const jit::Value* out : u.user->outputs()) todo.push_back(out);
    }
  }
  return kAnyDtype;
}

// ---- names ----------------------------------------------------------------------------------

std::string Lowerer::unique_value_name(const std::string& base) {
  if (value_names_.insert(base).second) return base;
  for (int k = 1;; ++k) {
    std::string name = base + "_" + std::to_string(k);
    if (value_names_.insert(name).second) return name;
  }
}

// A node is named by its module path when it is the only node there (or all nodes there
// run the same op: "layer1.0.relu", "layer1.0.relu_1"); otherwise by module path and op
// ("encoder.layers.0.self_attn.linear"); top-level nodes by op ("add", "add_1").
void Lowerer::name_nodes() {
  struct Group {
    size_t count = 0;
    bool same_op = true;
    std::string op;
  };
  std::unordered_map<std::string, Group> groups;
  for (const NodeMeta& m : meta_) {
    if (m.sym) continue;  // sym nodes are named apart and do not change kernel names
    Group& g = groups[m.path];
    if (g.count++ == 0)
      g.op = m.short_name;
    else if (g.op != m.short_name)
      g.same_op = false;
  }
  std::unordered_set<std::string> used;
  std::unordered_map<std::string, int> next;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const NodeMeta& m = meta_[i];
    const Group& g = groups[m.path];
    std::string base = m.sym                         ? (m.path.empty() ? "" : m.path + ".") + "sym_" + m.short_name
                       : m.path.empty()              ? m.short_name
                       : (g.count == 1 || g.same_op) ? m.path
                                                     : m.path + "." + m.short_name;
    std::string name = base;
    if (!used.insert(name).second) {
      int& k = next[base];
      do name = base + "_" + std::to_string(++k);
      while (!used.insert(name).second);
    }
    ir::Node& node = g_.nodes[i];
    node.name = name;
    for (size_t o = 0; o < node.outputs.size(); ++o)
      g_.values[static_cast<size_t>(node.outputs[o])].name =
          unique_value_name(o == 0 ? name : name + ":" + std::to_string(o));
  }
}

}  // namespace switchyard::torchscript
