// What a plan keeps besides its steps: constants converted once for the storages their
// readers take them in.
#include "exec/plan.hpp"

namespace switchyard::exec {

const Tensor* Plan::constant_in(int32_t to, ir::ValueId v, const Tensor& host, const ir::Graph& graph,
                                const StorageTable& storages) {
  if (to == kHost) return &host;
  const Tensor*& copy = constant_copies[{v, to}];
  if (copy == nullptr) {
    constants.push_back(storages.from_host(to, host, "constant '" + graph.values[static_cast<size_t>(v)].name + "'"));
    copy = &constants.back();
  }
  return copy;
}

}  // namespace switchyard::exec
