#include "exec/join_placement.hpp"

#include <algorithm>
#include <optional>

namespace switchyard::exec {
namespace {

size_t at(int32_t slot) { return static_cast<size_t>(slot); }

int64_t dense_bytes(const ValueInfo& info) {
  int64_t n = static_cast<int64_t>(dtype_size(info.dtype));
  for (int64_t d : info.shape) n *= d;
  return n;
}

// A join whose parts are contiguous runs of its output: the step, its output slot, and
// the slots it joins, in order, with their bytes.
struct Join {
  size_t step;
  int32_t out;
  int64_t out_bytes;
  std::vector<int32_t> parts;
  std::vector<int64_t> bytes;
};

class JoinPlacer {
 public:
  JoinPlacer(std::vector<Step>& steps, std::vector<ValueLife>& lives, const std::vector<ValueInfo>& infos,
             const std::vector<int32_t>& slot_storage, size_t num_values)
      : steps_(steps), lives_(lives), infos_(infos), slot_storage_(slot_storage), num_values_(num_values) {}

  JoinPlacement run() {
    p_.holder.assign(lives_.size(), -1);
    p_.offset.assign(lives_.size(), 0);
    is_holder_.assign(lives_.size(), 0);
    viewed_.assign(lives_.size(), 0);
    for (const ValueLife& l : lives_)
      if (l.kind == ValueLife::Kind::View && l.view_of != ir::kNoValue) viewed_[at(l.view_of)] = 1;
    std::vector<Join> joins;
    for (size_t i = 0; i < steps_.size(); ++i)
      if (std::optional<Join> j = as_join(i)) joins.push_back(std::move(*j));
    // Largest first: a smaller join that repeats a run of a larger one's parts is then a
    // view of it, and a join that is itself a part writes into its place.
    std::stable_sort(joins.begin(), joins.end(),
                     [](const Join& a, const Join& b) { return a.out_bytes > b.out_bytes; });
    for (const Join& j : joins)
      if (!nest(j)) place(j);
    rewrite_lives();
    return std::move(p_);
  }

 private:
  std::optional<Join> as_join(size_t i) const;
  bool free_part(int32_t slot, const Join& j) const;
  bool nest(const Join& j);
  void place(const Join& j);
  void rewrite_lives();

  std::vector<Step>& steps_;
  std::vector<ValueLife>& lives_;
  const std::vector<ValueInfo>& infos_;
  const std::vector<int32_t>& slot_storage_;
  const size_t num_values_;
  JoinPlacement p_;
  std::vector<char> is_holder_;
  // Values a kernel-produced view points into: left alone, since such a view may outlive
  // the run (a graph output), and a holder must not.
  std::vector<char> viewed_;
};

// Step i as a join of contiguous runs (cat/stack along a dimension after only 1s), or none.
std::optional<Join> JoinPlacer::as_join(size_t i) const {
  const Step& s = steps_[i];
  if (s.kind != Step::Kind::Kernel || s.folded || (s.decided != nullptr && s.decided->fused)) return std::nullopt;
  const std::string& op = s.run_node->op;
  const bool stack = op == "aten::stack";
  if ((!stack && op != "aten::cat" && op != "aten::concat") || s.outputs.size() != 1) return std::nullopt;
  const int32_t out = s.outputs[0].slot;
  if (out < 0 || at(out) >= num_values_ || slot_storage_[at(out)] != kHost) return std::nullopt;
  const ValueLife& life = lives_[at(out)];
  const bool owned = life.kind == ValueLife::Kind::HostArena || life.kind == ValueLife::Kind::Kernel;
  if (!owned || life.last == kForever || life.bytes == 0 || viewed_[at(out)]) return std::nullopt;
  int64_t dim = 0;
  if (const ir::Attribute* a = ir::find_attr(s.run_node->attrs, "dim")) {
    if (a->bound() || a->kind != ir::AttrKind::Int) return std::nullopt;
    dim = a->i;
  }
  const ValueInfo& y = infos_[at(out)];
  const auto rank = static_cast<int64_t>(y.shape.size());
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) return std::nullopt;
  for (int64_t d = 0; d < dim; ++d)
    if (y.shape[static_cast<size_t>(d)] != 1) return std::nullopt;  // the parts interleave
  Join j{i, out, dense_bytes(y), {}, {}};
  int64_t total = 0;
  for (const InputRef& r : s.inputs) {
    if (r.slot < 0 || at(r.slot) >= num_values_ || r.storage != kHost) return std::nullopt;  // constant or copy
    const ValueInfo& x = infos_[at(r.slot)];
    if (!same_dtype(x.dtype, y.dtype) || x.shape.size() + (stack ? 1 : 0) != y.shape.size()) return std::nullopt;
    if (std::find(j.parts.begin(), j.parts.end(), r.slot) != j.parts.end()) return std::nullopt;  // twice
    j.parts.push_back(r.slot);
    j.bytes.push_back(dense_bytes(x));
    total += j.bytes.back();
  }
  if (j.parts.empty() || total != j.out_bytes) return std::nullopt;
  return j;
}

// A part its producer may write into the join's output: a host-allocated buffer of its
// own (not a view, not written in place yet), placed nowhere else, not a graph output,
// and no view's parent.
bool JoinPlacer::free_part(int32_t slot, const Join& j) const {
  const ValueLife& life = lives_[at(slot)];
  return slot != j.out && life.kind == ValueLife::Kind::HostArena && life.last != kForever && life.bytes > 0 &&
         p_.holder[at(slot)] < 0 && !is_holder_[at(slot)] && !viewed_[at(slot)] &&
         life.first < static_cast<int32_t>(j.step);
}

// A join whose parts already sit one after another in one holder: its output is that run.
bool JoinPlacer::nest(const Join& j) {
  const int32_t h = p_.holder[at(j.parts[0])];
  if (h < 0 || p_.holder[at(j.out)] >= 0 || is_holder_[at(j.out)]) return false;
  int64_t next = p_.offset[at(j.parts[0])];
  for (size_t k = 0; k < j.parts.size(); ++k) {
    if (p_.holder[at(j.parts[k])] != h || p_.offset[at(j.parts[k])] != next) return false;
    next += j.bytes[k];
  }
  p_.holder[at(j.out)] = h;
  p_.offset[at(j.out)] = p_.offset[at(j.parts[0])];
  steps_[j.step].elided = true;
  ++p_.joins_elided;
  return true;
}

// Every part free: each is written into the join's output, which holds them (or, where
// the output is itself a part of a larger join, into that join's holder).
void JoinPlacer::place(const Join& j) {
  for (int32_t part : j.parts)
    if (!free_part(part, j)) return;
  const int32_t holder = p_.holder[at(j.out)] >= 0 ? p_.holder[at(j.out)] : j.out;
  int64_t offset = p_.holder[at(j.out)] >= 0 ? p_.offset[at(j.out)] : 0;
  if (holder == j.out) is_holder_[at(j.out)] = 1;
  for (size_t k = 0; k < j.parts.size(); ++k) {
    p_.holder[at(j.parts[k])] = holder;
    p_.offset[at(j.parts[k])] = offset;
    offset += j.bytes[k];
  }
  steps_[j.step].elided = true;
  ++p_.joins_elided;
}

// A holder lives from its first part on, in the arena; what it holds owns nothing.
void JoinPlacer::rewrite_lives() {
  for (size_t slot = 0; slot < lives_.size(); ++slot)
    if (is_holder_[slot]) {
      lives_[slot].kind = ValueLife::Kind::HostArena;
      lives_[slot].arena_only = true;
    }
  for (size_t slot = 0; slot < lives_.size(); ++slot) {
    const int32_t h = p_.holder[slot];
    if (h < 0) continue;
    ValueLife& holder = lives_[at(h)];
    ValueLife& life = lives_[slot];
    holder.first = std::min(holder.first, life.first);
    life.kind = ValueLife::Kind::View;
    life.view_of = h;
    life.bytes = 0;
  }
}

}  // namespace

JoinPlacement place_joins(std::vector<Step>& steps, std::vector<ValueLife>& lives, const std::vector<ValueInfo>& infos,
                          const std::vector<int32_t>& slot_storage, size_t num_values) {
  return JoinPlacer(steps, lives, infos, slot_storage, num_values).run();
}

}  // namespace switchyard::exec
