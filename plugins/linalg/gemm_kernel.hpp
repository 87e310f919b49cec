// linalg plugin, internal: the kernel class shared by every op that lowers to one
// MatmulPlan (linear, addmm, mm, bmm, matmul, baddbmm and the fused linear kernels).
//
// An op is a small struct:
//   static const std::vector<std::string> kNames;   // schema tensor arguments, in order
//   static const std::vector<bool> kOptional;       // which of them may be absent
//   static const std::vector<size_t> kOperands;     // matrix operands worth preparing
//   static std::vector<std::string> attributes(const sy::Node&);  // accepted attributes
//   explicit Op(const sy::Node&);                   // reads attributes
//   MatmulPlan plan(const Args& args) const;        // throws sy::Error on bad shapes
// supports(), infer() and run() all go through plan(), so a shape that run() would refuse
// is declined up front with the same message.
#pragma once

#include "linalg.hpp"

#include "common/compute_option.hpp"

#include <optional>

namespace sy_linalg {

using Args = std::vector<std::optional<View>>;

// Argument i, which the schema requires.
inline const View& need(const Args& args, size_t i, const std::vector<std::string>& names) {
  if (i >= args.size() || !args[i]) throw sy::Error("tensor argument '" + names[i] + "' is missing");
  return *args[i];
}

// A node bound to op `Op`: where its tensors come from, their dtype, the op's attributes.
template <typename Op>
struct Bound {
  explicit Bound(const sy::Node& node) : args(node, Op::kNames, Op::kOptional), op(node) {
    std::vector<std::string> known = Op::attributes(node);
    known.insert(known.end(), Op::kNames.begin(), Op::kNames.end());
    check_attributes(node, known);
    dtype = check_tensors(tensors(node.inputs, node.num_inputs), Op::kNames);
  }
  std::vector<const DLTensor*> tensors(const DLTensor* const* inputs, size_t n) const {
    std::vector<const DLTensor*> t(args.count());
    for (size_t i = 0; i < t.size(); ++i) t[i] = args.get(i, inputs, n);
    return t;
  }
  TensorArgs args;
  Op op;
  Dtype dtype = Dtype::F32;
};

template <typename Op>
class GemmKernel {
 public:
  static void supports(const sy::Node& node) {
    Bound<Op> b(node);
    sy::declining([&] { b.op.plan(views(b, node.inputs, node.num_inputs, nullptr)); });
  }

  explicit GemmKernel(const sy::Node& node) : b_(node) {
    // Constant operands (data already there at create) get BLAS's layout once, here.
    prepared_.resize(b_.args.count());
    for (size_t i : Op::kOperands)
      if (i < prepared_.size()) prepared_[i].prepare(b_.args.get(i, node.inputs, node.num_inputs), b_.dtype);
    // A constant float32 B (a linear's weight) is packed once for oneDNN's matmul, in
    // bfloat16 where the config's "@compute" asks and the CPU can.
    compute_ = sy_compute::choose(node.attrs);
    if (b_.dtype == Dtype::F32 && Op::kOperands.size() > 1) {
      const DLTensor* t = b_.args.get(Op::kOperands[1], node.inputs, node.num_inputs);
      if (t != nullptr && t->data != nullptr && t->ndim == 2)
        packed_ = std::make_shared<PackedB>(
            reinterpret_cast<const float*>(static_cast<const char*>(t->data) + t->byte_offset), compute_.bf16),
        packed_elements_ = sy::numel(*t);
    }
    if (compute_.bf16 && !packed_)
      compute_ = {true, false, "no constant float32 weight to pack in bfloat16 (a product of two run-time values)"};
  }

  // Answers "@compute": bfloat16 for a product against the packed weight. A call whose
  // shapes the packed path cannot take (a batch of products) runs float32.
  void storage(sy::StorageQuery& q) { report_compute(q); }
  void report_compute(sy::StorageQuery& q) {
    if (!compute_.asked) return;
    if (compute_.bf16) {
      MatmulPlan p = b_.op.plan(views(b_, q.args->inputs, q.num_inputs(), &prepared_));
      p.gemm.packed = packed_.get();
      if (!takes_packed_path(p.gemm)) {
        q.computes_in(sy::kFloat32, 0, 0, "these shapes do not take the packed weight's path");
        return;
      }
    }
    const DLTensor* a = Op::kOperands.empty() ? nullptr : b_.args.get(Op::kOperands[0], q.args->inputs, q.num_inputs());
    const uint64_t converted = a != nullptr ? static_cast<uint64_t>(sy::numel(*a)) : 0;
    sy_compute::report(q, compute_, converted, packed_ ? static_cast<uint64_t>(packed_elements_) : 0);
  }

  void infer(sy::Infer& in) {
    MatmulPlan p = b_.op.plan(views(b_, in.args->inputs, in.args->num_inputs, &prepared_));
    in.set_output(0, dtypes()[b_.dtype == Dtype::F32 ? 0 : 1], p.out);
  }

  void run(sy::Run& r) {
    MatmulPlan p = plan_run(r);
    DLTensor& out = r.output(0);
    if (sy::numel(out) == 0) return;
    run_gemm(b_.dtype, p.gemm, static_cast<char*>(out.data) + out.byte_offset);
  }

 protected:
  // The plan of one run, its output checked (contiguous, of the planned shape).
  MatmulPlan plan_run(sy::Run& r) const {
    MatmulPlan p = b_.op.plan(views(b_, r.args->inputs, r.args->num_inputs, &prepared_));
    DLTensor& out = r.output(0);
    if (sy::shape_of(out) != p.out || !sy::is_contiguous(out))
      throw sy::Error("output is " + str(sy::shape_of(out)) + (sy::is_contiguous(out) ? "" : " strided") +
                          ", expected contiguous " + str(p.out),
                      SY_ERROR_INTERNAL);
    p.gemm.packed = packed_.get();
    return p;
  }

  static Args views(const Bound<Op>& b, const DLTensor* const* inputs, size_t n,
                    const std::vector<Prepared>* prepared) {
    std::vector<const DLTensor*> t = b.tensors(inputs, n);
    Args a(t.size());
    const DLDataType want = dtypes()[b.dtype == Dtype::F32 ? 0 : 1];
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == nullptr) continue;
      if (!sy::same_dtype(t[i]->dtype, want))
        throw sy::Error("'" + Op::kNames[i] + "' is " + dtype_name(t[i]->dtype) + ", the node was bound as " +
                        dtype_name(want));
      a[i] = view_of(*t[i]);
      if (prepared) (*prepared)[i].use(*a[i]);
    }
    return a;
  }

  Bound<Op> b_;
  std::vector<Prepared> prepared_;   // read-only after create: runs may be concurrent
  std::shared_ptr<PackedB> packed_;  // (optional) thread-safe
  int64_t packed_elements_ = 0;      // B's elements, with packed_
  sy_compute::Choice compute_;       // the "@compute" option's answer
};

}  // namespace sy_linalg
