// The executor's side of memory planning: what the planning run records of each value,
// the plan made from it, and the check that keeps a later run from trusting a stale plan.
#include "exec/executor.hpp"

#include "util/log.hpp"

#include <switchyard/error.hpp>

#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// In libasan and libtsan; GCC ships no header for it (clang's allocator_interface.h).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

#include <cstring>

namespace switchyard::exec {
namespace {

// A copy of `t` in memory of its own.
Tensor copy_of(const Tensor& t) {
  if (!t.is_contiguous()) return t.contiguous();  // contiguous() copies a strided tensor
  Tensor out = Tensor::uninitialized(t.dtype(), t.shape());
  std::memcpy(out.raw_data(), t.raw_data(), t.nbytes());
  return out;
}

}  // namespace

bool points_into(const void* p, const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return false;
  const std::vector<int64_t> strides = t.strides();
  int64_t last = 0;  // offset of the last element, in elements (strides are never negative)
  for (size_t d = 0; d < strides.size(); ++d) last += (t.shape()[d] - 1) * strides[d];
  const char* begin = static_cast<const char*>(t.raw_data());
  const char* q = static_cast<const char*>(p);
  return q >= begin && q < begin + (last + 1) * static_cast<int64_t>(dtype_size(t.dtype()));
}

size_t heap_bytes_in_use() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();  // the sanitizer's allocator: mallinfo2 reads 0 there
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

void Executor::record_lives(size_t n, const NodePlan& np, const ir::Node& node, const std::vector<Tensor>& outs,
                            const std::vector<Tensor>& live, Plan& plan) const {
  if (plan.lives.empty()) plan.lives.resize(graph_.values.size());
  const bool host_allocated = np.bound->kernel.def->output_mode == SY_OUTPUT_HOST_ALLOCATED;
  for (size_t o = 0; o < outs.size(); ++o) {
    const ir::ValueId v = node.outputs[o];
    ValueLife& life = plan.lives[v];
    life.first = static_cast<int32_t>(n);
    life.last = last_use_[v];
    life.bytes = outs[o].nbytes();
    life.kind = host_allocated ? ValueLife::Kind::HostArena : ValueLife::Kind::Kernel;
    if (host_allocated || outs[o].numel() == 0) continue;
    for (ir::ValueId in : node.inputs) {  // a kernel's output may be a view of one of its inputs
      if (in == ir::kNoValue) continue;
      const ir::Value& src = graph_.values[in];
      if (points_into(outs[o].raw_data(), src.kind == ir::ValueKind::Constant ? src.constant : live[in])) {
        life.kind = ValueLife::Kind::View;  // owns nothing; graph inputs and constants outlive the run
        life.view_of = src.kind == ir::ValueKind::NodeOutput ? in : ir::kNoValue;
        life.bytes = 0;
        break;
      }
    }
  }
}

void Executor::finish_memory_plan(Plan& plan) const {
  plan.lives.resize(graph_.values.size());  // a graph of no nodes records nothing
  // Tensors that leave the run (node_io, callbacks) or runs that overlap nodes
  // (inter_op_threads > 1) would break the plan's lifetimes: no arena for those.
  const bool use_arena = config_.memory_planner && !parallel_ && config_.capture == config::CaptureMode::None;
  plan.memory = plan_memory(plan.lives, use_arena);
  if (use_arena && plan.memory.arena_bytes > 0) plan.arena = std::make_unique<ArenaPool>(plan.memory.arena_bytes);
  log::get().debug("memory plan: arena {} bytes for {} bytes of values; heap peak {} bytes; {} bytes of activations",
                   plan.memory.arena_bytes, plan.memory.arena_values_bytes, plan.memory.heap_peak_bytes,
                   plan.memory.total_activation_bytes);
}

Tensor Executor::guard_arena_view(const NodePlan& np, const ir::Node& node, size_t o, Tensor t,
                                  const RunArena& arena, const std::vector<Tensor>& live) const {
  // Safe only if the planning run saw this output view that very input: the plan then
  // kept the input's arena bytes (and its own parent's) for as long as the view lives.
  const ir::ValueId expected = (*arena.lives)[node.outputs[o]].view_of;
  if (expected != ir::kNoValue && points_into(t.raw_data(), live[expected])) return t;
  log::get().warn("{}: plugin '{}' returned a view of arena memory that its planning run did not (output {}); "
                  "copying it out", describe(node), np.backend, o);
  return copy_of(t);
}

}  // namespace switchyard::exec
