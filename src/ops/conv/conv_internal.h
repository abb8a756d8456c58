/* Convolution internals (src/ops/conv/): the resolved geometry of one call, the table of
 * algorithms, the chooser, and each algorithm's entry points. */
#ifndef CLGRAD_CONV_INTERNAL_H
#define CLGRAD_CONV_INTERNAL_H

#include "clgrad/conv.h"
#include "clgrad/gemm.h"
#include "ops/activation_internal.h"
#include "ops/conv/conv_keep.h"
#include "tensor/tensor_internal.h"

typedef struct clg__conv_geom {
    size_t N, C, H, W;           /* input */
    size_t K, R, S;              /* weights K x Cg x R x S */
    size_t P, Q;                 /* output */
    size_t G, Cg, Kg;            /* groups, channels per group in and out */
    size_t sh, sw, pt, pb, pl, pr, dh, dw;
    size_t workspace_limit;      /* bytes */
    const clg_tensor *bias;      /* forward: bias and activation applied by the algorithm */
    clg__epi_act act;            /* (only when its fuses() says it can); else NULL and NONE */
    float relu_max;              /* with CLG__EPI_RELU: its cap (INFINITY: none; ReLU6: 6) */
    const clg_tensor *residual;  /* forward, GEMM only: added after the bias, before act */
    clg_tensor *db;              /* weight gradient: the bias gradient too (the same way) */
    clg__conv_keep *keep;        /* Winograd's V from the forward pass to the weight gradient */
} clg__conv_geom;

/* --- geometry.c --- */

/* Validates d against the shapes and fills g; messages name the field or tensor. */
clg_status clg__conv_geom_make(clg_ctx *ctx, const clg_conv2d_desc *d, clg_shape x, clg_shape w,
                               clg__conv_geom *g);
/* Images per chunk so that `per_image` bytes of scratch each stay within the limit (>= 1);
 * _after: within what the limit leaves after `fixed` bytes. */
size_t clg__conv_chunk(const clg__conv_geom *g, size_t per_image);
size_t clg__conv_chunk_after(const clg__conv_geom *g, size_t fixed, size_t per_image);

/* --- algorithms.c: the table of algorithms --- */

/* Which devices' decisions a row of the table serves (clg_ctx_decides_as_gpu): an algorithm
 * with a CPU form and a GPU form is two rows. */
enum { CLG__CONV_ANY = 0, CLG__CONV_CPU = 1, CLG__CONV_GPU = 2 };

typedef struct clg__conv_algo_def {
    clg_conv_algo algo;
    int form;               /* CLG__CONV_ANY, _CPU or _GPU */
    const char *needs;      /* what applies() asks for, for the message when it says no */
    int (*applies)(const clg__conv_geom *g);                    /* NULL: every layer */
    /* Scratch bytes: fixed plus per_image for each image of a chunk. NULL: none. */
    void (*bytes)(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass, size_t *fixed,
                  size_t *per_image);
    int scratch_optional;   /* runs without scratch where it does not fit (more slowly) */
    /* The pass; for the backward passes `a` is dy; outputs are overwritten. */
    clg_status (*run)(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                      const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
    /* Whether its pass does the extra work itself: the forward pass g->bias and g->act, the
     * weight gradient g->db. NULL: never. */
    int (*fuses)(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass);
    /* Builds the programs it uses, with their options (clg_ctx_warm_up). */
    clg_status (*warm_up)(clg_ctx *ctx);
    /* 1: where it fuses the forward pass's epilogue, g->residual goes in it too (before act) */
    int fuses_sum;
} clg__conv_algo_def;

/* The row of a concrete algorithm in the form ctx takes (CPU or GPU); NULL for AUTO, FIND
 * and others. */
const clg__conv_algo_def *clg__conv_algo_def_for(const clg_ctx *ctx, clg_conv_algo algo);
/* Whether algo (any int) is a concrete algorithm: IM2COL .. GEMM, DEPTHWISE. */
int clg__conv_algo_concrete(int algo);
/* The algorithm named (case-insensitive; "auto" and "find" too), or -1. */
clg_conv_algo clg__conv_algo_named(const char *name);
/* Whether `algo` applies to the pass; on success the least and most scratch bytes it uses. */
clg_status clg__conv_algo_fits(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                               clg_conv_algo algo, size_t *min_bytes, size_t *max_bytes);
/* Runs one concrete algorithm. */
clg_status clg__conv_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                         clg_conv_algo algo, const clg_tensor *a, const clg_tensor *b,
                         clg_tensor *out);
int clg__conv_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                    clg_conv_algo algo);
/* Whether its fused forward pass also adds g->residual (the algorithm table's fuses_sum). */
int clg__conv_fuses_sum(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_algo algo);
/* Whether a kernel family belongs to the convolutions (their warm-up builds it). */
int clg__conv_family(const char *family);
clg_status clg__conv_warm_up(clg_ctx *ctx);

/* --- choose.c --- */

/* Resolves AUTO / FIND / CLGRAD_CONV_ALGO / workspace fallback to a concrete algorithm. FIND
 * times the candidates on a, b, out (which may be NULL: then the heuristic decides). */
clg_status clg__conv_resolve(clg_ctx *ctx, const clg_conv2d_desc *d, clg_conv_pass pass,
                             const clg__conv_geom *g, const clg_tensor *a, const clg_tensor *b,
                             clg_tensor *out, clg_conv_algo *algo);
/* Parses the text of a per-device find file into the state (for tests and fuzzing too);
 * returns the entries taken. The state comes from clg__conv_find_state_create. */
size_t clg__conv_find_parse(void *state, const char *text);
void *clg__conv_find_state_create(void);
void clg__conv_find_state_destroy(void *state);

/* --- the algorithms --- */

/* im2col.c */
void clg__conv_im2col_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                            size_t *fixed, size_t *per_image);
clg_status clg__conv_im2col_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                const clg_tensor *a, const clg_tensor *b, clg_tensor *out);

/* depthwise.c: one filter per channel, any kernel size, stride, padding and dilation; the
 * CPU form's stride-1 passes by rows of vectors. */
int clg__conv_depthwise_applies(const clg__conv_geom *g);
int clg__conv_depthwise_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass);
clg_status clg__conv_depthwise_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                   const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
clg_status clg__conv_depthwise_cpu_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                       const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
clg_status clg__conv_depthwise_warm_up(clg_ctx *ctx);

/* gemm1x1.c: 1x1, stride 1, no padding; and C = alpha op(A) op(B) + beta C on buffers,
 * batched, every operand given in elements (for the algorithms built on GEMMs). */
int clg__conv_gemm1x1_applies(const clg__conv_geom *g);

/* conv.c: the forward pass's epilogue as passes after it, for an algorithm (or a kernel of
 * it) that did not apply it: y += bias (may be NULL), then y += residual (may be NULL), then
 * act (a ReLU min(max(y, 0), relu_max), INFINITY a plain one; or SiLU). */
clg_status clg__conv_epilogue_after(clg_ctx *ctx, const clg_tensor *bias,
                                    const clg_tensor *residual, clg__epi_act act,
                                    float relu_max, clg_tensor *y);
/* Whether a forward pass of one group takes its epilogue (the 1x1 products' and im2col's). */
int clg__conv_gemm1x1_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass);
/* y's images [n0, n0 + cnt) = W (K x k) . B_n (k x PQ, images sb apart from b_off; sb 0: the
 * images side by side, one k x cnt*PQ matrix, where clg__gemm_folds_columns), one group,
 * with g's bias, residual and activation in the product's stores; *done 0 where the product's
 * kernel left them (the caller applies them after, clg__conv_epilogue_after). */
clg_status clg__conv_forward_product(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *w,
                                     cl_mem b, size_t b_off, size_t k, size_t sb, size_t n0,
                                     size_t cnt, clg_tensor *y, int *done);
clg_status clg__conv_gemm1x1_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                 const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
clg_status clg__conv_gemm(clg_ctx *ctx, int ta, int tb, size_t m, size_t n, size_t k, cl_mem a,
                          size_t a_off, size_t lda, size_t sa, cl_mem b, size_t b_off,
                          size_t ldb, size_t sb, float beta, cl_mem c, size_t c_off, size_t ldc,
                          size_t sc, size_t batch);

/* implicit.c: stride 1 by products over shifted rows of a padded copy of the input, else the
 * direct kernels. Its shifted form's scratch is `fixed` bytes plus `per_image` per image of a
 * chunk; the build options of its kernels go to out. */
clg_status clg__conv_implicit_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
int clg__conv_implicit_applies(const clg__conv_geom *g);
/* The shifted form applies and one image's padded input (and its fixed scratch) fits. */
int clg__conv_implicit_fits(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass);
void clg__conv_implicit_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                              size_t *fixed, size_t *per_image);
clg_status clg__conv_implicit_options(clg_ctx *ctx, char *out, size_t size);
/* Whether its pass of this layer does the extra work itself: the forward pass g->bias and
 * g->act (its shifted form with pixels as rows, in its epilogue), the weight gradient g->db
 * (one more row of products). */
int clg__conv_implicit_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass);

/* stem.c: the implicit algorithm's forward pass of a first layer on CPUs (at most 4 input
 * channels, one group): a kernel of its own, no workspace, bias and activation fused. */
int clg__conv_stem_applies(const clg__conv_geom *g, clg_conv_pass pass);
clg_status clg__conv_stem_run(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x,
                              const clg_tensor *w, clg_tensor *y);
clg_status clg__conv_stem_warm_up(clg_ctx *ctx);

/* tile.c: the implicit algorithm on GPUs (contexts that decide as one): implicit-GEMM
 * passes on the GEMM's local-memory tiles, any stride and dilation, the forward pass with
 * g->bias and g->act in its epilogue; its only scratch, the weight gradient's partial sums,
 * stays within the workspace limit. */
clg_status clg__conv_tile_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                              const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
clg_status clg__conv_tile_warm_up(clg_ctx *ctx);

/* direct.c: per-pixel kernels, no workspace (the implicit algorithm's fallback), built with
 * CLG__CONV_DIRECT_OPTIONS: CB channels per work-item. */
#define CLG__CONV_DIRECT_CB 8
#define CLG__CONV_DIRECT_OPTIONS "-DCB=" CLG__STR(CLG__CONV_DIRECT_CB)
clg_status clg__conv_direct_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                const clg_tensor *a, const clg_tensor *b, clg_tensor *out);

/* winograd.c: F(4x4, 3x3) and F(2x2, 5x5), stride 1, dilation 1, all three passes; its
 * scratch is `fixed` plus `per_image` per image of a chunk; the build options of its kernels
 * for an r x r kernel and products nr (16 or 32) channels wide. */
int clg__conv_winograd_applies(const clg__conv_geom *g);
void clg__conv_winograd_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                              size_t *fixed, size_t *per_image);
clg_status clg__conv_winograd_options(clg_ctx *ctx, size_t r, unsigned nr, char *out,
                                      size_t size);
clg_status clg__conv_winograd_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  const clg_tensor *a, const clg_tensor *b, clg_tensor *out);

/* The register tile of the products (the GEMM's MR x NR), or 8 x 32 when it cannot be read
 * (for sizes only). */
clg_status clg__conv_tiles(clg_ctx *ctx, unsigned *mr, unsigned *nr);
void clg__conv_tiles_or_default(clg_ctx *ctx, unsigned *mr, unsigned *nr);

#endif
