/*
 * switchyard SDK: the stable C ABI between the switchyard host and its op plugins.
 *
 * A plugin is a shared library that exports exactly one symbol,
 * `switchyard_plugin_init` (see SY_PLUGIN_ENTRY_SYMBOL). The host calls it with its own
 * API table and version; the plugin answers with its own table (SY_Plugin) and the SDK
 * version it was built for. Everything else in the library stays hidden.
 *
 * Rules that hold for every call in this file:
 *  - Every struct that crosses the boundary starts with `size_t struct_size`, set by the
 *    side that fills the struct to sizeof() of the struct as that side knows it. A reader
 *    only touches a field if struct_size covers it (SY_STRUCT_HAS) and, for pointers
 *    added in a later minor, the pointer is non-NULL.
 *  - Tensors cross as DLPack `DLTensor` (dlpack.h, v0.6). Every other object crosses as
 *    an opaque handle with accessor functions.
 *  - Errors are an SY_Status plus a message. A plugin reports the message with
 *    SY_HostApi.report, which copies it; the plugin's buffer only has to live for that
 *    call. No C++ exception may cross the boundary (sdk/plugin.hpp catches them).
 *  - `// out` marks fields the callee fills. `(optional)` marks pointers that may be NULL.
 *
 * Unload policy: the host never unloads a plugin while anything it handed out is alive.
 * A plugin library stays loaded until (1) every kernel instance it created has been
 * destroyed and (2) every tensor it produced (SY_OUTPUT_KERNEL_ALLOCATED) has been
 * released through its DLManagedTensor deleter. Then the host calls SY_Plugin.shutdown
 * (if set) exactly once, and only after that unloads the library.
 *
 * This header is plain C11 and depends only on <stddef.h>, <stdint.h> and dlpack.h.
 */
#ifndef SWITCHYARD_SDK_H
#define SWITCHYARD_SDK_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------- */
/* Versioning                                                                          */
/* ---------------------------------------------------------------------------------- */

/*
 * Bump rules:
 *  - MAJOR: anything removed, reordered, renamed or changed in meaning: a field, a
 *    function, an enum value, a struct layout. The host refuses plugins of another major.
 *  - MINOR: something appended at the end of a struct or enum, with its old meaning
 *    kept. Old plugins keep loading (the host accepts minor <= its own); a plugin built
 *    for a newer minor than the host's is refused, since it may rely on fields the host
 *    does not fill.
 * The version a plugin was built for is the one it reports in SY_Plugin.sdk_version_*,
 * not what the host compiled against: the two sides negotiate at load time.
 */
#define SY_SDK_VERSION_MAJOR 1
#define SY_SDK_VERSION_MINOR 0

/* The one exported symbol of every plugin. Its type is SY_PluginInitFn. */
#define SY_PLUGIN_ENTRY_SYMBOL "switchyard_plugin_init"

/* True when a struct that reports `size` bytes contains `field` of type `type`. */
#define SY_STRUCT_HAS(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

#if defined(_WIN32)
#define SY_EXPORT __declspec(dllexport)
#else
#define SY_EXPORT __attribute__((visibility("default")))
#endif

/* Booleans: DLPack 0.6 has no bool code; switchyard uses the value that DLPack 0.8
 * later assigned to kDLBool, with bits 8 and lanes 1 (one byte per element, 0 or 1). */
#define SY_DL_BOOL 6U

/* ---------------------------------------------------------------------------------- */
/* Status                                                                              */
/* ---------------------------------------------------------------------------------- */

typedef enum SY_Status {
  SY_OK = 0,
  SY_ERROR_INVALID_ARGUMENT = 1, /* bad attribute, input or argument struct */
  SY_ERROR_UNSUPPORTED = 2,      /* capability query: "no"; the message is the reason */
  SY_ERROR_OUT_OF_MEMORY = 3,
  SY_ERROR_VERSION_MISMATCH = 4, /* plugin cannot work with the host's API version */
  SY_ERROR_INTERNAL = 5          /* anything else, e.g. a caught C++ exception */
} SY_Status;

/* ---------------------------------------------------------------------------------- */
/* Opaque host objects                                                                 */
/* ---------------------------------------------------------------------------------- */

/* One call from the host into the plugin. Valid only during that call; pass it to
 * SY_HostApi.report to attach a message to the status the call returns. */
typedef struct SY_CallContext SY_CallContext;

/* The attributes of one node (non-tensor arguments such as `dim` or `alpha`, and
 * constant tensors). Owned by the host; valid from kernel creation until the instance
 * is destroyed, and during the capability query it is passed to. */
typedef struct SY_Attributes SY_Attributes;

typedef enum SY_AttrKind {
  SY_ATTR_MISSING = 0, /* no attribute of that name */
  SY_ATTR_NONE = 1,    /* present, value None (an omitted optional argument) */
  SY_ATTR_INT = 2,     /* int64; booleans are ints 0/1 */
  SY_ATTR_FLOAT = 3,   /* double */
  SY_ATTR_STRING = 4,  /* NUL-terminated UTF-8 */
  SY_ATTR_INTS = 5,    /* int64 list */
  SY_ATTR_FLOATS = 6,  /* double list */
  SY_ATTR_TENSOR = 7   /* constant tensor, host-owned */
} SY_AttrKind;

typedef enum SY_LogLevel {
  SY_LOG_TRACE = 0,
  SY_LOG_DEBUG = 1,
  SY_LOG_INFO = 2,
  SY_LOG_WARN = 3,
  SY_LOG_ERROR = 4
} SY_LogLevel;

/* ---------------------------------------------------------------------------------- */
/* Host API: services the host gives every plugin                                      */
/* ---------------------------------------------------------------------------------- */

/* Filled by the host, valid until the plugin's shutdown returns. All functions are
 * thread-safe. `host_context` is passed back as the first argument where asked. */
typedef struct SY_HostApi {
  size_t struct_size;
  uint32_t version_major; /* the host's SY_SDK_VERSION_MAJOR */
  uint32_t version_minor; /* the host's SY_SDK_VERSION_MINOR */
  void* host_context;

  /* Errors: attach `status` and a copy of `message` to the current call. The last
   * report of a call wins. `message` must be NUL-terminated; it is copied. */
  void (*report)(SY_CallContext* call, SY_Status status, const char* message);

  /* Logging into the host's log, tagged with the plugin's name. `message` is copied. */
  void (*log)(void* host_context, SY_LogLevel level, const char* message);

  /* Memory owned by the host. `alignment` is a power of two, at least 64 is honoured.
   * Returns NULL on failure. free(NULL) is a no-op. */
  void* (*alloc)(void* host_context, size_t size, size_t alignment);
  void (*free)(void* host_context, void* ptr);

  /* Attribute accessors. Every getter returns SY_ERROR_INVALID_ARGUMENT (and reports
   * nothing) if the attribute is missing or of another kind. Returned pointers live as
   * long as the SY_Attributes. */
  size_t (*attr_count)(const SY_Attributes* attrs);
  const char* (*attr_name)(const SY_Attributes* attrs, size_t index); /* NULL if out of range */
  SY_AttrKind (*attr_kind)(const SY_Attributes* attrs, const char* name);
  SY_Status (*attr_int)(const SY_Attributes* attrs, const char* name, int64_t* value /* out */);
  SY_Status (*attr_float)(const SY_Attributes* attrs, const char* name, double* value /* out */);
  SY_Status (*attr_string)(const SY_Attributes* attrs, const char* name,
                           const char** value /* out */);
  SY_Status (*attr_ints)(const SY_Attributes* attrs, const char* name,
                         const int64_t** values /* out */, size_t* count /* out */);
  SY_Status (*attr_floats)(const SY_Attributes* attrs, const char* name,
                           const double** values /* out */, size_t* count /* out */);
  SY_Status (*attr_tensor)(const SY_Attributes* attrs, const char* name,
                           const DLTensor** value /* out */);
} SY_HostApi;

/* ---------------------------------------------------------------------------------- */
/* Kernels                                                                             */
/* ---------------------------------------------------------------------------------- */

/* How a kernel delivers its outputs. */
typedef enum SY_OutputMode {
  /* The host allocates every output from the shapes that `infer` reports, and the
   * kernel writes into them. Lets the host plan and reuse memory. */
  SY_OUTPUT_HOST_ALLOCATED = 0,
  /* The kernel produces each output as a DLManagedTensor and hands it over; the host
   * adopts it with no copy and calls its deleter once it is no longer needed. */
  SY_OUTPUT_KERNEL_ALLOCATED = 1
} SY_OutputMode;

/* An instance of a kernel bound to one node; plugin-owned and opaque to the host. */
typedef struct SY_KernelInstance SY_KernelInstance;

/* Shape and dtype of one output, filled by `infer`. */
#define SY_MAX_DIMS 16
typedef struct SY_TensorDesc {
  size_t struct_size;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[SY_MAX_DIMS];
} SY_TensorDesc;

/* Capability query for one node: may this kernel run it? Tensors carry metadata
 * (dtype, shape, strides, device); their data pointer is NULL unless the input is a
 * constant. Return SY_OK for yes; SY_ERROR_UNSUPPORTED with a reported reason for no. */
typedef struct SY_SupportsArgs {
  size_t struct_size;
  SY_CallContext* call;
  const char* node_name;                /* for messages; valid during the call */
  const SY_Attributes* attributes;
  const DLTensor* const* inputs;        /* num_inputs entries; an entry is NULL for an
                                           absent optional input */
  size_t num_inputs;
  size_t num_outputs;
} SY_SupportsArgs;

/* Binds the kernel to one node. Inputs are metadata as in SY_SupportsArgs; shapes may
 * change between runs, in which case the host calls `infer` again before `run`. */
typedef struct SY_KernelCreateArgs {
  size_t struct_size;
  SY_CallContext* call;
  const char* node_name;
  const SY_Attributes* attributes;      /* lives until destroy */
  const DLTensor* const* inputs;
  size_t num_inputs;
  size_t num_outputs;
  SY_KernelInstance* instance;          /* out: passed to infer, run and destroy */
} SY_KernelCreateArgs;

/* Output shapes for given input metadata. Required for SY_OUTPUT_HOST_ALLOCATED; for
 * SY_OUTPUT_KERNEL_ALLOCATED it is optional, and the host checks produced tensors against it. */
typedef struct SY_KernelInferArgs {
  size_t struct_size;
  SY_CallContext* call;
  SY_KernelInstance* instance;
  const DLTensor* const* inputs;
  size_t num_inputs;
  SY_TensorDesc* outputs;               /* out: num_outputs entries, struct_size preset */
  size_t num_outputs;
} SY_KernelInferArgs;

/* Runs the kernel. Inputs are read-only and host-owned; a kernel never writes them.
 * The host may call run on one instance from several threads at once: a kernel that
 * keeps per-run scratch state in its instance must guard it. */
typedef struct SY_KernelRunArgs {
  size_t struct_size;
  SY_CallContext* call;
  SY_KernelInstance* instance;
  const DLTensor* const* inputs;
  size_t num_inputs;
  /* SY_OUTPUT_HOST_ALLOCATED: num_outputs host-owned tensors shaped as `infer` said.
   * SY_OUTPUT_KERNEL_ALLOCATED: NULL. */
  DLTensor* const* outputs;
  /* SY_OUTPUT_KERNEL_ALLOCATED: num_outputs slots the kernel fills with tensors it
   * hands over (ownership passes to the host, which calls each deleter once).
   * A produced tensor may be a view into an input's memory (reshape, permute, ...):
   * the host sees that its data lies inside an input and keeps that input alive for
   * as long as the output lives. Views of host-allocated outputs are not allowed.
   * SY_OUTPUT_HOST_ALLOCATED: NULL. */
  DLManagedTensor** produced;           /* out */
  size_t num_outputs;
} SY_KernelRunArgs;

/* One kernel a plugin offers: static data plus its functions. Owned by the plugin,
 * valid until shutdown. */
typedef struct SY_KernelDef {
  size_t struct_size;
  const char* op;              /* e.g. "aten::linear", or "example::scale" */
  const char* family;          /* e.g. "linalg", "conv", "elementwise" */
  int32_t device_type;         /* DLDeviceType, e.g. kDLCPU */
  const DLDataType* dtypes;    /* dtypes the kernel accepts on its tensor inputs */
  size_t num_dtypes;
  SY_OutputMode output_mode;
  void* context;               /* (optional) passed back to every function below */

  /* (optional) NULL means "accepts every node of this op with the listed dtypes". */
  SY_Status (*supports)(void* context, SY_SupportsArgs* args);
  SY_Status (*create)(void* context, SY_KernelCreateArgs* args);
  /* (optional) required when output_mode is SY_OUTPUT_HOST_ALLOCATED; otherwise, if set,
   * the host validates produced outputs against it. */
  SY_Status (*infer)(void* context, SY_KernelInferArgs* args);
  SY_Status (*run)(void* context, SY_KernelRunArgs* args);
  void (*destroy)(void* context, SY_KernelInstance* instance);
} SY_KernelDef;

/* Fused kernels (a naming convention, no extra ABI). A kernel whose op is "A+B", e.g.
 * "aten::linear+aten::gelu", runs a node of op A and its element-wise consumer of op B
 * as one. The host offers it a node only when: A's only output has exactly one consumer,
 * B, which reads it as its first input; that output is not a graph output; B's other
 * inputs are constants or absent; A was selected onto this plugin and B's routing allows
 * it; and `supports` accepts the fused node. The fused node:
 *   - name and module path: A's;
 *   - inputs: A's inputs, then B's inputs after its first;
 *   - attributes: A's as they are, then B's with the prefix "post." ("post.approximate");
 *   - outputs: B's.
 * Fusion is off with node_io capture "all" (every original node is recorded) and with
 * `[selection] fuse = false`. `switchyard check-plugin` tests fused kernels against A
 * then B on the reference plugin. */

/* ---------------------------------------------------------------------------------- */
/* Plugin                                                                              */
/* ---------------------------------------------------------------------------------- */

/* What a plugin declares. Owned by the plugin, valid until shutdown returns. */
typedef struct SY_Plugin {
  size_t struct_size;
  uint32_t sdk_version_major;  /* the SDK version the plugin was built for */
  uint32_t sdk_version_minor;
  const char* name;            /* unique among loaded plugins, e.g. "aten" */
  const char* version;         /* the plugin's own version, free-form */
  const char* vendor;
  const SY_KernelDef* const* kernels; /* num_kernels pointers */
  size_t num_kernels;
  void* context;               /* (optional) passed to shutdown */
  void (*shutdown)(void* context); /* (optional) see the unload policy above */
} SY_Plugin;

typedef struct SY_PluginInitArgs {
  size_t struct_size;
  SY_CallContext* call;
  const SY_HostApi* host;      /* valid until shutdown returns */
  const SY_Plugin* plugin;     /* out: the plugin's table */
} SY_PluginInitArgs;

/* The entry point. A plugin may refuse a host whose version it cannot work with by
 * returning SY_ERROR_VERSION_MISMATCH with a reported message. */
typedef SY_Status (*SY_PluginInitFn)(SY_PluginInitArgs* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SWITCHYARD_SDK_H */
