// The host side of the SDK: the SY_HostApi table each plugin receives, the per-call
// error slot, and the view of node attributes behind the opaque SY_Attributes.
#pragma once

#include "ir/graph.hpp"

#include <switchyard/sdk.h>

#include <memory>
#include <string>

// Completes the SDK's opaque call type: the status and message a plugin reports.
struct SY_CallContext {
  SY_Status status = SY_OK;
  std::string message;
};

namespace switchyard::loader {

// A host API table whose log lines are tagged with `plugin_label`.
std::shared_ptr<SY_HostApi> make_host_api(const std::string& plugin_label,
                                          uint32_t version_major = SY_SDK_VERSION_MAJOR,
                                          uint32_t version_minor = SY_SDK_VERSION_MINOR);
// Changes the tag of an API made by make_host_api (before any concurrent use).
void relabel_host_api(const SY_HostApi& api, const std::string& plugin_label);

// Node attributes as the SDK's opaque handle (valid while `attrs` lives).
inline const SY_Attributes* as_sdk(const ir::Attributes& attrs) {
  return reinterpret_cast<const SY_Attributes*>(&attrs);
}

// "status 2 (unsupported): message", or a note that the plugin gave no message.
std::string describe_failure(SY_Status returned, const SY_CallContext& call);
const char* status_name(SY_Status status);

}  // namespace switchyard::loader
