/* Convolution by im2col + GEMM: columns for chunks of images bounded by the workspace limit. */
#include "ops/conv/conv_internal.h"
#include "ops/gemm_internal.h"

enum { LOCAL0 = 32, ROWS = 8 };

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

/* A forward pass's columns side by side, one product for a chunk's images (its B packed), C
 * stored image by image (clg__gemm_call.fold_n), for long sums over small planes: per image,
 * a plane's columns leave blocks partly idle and each product's B rows, read in place, lie
 * far apart. ResNet-50's 3x3 stride-2 layers at batch 32 (Xeon VM family 6 model 207): 256
 * channels 28 -> 14 31.9-32.5 -> 28.4-29.5 ms, 512 14 -> 7 32.9-33.2 -> 27.2-27.7; its 1x1
 * stride-2 projections (sums of 256 to 1,024) gain nothing or lose (1,024 -> 2,048 on 7x7
 * 19.5-19.7 -> 20.0-20.7), so sums under 2,048 keep the product per image. */
static int side_by_side(clg_ctx *ctx, size_t pq, size_t crs)
{
    return pq >= 16 && pq < 1024 && crs >= 2048 && clg__gemm_folds_columns(ctx);
}

/* Forward and backward-data: per chunk of images and per group, one batched GEMM between the
 * group's weights and each image's columns; a one-group forward pass's bias, residual sum and
 * activation in the product's stores (ResNet-50's strided projections: their block's sum). */
static clg_status by_image(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                           const clg_tensor *a, const clg_tensor *w, clg_tensor *out)
{
    size_t pq = g->P * g->Q, crs = g->Cg * g->R * g->S;
    size_t nb = clg__conv_chunk(g, crs * pq * sizeof(float));
    cl_mem cols;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, nb * crs * pq * sizeof(float), &cols);
    int done = 1; /* the forward epilogue, where it is asked for (one group), in the stores */
    int side = pass == CLG_CONV_FWD && g->G == 1 && side_by_side(ctx, pq, crs);
    for (size_t n0 = 0; n0 < g->N && st == CLG_OK; n0 += nb) {
        size_t cnt = g->N - n0 < nb ? g->N - n0 : nb;
        for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
            size_t w_off = w->offset + gi * g->Kg * crs;
            size_t y_off = n0 * g->K * pq + gi * g->Kg * pq;
            if (side) { /* y (K x cnt*PQ, image by image) = W . cols (CRS x cnt*PQ) */
                st = im2col(ctx, g, a, n0, cnt, gi, cols, pq, cnt * pq);
                if (st == CLG_OK)
                    st = clg__conv_forward_product(ctx, g, w, cols, 0, crs, 0, n0, cnt, out,
                                                   &done);
            } else if (pass == CLG_CONV_FWD) {
                st = im2col(ctx, g, a, n0, cnt, gi, cols, crs * pq, pq);
                if (st == CLG_OK && g->G == 1) /* y_n (K x PQ) = W (K x CRS) . cols_n (CRS x PQ) */
                    st = clg__conv_forward_product(ctx, g, w, cols, 0, crs, crs * pq, n0, cnt,
                                                   out, &done);
                else if (st == CLG_OK)
                    st = clg__conv_gemm(ctx, 0, 0, g->Kg, pq, crs, w->mem, w_off, crs, 0, cols, 0, pq,
                              crs * pq, 0.0f, out->mem, out->offset + y_off, pq, g->K * pq, cnt);
            } else { /* dcols_n (CRS x PQ) = W^T (CRS x Kg) . dy_n (Kg x PQ), then col2im */
                st = clg__conv_gemm(ctx, 1, 0, crs, pq, g->Kg, w->mem, w_off, crs, 0, a->mem,
                          a->offset + y_off, pq, g->K * pq, 0.0f, cols, 0, pq, crs * pq, cnt);
                if (st == CLG_OK)
                    st = col2im(ctx, g, cols, crs * pq, pq, out, n0, cnt, gi);
            }
        }
    }
    if (st == CLG_OK && !done) /* a product kernel without the epilogue (CLBlast) */
        st = clg__conv_epilogue_after(ctx, g->bias, g->residual, g->act, g->relu_max, out);
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
                st = clg__conv_gemm(ctx, 0, 0, crs, g->Kg, cnt * pq, cols, 0, cnt * pq, 0, dyt, 0, g->Kg, 0,
                          n0 == 0 ? 0.0f : 1.0f, dwt, 0, g->Kg, 0, 1);
        }
        if (st == CLG_OK)
            st = transpose(ctx, dwt, crs, g->Kg, dw->mem, dw->offset + gi * g->Kg * crs);
    }
    return st;
}

void clg__conv_im2col_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                            size_t *fixed, size_t *per_image)
{
    (void)ctx;
    size_t pq = g->P * g->Q, crs = g->Cg * g->R * g->S;
    *fixed = 0; /* per image: its columns, and for the weight gradient dy's transposed too */
    *per_image = (pass == CLG_CONV_BWD_WEIGHTS ? crs + g->Kg : crs) * pq * sizeof(float);
}

clg_status clg__conv_im2col_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    if (pass == CLG_CONV_BWD_WEIGHTS)
        return weights(ctx, g, a, b, out);
    return by_image(ctx, g, pass, a, b, out);
}
