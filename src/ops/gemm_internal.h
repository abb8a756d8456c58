/* GEMM internals shared by the built-in kernels, the CLBlast backend and the parameter table. */
#ifndef CLGRAD_GEMM_INTERNAL_H
#define CLGRAD_GEMM_INTERNAL_H

#include "clgrad/ops.h"
#include "ops/activation_internal.h"
#include "tensor/tensor_internal.h"

typedef struct clg__gemm_state {
    clg_gemm_backend backend;
    clg_gemm_params params;
    /* For auto: per shape class, the backend the tuning file measured faster. */
    clg_gemm_backend class_backend[CLG_GEMM_CLASSES];
    int tuned;                   /* 1 when params came from a tuning file */
} clg__gemm_state;

/* What a product may apply as it stores C (a 1x1 convolution's bias and activation): a bias
 * per row of C, then the sum with a residual laid out as C (offset res_off, C's leading
 * dimension and batch stride), then act (min(max(c, 0), relu_max), or SiLU). The register
 * kernel applies it where it writes the final C in one pass (done set to 1); other kernels
 * leave it (done 0) to the caller. */
typedef struct clg__gemm_epilogue {
    cl_mem bias;                 /* or NULL */
    size_t bias_off;
    cl_mem residual;             /* or NULL */
    size_t res_off;
    clg__epi_act act;
    float relu_max;              /* with CLG__EPI_RELU; INFINITY: a plain ReLU */
    int done;
} clg__gemm_epilogue;

/* One validated, possibly batched problem, with everything in elements. */
typedef struct clg__gemm_call {
    clg_transpose ta, tb;
    size_t m, n, k, batch;
    float alpha, beta;
    cl_mem a, b, c;
    size_t a_off, b_off, c_off;  /* absolute, including the tensors' view offsets */
    size_t lda, ldb, ldc;
    size_t sa, sb, sc;
    clg__gemm_epilogue *epi;     /* NULL: none */
    size_t fold_n;               /* 0, or: batch 1, k > 0, B one k x n matrix, and C's
                                    columns run across entries of fold_n (>= 16) columns, sc
                                    apart (ldc between an entry's rows): the built-in register
                                    kernel only (clg__gemm_folds_columns), B packed */
} clg__gemm_call;

/* Whether products with C's columns across entries (clg__gemm_call.fold_n) run here: the
 * built-in register kernel's (CPUs). */
int clg__gemm_folds_columns(clg_ctx *ctx);

/* Runs a product that the caller has already checked (sizes, bounds, context): the entry for
 * other ops, which multiply scratch buffers as well as tensors. */
clg_status clg__gemm_dispatch(clg_ctx *ctx, const clg__gemm_call *g);

/* The context's GEMM state, created (defaults + tuning file) on first use. */
clg_status clg__gemm_state_get(clg_ctx *ctx, clg__gemm_state **out);

const char *clg__gemm_class_name(clg_gemm_class c);

/* The default table's parameter rows for one device type (CPUs: every class's) and the
 * last, generic row, at most cap; returns how many. Starting points for the tuner. */
size_t clg__gemm_table_rows(clg_device_type type, clg_gemm_params *out, size_t cap);

/* The common start of the tuner's measurements (src/ops/gemm_score.c): arguments checked
 * (base may be NULL where there is none), *out zeroed, base and then p validated and p set
 * on ctx with the built-in backend; the context's own settings kept in the guard, which
 * clg__tune_end puts back. */
#define CLG__TUNE_MAX_RUNS 15 /* timed runs a tuner's measurement takes at most */

typedef struct clg__tune_guard {
    clg__gemm_state *s;
    clg_gemm_params params;
    clg_gemm_backend backend;
} clg__tune_guard;
clg_status clg__tune_begin(clg_ctx *ctx, const char *what, const clg_gemm_params *p,
                           const clg_gemm_params *base, int need_base, int runs, double *out,
                           clg__tune_guard *g);
void clg__tune_end(const clg__tune_guard *g);

/* One timed run of what a tuner measures, with the parameters the context holds now. */
typedef clg_status (*clg__tune_timer)(void *arg, double *seconds);

/* The median seconds of `runs` runs after an untimed one (the element at (runs - 1) / 2 of the
 * sorted times: the run whose GFLOP/s is at runs / 2 of the sorted rates). */
clg_status clg__tune_time(clg__tune_timer time, void *arg, int runs, double *median);

/* The median of base's time over p's in `runs` pairs (base, then p, set on the guard's
 * context in turn) after an untimed pair: a noisy machine's slow and fast phases hit both. */
clg_status clg__tune_pairs(const clg__tune_guard *g, const clg_gemm_params *p,
                           const clg_gemm_params *base, clg__tune_timer time, void *arg, int runs,
                           double *ratio);

/* Checks every field of p; on failure writes the reason to ctx. */
clg_status clg__gemm_params_check(clg_ctx *ctx, const clg_gemm_params *p);

/* Path of the device's tuning file in the cache folder (malloc'd), or NULL without a cache. */
char *clg__gemm_tuning_path(const clg_ctx *ctx);

/* Parses a tuning file's text into params and per-class backends (defaults stay where the
 * text says nothing). Returns CLG_ERR_CORRUPT for text that is not a tuning file. */
clg_status clg__gemm_tuning_parse(clg_ctx *ctx, const char *text, clg_gemm_params *p,
                                  clg_gemm_backend class_backend[CLG_GEMM_CLASSES]);

/* Builds the programs the context's GEMM parameters use. */
clg_status clg__gemm_warm_up(clg_ctx *ctx);

clg_status clg__gemm_builtin(clg_ctx *ctx, const clg_gemm_params *p, const clg__gemm_call *g);

/* How the built-in's register kernel reads B in a product (gemm.cl's B_PANEL): in place, from
 * packed panels, or staged through local memory. */
enum { CLG__GEMM_B_IN_PLACE = 0, CLG__GEMM_B_PACKED = 1, CLG__GEMM_B_STAGED = 2 };
int clg__gemm_b_mode(const clg_gemm_params *p, const clg__gemm_call *g);

/* C (m x n, ldc) = the sum of `slices` dense m x n partial products, one after the other in
 * parts, in slice order (results do not depend on scheduling), + beta * C. */
clg_status clg__gemm_reduce_slices(clg_ctx *ctx, cl_mem parts, size_t slices, size_t m, size_t n,
                                   float beta, cl_mem c, size_t c_off, size_t ldc);

/* The tile parameters for an m x n product: p, or where a side is below half of p's tile
 * (most of each work-group's tile would be empty: small and skinny shapes) 16 x 16 tiles of
 * 8 x 8 work-items written to *small. */
const clg_gemm_params *clg__gemm_tile_fit(const clg_gemm_params *p, size_t m, size_t n,
                                          clg_gemm_params *small);

/* Builds clg_gemm_tile's program for p (transposes and CONV as below), and the one for the
 * small tiles clg__gemm_tile_fit gives where they differ (warm-ups). */
clg_status clg__gemm_tile_build(clg_ctx *ctx, const clg_gemm_params *p, int ta, int tb, int conv);

/* The -D options of clg_gemm_tile's program (gemm_tile.cl) for p, with the transposes, and
 * CONV (0: the GEMM; 1, 2, 3: the implicit-GEMM convolution's passes). */
void clg__gemm_tile_options(const clg_gemm_params *p, int ta, int tb, int conv, char *out,
                            size_t size);
clg_status clg__gemm_clblast(clg_ctx *ctx, const clg__gemm_call *g);

#endif
