/* The 1x1 convolution (stride 1, no padding) as GEMMs on the tensors themselves: each image is
 * already a Cg x HW matrix per group. Also the batched GEMM on buffers the algorithms share. */
#include "ops/conv/conv_internal.h"
#include "ops/gemm_internal.h"

/* C = alpha op(A) op(B) + beta C on buffers, batched; every operand given in elements. */
clg_status clg__conv_gemm(clg_ctx *ctx, int ta, int tb, size_t m, size_t n, size_t k, cl_mem a,
                       size_t a_off, size_t lda, size_t sa, cl_mem b, size_t b_off, size_t ldb,
                       size_t sb, float beta, cl_mem c, size_t c_off, size_t ldc, size_t sc,
                       size_t batch)
{
    clg__gemm_call g = {ta ? CLG_TRANS : CLG_NO_TRANS, tb ? CLG_TRANS : CLG_NO_TRANS, m, n, k,
                        batch, 1.0f, beta, a, b, c, a_off, b_off, c_off, lda, ldb, ldc, sa, sb, sc,
                        NULL, 0};
    return clg__gemm_dispatch(ctx, &g);
}

/* The forward pass's epilogue (bias, a residual sum, activation) in the GEMM's stores: one
 * group only, where a product is the whole output (ResNet's and MobileNet's 1x1 layers). */
int clg__conv_gemm1x1_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass)
{
    (void)ctx;
    return pass == CLG_CONV_FWD && g->G == 1;
}

/* sb 0: B holds the images side by side (k x cnt*PQ), C stored image by image (fold_n) */
clg_status clg__conv_forward_product(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *w,
                                     cl_mem b, size_t b_off, size_t k, size_t sb, size_t n0,
                                     size_t cnt, clg_tensor *y, int *done)
{
    size_t pq = g->P * g->Q, y_off = n0 * g->K * pq;
    const clg_tensor *r = g->residual;
    clg__gemm_epilogue epi = {g->bias ? g->bias->mem : NULL, g->bias ? g->bias->offset : 0,
                              r ? r->mem : NULL, r ? r->offset + y_off : 0, g->act,
                              g->relu_max, 0};
    int side = sb == 0;
    clg__gemm_call c = {CLG_NO_TRANS, CLG_NO_TRANS, g->K, side ? cnt * pq : pq, k,
                        side ? 1 : cnt, 1.0f, 0.0f, w->mem, b, y->mem, w->offset, b_off,
                        y->offset + y_off, k, side ? cnt * pq : pq, pq, 0, sb, g->K * pq,
                        g->bias || g->act || r ? &epi : NULL, side ? pq : 0};
    clg_status st = clg__gemm_dispatch(ctx, &c);
    *done = epi.done || !c.epi;
    return st;
}

/* y = W . x per image with the epilogue in the stores where the GEMM kernel takes it, else
 * (other kernels, CLBlast) as passes after. */
static clg_status forward(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x,
                          const clg_tensor *w, clg_tensor *y)
{
    int done;
    clg_status st = clg__conv_forward_product(ctx, g, w, x->mem, x->offset, g->C,
                                              g->C * g->H * g->W, 0, g->N, y, &done);
    return st != CLG_OK || done
               ? st
               : clg__conv_epilogue_after(ctx, g->bias, g->residual, g->act, g->relu_max, y);
}

int clg__conv_gemm1x1_applies(const clg__conv_geom *g)
{
    return g->R == 1 && g->S == 1 && g->sh == 1 && g->sw == 1 && !g->pt && !g->pb && !g->pl &&
           !g->pr;
}

/* 1x1 planes, one group (squeeze-and-excitation's convolutions): a fully connected layer,
 * one product over the batch, x and y being N x C and N x K matrices. Image by image each
 * pass was N products one column wide, each in a 16-wide block (EfficientNet-b0's 48 -> 1152
 * at batch 32: 1.05 ms). The forward pass's bias and activation follow as passes (the
 * product's epilogue adds a bias per row). */
static clg_status as_fully_connected(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                     const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    /* a, b: x and w (forward), dy and w (data gradient), x and dy (weight gradient) */
    size_t N = g->N, C = g->C, K = g->K;
    if (pass == CLG_CONV_FWD) { /* y = x . W^T */
        clg_status st = clg__conv_gemm(ctx, 0, 1, N, K, C, a->mem, a->offset, C, 0, b->mem,
                                       b->offset, C, 0, 0.0f, out->mem, out->offset, K, 0, 1);
        return st == CLG_OK && (g->bias || g->act || g->residual)
                   ? clg__conv_epilogue_after(ctx, g->bias, g->residual, g->act, g->relu_max, out)
                   : st;
    }
    if (pass == CLG_CONV_BWD_DATA) /* dx = dy . W */
        return clg__conv_gemm(ctx, 0, 0, N, C, K, a->mem, a->offset, K, 0, b->mem, b->offset, C,
                              0, 0.0f, out->mem, out->offset, C, 0, 1);
    /* dW = dy^T . x */
    return clg__conv_gemm(ctx, 1, 0, K, C, N, b->mem, b->offset, K, 0, a->mem, a->offset, C, 0,
                          0.0f, out->mem, out->offset, C, 0, 1);
}

/* 1x1, stride 1, no padding: each image is already a Cg x HW matrix per group. */
clg_status clg__conv_gemm1x1_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                 const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    size_t hw = g->H * g->W, img_in = g->C * hw, img_out = g->K * hw;
    if (hw == 1 && g->G == 1)
        return as_fully_connected(ctx, g, pass, a, b, out);
    if (pass == CLG_CONV_FWD && g->G == 1)
        return forward(ctx, g, a, b, out);
    clg_status st = CLG_OK;
    for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
        size_t w_off = gi * g->Kg * g->Cg, in_off = gi * g->Cg * hw, out_off = gi * g->Kg * hw;
        if (pass == CLG_CONV_FWD) /* y_n = W . x_n */
            st = clg__conv_gemm(ctx, 0, 0, g->Kg, hw, g->Cg, b->mem, b->offset + w_off, g->Cg, 0, a->mem,
                      a->offset + in_off, hw, img_in, 0.0f, out->mem, out->offset + out_off, hw,
                      img_out, g->N);
        else if (pass == CLG_CONV_BWD_DATA) /* dx_n = W^T . dy_n */
            st = clg__conv_gemm(ctx, 1, 0, g->Cg, hw, g->Kg, b->mem, b->offset + w_off, g->Cg, 0, a->mem,
                      a->offset + out_off, hw, img_out, 0.0f, out->mem, out->offset + in_off, hw,
                      img_in, g->N);
        else /* dW = sum_n dy_n . x_n^T, image by image in order */
            for (size_t n = 0; n < g->N && st == CLG_OK; n++)
                st = clg__conv_gemm(ctx, 0, 1, g->Kg, g->Cg, hw, b->mem, b->offset + n * img_out + out_off,
                          hw, 0, a->mem, a->offset + n * img_in + in_off, hw, 0,
                          n == 0 ? 0.0f : 1.0f, out->mem, out->offset + w_off, g->Cg, 0, 1);
    }
    return st;
}
