// Test harness for the aten plugin: plays the host without linking the host core.
//
//  - dlopens libswitchyard-aten.so ($SWITCHYARD_PLUGIN_PATH, else the build tree) and calls
//    switchyard_plugin_init with a small test-local SY_HostApi;
//  - sy_test::Attrs is the test's SY_Attributes (a name -> value list);
//  - sy_test::run(op, inputs, attrs, num_outputs) does supports -> create -> run -> destroy
//    and returns the produced tensors as at::Tensor views of the plugin's DLManagedTensors
//    (their deleters run when the views go away; deleter_calls() counts them);
//  - OP_CASE registers one conformance case, run once per dtype the kernel claims, which
//    compares the plugin's result with the same op called directly in LibTorch.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <switchyard/sdk.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

// The opaque host types of sdk.h, as this test host defines them.
struct SY_CallContext {
  SY_Status status = SY_OK;
  std::string message;
  int reports = 0;
};

struct SY_Attributes;

namespace sy_test {

// ---- attributes ------------------------------------------------------------------------
struct AttrValue {
  SY_AttrKind kind = SY_ATTR_NONE;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  at::Tensor tensor;  // SY_ATTR_TENSOR: keeps the memory alive
  DLTensor dl{};
  std::vector<int64_t> dl_shape, dl_strides;
};

class Attrs {
 public:
  Attrs();
  Attrs(const Attrs& other);
  Attrs& operator=(const Attrs& other);
  ~Attrs();

  Attrs& i(const std::string& name, int64_t v);
  Attrs& b(const std::string& name, bool v) { return i(name, v ? 1 : 0); }
  Attrs& f(const std::string& name, double v);
  Attrs& s(const std::string& name, const std::string& v);
  Attrs& ints(const std::string& name, std::vector<int64_t> v);
  Attrs& floats(const std::string& name, std::vector<double> v);
  Attrs& none(const std::string& name);
  Attrs& tensor(const std::string& name, const at::Tensor& t);
  Attrs& dtype(const std::string& name, at::ScalarType t) { return i(name, static_cast<int64_t>(t)); }

  const SY_Attributes* raw() const;

 private:
  SY_Attributes* impl_;
};

// ---- the plugin --------------------------------------------------------------------------
const SY_HostApi& host_api();                       // the test host's API table
std::vector<std::string> host_log();                // messages the plugin logged
std::string plugin_file();                          // path of libswitchyard-aten.so
SY_PluginInitFn plugin_init_fn();                   // dlopened once
const SY_Plugin& plugin();                          // initialised once with host_api()
const SY_KernelDef* kernel(const std::string& op);  // nullptr if the plugin has none
int64_t deleter_calls();                            // DLManagedTensor deleters run so far

// ---- tensors -----------------------------------------------------------------------------
// An at::Tensor seen as a DLTensor (NULL strides if contiguous, byte_offset from the
// storage offset, bool as SY_DL_BOOL). The at::Tensor keeps the memory alive.
struct DLInput {
  at::Tensor keep;
  DLTensor dl{};
  std::vector<int64_t> shape, strides;
};
void to_dl(const at::Tensor& t, DLInput* out);
DLDataType dl_dtype(at::ScalarType t);
bool from_dl_dtype(DLDataType d, at::ScalarType* out);
std::string dtype_name(at::ScalarType t);

// ---- running one node ----------------------------------------------------------------------
struct Result {
  SY_Status status = SY_OK;
  std::string stage;  // "supports", "create" or "run" when status != OK
  std::string message;
  std::vector<at::Tensor> outputs;  // views of the produced DLManagedTensors
  std::vector<DLDataType> dtypes;   // produced DLTensor dtypes, as the plugin wrote them
  bool ok() const { return status == SY_OK; }
};

// Undefined tensors in `inputs` become NULL entries. `device` overrides the DLDevice of
// every input (to test rejection of non-CPU tensors).
Result run(const std::string& op, const std::vector<at::Tensor>& inputs, const Attrs& attrs = {},
           size_t num_outputs = 1, DLDevice device = DLDevice{kDLCPU, 0});
// Only the capability query.
Result supports(const std::string& op, const std::vector<at::Tensor>& inputs, const Attrs& attrs = {},
                size_t num_outputs = 1, DLDevice device = DLDevice{kDLCPU, 0});

// ---- comparing ---------------------------------------------------------------------------
::testing::AssertionResult same(const at::Tensor& got, const at::Tensor& want);

// Runs `op` in the plugin and expects success with outputs equal to `want`.
void check(const std::string& op, const std::vector<at::Tensor>& inputs, const Attrs& attrs,
           const std::vector<at::Tensor>& want);
inline void check(const std::string& op, const std::vector<at::Tensor>& inputs, const Attrs& attrs,
                  const at::Tensor& want) {
  check(op, inputs, attrs, std::vector<at::Tensor>{want});
}

// Dtypes check() has seen succeed per op: on inputs, or on outputs for ops without inputs.
std::map<std::string, std::set<at::ScalarType>> seen_dtypes();

// Random test data of a dtype: normal floats, small integers (non-negative for uint8),
// random bools.
at::Tensor rnd(at::ScalarType dt, at::IntArrayRef shape);
// Non-negative values (for log, sqrt, ...): |rnd|.
at::Tensor rnd_pos(at::ScalarType dt, at::IntArrayRef shape);

// ---- conformance cases -----------------------------------------------------------------
struct OpCase {
  std::string op;                      // "aten::add"
  std::string label;                   // what the case exercises
  std::vector<at::ScalarType> dtypes;  // empty: every dtype the kernel claims
  void (*body)(at::ScalarType dt);
};
std::vector<OpCase>& op_cases();
bool register_case(const char* op, const char* label, std::vector<at::ScalarType> dtypes, void (*body)(at::ScalarType));

}  // namespace sy_test

#define SY_CASE_CAT2(a, b) a##b
#define SY_CASE_CAT(a, b) SY_CASE_CAT2(a, b)
// OP_CASE("aten::relu", "label") { ... uses `dt` ... }            -> every claimed dtype
// OP_CASE("aten::mm", "label", at::kFloat) { ... }                -> only those dtypes
#define OP_CASE(OP, LABEL, ...)                                                                                        \
  static void SY_CASE_CAT(sy_case_, __LINE__)(at::ScalarType dt);                                                      \
  static const bool SY_CASE_CAT(sy_case_reg_, __LINE__) =                                                              \
      ::sy_test::register_case(OP, LABEL, std::vector<at::ScalarType>{__VA_ARGS__}, &SY_CASE_CAT(sy_case_, __LINE__)); \
  static void SY_CASE_CAT(sy_case_, __LINE__)([[maybe_unused]] at::ScalarType dt)
