#include "loader/host_api.hpp"

#include "util/host_alloc.hpp"
#include "util/intra_op_pool.hpp"
#include "util/log.hpp"

#include <cstdlib>

namespace switchyard::loader {
namespace {

const ir::Attributes& attrs_of(const SY_Attributes* a) { return *reinterpret_cast<const ir::Attributes*>(a); }

const ir::Attribute* lookup(const SY_Attributes* a, const char* name, ir::AttrKind kind) {
  if (a == nullptr || name == nullptr) return nullptr;
  const ir::Attribute* attr = ir::find_attr(attrs_of(a), name);
  return (attr != nullptr && attr->kind == kind) ? attr : nullptr;
}

void report(SY_CallContext* call, SY_Status status, const char* message) {
  if (call == nullptr) return;
  call->status = status;
  call->message = message != nullptr ? message : "";
}

void log_message(void* host_context, SY_LogLevel level, const char* message) {
  const auto* label = static_cast<const std::string*>(host_context);
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::trace, spdlog::level::debug,
                                                          spdlog::level::info, spdlog::level::warn, spdlog::level::err};
  auto lvl = (level >= SY_LOG_TRACE && level <= SY_LOG_ERROR) ? kLevels[level] : spdlog::level::info;
  log::get().log(lvl, "[{}] {}", *label, message != nullptr ? message : "");
}

void* alloc(void*, size_t size, size_t alignment) {
  if (alignment < 64) alignment = 64;
  return host_aligned_alloc(alignment, size);
}

void release(void*, void* ptr) { std::free(ptr); }

size_t attr_count(const SY_Attributes* a) { return a == nullptr ? 0 : attrs_of(a).size(); }

const char* attr_name(const SY_Attributes* a, size_t index) {
  if (a == nullptr || index >= attrs_of(a).size()) return nullptr;
  return attrs_of(a)[index].first.c_str();
}

SY_AttrKind attr_kind(const SY_Attributes* a, const char* name) {
  if (a == nullptr || name == nullptr) return SY_ATTR_MISSING;
  const ir::Attribute* attr = ir::find_attr(attrs_of(a), name);
  if (attr == nullptr) return SY_ATTR_MISSING;
  switch (attr->kind) {
    case ir::AttrKind::None: return SY_ATTR_NONE;
    case ir::AttrKind::Int: return SY_ATTR_INT;
    case ir::AttrKind::Float: return SY_ATTR_FLOAT;
    case ir::AttrKind::String: return SY_ATTR_STRING;
    case ir::AttrKind::Ints: return SY_ATTR_INTS;
    case ir::AttrKind::Floats: return SY_ATTR_FLOATS;
    case ir::AttrKind::Tensor: return SY_ATTR_TENSOR;
  }
  return SY_ATTR_MISSING;
}

SY_Status attr_int(const SY_Attributes* a, const char* name, int64_t* value) {
  const ir::Attribute* attr = lookup(a, name, ir::AttrKind::Int);
  if (attr == nullptr || value == nullptr) return SY_ERROR_INVALID_ARGUMENT;
  *value = attr->i;
  return SY_OK;
}

SY_Status attr_float(const SY_Attributes* a, const char* name, double* value) {
  const ir::Attribute* attr = lookup(a, name, ir::AttrKind::Float);
  if (attr == nullptr || value == nullptr) return SY_ERROR_INVALID_ARGUMENT;
  *value = attr->f;
  return SY_OK;
}

SY_Status attr_string(const SY_Attributes* a, const char* name, const char** value) {
  const ir::Attribute* attr = lookup(a, name, ir::AttrKind::String);
  if (attr == nullptr || value == nullptr) return SY_ERROR_INVALID_ARGUMENT;
  *value = attr->s.c_str();
  return SY_OK;
}

SY_Status attr_ints(const SY_Attributes* a, const char* name, const int64_t** values, size_t* count) {
  const ir::Attribute* attr = lookup(a, name, ir::AttrKind::Ints);
  if (attr == nullptr || values == nullptr || count == nullptr) return SY_ERROR_INVALID_ARGUMENT;
  *values = attr->ints.data();
  *count = attr->ints.size();
  return SY_OK;
}

SY_Status attr_floats(const SY_Attributes* a, const char* name, const double** values, size_t* count) {
  const ir::Attribute* attr = lookup(a, name, ir::AttrKind::Floats);
  if (attr == nullptr || values == nullptr || count == nullptr) return SY_ERROR_INVALID_ARGUMENT;
  *values = attr->floats.data();
  *count = attr->floats.size();
  return SY_OK;
}

SY_Status attr_tensor(const SY_Attributes* a, const char* name, const DLTensor** value) {
  const ir::Attribute* attr = lookup(a, name, ir::AttrKind::Tensor);
  if (attr == nullptr || value == nullptr || !attr->tensor.defined()) return SY_ERROR_INVALID_ARGUMENT;
  *value = &attr->tensor.dl();
  return SY_OK;
}

int32_t num_threads(void*) { return threads::kernel_threads(); }

void parallel_for(void*, int64_t begin, int64_t end, int64_t grain, SY_ParallelBody body, void* body_context) {
  threads::intra_op_parallel_for(begin, end, grain, body, body_context);
}

// The table and the label its host_context points at, freed together.
struct HostApiWithLabel {
  SY_HostApi api{};
  std::string label;
};

}  // namespace

std::shared_ptr<SY_HostApi> make_host_api(const std::string& plugin_label, uint32_t version_major,
                                          uint32_t version_minor) {
  auto holder = std::make_shared<HostApiWithLabel>();
  holder->label = plugin_label;
  SY_HostApi& api = holder->api;
  api.struct_size = SY_HostApi_STRUCT_SIZE;
  api.version_major = version_major;
  api.version_minor = version_minor;
  api.host_context = &holder->label;
  api.report = &report;
  api.log = &log_message;
  api.alloc = &alloc;
  api.free = &release;
  api.attr_count = &attr_count;
  api.attr_name = &attr_name;
  api.attr_kind = &attr_kind;
  api.attr_int = &attr_int;
  api.attr_float = &attr_float;
  api.attr_string = &attr_string;
  api.attr_ints = &attr_ints;
  api.attr_floats = &attr_floats;
  api.attr_tensor = &attr_tensor;
  api.num_threads = &num_threads;
  api.parallel_for = &parallel_for;
  return std::shared_ptr<SY_HostApi>(holder, &holder->api);
}

void relabel_host_api(const SY_HostApi& api, const std::string& plugin_label) {
  *static_cast<std::string*>(api.host_context) = plugin_label;
}

const char* status_name(SY_Status status) {
  switch (status) {
    case SY_OK: return "ok";
    case SY_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case SY_ERROR_UNSUPPORTED: return "unsupported";
    case SY_ERROR_OUT_OF_MEMORY: return "out of memory";
    case SY_ERROR_VERSION_MISMATCH: return "version mismatch";
    case SY_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

std::string describe_failure(SY_Status returned, const SY_CallContext& call) {
  std::string text =
      std::string(status_name(returned)) + " (status " + std::to_string(static_cast<int>(returned)) + ")";
  if (call.message.empty()) return text + ", and the plugin reported no message";
  return text + ": " + call.message;
}

}  // namespace switchyard::loader
