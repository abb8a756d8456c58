/* Fully connected layers as GEMMs on the tensors' memory. */
#include "gemm_internal.h"
#include "clgrad/fc.h"

/* N x K input, M x K weights, N x M output: checks that the element counts agree. */
static clg_status dims(clg_ctx *ctx, const char *call, const clg_tensor *x, const clg_tensor *w,
                       const clg_tensor *y, size_t *N, size_t *K, size_t *M)
{
    *N = x->shape.n;
    *K = clg_tensor_numel(x) / *N;
    *M = w->shape.n;
    if (clg_tensor_numel(w) != *M * *K)
        return clg__fail(ctx, CLG_ERR_SHAPE, "%s: weights have %zu values, expected %zu x %zu", call,
                         clg_tensor_numel(w), *M, *K);
    if (y->shape.n != *N || clg_tensor_numel(y) != *N * *M)
        return clg__fail(ctx, CLG_ERR_SHAPE, "%s: output has %zux%zu values, expected %zu x %zu", call,
                         y->shape.n, clg_tensor_numel(y) / y->shape.n, *N, *M);
    return CLG_OK;
}

static clg_status gemm(clg_ctx *ctx, int ta, int tb, size_t m, size_t n, size_t k,
                       const clg_tensor *a, size_t lda, const clg_tensor *b, size_t ldb,
                       clg_tensor *c, size_t ldc)
{
    clg__gemm_call g = {ta ? CLG_TRANS : CLG_NO_TRANS, tb ? CLG_TRANS : CLG_NO_TRANS, m, n, k, 1,
                        1.0f, 0.0f, a->mem, b->mem, c->mem, a->offset, b->offset, c->offset,
                        lda, ldb, ldc, 0, 0, 0, NULL, 0};
    return clg__gemm_dispatch(ctx, &g);
}


/* dst (cols x rows) = src^T for src (rows x cols) at offset 0, plus bias[r] on row r when
 * given. */
static clg_status transpose(clg_ctx *ctx, cl_mem src, size_t rows, size_t cols, clg_tensor *dst,
                            const clg_tensor *bias)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv", NULL, bias ? "clg_transpose_bias" : "clg_conv_transpose", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, src);
    clg__arg_u32(&l, rows);
    clg__arg_u32(&l, cols);
    clg__arg_mem(&l, dst->mem);
    clg__arg_u64(&l, dst->offset);
    if (bias)
        clg__arg_tensor(&l, bias);
    size_t global[3] = {cols, rows, 1}, local[3] = {cols >= 16 ? 16 : 1, 1, 1};
    return clg__launch_run(&l, global, local);
}

clg_status clg_fc_forward(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *w,
                          const clg_tensor *bias, clg_tensor *y)
{
    size_t N, K, M;
    clg_status st = clg__tensors_check(ctx, "clg_fc_forward", (const clg_tensor *[]){x, w, y}, 3);
    if (st == CLG_OK)
        st = dims(ctx, "clg_fc_forward", x, w, y, &N, &K, &M);
    if (st == CLG_OK && bias)
        st = clg__tensors_check(ctx, "clg_fc_forward", (const clg_tensor *[]){bias}, 1);
    if (st == CLG_OK && bias && clg_tensor_numel(bias) != M)
        st = clg__fail(ctx, CLG_ERR_SHAPE, "clg_fc_forward: bias holds %zu values, expected %zu",
                       clg_tensor_numel(bias), M);
    if (st == CLG_OK && N < M) {
        /* A batch smaller than the layer: y^T (M x N) = w (M x K) . x^T, then transposed. The
         * product then packs x^T (N x K) rather than all of w^T (M x K) on every call. */
        cl_mem yt;
        st = clg__scratch_get(ctx, CLG__SCRATCH_FC, M * N * sizeof(float), &yt);
        if (st == CLG_OK) {
            clg_tensor t = {ctx, yt, 0, {M, N, 1, 1}};
            st = gemm(ctx, 0, 1, M, N, K, w, K, x, K, &t, N);
        }
        if (st == CLG_OK) /* with the bias on the way */
            st = transpose(ctx, yt, M, N, y, bias);
        return st;
    }
    if (st == CLG_OK) /* y (N x M) = x (N x K) . w^T */
        st = gemm(ctx, 0, 1, N, M, K, x, K, w, K, y, M);
    if (st == CLG_OK && bias) {
        clg_tensor flat = *y; /* the bias runs along y's M values per sample */
        flat.shape = (clg_shape){N, M, 1, 1};
        st = clg_bias_add(ctx, bias, &flat);
    }
    return st;
}

clg_status clg_fc_backward_data(clg_ctx *ctx, const clg_tensor *dy, const clg_tensor *w,
                                clg_tensor *dx)
{
    size_t N, K, M;
    clg_status st = clg__tensors_check(ctx, "clg_fc_backward_data", (const clg_tensor *[]){dx, w, dy}, 3);
    if (st == CLG_OK)
        st = dims(ctx, "clg_fc_backward_data", dx, w, dy, &N, &K, &M);
    if (st == CLG_OK) /* dx (N x K) = dy (N x M) . w (M x K) */
        st = gemm(ctx, 0, 0, N, K, M, dy, M, w, K, dx, K);
    return st;
}

clg_status clg_fc_backward_weights(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *dy,
                                   clg_tensor *dw)
{
    size_t N, K, M;
    clg_status st = clg__tensors_check(ctx, "clg_fc_backward_weights", (const clg_tensor *[]){x, dw, dy}, 3);
    if (st == CLG_OK)
        st = dims(ctx, "clg_fc_backward_weights", x, dw, dy, &N, &K, &M);
    if (st == CLG_OK) /* dw (M x K) = dy^T (M x N) . x (N x K) */
        st = gemm(ctx, 1, 0, M, K, N, dy, M, x, K, dw, K);
    return st;
}
