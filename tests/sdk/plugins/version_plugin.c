/* A test plugin in plain C (C11): it reports the SDK version given at compile time,
 *   -DTEST_PLUGIN_NAME="..." -DTEST_SDK_MAJOR=<n> -DTEST_SDK_MINOR=<n>
 * and offers one kernel, test::copy (fp32, host-allocated output), so that the
 * kernel half of sdk.h is compiled as C too. */
#include <switchyard/sdk.h>

#include <string.h>

typedef struct Copy {
  int unused;
} Copy;

static Copy the_instance;

static SY_Status copy_create(void* context, SY_KernelCreateArgs* args) {
  (void)context;
  args->instance = (SY_KernelInstance*)&the_instance;
  return SY_OK;
}

static SY_Status copy_infer(void* context, SY_KernelInferArgs* args) {
  const DLTensor* in = args->inputs[0];
  int32_t d;
  (void)context;
  args->outputs[0].dtype = in->dtype;
  args->outputs[0].ndim = in->ndim;
  for (d = 0; d < in->ndim; ++d) args->outputs[0].shape[d] = in->shape[d];
  return SY_OK;
}

static SY_Status copy_run(void* context, SY_KernelRunArgs* args) {
  const DLTensor* in = args->inputs[0];
  DLTensor* out = args->outputs[0];
  size_t n = 1;
  int32_t d;
  (void)context;
  for (d = 0; d < in->ndim; ++d) n *= (size_t)in->shape[d];
  memcpy((char*)out->data + out->byte_offset, (const char*)in->data + in->byte_offset,
         n * sizeof(float));
  return SY_OK;
}

static void copy_destroy(void* context, SY_KernelInstance* instance) {
  (void)context;
  (void)instance;
}

static const DLDataType float32 = {kDLFloat, 32, 1};

/* Designated initializers: the same source builds against the 1.0 header kept in
 * tests/sdk/fixtures/sdk_1_0 (the "older_minor" plugin) and against the current one. */
static const SY_KernelDef copy_kernel = {.struct_size = sizeof(SY_KernelDef),
                                         .op = "test::copy",
                                         .family = "elementwise",
                                         .device_type = kDLCPU,
                                         .dtypes = &float32,
                                         .num_dtypes = 1,
                                         .output_mode = SY_OUTPUT_HOST_ALLOCATED,
                                         .create = copy_create,
                                         .infer = copy_infer,
                                         .run = copy_run,
                                         .destroy = copy_destroy};

static const SY_KernelDef* const kernels[] = {&copy_kernel};

static const SY_Plugin plugin = {.struct_size = sizeof(SY_Plugin),
                                 .sdk_version_major = TEST_SDK_MAJOR,
                                 .sdk_version_minor = TEST_SDK_MINOR,
                                 .name = TEST_PLUGIN_NAME,
                                 .version = "0.0.1",
                                 .vendor = "switchyard tests",
                                 .kernels = kernels,
                                 .num_kernels = 1};

SY_EXPORT SY_Status switchyard_plugin_init(SY_PluginInitArgs* args) {
  args->plugin = &plugin;
  return SY_OK;
}
