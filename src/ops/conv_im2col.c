/* Convolution by im2col + GEMM (chunks of images bounded by the workspace limit), and the 1x1
 * case that needs no im2col. */
#include "conv_internal.h"
#include "gemm_internal.h"

enum { LOCAL0 = 32, ROWS = 8 };

/* C = alpha op(A) op(B) + beta C on buffers, batched; every operand given in elements. */
static clg_status gemm(clg_ctx *ctx, int ta, int tb, size_t m, size_t n, size_t k, cl_mem a,
                       size_t a_off, size_t lda, size_t sa, cl_mem b, size_t b_off, size_t ldb,
                       size_t sb, float beta, cl_mem c, size_t c_off, size_t ldc, size_t sc,
                       size_t batch)
{
    clg__gemm_call g = {ta ? CLG_TRANS : CLG_NO_TRANS, tb ? CLG_TRANS : CLG_NO_TRANS, m, n, k,
                        batch, 1.0f, beta, a, b, c, a_off, b_off, c_off, lda, ldb, ldc, sa, sb, sc};
    return clg__gemm_dispatch(ctx, &g);
}

/* The geometry arguments shared by im2col and col2im. */
static void geometry_args(clg__launch *l, const clg__conv_geom *g)
{
    size_t v[] = {g->Cg, g->H, g->W, g->R, g->S, g->P, g->Q, g->sh, g->sw, g->pt, g->pl, g->dh, g->dw};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(l, v[i]);
}

/* cols[n*s_n + crs*s_crs + pq] for nb images of group gi starting at image n0. */
static clg_status im2col(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x, size_t n0,
                         size_t nb, size_t gi, cl_mem cols, size_t s_n, size_t s_crs)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv", NULL, "clg_conv_im2col", &l);
    if (st != CLG_OK)
        return st;
    size_t img = g->C * g->H * g->W;
    clg__arg_mem(&l, x->mem);
    clg__arg_u64(&l, x->offset + n0 * img + gi * g->Cg * g->H * g->W);
    clg__arg_u64(&l, img);
    geometry_args(&l, g);
    clg__arg_mem(&l, cols);
    clg__arg_u64(&l, s_n);
    clg__arg_u64(&l, s_crs);
    size_t global[3] = {g->Cg * g->R * g->S, nb, 1}, local[3] = {ROWS, 1, 1};
    return clg__launch_run(&l, global, local);
}

static clg_status col2im(clg_ctx *ctx, const clg__conv_geom *g, cl_mem cols, size_t s_n,
                         size_t s_crs, clg_tensor *dx, size_t n0, size_t nb, size_t gi)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv", NULL, "clg_conv_col2im", &l);
    if (st != CLG_OK)
        return st;
    size_t img = g->C * g->H * g->W;
    clg__arg_mem(&l, cols);
    clg__arg_u64(&l, s_n);
    clg__arg_u64(&l, s_crs);
    geometry_args(&l, g);
    clg__arg_mem(&l, dx->mem);
    clg__arg_u64(&l, dx->offset + n0 * img + gi * g->Cg * g->H * g->W);
    clg__arg_u64(&l, img);
    size_t global[3] = {g->H, g->Cg, nb}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}

static clg_status gather_dy(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *dy,
                            size_t n0, size_t nb, size_t gi, cl_mem out)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv", NULL, "clg_conv_gather_dy", &l);
    if (st != CLG_OK)
        return st;
    size_t pq = g->P * g->Q;
    clg__arg_mem(&l, dy->mem);
    clg__arg_u64(&l, dy->offset + n0 * g->K * pq + gi * g->Kg * pq);
    clg__arg_u64(&l, g->K * pq);
    clg__arg_u32(&l, g->Kg);
    clg__arg_u32(&l, pq);
    clg__arg_u32(&l, nb);
    clg__arg_mem(&l, out);
    size_t global[3] = {pq, g->Kg, nb}, local[3] = {LOCAL0, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* Forward and backward-data: per chunk of images and per group, one batched GEMM between the
 * group's weights and each image's columns. */
static clg_status by_image(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                           const clg_tensor *a, const clg_tensor *w, clg_tensor *out)
{
    size_t pq = g->P * g->Q, crs = g->Cg * g->R * g->S;
    size_t nb = clg__conv_chunk(g, crs * pq * sizeof(float));
    cl_mem cols;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, nb * crs * pq * sizeof(float), &cols);
    for (size_t n0 = 0; n0 < g->N && st == CLG_OK; n0 += nb) {
        size_t cnt = g->N - n0 < nb ? g->N - n0 : nb;
        for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
            size_t w_off = w->offset + gi * g->Kg * crs;
            size_t y_off = n0 * g->K * pq + gi * g->Kg * pq;
            if (pass == CLG_CONV_FWD) {
                st = im2col(ctx, g, a, n0, cnt, gi, cols, crs * pq, pq);
                if (st == CLG_OK) /* y_n (Kg x PQ) = W (Kg x CRS) . cols_n (CRS x PQ) */
                    st = gemm(ctx, 0, 0, g->Kg, pq, crs, w->mem, w_off, crs, 0, cols, 0, pq,
                              crs * pq, 0.0f, out->mem, out->offset + y_off, pq, g->K * pq, cnt);
            } else { /* dcols_n (CRS x PQ) = W^T (CRS x Kg) . dy_n (Kg x PQ), then col2im */
                st = gemm(ctx, 1, 0, crs, pq, g->Kg, w->mem, w_off, crs, 0, a->mem,
                          a->offset + y_off, pq, g->K * pq, 0.0f, cols, 0, pq, crs * pq, cnt);
                if (st == CLG_OK)
                    st = col2im(ctx, g, cols, crs * pq, pq, out, n0, cnt, gi);
            }
        }
    }
    return st;
}

static clg_status transpose(clg_ctx *ctx, cl_mem src, size_t rows, size_t cols, cl_mem dst,
                            size_t dst_off)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv", NULL, "clg_conv_transpose", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, src);
    clg__arg_u32(&l, rows);
    clg__arg_u32(&l, cols);
    clg__arg_mem(&l, dst);
    clg__arg_u64(&l, dst_off);
    size_t global[3] = {cols, rows, 1}, local[3] = {cols >= LOCAL0 ? LOCAL0 : 1, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* Weight gradient: per group, dW^T (CRS x Kg) = sum over chunks of cols (CRS x nb*PQ) . dy^T
 * (nb*PQ x Kg), the chunk's images side by side so that one GEMM sums over all their pixels
 * with both operands read in place; then dW = (dW^T)^T. */
static clg_status weights(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x,
                          const clg_tensor *dy, clg_tensor *dw)
{
    size_t pq = g->P * g->Q, crs = g->Cg * g->R * g->S;
    size_t nb = clg__conv_chunk(g, (crs + g->Kg) * pq * sizeof(float));
    cl_mem cols, dyt, dwt;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, nb * crs * pq * sizeof(float), &cols);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_AUX, nb * g->Kg * pq * sizeof(float), &dyt);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_DW, crs * g->Kg * sizeof(float), &dwt);
    for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
        for (size_t n0 = 0; n0 < g->N && st == CLG_OK; n0 += nb) {
            size_t cnt = g->N - n0 < nb ? g->N - n0 : nb;
            st = im2col(ctx, g, x, n0, cnt, gi, cols, pq, cnt * pq);
            if (st == CLG_OK)
                st = gather_dy(ctx, g, dy, n0, cnt, gi, dyt);
            if (st == CLG_OK)
                st = gemm(ctx, 0, 0, crs, g->Kg, cnt * pq, cols, 0, cnt * pq, 0, dyt, 0, g->Kg, 0,
                          n0 == 0 ? 0.0f : 1.0f, dwt, 0, g->Kg, 0, 1);
        }
        if (st == CLG_OK)
            st = transpose(ctx, dwt, crs, g->Kg, dw->mem, dw->offset + gi * g->Kg * crs);
    }
    return st;
}

clg_status clg__conv_im2col_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    if (pass == CLG_CONV_BWD_WEIGHTS)
        return weights(ctx, g, a, b, out);
    return by_image(ctx, g, pass, a, b, out);
}

/* 1x1, stride 1, no padding: each image is already a Cg x HW matrix per group. */
clg_status clg__conv_gemm1x1_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                 const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    size_t hw = g->H * g->W, img_in = g->C * hw, img_out = g->K * hw;
    clg_status st = CLG_OK;
    for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
        size_t w_off = gi * g->Kg * g->Cg, in_off = gi * g->Cg * hw, out_off = gi * g->Kg * hw;
        if (pass == CLG_CONV_FWD) /* y_n = W . x_n */
            st = gemm(ctx, 0, 0, g->Kg, hw, g->Cg, b->mem, b->offset + w_off, g->Cg, 0, a->mem,
                      a->offset + in_off, hw, img_in, 0.0f, out->mem, out->offset + out_off, hw,
                      img_out, g->N);
        else if (pass == CLG_CONV_BWD_DATA) /* dx_n = W^T . dy_n */
            st = gemm(ctx, 1, 0, g->Cg, hw, g->Kg, b->mem, b->offset + w_off, g->Cg, 0, a->mem,
                      a->offset + out_off, hw, img_out, 0.0f, out->mem, out->offset + in_off, hw,
                      img_in, g->N);
        else /* dW = sum_n dy_n . x_n^T, image by image in order */
            for (size_t n = 0; n < g->N && st == CLG_OK; n++)
                st = gemm(ctx, 0, 1, g->Kg, g->Cg, hw, b->mem, b->offset + n * img_out + out_off,
                          hw, 0, a->mem, a->offset + n * img_in + in_off, hw, 0,
                          n == 0 ? 0.0f : 1.0f, out->mem, out->offset + w_off, g->Cg, 0, 1);
    }
    return st;
}
