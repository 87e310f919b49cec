// libFuzzer target: the shape evaluator (ir/sym.cpp). The input bytes pick one or two
// input tensors (rank 0-4, sizes from 0 to 2^62), then up to 32 sym:: nodes: op, inputs
// among the values so far, attributes of any kind. Each node goes through
// sym_result_kind (the check validate() makes) and then eval_sym, as the executor runs
// them per signature. Every node must give a value or a switchyard::Error; anything else
// (a crash, UBSan's overflow or division reports, ASan) is a finding.
#include "fuzz_bytes.hpp"

#include "ir/graph.hpp"
#include "ir/sym.hpp"

#include <switchyard/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace switchyard;
using namespace switchyard::ir;

namespace {

struct Bytes : syfuzz::Bytes {
  Attribute attribute() {
    switch (byte() % 6) {
      case 0: return Attribute::of_int(number());
      case 1: return Attribute::of_float(static_cast<double>(number()) / (1 + byte() % 4));
      case 2: {
        std::vector<int64_t> v(byte() % 5);
        for (auto& x : v) x = number();
        return Attribute::of_ints(v);
      }
      case 3: {
        std::vector<double> v(byte() % 4);
        for (auto& x : v) x = static_cast<double>(number()) * 0.5;
        return Attribute::of_floats(v);
      }
      case 4: return Attribute::of_string(byte() % 2 ? "float32" : "int64");
      default: return Attribute::none();
    }
  }
};

struct Slot {
  bool is_tensor = false;
  Tensor tensor;
  Attribute scalar;
};

const std::vector<std::string>& ops() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const std::string& op : sym_op_names())
      if (op != "sym::tensor") out.push_back(op);
    return out;
  }();
  return names;
}

const char* const kAttrNames[] = {"dim", "value", "index", "start", "end", "step", "dtype"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{{data, size, -4, 20}};
  std::vector<Slot> slots;
  std::vector<float> storage(16, 1.5f);  // data for small tensors (sym::item reads it)
  const int num_inputs = 1 + in.byte() % 2;
  for (int i = 0; i < num_inputs; ++i) {
    std::vector<int64_t> shape(in.byte() % 5);
    bool small = true;
    uint64_t numel = 1;
    for (auto& d : shape) {
      d = in.number();
      if (d == INT64_MIN) d = 0;
      if (d < 0) d = -d;
      if (__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel)) small = false;
    }
    small = small && numel <= storage.size();
    const DLDataType dtype = in.byte() % 2 ? DLDataType{kDLFloat, 32, 1} : DLDataType{kDLInt, 64, 1};
    Slot s;
    s.is_tensor = true;
    // Only shapes matter to sym:: ops but sym::item; big tensors get no data (never read).
    s.tensor = Tensor::from_blob(small ? storage.data() : nullptr, dtype, shape, {}, [] {});
    if (dtype.code == kDLInt && small) s.tensor = Tensor::empty(dtype, shape) /* zeroed */;
    slots.push_back(std::move(s));
  }
  const int num_nodes = in.byte() % 33;
  for (int k = 0; k < num_nodes && in.n > 0; ++k) {
    Node node;
    node.name = "s" + std::to_string(k);
    node.op = ops()[in.byte() % ops().size()];
    std::vector<AttrKind> kinds;
    std::vector<SymArg> args;
    const int arity = in.byte() % 4;
    for (int a = 0; a < arity; ++a) {
      const Slot& s = slots[in.byte() % slots.size()];
      if (node.op == "sym::item" && s.is_tensor && s.tensor.raw_data() == nullptr) continue;
      kinds.push_back(s.is_tensor ? AttrKind::Tensor : s.scalar.kind);
      args.push_back(s.is_tensor ? SymArg{nullptr, &s.tensor} : SymArg{&s.scalar, nullptr});
      node.inputs.push_back(static_cast<ValueId>(a));
    }
    const int num_attrs = in.byte() % 3;
    for (int a = 0; a < num_attrs; ++a)
      node.attrs.emplace_back(kAttrNames[in.byte() % (sizeof kAttrNames / sizeof kAttrNames[0])], in.attribute());
    node.outputs.push_back(0);
    try {
      (void)sym_result_kind(node, kinds);
      Attribute value = eval_sym(node, args);
      (void)scalar_string(value);  // (sym::const passes any attribute through, strings and none too)
      Slot s;
      s.scalar = std::move(value);
      slots.push_back(std::move(s));
    } catch (const Error&) {
      // a clean refusal: what validate() or a run reports
    }
  }
  return 0;
}
