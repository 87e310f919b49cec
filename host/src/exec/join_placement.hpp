// Concatenation without copies: where a `cat` (or `stack`) joins values along a dimension
// that nothing before it repeats (every size before `dim` is 1), each joined value is one
// contiguous run of the output's bytes. Its producer then writes straight there, and the
// join itself copies nothing: its output is a tensor over the arena bytes its inputs
// already fill. Joins that share inputs in the same order nest into one buffer (DenseNet's
// growing concatenations: each is a prefix of the block's last one).
#pragma once

#include "exec/memory_plan.hpp"
#include "exec/plan.hpp"

#include <cstdint>
#include <vector>

namespace switchyard::exec {

// Per slot: the slot whose buffer holds it (-1: its own, or none) and its byte offset
// there. Every holder is placed in the arena (ValueLife::arena_only).
struct JoinPlacement {
  std::vector<int32_t> holder;
  std::vector<int64_t> offset;
  int32_t joins_elided = 0;
};

// Marks each join whose inputs can all be written into its output (Step::elided), and
// rewrites the lives: a value written into a holder is a view of it (so nothing writes
// over it in place), and the holder lives from the first of them on. Graph outputs are
// never placed (they outlive the arena).
JoinPlacement place_joins(std::vector<Step>& steps, std::vector<ValueLife>& lives, const std::vector<ValueInfo>& infos,
                          const std::vector<int32_t>& slot_storage, size_t num_values);

}  // namespace switchyard::exec
