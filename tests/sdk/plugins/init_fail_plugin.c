/* A test plugin whose init refuses to start, with a message the host must pass on. */
#include <switchyard/sdk.h>

SY_EXPORT SY_Status switchyard_plugin_init(SY_PluginInitArgs* args) {
  args->host->report(args->call, SY_ERROR_INTERNAL, "init_fail: no device found");
  return SY_ERROR_INTERNAL;
}
