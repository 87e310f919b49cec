/* A test plugin in plain C (C11): it reports the SDK version given at compile time,
 *   -DTEST_PLUGIN_NAME="..." -DTEST_SDK_MAJOR=<n> -DTEST_SDK_MINOR=<n>
 * and offers one kernel, test::copy (fp32, host-allocated output), so that the
 * kernel half of sdk.h is compiled as C too. It uses what the sdk.h it is compiled
 * against offers (each minor's header is kept in tests/sdk/fixtures/sdk_1_<minor>):
 * from 1.1 a cost and an in-place output, from 1.2 it answers output_inplace_tail, from
 * 1.3 attributes and an extension chain of a type no host knows. */
#include <switchyard/sdk.h>

#include <string.h>

/* struct_size: SY_<Struct>_STRUCT_SIZE since 1.3, sizeof() in the headers before it. */
#ifdef SY_KernelDef_STRUCT_SIZE
#define KERNEL_DEF_SIZE SY_KernelDef_STRUCT_SIZE
#define PLUGIN_SIZE SY_Plugin_STRUCT_SIZE
#else
#define KERNEL_DEF_SIZE sizeof(SY_KernelDef)
#define PLUGIN_SIZE sizeof(SY_Plugin)
#endif

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
  memmove((char*)out->data + out->byte_offset, (const char*)in->data + in->byte_offset, n * sizeof(float));
  return SY_OK;
}

#if SY_SDK_VERSION_MINOR >= 1
static SY_Status copy_cost(void* context, SY_KernelCostArgs* args) {
  const DLTensor* in = args->inputs[0];
  double n = 1;
  int32_t d;
  (void)context;
  for (d = 0; d < in->ndim; ++d) n *= (double)in->shape[d];
  args->bytes = 2 * n * sizeof(float);
  return SY_OK;
}

/* The output may take the input's buffer (copy_run then copies onto itself). */
static SY_Status copy_storage(void* context, SY_KernelStorageArgs* args) {
  (void)context;
  args->output_inplace[0] = 0;
#if SY_SDK_VERSION_MINOR >= 2
  if (SY_STRUCT_HAS(args, SY_KernelStorageArgs, output_inplace_tail) && args->output_inplace_tail != NULL)
    args->output_inplace_tail[0] = -1;
#endif
  return SY_OK;
}
#endif

static void copy_destroy(void* context, SY_KernelInstance* instance) {
  (void)context;
  (void)instance;
}

static const DLDataType float32 = {kDLFloat, 32, 1};

/* Designated initializers: the same source builds against the 1.0 header kept in
 * tests/sdk/fixtures/sdk_1_0 (the "older_minor" plugin) and against the current one. */
static const SY_KernelDef copy_kernel = {
    .struct_size = KERNEL_DEF_SIZE,
    .op = "test::copy",
    .family = "elementwise",
    .device_type = kDLCPU,
    .dtypes = &float32,
    .num_dtypes = 1,
    .output_mode = SY_OUTPUT_HOST_ALLOCATED,
    .create = copy_create,
    .infer = copy_infer,
    .run = copy_run,
    .destroy = copy_destroy,
#if SY_SDK_VERSION_MINOR >= 1
    .storage = copy_storage,
    .cost = copy_cost,
#endif
};

static const SY_KernelDef* const kernels[] = {&copy_kernel};

#if SY_SDK_VERSION_MINOR >= 3
static const SY_NamedValue attributes[] = {{SY_NamedValue_STRUCT_SIZE, "build", "C11 test plugin"},
                                           {SY_NamedValue_STRUCT_SIZE, "library", "none 0.0"}};

static SY_Status list_attributes(void* context, SY_PluginAttributesArgs* args) {
  (void)context;
  args->attributes = attributes;
  args->num_attributes = sizeof attributes / sizeof attributes[0];
  return SY_OK;
}

/* Two links of types no host knows: the host must walk past them. With
 * -DTEST_EXTENSION_CYCLE the chain loops, which the host must refuse. With
 * -DTEST_BAD_STORAGE_ELEMENTS a third link gives an element for a storage the plugin
 * does not declare, which the host must refuse too. */
#ifdef TEST_BAD_STORAGE_ELEMENTS
static const DLDataType bad_elements[] = {{kDLBfloat, 16, 1}};
static SY_StorageElements bad_list = {
    {SY_StorageElements_STRUCT_SIZE, SY_EXTENSION_STORAGE_ELEMENTS, NULL}, 1, bad_elements};
#define TAIL_NEXT (&bad_list.header)
#else
#define TAIL_NEXT NULL
#endif
static SY_Extension unknown_head;
#ifdef TEST_EXTENSION_CYCLE
static SY_Extension unknown_tail = {SY_Extension_STRUCT_SIZE, SY_EXTENSION_VENDOR_BASE + 2, &unknown_head};
#else
static SY_Extension unknown_tail = {SY_Extension_STRUCT_SIZE, SY_EXTENSION_VENDOR_BASE + 2, TAIL_NEXT};
#endif
static SY_Extension unknown_head = {SY_Extension_STRUCT_SIZE, SY_EXTENSION_VENDOR_BASE + 1, &unknown_tail};
#endif

static const SY_Plugin plugin = {
    .struct_size = PLUGIN_SIZE,
    .sdk_version_major = TEST_SDK_MAJOR,
    .sdk_version_minor = TEST_SDK_MINOR,
    .name = TEST_PLUGIN_NAME,
    .version = "0.0.1",
    .vendor = "switchyard tests",
    .kernels = kernels,
    .num_kernels = 1,
#if SY_SDK_VERSION_MINOR >= 3
    .attributes = list_attributes,
    .extension_start = &unknown_head,
#endif
};

SY_EXPORT SY_Status switchyard_plugin_init(SY_PluginInitArgs* args) {
  args->plugin = &plugin;
  return SY_OK;
}
