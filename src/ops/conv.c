/* clg_conv2d_*: argument checks, the output shape, and dispatch to the chosen algorithm. */
#include <stdint.h>
#include <stdio.h>
#include "conv_internal.h"
#include "clgrad/activation.h"

#define DEFAULT_WORKSPACE ((size_t)256 << 20)

clg_conv2d_desc clg_conv2d_desc_default(void)
{
    clg_conv2d_desc d = {1, 1, 0, 0, 0, 0, 1, 1, 1, CLG_CONV_ALGO_AUTO, 0, 0};
    return d;
}

const char *clg_conv_algo_name(clg_conv_algo algo)
{
    switch (algo) {
    case CLG_CONV_ALGO_AUTO: return "auto";
    case CLG_CONV_ALGO_IM2COL: return "im2col";
    case CLG_CONV_ALGO_IMPLICIT: return "implicit";
    case CLG_CONV_ALGO_WINOGRAD: return "winograd";
    case CLG_CONV_ALGO_GEMM: return "gemm";
    case CLG_CONV_ALGO_FIND: return "find";
    }
    return "unknown";
}

static const char *check_desc(const clg_conv2d_desc *d)
{
    if (d->stride_h < 1 || d->stride_w < 1)
        return "stride_h and stride_w must be >= 1";
    if (d->pad_top < 0 || d->pad_bottom < 0 || d->pad_left < 0 || d->pad_right < 0)
        return "padding must be >= 0";
    if (d->dilation_h < 1 || d->dilation_w < 1)
        return "dilation_h and dilation_w must be >= 1";
    if (d->groups < 1)
        return "groups must be >= 1";
    if ((unsigned)d->algo > CLG_CONV_ALGO_FIND)
        return "algo is not a clg_conv_algo";
    return NULL;
}

clg_status clg__conv_geom_make(clg_ctx *ctx, const clg_conv2d_desc *d, clg_shape x, clg_shape w,
                               clg__conv_geom *g)
{
    if (!d)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "conv2d: descriptor is NULL");
    const char *bad = check_desc(d);
    if (bad)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "conv2d: %s", bad);
    size_t G = (size_t)d->groups;
    if (x.c % G || w.n % G)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "conv2d: groups = %zu must divide the %zu input and %zu output channels",
                         G, x.c, w.n);
    if (w.c * G != x.c)
        return clg__fail(ctx, CLG_ERR_SHAPE,
                         "conv2d: weights %zux%zux%zux%zu have %zu channels per group; input has "
                         "%zu channels in %zu group(s), so %zu were expected",
                         w.n, w.c, w.h, w.w, w.c, x.c, G, x.c / G);
    g->N = x.n;
    g->C = x.c;
    g->H = x.h;
    g->W = x.w;
    g->K = w.n;
    g->R = w.h;
    g->S = w.w;
    g->G = G;
    g->Cg = x.c / G;
    g->Kg = w.n / G;
    g->sh = (size_t)d->stride_h;
    g->sw = (size_t)d->stride_w;
    g->pt = (size_t)d->pad_top;
    g->pb = (size_t)d->pad_bottom;
    g->pl = (size_t)d->pad_left;
    g->pr = (size_t)d->pad_right;
    g->dh = (size_t)d->dilation_h;
    g->dw = (size_t)d->dilation_w;
    g->workspace_limit = d->workspace_limit ? d->workspace_limit : DEFAULT_WORKSPACE;
    size_t eh = (g->R - 1) * g->dh + 1, ew = (g->S - 1) * g->dw + 1;
    if (eh > g->H + g->pt + g->pb || ew > g->W + g->pl + g->pr)
        return clg__fail(ctx, CLG_ERR_SHAPE,
                         "conv2d: the %zux%zu kernel (dilated to %zux%zu) is larger than the "
                         "padded %zux%zu input", g->R, g->S, eh, ew, g->H + g->pt + g->pb,
                         g->W + g->pl + g->pr);
    g->P = (g->H + g->pt + g->pb - eh) / g->sh + 1;
    g->Q = (g->W + g->pl + g->pr - ew) / g->sw + 1;
    if (g->P * g->Q > UINT32_MAX || g->Cg * g->R * g->S > UINT32_MAX || g->H * g->W > UINT32_MAX)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "conv2d: image or kernel too large");
    return CLG_OK;
}

clg_status clg_conv2d_output_shape(const clg_conv2d_desc *d, clg_shape x, clg_shape w, clg_shape *y)
{
    if (!y)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_conv2d_output_shape: y is NULL");
    clg__conv_geom g = {0};
    clg_status st = clg__conv_geom_make(NULL, d, x, w, &g);
    if (st == CLG_OK) {
        clg_shape s = {g.N, g.K, g.P, g.Q};
        *y = s;
    }
    return st;
}

typedef clg_status (*algo_fn)(clg_ctx *, const clg__conv_geom *, clg_conv_pass, const clg_tensor *,
                              const clg_tensor *, clg_tensor *);

static algo_fn algo_function(clg_conv_algo a)
{
    switch (a) {
    case CLG_CONV_ALGO_IM2COL: return clg__conv_im2col_run;
    case CLG_CONV_ALGO_IMPLICIT: return clg__conv_implicit_run;
    case CLG_CONV_ALGO_WINOGRAD: return clg__conv_winograd_run;
    case CLG_CONV_ALGO_GEMM: return clg__conv_gemm1x1_run;
    default: return NULL;
    }
}

clg_status clg__conv_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                         clg_conv_algo algo, const clg_tensor *a, const clg_tensor *b,
                         clg_tensor *out)
{
    algo_fn f = algo_function(algo);
    if (!f)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "conv2d: no algorithm %d", (int)algo);
    return f(ctx, g, pass, a, b, out);
}

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

/* Whether the algorithm does the pass's extra work itself: the forward pass's bias and ReLU
 * (Winograd; the implicit shifted form with pixels as rows), the weight gradient's bias
 * gradient (the implicit shifted form). */
static int does_extra(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass, clg_conv_algo algo)
{
    if (algo == CLG_CONV_ALGO_WINOGRAD)
        return pass == CLG_CONV_FWD;
    return algo == CLG_CONV_ALGO_IMPLICIT && clg__conv_shift_fuses(ctx, g, pass);
}

/* The forward pass with its epilogue (bias, ReLU) fused where the algorithm can, else run
 * after it. */
static clg_status forward_pass(clg_ctx *ctx, const clg_conv2d_desc *d, clg__conv_geom *g,
                               const clg_tensor *x, const clg_tensor *w, const clg_tensor *bias,
                               clg_tensor *y)
{
    clg_conv_algo algo;
    clg_status st = clg__conv_resolve(ctx, d, CLG_CONV_FWD, g, x, w, y, &algo);
    if (st != CLG_OK)
        return st;
    int fused = does_extra(ctx, g, CLG_CONV_FWD, algo);
    if (fused) {
        g->bias = bias;
        g->relu = d->relu != 0;
    }
    st = clg__conv_run(ctx, g, CLG_CONV_FWD, algo, x, w, y);
    if (st == CLG_OK && bias && !fused)
        st = clg_bias_add(ctx, bias, y);
    if (st == CLG_OK && d->relu && !fused)
        st = clg_activation_forward(ctx, CLG_ACT_RELU, 0.0f, y, y);
    return st;
}

clg_status clg_conv2d_forward(clg_ctx *ctx, const clg_conv2d_desc *d, const clg_tensor *x,
                              const clg_tensor *w, const clg_tensor *bias, clg_tensor *y)
{
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
    if (st == CLG_OK)
        st = forward_pass(ctx, d, &g, x, w, bias, y);
    return st;
}

clg_status clg_conv2d_backward_data(clg_ctx *ctx, const clg_conv2d_desc *d, const clg_tensor *dy,
                                    const clg_tensor *w, clg_tensor *dx)
{
    const clg_tensor *t[3] = {dy, w, dx};
    clg__conv_geom g = {0};
    clg_status st = clg__tensors_check(ctx, "clg_conv2d_backward_data", t, 3);
    if (st == CLG_OK)
        st = clg__conv_geom_make(ctx, d, dx->shape, w->shape, &g);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "conv2d", "dy", dy, (clg_shape){g.N, g.K, g.P, g.Q});
    if (st == CLG_OK)
        st = run_pass(ctx, d, CLG_CONV_BWD_DATA, &g, dy, w, dx);
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
    int fused = db && does_extra(ctx, &g, CLG_CONV_BWD_WEIGHTS, algo);
    g.db = fused ? db : NULL;
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
    if ((unsigned)pass > CLG_CONV_BWD_WEIGHTS || !algo_function(algo))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_conv2d_workspace: pass and algo must be concrete");
    clg__conv_geom g = {0};
    clg_status st = clg__conv_geom_make(ctx, d, x, w, &g);
    if (st == CLG_OK)
        st = clg__conv_algo_fits(ctx, &g, pass, algo, min_bytes, max_bytes);
    return st;
}
