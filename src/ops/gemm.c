/* clg_sgemm / clg_sgemm_batched: argument checks, then the built-in kernels or CLBlast. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gemm_internal.h"

/* Checks one operand: stored rows x cols with leading dimension ld, `batch` copies `stride`
 * apart, inside its tensor. *extent: the elements from its first to its last, plus one. */
static clg_status check_operand(clg_ctx *ctx, const char *name, clg_matrix x, size_t rows,
                                size_t cols, size_t stride, size_t batch, size_t *extent)
{
    if (!x.t)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_sgemm: %s.t is NULL", name);
    if (x.t->ctx != ctx)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_sgemm: %s lives on another context", name);
    if (x.ld < cols || x.ld == 0)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "clg_sgemm: ld%s = %zu is less than the %zu columns %s has in memory",
                         name, x.ld, cols, name);
    if (x.ld > UINT32_MAX)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_sgemm: ld%s = %zu exceeds 2^32-1", name, x.ld);
    /* Last element used: offset + (batch-1)*stride + (rows-1)*ld + cols - 1, overflow-checked. */
    size_t numel = clg_tensor_numel(x.t);
    size_t span = (rows - 1) <= (SIZE_MAX - cols) / x.ld ? (rows - 1) * x.ld + cols : SIZE_MAX;
    size_t batches = batch - 1 <= SIZE_MAX / (stride ? stride : 1) ? (batch - 1) * stride : SIZE_MAX;
    int fits = span <= numel && batches <= numel - span && x.offset <= numel - span - batches;
    if (!fits)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "clg_sgemm: %s (%zu x %zu, ld %zu, offset %zu, %zu batch(es) %zu apart) "
                         "does not fit its tensor of %zu floats",
                         name, rows, cols, x.ld, x.offset, batch, stride, numel);
    *extent = batches + span;
    return CLG_OK;
}

/* Whether C's elements (from its tensor's buffer start) overlap those an operand reads:
 * the result would then depend on the order in which work-items run. Ranges, not exact
 * element sets: a C interleaved with its input is refused too. */
static int overlaps(clg_matrix c, size_t c_span, clg_matrix x, size_t x_span)
{
    if (x.t->mem != c.t->mem)
        return 0;
    size_t c0 = c.t->offset + c.offset, x0 = x.t->offset + x.offset;
    return c0 < x0 + x_span && x0 < c0 + c_span;
}

clg_gemm_class clg_gemm_classify(size_t m, size_t n, size_t k, size_t batch)
{
    double flops = 2.0 * (double)m * (double)n * (double)k * (double)batch;
    if (flops <= 4194304.0)
        return CLG_GEMM_CLASS_SMALL;
    return flops <= 1073741824.0 ? CLG_GEMM_CLASS_MEDIUM : CLG_GEMM_CLASS_LARGE;
}

clg_status clg_sgemm_batched(clg_ctx *ctx, clg_transpose ta, clg_transpose tb, size_t m, size_t n,
                             size_t k, float alpha, clg_matrix a, size_t stride_a, clg_matrix b,
                             size_t stride_b, float beta, clg_matrix c, size_t stride_c,
                             size_t batch)
{
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_sgemm: ctx is NULL");
    if ((ta != CLG_NO_TRANS && ta != CLG_TRANS) || (tb != CLG_NO_TRANS && tb != CLG_TRANS))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_sgemm: transpose flags must be CLG_NO_TRANS or CLG_TRANS");
    if (m > UINT32_MAX || n > UINT32_MAX || k > UINT32_MAX)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_sgemm: m, n, k = %zu, %zu, %zu: each must be below 2^32", m, n, k);
    if (m == 0 || n == 0 || batch == 0)
        return CLG_OK;
    size_t c_span = 0, a_span = 0, b_span = 0;
    clg_status st = check_operand(ctx, "C", c, m, n, stride_c, batch, &c_span);
    if (st == CLG_OK && k > 0)
        st = check_operand(ctx, "A", a, ta ? k : m, ta ? m : k, stride_a, batch, &a_span);
    if (st == CLG_OK && k > 0)
        st = check_operand(ctx, "B", b, tb ? n : k, tb ? k : n, stride_b, batch, &b_span);
    if (st != CLG_OK)
        return st;
    if (batch > 1 && stride_c < (m - 1) * c.ld + n)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "clg_sgemm: stride_c = %zu makes the batch's C matrices overlap", stride_c);
    if (k > 0 && overlaps(c, c_span, a, a_span))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_sgemm: C overlaps A in memory (C is "
                         "written while A is read: the result would depend on the order of work)");
    if (k > 0 && overlaps(c, c_span, b, b_span))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_sgemm: C overlaps B in memory (C is "
                         "written while B is read: the result would depend on the order of work)");
    clg__gemm_call g = {ta, tb, m, n, k, batch, alpha, beta, NULL, NULL, c.t->mem, 0, 0,
                        c.t->offset + c.offset, 0, 0, c.ld, stride_a, stride_b, stride_c, NULL, 0};
    if (k > 0) {
        g.a = a.t->mem;
        g.b = b.t->mem;
        g.a_off = a.t->offset + a.offset;
        g.b_off = b.t->offset + b.offset;
        g.lda = a.ld;
        g.ldb = b.ld;
    }
    return clg__gemm_dispatch(ctx, &g);
}

clg_status clg__gemm_dispatch(clg_ctx *ctx, const clg__gemm_call *g)
{
    clg__gemm_state *s = NULL;
    clg_status st = clg__gemm_state_get(ctx, &s);
    if (st != CLG_OK)
        return st;
    clg_gemm_backend be = s->backend;
    if (be == CLG_GEMM_AUTO)
        be = s->class_backend[clg_gemm_classify(g->m, g->n, g->k, g->batch)];
    if (g->fold_n && s->params.kernel != CLG_GEMM_KERNEL_REG)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "GEMM: folded columns need the register kernel");
    if (be == CLG_GEMM_CLBLAST && g->k > 0 && !g->fold_n)
        return clg__gemm_clblast(ctx, g);
    return clg__gemm_builtin(ctx, &s->params, g);
}

int clg__gemm_folds_columns(clg_ctx *ctx)
{
    clg__gemm_state *s = NULL;
    char saved[CLG__ERR_TEXT];
    memcpy(saved, ctx->last_error, sizeof saved);
    int ok = clg__gemm_state_get(ctx, &s) == CLG_OK && s->params.kernel == CLG_GEMM_KERNEL_REG;
    memcpy(ctx->last_error, saved, sizeof saved);
    return ok;
}

clg_status clg_sgemm(clg_ctx *ctx, clg_transpose ta, clg_transpose tb, size_t m, size_t n, size_t k,
                     float alpha, clg_matrix a, clg_matrix b, float beta, clg_matrix c)
{
    return clg_sgemm_batched(ctx, ta, tb, m, n, k, alpha, a, 0, b, 0, beta, c, 0, 1);
}
