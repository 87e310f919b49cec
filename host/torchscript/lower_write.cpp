// TorchScript importer: in-place writes made functional, as PyTorch's functionalization
// does. switchyard runs every in-place op out of place (the aten plugin's convention), so
// a write `m.fill_(v)` gives a new tensor m'. Then:
//   * later readers of m read m';
//   * if m is a view (m = slice(select(base, ...), ...)), m' is scattered back through the
//     chain of views into a new base: slice -> slice_scatter, select -> select_scatter,
//     narrow/split/chunk -> slice_scatter, unbind -> select_scatter, diagonal ->
//     diagonal_scatter, transpose/permute/t -> their inverse, view/reshape/(un)squeeze/
//     flatten -> reshape to the parent's size (read at run time by sym::size);
//   * every view of the base made before the write and read after it is made again from
//     the new base (its own view op, replayed).
// Swin's shifted-window mask (`img_mask[:, h, w, :] = cnt`, nine writes through four
// slices each) becomes nine fill/slice_scatter chains. A write that cannot be undone this
// way (through expand, as_strided, ...) while another alias is read later is refused,
// naming the op and its source line.
#include "lower_state.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <deque>

namespace switchyard::torchscript {

namespace jit = torch::jit;
using ir::Attribute;
using ir::Attributes;

namespace {

// The argument an in-place op writes whose memory its result shares; -1 if none.
int written_arg(const jit::Node* n) {
  const c10::FunctionSchema* s = n->maybeSchema();
  if (s == nullptr || !s->is_mutable()) return -1;
  for (size_t i = 0; i < s->arguments().size(); ++i) {
    const c10::AliasInfo* a = s->arguments()[i].alias_info();
    if (a != nullptr && a->isWrite()) return static_cast<int>(i);
  }
  return -1;
}

// How `v` aliases another value: made by view op `op` from `parent` (piece `piece` of a
// multi-output view such as chunk), or the result of an in-place op on `parent` (identity).
struct Link {
  const jit::Value* parent = nullptr;
  const jit::Node* op = nullptr;
  size_t piece = 0;
  bool identity = false;
};

std::optional<Link> link_of(const jit::Value* v) {
  const jit::Node* p = v->node();
  if (p->kind() == c10::prim::ListUnpack && is_view_op(p->input(0)->node()) && !p->input(0)->node()->inputs().empty())
    return Link{p->input(0)->node()->input(0), p->input(0)->node(), v->offset(), false};
  if (is_view_op(p) && !p->inputs().empty() && is_tensor(v->type())) return Link{p->input(0), p, 0, false};
  const int w = written_arg(p);
  if (w >= 0 && v->offset() == 0 && is_tensor(v->type())) return Link{p->input(static_cast<size_t>(w)), p, 0, true};
  return std::nullopt;
}

// The values that alias `v` directly: its views and the results of in-place ops on it.
std::vector<const jit::Value*> children_of(const jit::Value* v) {
  std::vector<const jit::Value*> out;
  for (const jit::Use& u : v->uses()) {
    if (u.offset == 0 && is_view_op(u.user)) {
      for (const jit::Value* o : u.user->outputs()) {
        if (is_tensor(o->type()))
          out.push_back(o);
        else if (is_tensor_list(o->type()))
          for (const jit::Use& uu : o->uses())
            if (uu.user->kind() == c10::prim::ListUnpack)
              for (const jit::Value* piece : uu.user->outputs()) out.push_back(piece);
      }
    } else if (written_arg(u.user) == static_cast<int>(u.offset) && !u.user->outputs().empty() &&
               is_tensor(u.user->output(0)->type())) {
      out.push_back(u.user->output(0));
    }
  }
  return out;
}

const jit::Value* root_of(const jit::Value* v) {
  while (auto l = link_of(v)) v = l->parent;
  return v;
}

// Every value sharing memory with `root` (itself included), parents before children.
std::vector<const jit::Value*> alias_tree(const jit::Value* root) {
  std::vector<const jit::Value*> tree{root};
  std::unordered_set<const jit::Value*> seen{root};
  for (size_t i = 0; i < tree.size(); ++i)
    for (const jit::Value* c : children_of(tree[i]))
      if (seen.insert(c).second) tree.push_back(c);
  return tree;
}

// Is `v` read after node `n` (by a later node, the graph's return, or a list or tuple that is)?
bool read_after(const jit::Value* v, const jit::Node* n) {
  for (const jit::Use& u : v->uses()) {
    const jit::Node* user = u.user;
    if (user->kind() == c10::prim::Return || n->isBefore(user)) return true;
    if (user->kind() == c10::prim::ListConstruct || user->kind() == c10::prim::TupleConstruct)
      if (read_after(user->output(), n)) return true;
  }
  return false;
}

}  // namespace

std::unordered_set<const jit::Value*> Lowerer::written_values() const {
  std::unordered_set<const jit::Value*> written;
  for (const jit::Node* n : graph_->nodes()) {
    const int w = written_arg(n);
    if (w < 0) continue;
    for (const jit::Value* v : alias_tree(root_of(n->input(static_cast<size_t>(w))))) written.insert(v);
  }
  return written;
}

Attribute Lowerer::arg_attr(const jit::Node* n, const std::string& name) {
  const c10::FunctionSchema& s = n->schema();
  auto i = s.argumentIndexWithName(name);
  if (!i) fail(n, "no argument '" + name + "'");
  return attribute(n->input(*i), n, name, s.arguments()[*i].type());
}

ir::ValueId Lowerer::scatter(const jit::Node* op, size_t piece, ir::ValueId parent, ir::ValueId child,
                             const jit::Node* writer, const std::string& why_not) {
  const std::string name = op->kind().toUnqualString();
  const std::string path = path_of(writer);
  auto literal_int = [&](const std::string& arg, int64_t* out) {
    Attribute a = arg_attr(op, arg);
    if (a.bound() || a.kind != ir::AttrKind::Int) return false;
    *out = a.i;
    return true;
  };
  auto slice_scatter = [&](Attribute dim, Attribute start, Attribute end) {
    return emit1("aten::slice_scatter", {parent, child},
                 {{"dim", dim}, {"start", start}, {"end", end}, {"step", Attribute::of_int(1)}}, path);
  };
  auto sum = [&](const Attribute& a, const Attribute& b) {  // a + b, literal or bound
    if (!a.bound() && !b.bound()) return Attribute::of_int(a.i + b.i);
    auto id = [&](const Attribute& x) { return x.bound() ? x.ref : sym_const(c10::IValue(x.i), writer, "start").id; };
    return Attribute::of_ref(sym_node("sym::add", {id(a), id(b)}, {}, path).id, ir::AttrKind::Int);
  };
  if (name == "slice")
    return emit1("aten::slice_scatter", {parent, child},
                 {{"dim", arg_attr(op, "dim")},
                  {"start", arg_attr(op, "start")},
                  {"end", arg_attr(op, "end")},
                  {"step", arg_attr(op, "step")}},
                 path);
  if (name == "select")
    return emit1("aten::select_scatter", {parent, child},
                 {{"dim", arg_attr(op, "dim")}, {"index", arg_attr(op, "index")}}, path);
  if (name == "narrow") {
    Attribute start = arg_attr(op, "start");
    return slice_scatter(arg_attr(op, "dim"), start, sum(start, arg_attr(op, "length")));
  }
  if (name == "diagonal")
    return emit1("aten::diagonal_scatter", {parent, child},
                 {{"offset", arg_attr(op, "offset")}, {"dim1", arg_attr(op, "dim1")}, {"dim2", arg_attr(op, "dim2")}},
                 path);
  if (name == "unbind")
    return emit1("aten::select_scatter", {parent, child},
                 {{"dim", arg_attr(op, "dim")}, {"index", Attribute::of_int(static_cast<int64_t>(piece))}}, path);
  if (name == "split_with_sizes" || name == "split") {
    Attribute sizes = arg_attr(op, name == "split" ? "split_size" : "split_sizes");
    if (!sizes.bound() && sizes.kind == ir::AttrKind::Int) {
      const int64_t start = sizes.i * static_cast<int64_t>(piece);
      return slice_scatter(arg_attr(op, "dim"), Attribute::of_int(start), Attribute::of_int(start + sizes.i));
    }
    if (!sizes.bound() && sizes.kind == ir::AttrKind::Ints && piece < sizes.ints.size()) {
      int64_t start = 0;
      for (size_t i = 0; i < piece; ++i) start += sizes.ints[i];
      return slice_scatter(arg_attr(op, "dim"), Attribute::of_int(start), Attribute::of_int(start + sizes.ints[piece]));
    }
  }
  if (name == "chunk") {  // pieces of ceil(size / chunks)
    int64_t chunks = 0;
    Attribute dim = arg_attr(op, "dim");
    if (literal_int("chunks", &chunks) && !dim.bound() && chunks > 0) {
      ir::ValueId size = sym_node("sym::size", {parent}, {{"dim", dim}}, path).id;
      ir::ValueId c = sym_const(c10::IValue(chunks), writer, "chunks").id;
      ir::ValueId c1 = sym_const(c10::IValue(chunks - 1), writer, "chunks").id;
      ir::ValueId len = sym_node("sym::floordiv", {sym_node("sym::add", {size, c1}, {}, path).id, c}, {}, path).id;
      ir::ValueId start =
          sym_node("sym::mul", {len, sym_const(c10::IValue(static_cast<int64_t>(piece)), writer, "chunks").id}, {},
                   path)
              .id;
      ir::ValueId end = sym_node("sym::add", {start, len}, {}, path).id;
      return slice_scatter(dim, Attribute::of_ref(start, ir::AttrKind::Int), Attribute::of_ref(end, ir::AttrKind::Int));
    }
  }
  if (name == "transpose" || name == "swapaxes" || name == "swapdims") {
    const char* a = name == "transpose" ? "dim0" : name == "swapaxes" ? "axis0" : "dim0";
    const char* b = name == "transpose" ? "dim1" : name == "swapaxes" ? "axis1" : "dim1";
    return emit1("aten::transpose", {child}, {{"dim0", arg_attr(op, a)}, {"dim1", arg_attr(op, b)}}, path);
  }
  if (name == "t" || name == "numpy_T") return emit1("aten::" + name, {child}, {}, path);
  if (name == "permute") {
    Attribute dims = arg_attr(op, "dims");
    if (!dims.bound() && dims.kind == ir::AttrKind::Ints) {
      const int64_t rank = static_cast<int64_t>(dims.ints.size());
      std::vector<int64_t> inverse(dims.ints.size(), -1);
      bool ok = true;
      for (int64_t i = 0; i < rank; ++i) {
        const int64_t d = dims.ints[static_cast<size_t>(i)] < 0 ? dims.ints[static_cast<size_t>(i)] + rank
                                                                : dims.ints[static_cast<size_t>(i)];
        ok = ok && d >= 0 && d < rank && inverse[static_cast<size_t>(d)] < 0;
        if (ok) inverse[static_cast<size_t>(d)] = i;
      }
      if (ok) return emit1("aten::permute", {child}, {{"dims", Attribute::of_ints(inverse)}}, path);
    }
  }
  static const std::unordered_set<std::string> reshapes = {
      "view", "reshape", "_unsafe_view", "unsqueeze", "squeeze", "flatten", "unflatten", "view_as", "reshape_as"};
  if (reshapes.count(name)) {
    const ir::ValueId size = sym_node("sym::size", {parent}, {}, path).id;
    return emit1("aten::reshape", {child}, {{"shape", Attribute::of_ref(size, ir::AttrKind::Ints)}}, path);
  }
  static const std::unordered_set<std::string> identities = {"alias", "detach", "contiguous"};
  if (identities.count(name)) return child;
  fail(writer, why_not + "; the write goes through the view " + std::string(op->kind().toQualString()) +
                   ", which switchyard cannot scatter back, so it cannot be made functional (switchyard runs in-place "
                   "ops out of place)");
}

void Lowerer::replay_views(const jit::Value* root, const jit::Value* written, const jit::Node* writer) {
  std::vector<const jit::Value*> tree = alias_tree(root);
  // Whether a value or any of its aliases below it is read after the write.
  std::unordered_map<const jit::Value*, bool> needed;
  for (auto it = tree.rbegin(); it != tree.rend(); ++it) {
    bool need = read_after(*it, writer);
    for (const jit::Value* c : children_of(*it)) need = need || needed[c];
    needed[*it] = need;
  }
  std::unordered_set<const jit::Node*> replayed;
  for (const jit::Value* v : tree) {
    if (v == root || v == written || !needed[v]) continue;
    const jit::Node* made = v->node();
    if (!made->isBefore(writer) || made == writer) continue;  // made later: lowered from the new values
    const Link l = *link_of(v);
    if (l.identity) {
      tensors_[v] = tensors_.at(l.parent);
      continue;
    }
    if (!replayed.insert(l.op).second) continue;
    Overrides over;
    over.inputs[0] = tensors_.at(l.parent);
    lower_aten(l.op, over);
  }
}

void Lowerer::functionalize_write(const jit::Node* n, const c10::FunctionSchema& schema, ir::ValueId result) {
  const int w = written_arg(n);
  size_t writes = 0;
  for (const c10::Argument& a : schema.arguments()) writes += a.alias_info() && a.alias_info()->isWrite() ? 1 : 0;
  if (w < 0 || writes != 1 || result == ir::kNoValue || n->outputs().empty() || !is_tensor(n->output(0)->type()))
    fail(n, "an in-place op that writes " + std::to_string(writes) + " arguments or returns no tensor");
  const jit::Value* m = n->input(static_cast<size_t>(w));
  const jit::Value* root = root_of(m);
  std::vector<Link> chain;  // m's links, from m up to the root
  for (const jit::Value* v = m; v != root; v = link_of(v)->parent) chain.push_back(*link_of(v));

  // Must the write reach the base? Only if an alias outside m's own views is read later.
  std::unordered_set<const jit::Value*> below_m;
  for (const jit::Value* v : alias_tree(m)) below_m.insert(v);
  const jit::Value* other = nullptr;
  for (const jit::Value* v : alias_tree(root))
    if (!below_m.count(v) && read_after(v, n)) {
      other = v;
      break;
    }
  tensors_[m] = result;
  if (other != nullptr) {
    const std::string why_not = "it writes in place into '" + m->debugName() + "', which shares memory with '" +
                                other->debugName() + "', read afterwards";
    ir::ValueId value = result;
    for (const Link& l : chain) {
      const ir::ValueId parent = tensors_.at(l.parent);  // before this write
      value = l.identity ? value : scatter(l.op, l.piece, parent, value, n, why_not);
    }
    tensors_[root] = value;
    replay_views(root, m, n);
  } else {
    replay_views(m, m, n);
  }
  for (const jit::Value* out : n->outputs())
    if (is_tensor(out->type())) tensors_[out] = result;
}

}  // namespace switchyard::torchscript
