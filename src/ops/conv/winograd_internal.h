/* Winograd convolution internals shared by the CPU form (winograd.c, channel vectors of 16 per
 * work-item) and the GPU form (winograd_gpu.c, scalar transforms and batched GEMM tiles). */
#ifndef CLGRAD_WINOGRAD_INTERNAL_H
#define CLGRAD_WINOGRAD_INTERNAL_H

#include "ops/conv/conv_internal.h"

/* The pass seen as a forward convolution of `ins` channels (per group) into `outs`. */
typedef struct clg__wino_problem {
    size_t ins_total, ins, outs_total, outs;
    size_t Hin, Win, P, Q;    /* input and output planes */
    long top, left;           /* the input's place in the padded grid */
    size_t m, th, tw, Hq, Wq; /* output tile, tiles and the padded grid they read */
    size_t ldc, ldv, ldk;     /* CPU form's row lengths: padded input, V, U */
    int flip;                 /* the data gradient: filters turned and transposed */
} clg__wino_problem;

/* Output tile: F(4x4, 3x3) for 3x3 kernels (4x fewer multiplications, 36 transform points),
 * F(2x2, 5x5) for 5x5 (2.78x, also 36 points). */
size_t clg__wino_tile(size_t r);
/* Transform points per tile. */
size_t clg__wino_points(const clg__conv_geom *g);
/* The problem of a pass (the weight gradient's is the forward's); nr pads the CPU form's U. */
clg__wino_problem clg__wino_problem_of(const clg__conv_geom *g, clg_conv_pass pass, unsigned nr);

/* The output's arguments of both forms' last kernel: th, tw, P, Q, y (offset to images from
 * n0 and group gi), an image's and a plane's floats, the bias (or `any` buffer without one),
 * its offset, and flags (1: bias, 2: ReLU). */
void clg__wino_args_output(clg__launch *l, const clg__conv_geom *g, const clg__wino_problem *w,
                           clg_tensor *y, size_t n0, size_t gi, cl_mem any);

/* winograd_gpu.c: the form for contexts that decide as GPUs. */
void clg__conv_winograd_gpu_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  size_t *fixed, size_t *per_image);
clg_status clg__conv_winograd_gpu_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                      const clg_tensor *a, const clg_tensor *b, clg_tensor *out);
/* The build options of its program for an r x r kernel. */
void clg__conv_winograd_gpu_options(size_t r, char *out, size_t size);

#endif
