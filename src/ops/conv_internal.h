/* Convolution internals: the resolved geometry of one call and the algorithms' entry points. */
#ifndef CLGRAD_CONV_INTERNAL_H
#define CLGRAD_CONV_INTERNAL_H

#include "clgrad/conv.h"
#include "clgrad/gemm.h"
#include "tensor/tensor_internal.h"

typedef struct clg__conv_geom {
    size_t N, C, H, W;           /* input */
    size_t K, R, S;              /* weights K x Cg x R x S */
    size_t P, Q;                 /* output */
    size_t G, Cg, Kg;            /* groups, channels per group in and out */
    size_t sh, sw, pt, pb, pl, pr, dh, dw;
    size_t workspace_limit;      /* bytes */
    const clg_tensor *bias;      /* forward: bias and ReLU applied by the algorithm (only when */
    int relu;                    /* clg__conv_shift_fuses says it can); else NULL and 0 */
    clg_tensor *db;              /* weight gradient: the bias gradient too (the same way) */
} clg__conv_geom;

/* Validates d against the shapes and fills g; messages name the field or tensor. */
clg_status clg__conv_geom_make(clg_ctx *ctx, const clg_conv2d_desc *d, clg_shape x, clg_shape w,
                               clg__conv_geom *g);

/* Whether `algo` applies to the pass; on success the least and most scratch bytes it uses. */
clg_status clg__conv_algo_fits(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                               clg_conv_algo algo, size_t *min_bytes, size_t *max_bytes);

/* The three passes of each algorithm. For the backward passes `a` is dy; outputs are
 * overwritten. */
clg_status clg__conv_im2col_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
clg_status clg__conv_gemm1x1_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                 const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
clg_status clg__conv_implicit_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
clg_status clg__conv_shift_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                               const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
clg_status clg__conv_winograd_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  const clg_tensor *a, const clg_tensor *b, clg_tensor *out);

/* The implicit algorithm's fast form (conv_shift.c): stride 1, products over shifted rows of
 * a padded copy of the input. Its scratch is `fixed` bytes plus `per_image` per image of a
 * chunk; the build options of its kernels go to out. */
int clg__conv_shift_applies(const clg__conv_geom *g);
/* It applies and one image's padded input (and its fixed scratch) fits the workspace. */
int clg__conv_shift_fits(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass);
void clg__conv_shift_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                           size_t *fixed, size_t *per_image);
clg_status clg__conv_shift_options(clg_ctx *ctx, char *out, size_t size);
/* Whether the implicit algorithm's pass of this layer does the extra work itself: the forward
 * pass g->bias and g->relu (its shifted form with pixels as rows, in its epilogue), the
 * weight gradient g->db (one more row of products). */
int clg__conv_shift_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass);

/* Resolves AUTO / FIND / CLGRAD_CONV_ALGO / workspace fallback to a concrete algorithm. FIND
 * times the candidates on a, b, out (which may be NULL: then the heuristic decides). */
clg_status clg__conv_resolve(clg_ctx *ctx, const clg_conv2d_desc *d, clg_conv_pass pass,
                             const clg__conv_geom *g, const clg_tensor *a, const clg_tensor *b,
                             clg_tensor *out, clg_conv_algo *algo);

/* Runs one concrete algorithm. */
clg_status clg__conv_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                         clg_conv_algo algo, const clg_tensor *a, const clg_tensor *b,
                         clg_tensor *out);

/* Parses the text of a per-device find file into the state (for tests and fuzzing too);
 * returns the entries taken. The state comes from clg__conv_find_state_create. */
size_t clg__conv_find_parse(void *state, const char *text);
void *clg__conv_find_state_create(void);
void clg__conv_find_state_destroy(void *state);

/* Images per chunk so that `per_image` bytes of scratch each stay within the limit (>= 1);
 * _after: within what the limit leaves after `fixed` bytes. */
size_t clg__conv_chunk(const clg__conv_geom *g, size_t per_image);
size_t clg__conv_chunk_after(const clg__conv_geom *g, size_t fixed, size_t per_image);

/* The register tile of the products (the GEMM's MR x NR), or 8 x 32 when it cannot be read
 * (for sizes only). */
clg_status clg__conv_tiles(clg_ctx *ctx, unsigned *mr, unsigned *nr);
void clg__conv_tiles_or_default(clg_ctx *ctx, unsigned *mr, unsigned *nr);

/* Winograd (conv_winograd.c): F(4x4, 3x3) and F(2x2, 5x5), stride 1, dilation 1, all three
 * passes; its scratch is `fixed` plus `per_image` per image of a chunk; the build
 * options of its kernels for an r x r kernel. */
int clg__conv_winograd_applies(const clg__conv_geom *g);
void clg__conv_winograd_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                              size_t *fixed, size_t *per_image);
clg_status clg__conv_winograd_options(clg_ctx *ctx, size_t r, char *out, size_t size);


#endif
