/* Shared pieces of clgrad-bench: options, device choice, medians, output. */
#ifndef CLGRAD_BENCH_COMMON_H
#define CLGRAD_BENCH_COMMON_H

#include <stddef.h>
#include "clgrad/clgrad.h"
#include "tool_clock.h" /* tool_now: the benchmarks' clock */

typedef struct bench_opts {
    int json;
    int runs;             /* timed repetitions (median reported) */
    const char *filter;   /* device filter; NULL: CLGRAD_DEVICES */
    int profile;          /* 1: a context with profiling, per-kernel device times */
    const char *net_text; /* train, cluster, scaling: the network (--net FILE); NULL: default */
    const char *net_name; /* its name in the output */
} bench_opts;

/* Creates a context on the first device of the auto environment (after the filter).
 * Prints the reason and returns NULL on failure. */
clg_ctx *bench_ctx(const bench_opts *o, const char *cache_dir);

/* Prints one JSON result row: {"bench":..., "platform", "device", "cpu" (the host CPU's model),
 * "gpu_profile", "pocl_affinity" (POCL's threads pinned one per core), then the fields fmt
 * formats (no braces) and "}\n"; figures from different machines and runtimes are never
 * mixed up. */
void bench_json_row(const clg_ctx *ctx, const char *bench, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Median of n values (sorts them in place), and min/max. */
double bench_median(double *v, size_t n);
double bench_min(const double *v, size_t n);
double bench_max(const double *v, size_t n);

/* Prints the context's kernel times (a profiling context) since the last reset, per `per`
 * (a step, a batch) over `count` of them, longest first, and resets them. */
void bench_print_kernel_times(clg_ctx *ctx, const char *per, size_t count);

int bench_startup(const bench_opts *o);
/* The device's FMA peak: GFLOP/s of a plain loop of independent FMAs, 16 or 8 wide, whichever
 * is faster (0 on error). */
double bench_fma_peak(clg_ctx *ctx, int runs);
int bench_peak(const bench_opts *o);
/* only: one shape name, impl: builtin|clblast|openblas; NULL for all. vs: K=V,... (NULL:
 * none): the built-in with the device's parameters so changed takes turns with the others,
 * its ratio to the built-in paired run by run. */
int bench_gemm(const bench_opts *o, const char *only, const char *impl, const char *vs);
/* With OpenBLAS built in: when its own detection chose a kernel below this CPU's vector
 * width (a generic one), this program starts again (argv) with OPENBLAS_CORETYPE set to the
 * CPU's family; 0 when nothing was needed or the user chose, -1 when it could not restart.
 * Without OpenBLAS: 0. Call before anything else runs. */
int bench_openblas_at_best(char **argv);
/* only: one layer name (c1, c2, r3) or NULL. */
int bench_conv(const bench_opts *o, const char *only);
int bench_pool(const bench_opts *o);
/* The default network: training images/s at `batch`, inference at 256, per-layer times. */
int bench_train(const bench_opts *o, size_t batch);
/* Training images/s on 1 one-core sub-device, 2 of them, the whole CPU, and two POCL devices
 * (a child process with POCL_DEVICES; self is this program's path). */
int bench_scaling(const bench_opts *o, size_t batch, const char *self);
/* An image folder through the batch reader (0, 1, 2, 4 workers) and training from it with
 * background dispatch off and on; memory_cap_mb > 0 caps the data segment while decoding. */
int bench_data(const bench_opts *o, const char *folder, size_t memory_cap_mb, size_t crop);
/* Two models one after the other on one one-core sub-device vs at once on two; limit: the
 * first N training images (0: all). */
int bench_experiments(const bench_opts *o, size_t limit);
/* Inference images/s and GFLOP/s of the network in path (text, model file or ONNX) at batch. */
int bench_infer(const bench_opts *o, const char *path, size_t batch);
/* Under mpirun: the default network trained across the ranks ("parallel"), one device each;
 * rank 0 prints the median step's images/s and the bytes each rank sent per step. */
int bench_cluster(const bench_opts *o, size_t batch, int *argc, char ***argv);

#endif
