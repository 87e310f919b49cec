// Lowering a torch.export ExportedProgram (the JSON of torch/_export/serde/schema.py)
// onto switchyard's IR.
//
//   * The graph signature: parameters, buffers and lifted constants become graph constants
//     named by their FQN ("layer1.0.conv1.weight") and sharing the archive's memory; user
//     inputs become graph inputs with the dtype and shape the program declares. A symbolic
//     dimension keeps its symbol as the dim name ("s0") and its range constraint (the Dim's
//     min and max) as the dim's range; a run outside it is refused. Programs that mutate a
//     buffer or an input, or take tokens or script objects, are refused naming them.
//   * Nodes keep their FX names (`conv2d`, `relu_1`), which become node names, node_io keys
//     and value names; module paths come from each node's nn_module_stack.
//   * An ATen op (target "torch.ops.aten.<op>.<overload>") becomes one IR node "aten::<op>"
//     in the aten plugin's argument convention (plugins/aten/aten_ops.hpp): tensor arguments
//     are inputs in schema order, the rest attributes named as in the schema. Overloads are
//     told apart by the arguments, as for TorchScript. Ops Debian's LibTorch 1.13 or the
//     family plugins name differently are rewritten here (lower_ops.cpp).
//   * Size arithmetic (aten.sym_size, _operator.mul on SymInts, ...) becomes sym:: nodes,
//     and an argument computed by it an attribute bound to the sym value (docs/shapes.md).
//   * In-place ops (relu_, masked_fill_) run out of place; later readers of the written
//     tensor read the result. A write into a view, or into a tensor with views, is refused.
#pragma once

#include "ir/graph.hpp"
#include "pt2/archive.hpp"

namespace switchyard::pt2 {

// The ExportedProgram schema versions this reader knows: major 8, minors 2 (torch 2.6)
// through 20 (torch 2.15). Others are refused naming the version found.
inline constexpr int kSchemaMajor = 8;
inline constexpr int kSchemaMinorMin = 2;
inline constexpr int kSchemaMinorMax = 20;

// Lowers the archive's program into `out` (not validated). Throws Error naming the file
// and entry, and for a node its FX name and target.
void lower_program(const Archive& archive, ir::Graph& out);

}  // namespace switchyard::pt2
