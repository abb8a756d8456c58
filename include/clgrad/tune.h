/* Tuning the built-in kernels for a device: the GEMM's parameters (register blocks for CPUs,
 * local-memory tiles for GPUs, the convolutions' blocks), the searches over them, and the
 * tuning file every later context on the device reads. The operations themselves are in
 * gemm.h and conv.h; the tuner runs only when called (clgrad-tune, or clg_ctx_options.tune
 * at context creation). */
#ifndef CLGRAD_TUNE_H
#define CLGRAD_TUNE_H

#include <stddef.h>
#include "clgrad/device.h"
#include "clgrad/gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_gemm_kernel {
    CLG_GEMM_KERNEL_REG = 0,   /* register-blocked, no local memory: CPUs */
    CLG_GEMM_KERNEL_LOCAL = 1  /* local-memory tiles: GPUs */
} clg_gemm_kernel;

/* Tunables of the built-in GEMM for one device. The library fills them too (it changes with
 * the major version only); struct_size, set by clg_gemm_params_default() and
 * clg_gemm_get_params(), marks one made by this library: start from either. */
typedef struct clg_gemm_params {
    size_t struct_size;
    clg_gemm_kernel kernel;   /* kernel for problems above small_flops */
    unsigned mr, nr;          /* reg: C block per work-item, rows (1..16) x cols (16, 32, 48
                                 or 64) */
    unsigned local_m;         /* reg: work-items per work-group along m (1..64) */
    unsigned local_n;         /* reg: along n (1..64); groups of local_m * local_n items
                                 (fewer rows than local_m: more columns instead) */
    unsigned kc;              /* reg: k rows per packed B panel (16..4096) */
    unsigned pack_min_k;      /* reg: pack B when k >= this (always when op(B) = B^T) */
    unsigned stage_b;         /* reg, op(B) = B only: 1 = each work-group copies kc x nr
                                 blocks of B into local memory instead of packing; 2 = do so
                                 where packing would be due, k >= kc and one group holds
                                 every row tile; 3 = as 2, with rows of B a multiple of
                                 1 KiB apart (not only 4 KiB) aliasing where k >= kc, for
                                 packing too; 0 = never */
    unsigned mwg, nwg;        /* local: each work-group's tile of C, rows x columns (8..256) */
    unsigned kwg;             /* local: k per local-memory step (4..64) */
    unsigned mdimc, ndimc;    /* local: work-items along m and n; each computes mwg/mdimc x
                                 nwg/ndimc results (1..16 each) */
    unsigned vw;              /* local: floats per global load: 1, 2, 4 or 8 (divides mwg,
                                 nwg and kwg) */
    unsigned kwi;             /* local: unroll of the k loop (1, 2, 4 or 8; divides kwg) */
    unsigned db;              /* local: 1 = two local tiles, the next step's loaded while this
                                 one is multiplied; 0 = one */
    double small_flops;       /* 2*m*n*k at or below this: the one-element-per-item kernel */
    unsigned conv_mr, conv_nr;/* the convolutions' register blocks (implicit and Winograd
                                 products): rows 1..16 x columns 16 or 32; 0 = mr, nr (an nr
                                 above 32 then gives 32) */
    unsigned pack_a_min_n;    /* reg: copy A into MR-row panels first when n >= this (0:
                                 never), so that the product reads it as one stream */
    unsigned thin_nr;         /* reg: the block width (16 or 32, at most nr) of thin
                                 products: batched ones of few rows, those whose last
                                 nr-wide block would be mostly padding, and 1x1
                                 convolutions on small planes, images side by side. One
                                 FMA port keeps busy with 16-wide blocks' accumulators; two
                                 want 32-wide blocks' (products at most 16 columns wide
                                 take 16 either way) */
    unsigned pf_panel;        /* reg: how many k steps ahead a product prefetches B: its
                                 packed panel, or its rows read in place where k >= 64
                                 (0: none, the hardware's prefetchers alone; up to 256) */
} clg_gemm_params;

/** Sets one field of p from text: key as in a tuning file (kernel reg|local, mr, nr, local_m,
 *  local_n, kc, pack_min_k, stage_b, mwg, nwg, kwg, mdimc, ndimc, vw, kwi, db, small_flops,
 *  conv_mr, conv_nr, pack_a_min_n, thin_nr, pf_panel). Values are not checked against each other
 *  (clg_gemm_set_params does).
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for an unknown key or a value that is not a number. */
CLG_API clg_status clg_gemm_params_set_field(clg_gemm_params *p, const char *key, const char *value);

/** Writes every field of p as key, kv_sep, value, with item_sep after each (e.g. " " and "\n"
 *  for a tuning file's lines, "=" and "," for a command line); like snprintf, returns the
 *  length the whole text needs. */
CLG_API int clg_gemm_params_print(const clg_gemm_params *p, const char *kv_sep,
                                  const char *item_sep, char *out, size_t size);

/** Stores a tuning for ctx's device in its cache folder (atomically), used by every context
 *  created on that device from then on: parameters, and per shape class the backend to use
 *  in auto mode (CLG_GEMM_BUILTIN or CLG_GEMM_CLBLAST).
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for bad parameters; CLG_ERR_IO when the cache is off
 *          or the file cannot be written. */
CLG_API clg_status clg_gemm_save_tuning(clg_ctx *ctx, const clg_gemm_params *p,
                                        const clg_gemm_backend per_class[CLG_GEMM_CLASSES]);

/** The parameters ctx's GEMM uses now: the tuning file's when one exists for the device,
 *  else the default table's row for the device type and vendor. */
CLG_API clg_status clg_gemm_get_params(clg_ctx *ctx, clg_gemm_params *out);

/** Uses p for ctx's next GEMMs (validated: CLG_ERR_INVALID_ARG names the bad field). */
CLG_API clg_status clg_gemm_set_params(clg_ctx *ctx, const clg_gemm_params *p);

/** Default-table parameters for a device (no tuning file): the row of its type, vendor and,
 *  for CPUs, its class (clg_device_cpu_class; an unknown CLGRAD_CPU_CLASS counts as unset). */
CLG_API clg_gemm_params clg_gemm_params_default(const clg_device_info *dev);

/* How far the tuner searches. */
typedef enum clg_tune_level {
    CLG_TUNE_QUICK = 1, /* the default table's rows for every CPU class, then a line search
                           in each parameter from the best (steps onward while they win),
                           passes until one changes nothing: tens of seconds */
    CLG_TUNE_FULL = 2   /* a grid of register blocks (mr x nr, as many accumulators as
                           registers allow), then steps in every parameter until none helps:
                           minutes */
} clg_tune_level;

typedef struct clg_tune_options {
    size_t struct_size;      /* sizeof(clg_tune_options); set by clg_tune_options_default() */
    clg_tune_level level;    /* CLG_TUNE_QUICK */
    int runs;                /* timed runs per shape, the median counts (3) */
    /* Scores the search's start (the first set that works): GFLOP/s (the geometric mean over
     * the tuning shapes), 0 when it is rejected, with why in `why`. NULL: clg_gemm_tune_score
     * in this process. A tool can run candidates in a child process through it and compare,
     * so that one that crashes the driver cannot take the search down. */
    double (*evaluate)(void *user, const clg_gemm_params *p, char *why, size_t why_size);
    /* Called after each candidate (score 0: rejected, why says so). NULL: nothing. */
    void (*on_candidate)(void *user, const clg_gemm_params *p, double score, const char *why);
    void *user;
    /* Every later candidate runs against the best in paired runs (the two alternating, shape
     * by shape, so that a noisy machine's slow and fast phases hit both alike): how much
     * faster it is, 0 when rejected; above 1.02 it runs once more, and takes the best's place
     * if that second ratio is above 1.02 too (the second sets its score: the best's times
     * it). NULL: clg_gemm_tune_compare (clg_conv_tune_compare) in this process. */
    double (*compare)(void *user, const clg_gemm_params *p, const clg_gemm_params *best,
                      char *why, size_t why_size);
    /* Called after each paired run that measured its candidate (after on_candidate: a first
     * run that rejects it is reported there), and after every second run of a win, with why
     * "again", or why it was rejected (ratio 0). NULL: nothing. */
    void (*on_compared)(void *user, const clg_gemm_params *p, double ratio, const char *why);
    /* 1: the GEMM search tries the default table's rows for every class of the device's type
     * first; 0: only the search's own steps from the context's parameters (to check that it
     * finds good blocks where no row was measured). (1) */
    int table_rows;
} clg_tune_options;

/** Options with their defaults (quick, 3 runs, in-process, silent). */
CLG_API clg_tune_options clg_tune_options_default(void);

/** Scores parameters on ctx's device: first checked on awkward shapes with every transpose
 *  against a double-precision reference, then the median GFLOP/s of each tuning shape (the
 *  default network's products, 256^3 and 1024^3), geometric mean. ctx's parameters are
 *  restored afterwards.
 *  @return CLG_OK with *score; CLG_ERR_INVALID_ARG for invalid parameters; CLG_ERR_NUMERICS
 *          when the results are wrong; device errors as clg_sgemm. */
CLG_API clg_status clg_gemm_tune_score(clg_ctx *ctx, const clg_gemm_params *p, int runs,
                                       double *score);

/** How much faster p is than base on ctx's device: p checked against the double reference
 *  first, then for each tuning shape `runs` pairs of products (base, then p) after one of
 *  each untimed, the median of base's time over p's; the geometric mean over the shapes.
 *  ctx's parameters are restored afterwards. Errors as clg_gemm_tune_score. */
CLG_API clg_status clg_gemm_tune_compare(clg_ctx *ctx, const clg_gemm_params *p,
                                         const clg_gemm_params *base, int runs, double *ratio);

/** Searches the built-in GEMM's parameters for ctx's device, starting from its current ones,
 *  and leaves the best set in ctx (not stored: see clg_gemm_save_tuning).
 *  @param best receives the best parameters; best_score their score (> 0).
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for bad options; CLG_ERR_UNSUPPORTED when no
 *          candidate works (the message says why the start failed). */
CLG_API clg_status clg_gemm_tune(clg_ctx *ctx, const clg_tune_options *opts,
                                 clg_gemm_params *best, double *best_score);

/** Scores the convolutions' register blocks p->conv_mr x p->conv_nr (0: the GEMM's) on
 *  ctx's device: the implicit and Winograd algorithms checked in every pass against a
 *  double-precision reference on awkward shapes, then the three passes of the default
 *  network's and ResNet-20's layers timed (the algorithms AUTO picks), geometric mean
 *  GFLOP/s. ctx's parameters are restored afterwards.
 *  @return CLG_OK with *score; CLG_ERR_INVALID_ARG; CLG_ERR_NUMERICS for wrong results. */
CLG_API clg_status clg_conv_tune_score(clg_ctx *ctx, const clg_gemm_params *p, int runs,
                                       double *score);

/** How much faster the convolutions' blocks of p are than base's (checked first, then pairs
 *  of each layer's three passes, as clg_gemm_tune_compare). */
CLG_API clg_status clg_conv_tune_compare(clg_ctx *ctx, const clg_gemm_params *p,
                                         const clg_gemm_params *base, int runs, double *ratio);

/** Searches the convolutions' register blocks (as clg_gemm_tune does the GEMM's; quick: the
 *  rows next to the current one, full: every block the registers hold) and leaves the best
 *  in ctx. Same options, results and errors as clg_gemm_tune. */
CLG_API clg_status clg_conv_tune(clg_ctx *ctx, const clg_tune_options *opts,
                                 clg_gemm_params *best, double *best_score);

/** The tuning a context was asked for at its creation (clg_ctx_options.tune = 1, or
 *  CLGRAD_TUNE=quick): when its device has no tuning file yet, a quick search of the GEMM's
 *  parameters now (tens of seconds, reported through on_build as family "tuning"), stored for
 *  every later context; otherwise nothing. clg_ctx_warm_up and clg_train call it; looking up
 *  or using parameters never tunes. A failed search keeps the table's parameters.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG (NULL). */
CLG_API clg_status clg_gemm_tune_if_wanted(clg_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
