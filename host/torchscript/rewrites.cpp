// TorchScript importer: nested tensors, batch-sized values, node and value names, input dtypes.
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
    ir::ValueId len = emit1("aten::sum", {mask},
                            {{"dim", Attribute::of_ints({1})}, {"keepdim", Attribute::of_int(1)},
                             {"dtype", Attribute::of_int(kLongCode)}}, path);
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
      fail(n, "argument #" + std::to_string(i) + " is a nested tensor; only the first argument of "
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
    Attribute padding = attribute(n->input(1), n, "padding");
    ir::ValueId filled = emit1("aten::masked_fill", {tensors_.at(src), nt.pad_rows}, {{"value", padding}}, path);
    ir::ValueId out = filled;
    if (n->input(2)->type()->kind() == c10::TypeKind::NoneType) {
      ir::ValueId any = emit1("aten::any", {nt.valid}, {{"dim", Attribute::of_int(0)}}, path);
      ir::ValueId nz = emit1("aten::nonzero", {any}, {}, path);
      ir::ValueId idx = emit1("aten::flatten", {nz},
                              {{"start_dim", Attribute::of_int(0)}, {"end_dim", Attribute::of_int(-1)}}, path);
      out = emit1("aten::index_select", {filled, idx}, {{"dim", Attribute::of_int(1)}}, path);
    } else {
      log::get().debug("torchscript: {}: {}: output_size taken to be the padded input's size", path_, where(n));
    }
    tensors_[n->output()] = out;
    return;
  }
  fail(n, "it takes a nested tensor (from aten::_nested_tensor_from_mask); switchyard keeps "
          "nested tensors dense and supports only aten::_transformer_encoder_layer_fwd and "
          "aten::to_padded_tensor on them");
}

// ---- batch-sized constants -------------------------------------------------------------------

namespace {

// (t, j) if the int `v` is t.size(j) (through prim::NumToTensor / aten::Int / unpacking).
std::optional<std::pair<const jit::Value*, int64_t>> size_source(const jit::Value* v) {
  for (int hops = 0; hops < 8; ++hops) {
    const jit::Node* p = v->node();
    const std::string k = p->kind().toQualString();
    if (k == "aten::Int" || k == "prim::NumToTensor" || k == "aten::ScalarImplicit") {
      v = p->input(0);
    } else if (k == "aten::size" && p->inputs().size() == 2) {
      auto dim = jit::toIValue(p->input(1));
      if (!dim || !dim->isInt()) return std::nullopt;
      return std::make_pair(p->input(0), dim->toInt());
    } else if (k == "prim::ListUnpack" && p->input()->node()->kind() == c10::aten::size &&
               p->input()->node()->inputs().size() == 1) {
      return std::make_pair(p->input()->node()->input(0), static_cast<int64_t>(v->offset()));
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

// ViT's `class_token.expand(x.size(0), -1, -1)`: baked, the constant would hold the traced
// batch. Instead: a [1, .., n, .., 1] view of a length-n vector taken out of t, expanded to
// the target and used as expand_as's template.
ir::ValueId Lowerer::expand_by_size(const jit::Value* v, const jit::Node* user, const std::string& arg) {
  const jit::Node* e = v->node();
  if (e->kind() != c10::aten::expand || eval_.dep(e->input(0)) != Dep::Const ||
      e->input(1)->node()->kind() != c10::prim::ListConstruct)
    return ir::kNoValue;
  const jit::Node* list = e->input(1)->node();
  std::vector<int64_t> sizes = eval_.eval(e->input(1), user, arg).toIntVector();
  const at::Tensor c = eval_.eval(e->input(0), user, arg).toTensor();
  int dynamic = -1;
  std::pair<const jit::Value*, int64_t> src;
  for (size_t i = 0; i < list->inputs().size(); ++i) {
    if (eval_.dep(list->input(i)) == Dep::Const) continue;
    auto s = size_source(list->input(i));
    if (dynamic >= 0 || !s || eval_.dep(s->first) != Dep::Data) return ir::kNoValue;
    dynamic = static_cast<int>(i);
    src = *s;
  }
  const int64_t rank = static_cast<int64_t>(sizes.size()), lead = rank - c.dim();
  if (dynamic < 0 || lead < 0) return ir::kNoValue;
  const int64_t t_rank = eval_.eval(src.first, user, arg).toTensor().dim();
  const int64_t j = src.second < 0 ? src.second + t_rank : src.second;
  if (j < 0 || j >= t_rank) return ir::kNoValue;

  const std::string path = path_of(e);
  ir::ValueId carrier = tensor(src.first, e, "self");  // t, reduced to its dimension j
  for (int64_t d = t_rank - 1; d >= 0; --d)
    if (d != j)
      carrier = emit1("aten::select", {carrier}, {{"dim", Attribute::of_int(d)}, {"index", Attribute::of_int(0)}}, path);
  std::vector<int64_t> ones(static_cast<size_t>(rank), 1), target = sizes;
  ones[static_cast<size_t>(dynamic)] = -1;
  for (int64_t k = 0; k < rank; ++k)
    if (k != dynamic && target[static_cast<size_t>(k)] == -1) target[static_cast<size_t>(k)] = c.size(k - lead);
  target[static_cast<size_t>(dynamic)] = -1;
  ir::ValueId shaped = emit1("aten::view", {carrier}, {{"size", Attribute::of_ints(ones)}}, path);
  ir::ValueId like = emit1("aten::expand", {shaped}, {{"size", Attribute::of_ints(target)}, {"implicit", Attribute::of_int(0)}}, path);
  return emit1("aten::expand_as", {tensor(e->input(0), e, "self"), like}, {}, path);
}

// CNN heads' `x.view(x.size(0), -1)`: the batch entry is the input's own dimension 0, so the
// view is flatten(x, 1) (then unflatten(_, 1, rest) for several trailing entries), which
// holds for every batch size and needs no traced shapes.
bool Lowerer::lower_batch_view(const jit::Node* n) {
  const std::string k = n->kind().toQualString();
  if ((k != "aten::view" && k != "aten::reshape" && k != "aten::_unsafe_view") || n->inputs().size() != 2 ||
      n->input(1)->node()->kind() != c10::prim::ListConstruct || eval_.dep(n->input(1)) == Dep::Const)
    return false;
  const jit::Node* list = n->input(1)->node();
  if (list->inputs().size() < 2) return false;
  auto first = size_source(list->input(0));
  if (!first || first->first != n->input(0) || first->second != 0) {
    // Or the entry is the size of another tensor that, at two batch sizes, equals x.size(0).
    try {
      c10::IValue e = eval_.eval(list->input(0), n, "size"), x = eval_.eval(n->input(0), n, "self");
      if (!e.isInt() || !x.isTensor() || x.toTensor().dim() < 1 || x.toTensor().size(0) != e.toInt())
        return false;
      auto e2 = eval_.eval_other_batch(list->input(0), e), x2 = eval_.eval_other_batch(n->input(0), x);
      if (!e2 || !x2 || !e2->isInt() || e2->toInt() == e.toInt() || x2->toTensor().size(0) != e2->toInt())
        return false;
    } catch (const Error&) {
      return false;  // no traced shapes to compare with
    }
  }
  std::vector<int64_t> rest;
  for (size_t i = 1; i < list->inputs().size(); ++i) {
    if (eval_.dep(list->input(i)) != Dep::Const) return false;
    rest.push_back(eval_.eval(list->input(i), n, "size").toInt());
  }
  if (std::count(rest.begin(), rest.end(), -1) > 1) return false;
  const std::string path = path_of(n);
  ir::ValueId out = emit1("aten::flatten", {tensor(n->input(0), n, "self")},
                          {{"start_dim", Attribute::of_int(1)}, {"end_dim", Attribute::of_int(-1)}}, path);
  if (rest.size() > 1)
    out = emit1("aten::unflatten", {out}, {{"dim", Attribute::of_int(1)}, {"sizes", Attribute::of_ints(rest)}}, path);
  tensors_[n->output()] = out;
  return true;
}

// ---- input dtypes ---------------------------------------------------------------------------

// The dtype an input must have, read from how it is used (through views): token ids feed
// aten::embedding, masks feed masked_fill / where / logical ops. Otherwise float32.
DLDataType infer_input_dtype(const jit::Value* v) {
  static const std::unordered_map<std::string, std::pair<size_t, int>> kUses = {
      // op -> (argument index, 0 = int64 / 1 = bool); index SIZE_MAX = any argument
      {"aten::embedding", {1, 0}}, {"aten::embedding_bag", {1, 0}}, {"aten::index_select", {2, 0}},
      {"aten::gather", {2, 0}}, {"aten::one_hot", {0, 0}},
      {"aten::masked_fill", {1, 1}}, {"aten::masked_fill_", {1, 1}}, {"aten::where", {0, 1}},
      {"aten::_nested_tensor_from_mask", {1, 1}}, {"aten::logical_not", {SIZE_MAX, 1}},
      {"aten::logical_and", {SIZE_MAX, 1}}, {"aten::logical_or", {SIZE_MAX, 1}},
      {"aten::_transformer_encoder_layer_fwd", {18, 1}}, {"aten::_native_multi_head_attention", {9, 1}}};
  std::deque<const jit::Value*> todo{v};
  for (int steps = 0; !todo.empty() && steps < 64; ++steps) {
    const jit::Value* w = todo.front();
    todo.pop_front();
    for (const jit::Use& u : w->uses()) {
      auto it = kUses.find(u.user->kind().toQualString());
      if (it != kUses.end() && (it->second.first == SIZE_MAX || it->second.first == u.offset))
        return it->second.second == 0 ? DLDataType{kDLInt, 64, 1} : DLDataType{6, 8, 1};
      const c10::FunctionSchema* s = u.user->maybeSchema();
      if (u.offset == 0 && s != nullptr && !s->returns().empty() && s->returns()[0].alias_info() &&
          !s->is_mutable())
        for (const jit::Value* out : u.user->outputs()) todo.push_back(out);
    }
  }
  return DLDataType{kDLFloat, 32, 1};
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
    Group& g = groups[m.path];
    if (g.count++ == 0) g.op = m.short_name;
    else if (g.op != m.short_name) g.same_op = false;
  }
  std::unordered_set<std::string> used;
  std::unordered_map<std::string, int> next;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const NodeMeta& m = meta_[i];
    const Group& g = groups[m.path];
    std::string base = m.path.empty() ? m.short_name
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
