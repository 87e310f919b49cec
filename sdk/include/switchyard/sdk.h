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
 *    side that fills the struct to the struct's size up to its last field as that side
 *    knows it: SY_<Struct>_STRUCT_SIZE (SY_STRUCT_SIZE), never sizeof(), which counts
 *    tail padding where a later minor may append a small field. A reader only touches a
 *    field if struct_size covers it (SY_STRUCT_HAS) and, for pointers added in a later
 *    minor, the pointer is non-NULL. Fields added after 1.0 say "(since 1.x)".
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
/* The ABI header keeps its hand-aligned field comments. */
/* clang-format off */
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
#define SY_SDK_VERSION_MINOR 3

/* What each minor added: sdk/CHANGELOG.md. Since 1.3, a hint or capability that serves
 * one case rides an extension chain (SY_Extension) instead of costing a minor. */

/* The one exported symbol of every plugin. Its type is SY_PluginInitFn. */
#define SY_PLUGIN_ENTRY_SYMBOL "switchyard_plugin_init"

/* The size of `type` up to and including `last_field`: what a writer sets struct_size to.
 * Each struct below has SY_<Struct>_STRUCT_SIZE, naming its last field in this minor. */
#define SY_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* True when the struct at `ptr` (of C type `type`) is large enough, by its own
 * struct_size, to contain `field`. Check it before reading any field added after 1.0. */
#define SY_STRUCT_HAS(ptr, type, field) ((ptr)->struct_size >= SY_STRUCT_SIZE(type, field))

#if defined(_WIN32)
#define SY_EXPORT __declspec(dllexport)
#else
#define SY_EXPORT __attribute__((visibility("default")))
#endif

/* Booleans: DLPack 0.6 has no bool code; switchyard uses the value that DLPack 0.8
 * later assigned to kDLBool, with bits 8 and lanes 1 (one byte per element, 0 or 1). */
#define SY_DL_BOOL 6U

/* ---------------------------------------------------------------------------------- */
/* Extensions (since 1.3)                                                              */
/* ---------------------------------------------------------------------------------- */

/* A chain of optional structs, each beginning with SY_Extension, as PJRT's
 * extension_start: a hint or capability that serves one case (one planner rule, one
 * vendor's device) is an extension type, not a field that costs a minor version. A
 * reader walks `next` and skips every type it does not know. A published type keeps its
 * meaning and only grows at its end, its struct_size saying how far. Types below
 * SY_EXTENSION_VENDOR_BASE are assigned in this header (sdk/CHANGELOG.md lists them);
 * a vendor numbers its private ones from SY_EXTENSION_VENDOR_BASE. Assigned so far:
 * SY_EXTENSION_COMPUTE_REPORT and SY_EXTENSION_STORAGE_ELEMENTS (below). */
#define SY_EXTENSION_VENDOR_BASE 0x10000

typedef struct SY_Extension {
  size_t struct_size;          /* of the whole extension struct this header begins */
  int32_t type;                /* what follows this header */
  struct SY_Extension* next;   /* (optional) the next in the chain, same owner */
} SY_Extension;
#define SY_Extension_STRUCT_SIZE SY_STRUCT_SIZE(SY_Extension, next)

/* SY_EXTENSION_COMPUTE_REPORT (type 1, planner hint on SY_KernelStorageArgs): what the
 * instance multiplies in. The config asks a node for a compute dtype through the option
 * "@compute" ("bf16"); this is how the kernel answers, so that `plan` shows every
 * conversion and a request a kernel cannot honour is never silent. Host-owned, valid
 * during the `storage` call; the host presets the `out` fields (dtype lanes 0, counts 0,
 * note NULL), which mean "the tensors' own dtype". Products in bfloat16 accumulate in
 * float32 and the outputs keep the node's dtype. */
#define SY_EXTENSION_COMPUTE_REPORT 1
typedef struct SY_ComputeReport {
  SY_Extension header;         /* type SY_EXTENSION_COMPUTE_REPORT */
  DLDataType dtype;            /* out: what the products are taken in, e.g. bfloat16 */
  uint64_t converted_bytes;    /* out: bytes of run-time tensors converted into `dtype`
                                  per run, at this shape signature */
  uint64_t constant_bytes;     /* out: bytes of constants held in `dtype`, converted once */
  const char* note;            /* out (optional): why the kernel computes as it does, e.g.
                                  "this CPU has no bfloat16 dot products"; the host copies
                                  it during the call */
} SY_ComputeReport;
#define SY_ComputeReport_STRUCT_SIZE SY_STRUCT_SIZE(SY_ComputeReport, note)

/* SY_EXTENSION_STORAGE_ELEMENTS (type 2, capability on SY_Plugin): storages whose bytes
 * hold a narrower dtype than their values', such as float32 values kept rounded to
 * bfloat16 between kernels that would round them so anyway. The host keeps a value in
 * one only where its producer writes it there and every reader reads it there (or
 * [runtime] prefer_storage names it), never a graph output; `plan` names the storage, and
 * check-plugin allows the element's rounding for what comes back from it. Plugin-owned,
 * valid until shutdown. */
#define SY_EXTENSION_STORAGE_ELEMENTS 2
typedef struct SY_StorageElements {
  SY_Extension header;         /* type SY_EXTENSION_STORAGE_ELEMENTS */
  size_t num_storages;         /* SY_Plugin.num_storages */
  const DLDataType* elements;  /* per storage, in SY_Plugin.storages order: what its bytes
                                  hold; {0, 0, 0} for the values' own dtype */
} SY_StorageElements;
#define SY_StorageElements_STRUCT_SIZE SY_STRUCT_SIZE(SY_StorageElements, elements)

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
 * is destroyed, and during the capability query it is passed to.
 *
 * Options (1.1): attributes whose names start with '@' come from the config, not from
 * the model: a [[rules]] entry's `options = { precision = "float16" }` reaches every
 * node it routes as the attribute "@precision". A kernel reads the options it knows and
 * ignores the others; it never declines a node for an option it does not know. */
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
 * thread-safe: any thread may call them at any time, during any call into the plugin
 * or outside one. `host_context` is passed back as the first argument where asked. */

/* The body of a parallel loop (SY_HostApi.parallel_for): handles items [begin, end).
 * `slot` is in [0, num_threads) and no two bodies of the same parallel_for call running
 * at the same time share it, so a kernel may index scratch it allocated for that call
 * with it. It must not throw or longjmp. */
typedef void (*SY_ParallelBody)(void* body_context, int64_t begin, int64_t end, int32_t slot);
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

  /* ---- since 1.1: the host's intra-op thread pool ------------------------------------
   * The host runs one pool (oneTBB) for every plugin. A plugin starts no threads of its
   * own, and sets the libraries it wraps (BLAS, OpenMP, ...) to num_threads or to 1. */

  /* Threads a kernel called on this thread may keep busy at once, the caller included
   * (>= 1): the pool's size, or its share while the host runs several nodes at once
   * (inter-op parallel runs). Read it per call where a library's team is per thread
   * (OpenMP); it does not change during one kernel call. */
  int32_t (*num_threads)(void* host_context);
  /* Runs body over [begin, end), cut into chunks of at least `grain` items (grain < 1
   * means 1), on the host's pool; returns when every chunk is done. The calling thread
   * takes part. A range of at most `grain` items runs on the calling thread alone, with
   * no hand-over: choose `grain` so that a chunk is worth a hand-over (tens of
   * microseconds of work). The chunking depends only on (begin, end, grain), so a
   * kernel that reduces per chunk gets the same result on every run. May be called
   * from inside a body (the inner loop shares the pool). */
  void (*parallel_for)(void* host_context, int64_t begin, int64_t end, int64_t grain,
                       SY_ParallelBody body, void* body_context);
} SY_HostApi;
#define SY_HostApi_STRUCT_SIZE SY_STRUCT_SIZE(SY_HostApi, parallel_for)

/* ---------------------------------------------------------------------------------- */
/* Storages (since 1.1): where and how a value is stored                               */
/* ---------------------------------------------------------------------------------- */

/*
 * Every value lives in one storage. The default, which every 1.0 plugin uses, is plain
 * host memory: a strided DLTensor on kDLCPU. A plugin may declare more storages:
 *   - a device: memory the host cannot read (CUDA, a test device); `device` names it;
 *   - a format: host or device memory in the plugin's own layout (oneDNN's nChw16c), of
 *     which the host reads nothing but the DLTensor's dtype and logical shape.
 * A kernel says which storages it reads per input and writes per output
 * (SY_KernelDef.storage). The host chooses one storage per value, and where a reader
 * needs another it converts: to plain host memory with the owner's to_host, and from
 * it with the reader's from_host. Device copies and layout reorders are the same kind
 * of step, and `switchyard plan` lists each with its bytes. Graph outputs, node_io
 * records and every 1.0 kernel receive plain host tensors.
 *
 * A value in a storage crosses as a DLTensor whose `device` is the storage's device,
 * whose `data` the storage allocated (or, for a host format, host memory), whose shape
 * and dtype are the logical ones, and whose `strides` are NULL. Only the plugin that
 * declared the storage interprets its bytes, in its kernels and conversions.
 *
 * Order of work: a plugin keeps one in-order queue per device (e.g. one CUDA stream).
 * Its kernels, allocations and conversions on that device are queued in call order, so
 * the host needs no events between them. to_host returns only when the host bytes are
 * complete; from_host may return early, but must have copied out of its source before
 * it returns (the host may reuse the source at once). A kernel's inputs in device
 * memory stay valid until its queued work reads them: the host frees device memory
 * through `free`, which the plugin orders after the work queued before it.
 *
 * Thread safety: nbytes is called from any thread at any time. alloc, free, to_host,
 * from_host and synchronize may be called from several threads at once, for different
 * values.
 */

/* A storage's index in its plugin's SY_Plugin.storages, as SY_KernelRunArgs reports
 * it. -1 (SY_STORAGE_HOST) is plain host memory. */
typedef int32_t SY_StorageIndex;
#define SY_STORAGE_HOST ((SY_StorageIndex)-1)

/* Masks of storages, as SY_KernelStorageArgs uses them: bit 0 is plain host memory,
 * bit k + 1 the plugin's storages[k], so a plugin declares at most SY_MAX_STORAGES. */
#define SY_MAX_STORAGES 31
typedef uint32_t SY_StorageMask;
#define SY_STORAGE_MASK_HOST ((SY_StorageMask)1u)
#define SY_STORAGE_MASK(k) ((SY_StorageMask)(2u << (k)))

/* Bytes one tensor takes in a storage. */
typedef struct SY_StorageSizeArgs {
  size_t struct_size;
  SY_CallContext* call;
  DLDataType dtype;
  int32_t ndim;
  const int64_t* shape;        /* ndim entries: the logical shape */
  uint64_t nbytes;             /* out */
} SY_StorageSizeArgs;
#define SY_StorageSizeArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_StorageSizeArgs, nbytes)

typedef struct SY_StorageAllocArgs {
  size_t struct_size;
  SY_CallContext* call;
  uint64_t nbytes;             /* may be 0 */
  void* data;                  /* out: never NULL on SY_OK; freed with `free` */
} SY_StorageAllocArgs;
#define SY_StorageAllocArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_StorageAllocArgs, data)

/* One conversion. `src` and `dst` have the same dtype and logical shape. For to_host,
 * src is in the storage and dst is a contiguous plain host tensor the host allocated;
 * for from_host, src is a plain host tensor (maybe strided) and dst is in the storage,
 * allocated by the host with the storage's nbytes (and alloc, where it has one). */
typedef struct SY_StorageCopyArgs {
  size_t struct_size;
  SY_CallContext* call;
  const DLTensor* src;
  DLTensor* dst;
} SY_StorageCopyArgs;
#define SY_StorageCopyArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_StorageCopyArgs, dst)

/* One storage a plugin declares. Owned by the plugin, valid until shutdown. */
typedef struct SY_StorageDef {
  size_t struct_size;
  const char* name;            /* unique within the plugin, e.g. "cuda" or "nChw16c" */
  DLDevice device;             /* where its bytes live: kDLCPU for a host format */
  void* context;               /* (optional) passed back to every function below */

  /* (optional) Bytes a tensor takes here; NULL means numel x element size. */
  SY_Status (*nbytes)(void* context, SY_StorageSizeArgs* args);
  /* (optional for kDLCPU, required otherwise) Memory of this storage. NULL for a host
   * format: the host allocates host memory (64-byte aligned). A device plugin keeps
   * its own caching pool behind these two; the host also plans one arena per storage
   * and asks for it in one piece. free(NULL) is a no-op. */
  SY_Status (*alloc)(void* context, SY_StorageAllocArgs* args);
  void (*free)(void* context, void* data);
  /* Conversions to and from plain host tensors (see SY_StorageCopyArgs). Required. */
  SY_Status (*to_host)(void* context, SY_StorageCopyArgs* args);
  SY_Status (*from_host)(void* context, SY_StorageCopyArgs* args);
  /* (optional) Returns when all work this plugin queued on the device is done. */
  SY_Status (*synchronize)(void* context, SY_CallContext* call);
} SY_StorageDef;
#define SY_StorageDef_STRUCT_SIZE SY_STRUCT_SIZE(SY_StorageDef, synchronize)

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
#define SY_TensorDesc_STRUCT_SIZE SY_STRUCT_SIZE(SY_TensorDesc, shape)

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
#define SY_SupportsArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_SupportsArgs, num_outputs)

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
#define SY_KernelCreateArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_KernelCreateArgs, instance)

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
#define SY_KernelInferArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_KernelInferArgs, num_outputs)

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
  /* ---- since 1.1 ---- the storage of each input and output, as the host chose it from what
   * `storage` allowed: SY_STORAGE_HOST or an index into this plugin's storages. NULL
   * (and for kernels without `storage`) means every tensor is plain host memory. An
   * output the host let take an input's buffer has that input's `data`. */
  const SY_StorageIndex* input_storage;   /* num_inputs entries */
  const SY_StorageIndex* output_storage;  /* num_outputs entries */
} SY_KernelRunArgs;
#define SY_KernelRunArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_KernelRunArgs, output_storage)

/* Which storages an instance reads and writes (since 1.1). The host presets every mask to
 * SY_STORAGE_MASK_HOST and every output_inplace to -1, which is also what a kernel
 * without `storage` gets. The host then picks, per value, one storage its producer
 * writes; a reader that cannot read it gets a converted copy. Outputs the kernel
 * produces (SY_OUTPUT_KERNEL_ALLOCATED) must be in the storage the host picked. A
 * constant input that a kernel reads in another storage is converted once, when the
 * plan is made, never per run. */
typedef struct SY_KernelStorageArgs {
  size_t struct_size;
  SY_CallContext* call;
  SY_KernelInstance* instance;
  const DLTensor* const* inputs;        /* metadata, as in SY_KernelInferArgs */
  size_t num_inputs;
  size_t num_outputs;
  SY_StorageMask* input_reads;          /* out: num_inputs masks */
  SY_StorageMask* output_writes;        /* out: num_outputs masks, preferred storage first:
                                           the lowest set bit above bit 0 (a plugin storage)
                                           is taken when every reader can read it */
  /* out: num_outputs entries. i >= 0: output o may be written into input i's buffer
   * when that input is last read here (host-allocated outputs only; the input must have
   * the output's dtype, byte size and storage). The host decides; the kernel sees it
   * as outputs[o]->data == inputs[i]->data and must then read input i before it writes
   * the same elements of output o (element-wise kernels do by nature). */
  int32_t* output_inplace;
  /* ---- since 1.2 ---- */
  /* (optional) out: num_outputs entries, preset to -1; NULL from a host before 1.2 (check
   * SY_STRUCT_HAS and NULL). i >= 0: output o may be written into a buffer whose last
   * bytes hold input i, when that input is last read here and is smaller than the output
   * (the other conditions are output_inplace's). The host decides, after output_inplace.
   * The kernel sees it as (char*)inputs[i]->data + input bytes == (char*)outputs[o]->data
   * + output bytes, and must read each part of input i before it writes output elements
   * over it: a row-wise kernel whose output rows are at least as wide as its input rows
   * can go row block by row block from the first, copying each input block first. */
  int32_t* output_inplace_tail;
  /* ---- since 1.3 ---- */
  /* (optional) Planner hints of the types the host knows, host-owned, valid during the
   * call: the kernel fills the `out` fields of those it knows and skips the others.
   * NULL when the host has none to offer (and from a host before 1.3). */
  SY_Extension* extension_start;
} SY_KernelStorageArgs;
#define SY_KernelStorageArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_KernelStorageArgs, extension_start)

/* The cost of one run at the given input metadata (since 1.1), for the roofline report and the
 * memory pre-flight (scratch_bytes). A NULL `cost`, or one that fails (the host warns):
 * the host estimates. Fields are preset to 0. */
typedef struct SY_KernelCostArgs {
  size_t struct_size;
  SY_CallContext* call;
  SY_KernelInstance* instance;
  const DLTensor* const* inputs;
  size_t num_inputs;
  size_t num_outputs;
  double flops;                         /* out: floating-point operations (a multiply-add is 2) */
  double bytes;                         /* out: bytes read from and written to memory */
  uint64_t scratch_bytes;               /* out: temporary memory one run allocates besides its outputs */
} SY_KernelCostArgs;
#define SY_KernelCostArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_KernelCostArgs, scratch_bytes)

/* One kernel a plugin offers: static data plus its functions. Owned by the plugin,
 * valid until shutdown.
 *
 * Thread safety, per function:
 *  - supports: any thread, several at once, for the same or different nodes.
 *  - create: any thread, several at once (for different nodes, or the same node under
 *    different input shapes). An instance is used by one planning thread until create
 *    returns.
 *  - infer, storage, cost: any thread, several at once, also on one instance, and while
 *    the instance runs.
 *  - run: several threads at once on one instance (concurrent runs of one model); a
 *    kernel that keeps per-run scratch in its instance must guard it.
 *  - destroy: once per instance, after every other call on it has returned.
 * A plugin must not call back into the host from one of these except through
 * SY_HostApi. */
typedef struct SY_KernelDef {
  size_t struct_size;
  const char* op;              /* e.g. "aten::linear", or "example::scale" */
  const char* family;          /* e.g. "linalg", "conv", "elementwise" */
  int32_t device_type;         /* DLDeviceType, e.g. kDLCPU. Informational: `plugins`
                                  shows it; where tensors live is the storages' say
                                  (SY_KernelDef.storage, SY_StorageDef.device). */
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
  /* ---- since 1.1 ---- */
  /* (optional) Storages the instance reads and writes, and in-place outputs. NULL: plain
   * host tensors only. Called after create, once per input-shape signature. */
  SY_Status (*storage)(void* context, SY_KernelStorageArgs* args);
  /* (optional) Cost of one run; asked once per input-shape signature, never per run. */
  SY_Status (*cost)(void* context, SY_KernelCostArgs* args);
} SY_KernelDef;
#define SY_KernelDef_STRUCT_SIZE SY_STRUCT_SIZE(SY_KernelDef, cost)

/* Fused kernels (a naming convention, no extra ABI). A kernel whose op is "A+B", e.g.
 * "aten::linear+aten::gelu", runs a node of op A followed by its consumer of op B, as
 * one kernel; "A+B+C" chains a third. The contract a fused kernel can rely on:
 *   - B reads A's only output as its first input, and nothing else reads that output;
 *   - the fused node's name and module path are A's;
 *   - its inputs are A's inputs, then B's inputs after its first (then C's after its
 *     first); these later inputs may be constants or run-time values (a residual);
 *   - its attributes are A's as they are, then B's with the prefix "post."
 *     ("post.approximate"), then C's with "post2.";
 *   - its outputs are the last op's.
 * The host offers a fused node to a plugin only through `supports`, which may decline
 * it. When the host fuses (its policy: docs/architecture.md) is not part of this
 * contract; `switchyard check-plugin` tests a fused kernel against its ops run one
 * after the other on the reference plugin. */

/* ---------------------------------------------------------------------------------- */
/* Plugin                                                                              */
/* ---------------------------------------------------------------------------------- */

/* One name/value pair (since 1.3), as SY_Plugin.attributes lists them. */
typedef struct SY_NamedValue {
  size_t struct_size;
  const char* name;            /* e.g. "onednn" */
  const char* value;           /* e.g. "2.6.3, isa avx512_core_bf16" */
} SY_NamedValue;
#define SY_NamedValue_STRUCT_SIZE SY_STRUCT_SIZE(SY_NamedValue, value)

typedef struct SY_PluginAttributesArgs {
  size_t struct_size;
  SY_CallContext* call;
  const SY_NamedValue* attributes; /* out: num_attributes entries, plugin-owned, valid
                                      until shutdown */
  size_t num_attributes;           /* out */
} SY_PluginAttributesArgs;
#define SY_PluginAttributesArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_PluginAttributesArgs, num_attributes)

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
  void* context;               /* (optional) passed to shutdown and attributes */
  void (*shutdown)(void* context); /* (optional) see the unload policy above */
  /* ---- since 1.1 ---- */
  const SY_StorageDef* const* storages; /* (optional) num_storages pointers, at most
                                           SY_MAX_STORAGES */
  size_t num_storages;
  /* ---- since 1.3 ---- */
  /* (optional) What the plugin was built with and runs on, as name/value pairs: "build"
   * (compiler, flags, the SDK headers' version) and, per library it wraps, its version
   * and what it chose at run time ("onednn": "2.6.3, isa avx512_core_bf16"; "openblas";
   * "cuda"; "cudnn"; "libtorch"). Called once, after init; `switchyard plugins` shows
   * them, and the host's load errors name them. */
  SY_Status (*attributes)(void* context, SY_PluginAttributesArgs* args);
  /* (optional) Capabilities of the types the host knows, plugin-owned, valid until
   * shutdown; the host skips the types it does not know. */
  const SY_Extension* extension_start;
} SY_Plugin;
#define SY_Plugin_STRUCT_SIZE SY_STRUCT_SIZE(SY_Plugin, extension_start)

typedef struct SY_PluginInitArgs {
  size_t struct_size;
  SY_CallContext* call;
  const SY_HostApi* host;      /* valid until shutdown returns */
  const SY_Plugin* plugin;     /* out: the plugin's table */
} SY_PluginInitArgs;
#define SY_PluginInitArgs_STRUCT_SIZE SY_STRUCT_SIZE(SY_PluginInitArgs, plugin)

/* The entry point. A plugin may refuse a host whose version it cannot work with by
 * returning SY_ERROR_VERSION_MISMATCH with a reported message. Called once per load,
 * from one thread, before any other call into the plugin. The plugin answers with the
 * SDK version it was built for; it may read SY_HostApi fields of a newer minor only
 * after checking host->version_minor (or SY_STRUCT_HAS on the host table). */
typedef SY_Status (*SY_PluginInitFn)(SY_PluginInitArgs* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SWITCHYARD_SDK_H */
/* clang-format on */
