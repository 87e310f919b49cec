// sym:: ops: the host's own scalar arithmetic on tensor shapes. A traced model computes
// sizes at run time (x.size(0) * 12 -> view(x, [B, -1, 64])); importers keep that
// arithmetic as sym:: nodes, whose scalar outputs feed other sym:: nodes and the bound
// attributes of ordinary nodes (ir::Attribute::ref). The executor evaluates them itself,
// without a plugin call, once per input-shape signature (docs/shapes.md).
//
// Scalars are ir::Attributes of kind Int, Float, Ints or Floats (booleans are Int 0/1),
// with Python's semantics: floordiv and mod round toward negative infinity, div is true
// division, pow gives a float, mixing ints and floats gives a float.
//
//   op            inputs                      attrs            result
//   sym::const    -                           value            the attribute's value
//   sym::size     tensor [, int dim]          dim (optional)   Int (one dim) or Ints
//   sym::dim      tensor                      -                Int (the rank)
//   sym::numel    tensor                      -                Int
//   sym::item     tensor (0-D or 1 element)   -                Int or Float (by dtype)
//   sym::tensor   scalar                      dtype (optional) a 0-D tensor, or 1-D for a list
//   sym::add sub mul div floordiv mod pow min max             (a, b) -> number
//   sym::eq ne lt le gt ge and or                             (a, b) -> Int 0/1
//   sym::neg abs floor ceil round sqrt int float not bool     (a) -> number
//   sym::list     numbers...                  -                Ints (all Int) or Floats
//   sym::get      list [, int index]          index (optional) the element (negative wraps)
//   sym::len      list                        -                Int
//   sym::slice    list                        start, end, step the sub-list (Python slicing)
//   sym::cat      list, list                  -                the two lists joined
//
// sym::item reads tensor data, so validate() allows it only on a tensor computed from
// constants and sizes alone: its value is then fixed by the input shapes too.
#pragma once

#include "ir/graph.hpp"

#include <string>
#include <vector>

namespace switchyard::ir {

bool is_sym_op(const std::string& op);
// Every sym:: op this host evaluates, for docs and tests.
std::vector<std::string> sym_op_names();

// The kind of a sym node's result from its inputs' kinds (AttrKind::Tensor for a tensor
// input) and attributes. Throws Error (Graph) naming the node when the inputs do not fit.
AttrKind sym_result_kind(const Node& node, const std::vector<AttrKind>& input_kinds);

// One input of a sym node at run time: a scalar, or a tensor (shape; data for sym::item).
struct SymArg {
  const Attribute* scalar = nullptr;
  const Tensor* tensor = nullptr;
};

// Evaluates a sym node other than sym::tensor. Throws Error (Input) naming the node for
// what the actual shapes make impossible (a dim out of range, a division by zero).
Attribute eval_sym(const Node& node, const std::vector<SymArg>& args);
// Evaluates sym::tensor.
Tensor eval_sym_tensor(const Node& node, const Attribute& value);

// A scalar given to an attribute bound to `expected` (an Int where a Float is expected
// becomes a Float; a number where a list is expected becomes a one-element list).
// Throws Error (Graph) naming the node and attribute when it cannot.
Attribute bind_scalar(const Attribute& value, AttrKind expected, const Node& node, const std::string& attr);

// A scalar in messages: "12", "0.5", "[2, -1, 64]".
std::string scalar_string(const Attribute& value);

}  // namespace switchyard::ir
