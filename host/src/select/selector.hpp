// Backend selection for one node: the first matching rule's backend list (or the
// default list), then the first backend that has a kernel for the op and accepts the
// node. Every rejection is recorded with its reason. Selection never allocates tensors.
#pragma once

#include "config/config.hpp"
#include "ir/graph.hpp"

#include <switchyard/sdk.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace switchyard::select {

// A kernel some loaded plugin offers; `handle` is opaque to the selector.
struct Candidate {
  std::string backend;  // plugin name
  const SY_KernelDef* def = nullptr;
  const void* handle = nullptr;  // the plugin manager's KernelRef
};

struct Rejection {
  std::string backend;
  std::string reason;
};

struct Selection {
  std::optional<Candidate> winner;  // empty: no backend accepted the node
  std::string reason;               // why the winner was chosen, e.g. "rule #2 (file:3:1)"
  std::vector<Rejection> rejected;  // in the order they were asked
  int rule_index = -1;              // -1: the default list was used
};

// What selection needs from the loaded plugins.
struct Catalog {
  // Kernels for an op, across all plugins, in load order.
  std::function<std::vector<Candidate>(const std::string& op)> kernels_for;
  // Families the plugins declare for an op (for `family = ...` rules).
  std::function<std::vector<std::string>(const std::string& op)> families_for;
  // Asks the kernel whether it accepts the node. Returns "" for yes, else the reason.
  std::function<std::string(const Candidate&, const ir::Node&, const std::vector<const DLTensor*>& inputs)> ask;
};

// The index of the first rule matching the node, or -1.
int match_rule(const config::Config& cfg, const ir::Node& node, const std::vector<std::string>& families);

// The rule routing each graph node (-1: the default list), matched once per model: rules
// look at a node's op, name, module and family, none of which depends on shapes.
std::vector<int32_t> match_rules(const config::Config& cfg, const Catalog& catalog, const ir::Graph& graph);

// Whether the node's routing (its first matching rule, else the default list) names a
// backend with a kernel for its op: a rewrite to a new op checks this before it commits.
bool routing_offers(const config::Config& cfg, const Catalog& catalog, const ir::Node& node);

// What [precision] asks of each graph node: its first matching [[precision.rules]] entry's
// compute, else [precision] compute (AsIs where unset).
std::vector<config::Compute> match_compute(const config::Config& cfg, const Catalog& catalog, const ir::Graph& graph);

// "" when every present input's dtype is in the kernel's list, else the rejection reason.
std::string dtype_mismatch(const SY_KernelDef& def, const std::vector<const DLTensor*>& inputs);

// Chooses a kernel for `node`. `inputs` hold metadata (data may be NULL). A kernel whose
// dtype list lacks an input's dtype is rejected without asking it. In strict mode the
// first rejection ends the search with no winner.
Selection select_kernel(const config::Config& cfg, const Catalog& catalog, const ir::Node& node,
                        const std::vector<const DLTensor*>& inputs);
// The same for a node whose rule is already known (match_rules; -1: the default list).
Selection select_kernel(const config::Config& cfg, const Catalog& catalog, const ir::Node& node,
                        const std::vector<const DLTensor*>& inputs, int rule_index);

}  // namespace switchyard::select
