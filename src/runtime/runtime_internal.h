/* Private runtime interface shared by the library's layers: the context struct, error
 * reporting and program access. */
#ifndef CLGRAD_RUNTIME_INTERNAL_H
#define CLGRAD_RUNTIME_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001 /* from cl_ext.h (cl_khr_icd) */
#endif
#include <stdarg.h>
#include "clgrad/context.h"

#define CLG__ERR_TEXT 2048

typedef struct clg__program_entry {
    char family[32];
    char *options;       /* the caller's -D options, "" for none (owned) */
    cl_program program;
} clg__program_entry;

typedef struct clg__kernel_entry {
    cl_program program;  /* borrowed from the program table */
    char name[64];
    cl_kernel kernel;
} clg__kernel_entry;

/* Per-context state that an upper layer attaches (the ops layer's GEMM settings, ...). */
typedef enum clg__ext_slot { CLG__EXT_GEMM, CLG__EXT_CONV, CLG__EXT_COUNT } clg__ext_slot;
typedef struct clg__ext {
    void *data;
    void (*destroy)(void *data);
} clg__ext;

/* Reusable device buffers (fresh memory costs ~10 us per 4 KiB page on first touch). */
/* Reusable device buffers by user: a slot holds one buffer at a time, so two buffers live at
 * once only in different slots. */
typedef enum clg__scratch_slot {
    CLG__SCRATCH_GEMM_PACK,   /* GEMM: packed panels of B */
    CLG__SCRATCH_GEMM_PACK_A, /* GEMM: packed panels of A */
    CLG__SCRATCH_GEMM_SPLIT,  /* GEMM: partial products of a split K */
    CLG__SCRATCH_CONV_COLS,   /* conv: unrolled or padded input, Winograd's V */
    CLG__SCRATCH_CONV_AUX,    /* conv: transposed gradients, Winograd's E and U, a first layer's
                                 transposed weights */
    CLG__SCRATCH_CONV_DW,     /* conv: weight-gradient partial sums, Winograd's padded input */
    CLG__SCRATCH_CONV_WINO,   /* conv: Winograd's weight-gradient transforms */
    CLG__SCRATCH_CONV_DYQ,    /* conv: Winograd's copy of dy, from a layer's weight gradient
                                 to its data gradient right after (clg__conv_keep.dyq_n) */
    CLG__SCRATCH_XENT_LABELS, /* softmax cross-entropy: labels and their staging */
    CLG__SCRATCH_XENT_LOSSES, /* softmax cross-entropy: per-sample losses */
    CLG__SCRATCH_REDUCE,      /* tensor reductions: per-group partial results */
    CLG__SCRATCH_FC,          /* fully connected: transposed output */
    CLG__SCRATCH_POOL,        /* pooling backward: each max window's argmax */
    CLG__SCRATCH_SLOTS
} clg__scratch_slot;
typedef struct clg__scratch {
    cl_mem mem;
    size_t bytes;
} clg__scratch;

/* Per-kernel device time, gathered when the context was created with profiling on. */
enum { CLG__PROFILE_KERNELS = 64 };
typedef struct clg__kernel_profile {
    const char *name;   /* the launch's kernel name (a string literal) */
    unsigned long calls;
    double seconds;
} clg__kernel_profile;

/* The environment variables that steer a context's work, read once when it is created (the
 * ops and training read these, never getenv). */
typedef struct clg__ctx_env {
    char conv_algo[24];  /* CLGRAD_CONV_ALGO, parsed where convolutions choose; "" unset */
    char gemm[16];       /* CLGRAD_GEMM: builtin, clblast or auto; "" unset */
    int build_log;       /* CLGRAD_BUILD_LOG set and not 0: print compiler logs */
    int check_numerics;  /* CLGRAD_CHECK_NUMERICS set and not 0 */
} clg__ctx_env;

struct clg_ctx {
    clg_device_info device;       /* copy; device.cl_device retained by the context */
    clg__ctx_env env;
    cl_context context;
    cl_command_queue queue;
    cl_command_queue transfer_queue; /* second in-order queue for overlapped copies, or NULL */
    char *cache_dir;              /* NULL: binary cache (and tunings' files) off */
    int driver_caches;            /* the cache keeps a word, not binaries (clg__driver_caches) */
    clg__program_entry *programs; /* built programs, one per (family, options) */
    size_t program_count, program_cap;
    clg__kernel_entry *kernels;   /* kernels made so far, reused (a context is single-threaded) */
    size_t kernel_count, kernel_cap;
    clg_ctx_stats stats;
    void (*on_build)(void *user, const char *family, double seconds); /* clg_ctx_options' */
    void *on_build_user;
    int tune_asked;   /* clg_ctx_options.tune, resolved: 1 = quick GEMM search if untuned */
    clg__ext ext[CLG__EXT_COUNT];
    clg__scratch scratch[CLG__SCRATCH_SLOTS];
    int profiling;
    int as_gpu;                   /* makes the choices made for GPUs (clg_ctx_decides_as_gpu) */
    int gpu_profile;              /* ... only because of the GPU profile (a CPU device) */
    clg_cpu_class cpu_class;      /* the device's, as decided at creation (CLGRAD_CPU_CLASS) */
    char cl_std[24];              /* -cl-std option for the device's OpenCL C (or empty) */
    clg__kernel_profile profile[CLG__PROFILE_KERNELS];
    size_t profile_count;
    char last_error[CLG__ERR_TEXT];
};

/* The -cl-std option for a device whose CL_DEVICE_OPENCL_C_VERSION is `version` ("OpenCL C
 * 1.2 ...", "OpenCL C 3.0 ..."): "-cl-std=CL1.2 " (the language the kernels are written in)
 * where the device takes it, else "" (the compiler's own default: OpenCL C 1.0 and 1.1
 * devices, and a version that cannot be read, rather than a flag their compiler rejects). */
const char *clg__cl_std_option(const char *version);

/* 1 when the context's OpenCL runtime must only be called from one thread at a time:
 * oclgrind's (its command map is unguarded: two threads enqueuing crash it), against the
 * specification, which makes every call but clSetKernelArg thread-safe. */
int clg__ctx_thread_unsafe(const clg_ctx *ctx);

/* The device's CPU class (clg_device_cpu_class) as the context decided it at its creation;
 * CLG_CPU_CLASS_NONE for other devices. */
clg_cpu_class clg__ctx_cpu_class(const clg_ctx *ctx);

/* CLGRAD_CHECK_NUMERICS as the context read it at its creation. */
int clg__ctx_check_numerics(const clg_ctx *ctx);

/* Public options structs begin with struct_size (README "Compatibility"): over *out, which
 * holds the defaults, the caller's struct as far as it reaches. CLG_ERR_INVALID_ARG naming
 * `what` (in the thread's last error) when struct_size is not one this library knows. */
clg_status clg__options_read(void *out, const void *given, size_t full, const char *what);

/* Host allocations of the library (malloc, calloc, realloc, strdup) and device buffers, all
 * through here so that a testing build can make any of them fail (runtime/testing.h). */
void *clg__malloc(size_t n);
void *clg__calloc(size_t n, size_t size);
void *clg__realloc(void *p, size_t n);
char *clg__strdup(const char *s);
void *clg__malloc_pages(size_t n); /* page-aligned (huge pages from 2 MiB), for buffers over
                                      host memory and streamed arrays; free() */
void *clg__calloc_pages(size_t n); /* the same, zeroed */
cl_mem clg__create_buffer(clg_ctx *ctx, size_t bytes, cl_int *err);
/* A buffer over host memory (CL_MEM_USE_HOST_PTR): the device computes on it in place where
 * it shares the host's memory; the host touches it only while it is mapped. */
cl_mem clg__create_host_buffer(clg_ctx *ctx, void *host, size_t bytes, cl_int *err);

/* Host loops over long arrays (the multi-device optimizer's pass) built for the widest vectors
 * the CPU has, chosen when the library loads: the build itself targets the baseline. Bit for
 * bit the same results (IEEE operations, no contraction in ISO C). Not in sanitizer builds:
 * the choosing function runs before the sanitizer's runtime is up (ThreadSanitizer crashes). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define CLG__VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLG__VECTOR_CLONES
#endif

/* CLG_ERR_OUT_OF_HOST_MEMORY, recording "<call>: out of host memory". */
clg_status clg__oom(clg_ctx *ctx, const char *call);

/* Records a failure: formats the message into ctx (when non-NULL) and the thread-local
 * last error, and returns status so callers can `return clg__fail(...)`. */
clg_status clg__fail(clg_ctx *ctx, clg_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, for an OpenCL call that returned err: maps err to a status (out-of-memory codes to
 * CLG_ERR_OUT_OF_DEVICE_MEMORY, others to CLG_ERR_OPENCL) and appends its name. */
clg_status clg__fail_cl(clg_ctx *ctx, cl_int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "CL_OUT_OF_RESOURCES" etc.; "CL_UNKNOWN_ERROR" for others. */
const char *clg__cl_error_name(cl_int err);

/* Gets the program of a kernel family built with `options` (-D tunables; may be NULL or ""):
 * from the context's memory, else the binary cache, else compiled from source (common.cl
 * first). The program stays owned by ctx. */
clg_status clg__program_get(clg_ctx *ctx, const char *family, const char *options,
                            cl_program *out);

/* Builds arbitrary source as a program (not cached anywhere); for tests of error paths.
 * The caller releases *out. */
clg_status clg__program_build_source(clg_ctx *ctx, const char *name, const char *source,
                                     const char *options, cl_program *out);

/* Gets a kernel of a family's program, made once per context and owned by it (borrowed:
 * set its arguments and enqueue it before the next call that may use it). */
clg_status clg__kernel_get(clg_ctx *ctx, const char *family, const char *options,
                           const char *kernel_name, cl_kernel *out);

/* One kernel launch being prepared: arguments are set in order; the first error is kept and
 * reported by clg__launch_run with the kernel's name and sizes. */
typedef struct clg__launch {
    clg_ctx *ctx;
    cl_kernel kernel;
    const char *name;
    cl_uint next;
    cl_int err;
} clg__launch;

clg_status clg__launch_begin(clg_ctx *ctx, const char *family, const char *options,
                             const char *kernel, clg__launch *l);
void clg__arg_mem(clg__launch *l, cl_mem m);
void clg__arg_u32(clg__launch *l, size_t v);
void clg__arg_u64(clg__launch *l, size_t v);
void clg__arg_f32(clg__launch *l, float v);
void clg__arg_local(clg__launch *l, size_t bytes);
/* Enqueues with the global size rounded up to whole work-groups (a zero size does nothing). */
clg_status clg__launch_run(clg__launch *l, const size_t global[3], const size_t local[3]);
/* Runs an elementwise kernel (CLG_FOR_EACH) over n elements, a work-item each: in groups of
 * 64 on GPUs, of 1,024 on CPUs, where every work-group's launch costs about a microsecond
 * (a 64-item group's arithmetic costs less). */
clg_status clg__launch_elementwise(clg__launch *l, size_t n);
/* Work-groups to launch along one dimension for `wanted` of them, at most 65535 (some drivers
 * fail above it): kernels given fewer than they want loop over the rest. */
size_t clg__grid_groups(size_t wanted);
/* Local sizes from a few values, not one a problem shape: POCL compiles a kernel anew for every
 * local size (~1 s cold). The kernels test their bounds (items past the work do nothing).
 * clg__local_fit: a group's extent `want` along a dimension of `count` work-items, or for
 * fewer, the largest power of two within them. clg__local_pow2: n rounded up to a power of
 * two, at most cap. */
size_t clg__local_fit(size_t want, size_t count);
size_t clg__local_pow2(size_t n, size_t cap);
/* Compute units to plan a launch's work-groups for (e.g. how many slices of a long sum): the
 * device's, at least 1, or what a test set (to plan a large GPU's work on a small device). */
size_t clg__compute_units(const clg_ctx *ctx);
/* How many runs of run_len values (small planes, say) a CPU work-item should take: enough for
 * min_len values, yet at least 4 work-items a compute unit where there are runs for them. */
size_t clg__runs_per_item(const clg_ctx *ctx, size_t runs, size_t run_len, size_t min_len);
/* Runs a kernel that takes `per` of `runs` runs a work-item (the last item fewer), in groups
 * of one: ceil(runs / per) work-items. */
clg_status clg__launch_runs(clg__launch *l, size_t runs, size_t per);

/* A second queue on the context's device (made on first use) for copies that should overlap
 * the main queue's kernels; order them against it with events. */
clg_status clg__ctx_transfer_queue(clg_ctx *ctx, cl_command_queue *out);

/* A device buffer of at least `bytes` in scratch slot `slot`, kept by ctx and reused by later
 * calls (contents undefined). Valid until the next call for the same slot. */
clg_status clg__scratch_get(clg_ctx *ctx, clg__scratch_slot slot, size_t bytes, cl_mem *out);

/* Resolves the cache folder from an explicit setting or the environment; returns a malloc'd
 * path or NULL when caching is off or no location can be found. */
char *clg__cache_dir_resolve(const char *explicit_dir);

/* 1 when the device's driver keeps compiled kernels itself: POCL, unless POCL_KERNEL_CACHE=0.
 * There clgrad's cache keeps no program binaries, only that a program was built: asking POCL
 * for a binary makes it compile every kernel of the program once more for any work-group
 * size, which its own cache never needs (test_conv from cold caches: 260 s with binaries,
 * 127 s without; a first start of every family 68 s -> 10 s, a second 0.12 -> 1.2 s). */
int clg__driver_caches(const clg_device_info *dev);

/* Binary cache: fills key[32] for (source digest, options, device, library version). */
void clg__bincache_key(const clg_ctx *ctx, const char *source_sha256, const char *options,
                       unsigned char key[32]);

/* Loads an entry; returns a malloc'd binary and its size, or NULL on any miss. *found tells
 * whether a file was there at all (so an unusable entry can be counted). */
unsigned char *clg__bincache_load(const char *dir, const unsigned char key[32], size_t *size,
                                  int *found);

/* Stores an entry atomically; returns 1 when written, 0 when not (never an error). */
int clg__bincache_store(const char *dir, const unsigned char key[32], const unsigned char *bin,
                        size_t size);

/* mkdir -p; returns 1 when the folder exists afterwards (else errno says why, ENOMEM included). */
int clg__make_dirs(const char *dir);

/* Writes the concatenated parts to path through a synced temporary file and a rename; returns
 * 1 on success, 0 (with nothing changed at path) on failure. */
int clg__write_atomic(const char *path, const void *const parts[], const size_t sizes[],
                      size_t nparts);

/* clg__write_atomic of one buffer, creating the parent folder; CLG_ERR_IO with a message. */
clg_status clg__file_write_atomic(clg_ctx *ctx, const char *path, const void *data, size_t size);

/* <cache_dir>/<prefix>-<hash of the device model and driver><suffix>, malloc'd; NULL when the
 * cache is off. For per-device files such as tunings. */
char *clg__device_file_path(const clg_ctx *ctx, const char *prefix, const char *suffix);

/* Reads a whole small file (at most max_bytes) as a NUL-terminated string; NULL when absent,
 * unreadable, larger, or containing a NUL byte. */
char *clg__read_text_file(const char *path, size_t max_bytes);

/* Hex form of a 32-byte digest into out[65]. */
void clg__hex32(const unsigned char digest[32], char out[65]);

/* Fills every field of info that the device itself reports (not index or parentage). */
void clg__device_describe(cl_platform_id p, cl_device_id d, clg_device_info *info);

/* Monotonic seconds. */
double clg__now(void);

#endif
