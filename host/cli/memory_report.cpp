// `plan --memory` and `run --memory`: the memory plan, and the peak a run measures.
#include "commands.hpp"

#include <algorithm>
#include <cstdio>

namespace switchyard::cli {
namespace {

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string span(int32_t first, int32_t last) {
  if (last == INT32_MAX) return std::to_string(first) + "..end";
  if (last < first) return std::to_string(first) + " (unread)";
  return std::to_string(first) + ".." + std::to_string(last);
}

}  // namespace

void print_memory_plan(const MemoryReport& r, int top) {
  std::printf("memory plan (activations only; weights and inputs are not counted):\n");
  std::printf("  every activation, summed:   %s (%zu values; what no reuse at all would take)\n",
              mib(r.total_activation_bytes).c_str(), r.values.size());
  if (r.arena_enabled)
    std::printf("  arena:                      %s holding %s of host-allocated values\n", mib(r.arena_bytes).c_str(),
                mib(r.arena_values_bytes).c_str());
  else
    std::printf(
        "  arena:                      off (node_io capture, inter_op_threads > 1, or "
        "[runtime] memory_planner = false)\n");
  std::printf(
      "  heap peak:                  %s (outside the arena: kernel-produced values, graph outputs, what fits under them)\n",
      mib(r.heap_peak_bytes).c_str());
  const double share = r.total_activation_bytes > 0 ? 100.0 * static_cast<double>(r.estimated_peak_bytes) /
                                                          static_cast<double>(r.total_activation_bytes)
                                                    : 0.0;
  std::printf("  estimated peak:             %s (arena + heap peak; %.1f%% of the sum)\n",
              mib(r.estimated_peak_bytes).c_str(), share);

  std::vector<const MemoryValue*> order;
  for (const MemoryValue& v : r.values) order.push_back(&v);
  std::stable_sort(order.begin(), order.end(),
                   [](const MemoryValue* a, const MemoryValue* b) { return a->bytes > b->bytes; });
  if (order.size() > static_cast<size_t>(top)) order.resize(static_cast<size_t>(top));
  std::printf("\nlargest %zu values:\n", order.size());
  std::vector<std::vector<std::string>> rows{{"value", "producer", "size", "placement", "arena offset", "nodes live"}};
  for (const MemoryValue* v : order)
    rows.push_back({v->value, v->producer, mib(v->bytes), v->placement, v->offset >= 0 ? std::to_string(v->offset) : "",
                    span(v->first, v->last)});
  print_table(rows);
}

void report_memory(Model& model, const std::vector<Tensor>& inputs) {
  // The first run after planning may still make one-time kernel state (a kernel building
  // its variant for the storages the plan chose): not activations, so it is not measured.
  model.run(inputs);
  RunContext context;
  context.set_memory_measurement(true);
  model.run(inputs, context);
  const MemoryReport plan = model.memory_plan(inputs);
  const size_t measured = context.last_stats().measured_peak_bytes;
  std::printf(
      "peak activation memory: measured %s (malloc's bytes in use as each node returns, "
      "less those in use before the run); planned %s",
      mib(measured).c_str(), mib(plan.estimated_peak_bytes).c_str());
  if (plan.estimated_peak_bytes > 0)
    std::printf(" (measured/planned %.3f)",
                static_cast<double>(measured) / static_cast<double>(plan.estimated_peak_bytes));
  std::printf("\n");
}

}  // namespace switchyard::cli
