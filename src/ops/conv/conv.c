/* clg_conv2d_*: argument checks, then each pass through the chosen algorithm (choose.c) and its
 * entry in the algorithm table (algorithms.c), with the epilogue where the algorithm leaves it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "ops/activation_internal.h"
#include "ops/conv/conv_internal.h"
#include "clgrad/activation.h"
#include "clgrad/fc.h"

/* Runs a pass: resolve the algorithm (clg_conv2d_choose's logic), then run it. */
static clg_status run_pass(clg_ctx *ctx, const clg_conv2d_desc *d, clg_conv_pass pass,
                           const clg__conv_geom *g, const clg_tensor *a, const clg_tensor *b,
                           clg_tensor *out)
{
    clg_conv_algo algo;
    clg_status st = clg__conv_resolve(ctx, d, pass, g, a, b, out, &algo);
    if (st != CLG_OK)
        return st;
    return clg__conv_run(ctx, g, pass, algo, a, b, out);
}

/* The forward pass with its epilogue (bias, residual sum, activation) fused where the
 * algorithm can, else run after it. */
clg_status clg__conv_epilogue_after(clg_ctx *ctx, const clg_tensor *bias,
                                    const clg_tensor *residual, clg__epi_act act,
                                    float relu_max, clg_tensor *y)
{
    int relu = act == CLG__EPI_RELU, plain = relu && !(relu_max < INFINITY);
    clg_status st = CLG_OK;
    if (bias) /* a plain ReLU goes with the last pass of the bias and the residual */
        st = clg__bias_add_relu(ctx, bias, y, plain && !residual);
    if (st == CLG_OK && residual)
        st = clg__tensor_add(ctx, y, residual, y, plain);
    if (st == CLG_OK && act != CLG__EPI_NONE && !(plain && (bias || residual))) {
        clg_activation_desc a = {act == CLG__EPI_SILU ? CLG_ACT_SILU
                                 : !plain             ? CLG_ACT_CLIP
                                                      : CLG_ACT_RELU,
                                 0.0f, relu_max};
        st = clg_activation_forward_desc(ctx, &a, y, y);
    }
    return st;
}

/* A residual sum goes into the epilogue of algorithms that take it (the 1x1 products' register
 * kernel's stores); the others fuse the bias alone then, the sum and act following. */
static clg_status forward_pass(clg_ctx *ctx, const clg_conv2d_desc *d, clg__epi_act act,
                               clg__conv_geom *g, const clg_tensor *x, const clg_tensor *w,
                               const clg_tensor *bias, const clg_tensor *residual,
                               clg_tensor *y)
{
    clg_conv_algo algo;
    clg_status st = clg__conv_resolve(ctx, d, CLG_CONV_FWD, g, x, w, y, &algo);
    if (st != CLG_OK)
        return st;
    int fused = clg__conv_fuses(ctx, g, CLG_CONV_FWD, algo);
    int sum_in = residual && clg__conv_fuses_sum(ctx, g, algo);
    g->relu_max = d->relu && d->relu_max > 0.0f ? d->relu_max : INFINITY; /* 0: no cap */
    if (fused) {
        g->bias = bias;
        g->act = residual && !sum_in ? CLG__EPI_NONE : act;
        g->residual = sum_in ? residual : NULL;
    }
    st = clg__conv_run(ctx, g, CLG_CONV_FWD, algo, x, w, y);
    if (st == CLG_OK && !fused) /* the bias was checked with the other arguments */
        st = clg__conv_epilogue_after(ctx, bias, residual, act, g->relu_max, y);
    else if (st == CLG_OK && residual && !sum_in)
        st = clg__conv_epilogue_after(ctx, NULL, residual, act, g->relu_max, y);
    return st;
}

clg_status clg_conv2d_forward(clg_ctx *ctx, const clg_conv2d_desc *d, const clg_tensor *x,
                              const clg_tensor *w, const clg_tensor *bias, clg_tensor *y)
{
    return clg__conv2d_forward_keep(ctx, d, 0, x, w, bias, NULL, y, NULL);
}

clg_status clg__conv2d_forward_keep(clg_ctx *ctx, const clg_conv2d_desc *d, int silu,
                                    const clg_tensor *x, const clg_tensor *w,
                                    const clg_tensor *bias, const clg_tensor *residual,
                                    clg_tensor *y, clg__conv_keep *keep)
{
    if (keep)
        keep->n = keep->dyq_n = 0; /* valid again only if this pass fills it */
    const clg_tensor *t[3] = {x, w, y};
    clg__conv_geom g = {0};
    clg_status st = clg__tensors_check(ctx, "clg_conv2d_forward", t, 3);
    if (st == CLG_OK)
        st = clg__conv_geom_make(ctx, d, x->shape, w->shape, &g);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "conv2d", "y", y, (clg_shape){g.N, g.K, g.P, g.Q});
    if (st == CLG_OK && bias && (bias->ctx != ctx || clg_tensor_numel(bias) != g.K))
        st = clg__fail(ctx, bias->ctx != ctx ? CLG_ERR_INVALID_ARG : CLG_ERR_SHAPE,
                       "conv2d: bias must hold %zu values on the same context", g.K);
    if (st == CLG_OK && residual &&
        (residual->ctx != ctx || clg_tensor_numel(residual) != clg_tensor_numel(y)))
        st = clg__fail(ctx, CLG_ERR_INTERNAL, "conv2d: the residual must be y's size on its context");
    g.keep = keep;
    if (st == CLG_OK)
        st = forward_pass(ctx, d,
                          d->relu ? CLG__EPI_RELU : silu ? CLG__EPI_SILU : CLG__EPI_NONE, &g, x,
                          w, bias, residual, y);
    return st;
}

clg_status clg_conv2d_backward_data(clg_ctx *ctx, const clg_conv2d_desc *d, const clg_tensor *dy,
                                    const clg_tensor *w, clg_tensor *dx)
{
    return clg__conv2d_backward_data_keep(ctx, d, dy, w, dx, NULL);
}

clg_status clg__conv2d_backward_data_keep(clg_ctx *ctx, const clg_conv2d_desc *d,
                                          const clg_tensor *dy, const clg_tensor *w,
                                          clg_tensor *dx, clg__conv_keep *keep)
{
    const clg_tensor *t[3] = {dy, w, dx};
    clg__conv_geom g = {0};
    clg_status st = clg__tensors_check(ctx, "clg_conv2d_backward_data", t, 3);
    if (st == CLG_OK)
        st = clg__conv_geom_make(ctx, d, dx->shape, w->shape, &g);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "conv2d", "dy", dy, (clg_shape){g.N, g.K, g.P, g.Q});
    g.keep = keep;
    if (st == CLG_OK)
        st = run_pass(ctx, d, CLG_CONV_BWD_DATA, &g, dy, w, dx);
    if (keep)
        keep->dyq_n = 0; /* read once */
    return st;
}

clg_status clg_conv2d_backward_weights(clg_ctx *ctx, const clg_conv2d_desc *d,
                                       const clg_tensor *x, const clg_tensor *dy, clg_tensor *dw)
{
    return clg_conv2d_backward_weights_bias(ctx, d, x, dy, dw, NULL);
}

clg_status clg_conv2d_backward_weights_bias(clg_ctx *ctx, const clg_conv2d_desc *d,
                                            const clg_tensor *x, const clg_tensor *dy,
                                            clg_tensor *dw, clg_tensor *db)
{
    return clg__conv2d_backward_weights_keep(ctx, d, x, dy, dw, db, NULL);
}

clg_status clg__conv2d_backward_weights_keep(clg_ctx *ctx, const clg_conv2d_desc *d,
                                             const clg_tensor *x, const clg_tensor *dy,
                                             clg_tensor *dw, clg_tensor *db,
                                             clg__conv_keep *keep)
{
    if (keep)
        keep->dyq_n = 0; /* valid again only if this pass fills it */
    const clg_tensor *t[3] = {x, dy, dw};
    clg__conv_geom g = {0};
    clg_status st = clg__tensors_check(ctx, db ? "clg_conv2d_backward_weights_bias"
                                               : "clg_conv2d_backward_weights", t, 3);
    if (st == CLG_OK)
        st = clg__conv_geom_make(ctx, d, x->shape, dw->shape, &g);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "conv2d", "dy", dy, (clg_shape){g.N, g.K, g.P, g.Q});
    if (st == CLG_OK && db && (db->ctx != ctx || clg_tensor_numel(db) != g.K))
        st = clg__fail(ctx, db->ctx != ctx ? CLG_ERR_INVALID_ARG : CLG_ERR_SHAPE,
                       "conv2d: db must hold %zu values on the same context", g.K);
    clg_conv_algo algo;
    if (st == CLG_OK)
        st = clg__conv_resolve(ctx, d, CLG_CONV_BWD_WEIGHTS, &g, x, dy, dw, &algo);
    if (st != CLG_OK)
        return st;
    /* The implicit algorithm sums db in the same pass; the others reduce dy after. */
    int fused = db && clg__conv_fuses(ctx, &g, CLG_CONV_BWD_WEIGHTS, algo);
    g.db = fused ? db : NULL;
    g.keep = keep;
    st = clg__conv_run(ctx, &g, CLG_CONV_BWD_WEIGHTS, algo, x, dy, dw);
    if (st == CLG_OK && db && !fused)
        st = clg_bias_backward(ctx, dy, db);
    return st;
}

clg_status clg_conv2d_backward_bias(clg_ctx *ctx, const clg_tensor *dy, clg_tensor *db)
{
    return clg_bias_backward(ctx, dy, db);
}

clg_status clg_conv2d_workspace(clg_ctx *ctx, const clg_conv2d_desc *d, clg_conv_pass pass,
                                clg_conv_algo algo, clg_shape x, clg_shape w, size_t *min_bytes,
                                size_t *max_bytes)
{
    if (!ctx || !min_bytes || !max_bytes)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_conv2d_workspace: NULL argument");
    if ((unsigned)pass > CLG_CONV_BWD_WEIGHTS || !clg__conv_algo_def_for(ctx, algo))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_conv2d_workspace: pass and algo must be concrete");
    clg__conv_geom g = {0};
    clg_status st = clg__conv_geom_make(ctx, d, x, w, &g);
    if (st == CLG_OK)
        st = clg__conv_algo_fits(ctx, &g, pass, algo, min_bytes, max_bytes);
    return st;
}

void clg__conv_keep_free(clg__conv_keep *keep)
{
    clg_tensor_destroy(keep->v);
    keep->v = NULL;
    keep->n = keep->dyq_n = 0;
}
