/* clg_ctx: one device's OpenCL context, in-order queue, program cache and last-error text. */
#ifndef CLGRAD_CONTEXT_H
#define CLGRAD_CONTEXT_H

#include <stddef.h>
#include "clgrad/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clg_ctx clg_ctx;

/* Which of clgrad's device-dependent choices a context makes. The GPU profile makes every
 * choice clgrad makes for a GPU (the GEMM kernel and its parameters, the convolution
 * heuristic, overlapped gradient read-back, the early update, no zero-copy replicas,
 * streamed MPI sums) on any device, so that the GPU code paths run, and are tested, on a CPU
 * at CPU speed. Results are the same up to float summation order. */
typedef enum clg_decisions {
    CLG_DECIDE_AUTO = 0,    /* the GPU profile when CLGRAD_GPU_PROFILE=1, else by device type */
    CLG_DECIDE_BY_TYPE = 1, /* by the device's type, whatever the environment says */
    CLG_DECIDE_AS_GPU = 2   /* the GPU profile */
} clg_decisions;

typedef struct clg_ctx_options {
    size_t struct_size;     /* sizeof(clg_ctx_options) of the caller's header (README
                               "Compatibility"); set by clg_ctx_options_default() */
    int profiling;          /* 1: queue created with CL_QUEUE_PROFILING_ENABLE */
    const char *cache_dir;  /* program-binary cache folder; NULL: CLGRAD_CACHE_DIR, else
                               $XDG_CACHE_HOME/clgrad, else ~/.cache/clgrad; "off": none.
                               Copied at create time. On POCL with its own kernel cache
                               on, the folder keeps which programs were built, not their
                               binaries (README "Kernels"). */
    clg_decisions decisions; /* CLG_DECIDE_AUTO */
    /* Called on the thread using the context when a program must be compiled from OpenCL C
     * (not in the binary cache: a first run on this device and driver, or new options):
     * seconds 0 before the compile, its duration after. NULL: nothing is said. A tool says
     * "building kernels" with it instead of seeming to hang. */
    void (*on_build)(void *user, const char *family, double seconds);
    void *on_build_user;
    /* For a device that has no GEMM tuning file yet: 1 = a quick search of the GEMM's
     * parameters (clg_gemm_tune, CLG_TUNE_QUICK: tens of seconds, reported through on_build
     * as family "tuning") when asked, by clg_gemm_tune_if_wanted (which clg_ctx_warm_up and
     * clg_train call; never a parameter lookup or an op), stored in the cache folder for
     * every later context; 0 = the default table; -1 (default) = the environment:
     * CLGRAD_TUNE=quick or off/unset. */
    int tune;
} clg_ctx_options;

/** Options with their defaults: no profiling, cache location and decisions from the
 *  environment. */
CLG_API clg_ctx_options clg_ctx_options_default(void);

/** Creates a context and an in-order queue on one device. Programs are built lazily.
 *  @param dev a device from clg_devices_list or clg_device_split (borrowed; the context
 *         retains the device, so the list may be freed afterwards).
 *  @param opts NULL for defaults.
 *  @param out receives the context (*out = NULL on failure); destroy with clg_ctx_destroy.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG; CLG_ERR_OPENCL or CLG_ERR_OUT_OF_HOST_MEMORY with the
 *          reason in clg_last_error().
 *  A context is used by one thread at a time; different contexts are independent. */
CLG_API clg_status clg_ctx_create(const clg_device_info *dev, const clg_ctx_options *opts,
                                  clg_ctx **out);

/** Waits for the queue and frees everything the context owns. NULL is a no-op. */
CLG_API void clg_ctx_destroy(clg_ctx *ctx);

/** Text of the last failure on this context: call, argument, expectation, raw cl_int name,
 *  head of the build log. "" when none. Valid until the next failing call on ctx. */
CLG_API const char *clg_ctx_last_error(const clg_ctx *ctx);

/** 1 when the context makes the choices clgrad makes for GPUs (a GPU or accelerator, or the
 *  GPU profile), 0 when it makes a CPU's. */
CLG_API int clg_ctx_decides_as_gpu(const clg_ctx *ctx);

/** Device the context runs on (a copy made at create time; borrowed, lives with ctx). */
CLG_API const clg_device_info *clg_ctx_device(const clg_ctx *ctx);

/** The context's in-order cl_command_queue (borrowed), for interoperation: work enqueued on it
 *  is ordered with clgrad's. */
CLG_API void *clg_ctx_cl_queue(const clg_ctx *ctx);

/** Blocks until all work queued on the context is done.
 *  @return CLG_OK, or CLG_ERR_OPENCL / CLG_ERR_DEVICE_LOST with a message. */
CLG_API clg_status clg_ctx_finish(clg_ctx *ctx);

/* Counters of program builds, to see what the binary cache saved. */
typedef struct clg_ctx_stats {
    unsigned programs_from_source;  /* compiled from OpenCL C */
    unsigned programs_from_cache;   /* loaded from the on-disk binary cache (on POCL: built
                                       before, its kernels from POCL's own cache) */
    unsigned cache_rejected;        /* cache entries found but unusable (corrupt, mismatched) */
    unsigned cache_writes;          /* entries written */
    double build_seconds;           /* wall time spent obtaining programs */
} clg_ctx_stats;

/** Copies the context's counters. @return CLG_OK or CLG_ERR_INVALID_ARG. */
CLG_API clg_status clg_ctx_get_stats(const clg_ctx *ctx, clg_ctx_stats *out);

typedef struct clg_kernel_time {
    char name[64];        /* the OpenCL kernel, e.g. "clg_gemm_reg" */
    unsigned long calls;
    double seconds;       /* device time, summed */
} clg_kernel_time;

/** Device time per kernel since the context was created (or last reset), when it was created
 *  with profiling = 1 (each launch then waits for its kernel: a profiled run is serial).
 *  Copies up to cap entries into out; *count (may be NULL) receives how many kernels there
 *  are. reset 1 starts the totals over. @return CLG_OK or CLG_ERR_INVALID_ARG. */
CLG_API clg_status clg_ctx_kernel_times(clg_ctx *ctx, clg_kernel_time *out, size_t cap,
                                        size_t *count, int reset);

/** Folder the context's binary cache uses, or NULL when the cache is off. Borrowed. */
CLG_API const char *clg_ctx_cache_dir(const clg_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
