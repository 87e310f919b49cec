// The passes that compile a planning run into an executable plan (finalize.cpp). The
// planning run (planner.cpp) leaves per value its dtype, shape and owner and per node its
// kernel; finalize fixes where each value lives and lays the run out as steps.
#pragma once

#include "config/config.hpp"
#include "exec/plan.hpp"
#include "exec/storage.hpp"
#include "ir/graph.hpp"

#include <cstdint>
#include <vector>

namespace switchyard::exec {

// What the passes read besides the plan; all outlive the call.
struct FinalizeInputs {
  const ir::Graph& graph;
  const config::Config& config;
  const StorageTable& storages;
  const std::vector<int32_t>& last_use;  // per value: last consuming node; -1 never; kForever output
  int32_t preferred_storage = kHost;     // [runtime] prefer_storage; kHost: none
  bool parallel = false;                 // inter-op parallel runs: no arena, stricter in-place
};

// Fills plan.steps, slots, lives, memory and arenas from plan.record.steps and marks
// the plan complete (the parallel schedule, if any, is the caller's).
void finalize_plan(const FinalizeInputs& in, Plan& plan);

}  // namespace switchyard::exec
