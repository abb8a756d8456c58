/* Pooling: descriptor checks, output size (floor or ceil), launches. */
#include <stdio.h>
#include "tensor/tensor_internal.h"
#include "clgrad/pool.h"

enum { ROWS = 8, GLOBAL_GROUP = 64 /* GLOBAL_LOCAL in pool.cl */ };

clg_pool2d_desc clg_pool2d_desc_default(void)
{
    clg_pool2d_desc d = {CLG_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0};
    return d;
}

typedef struct pool_geom {
    size_t N, C, H, W, R, S, sh, sw, pt, pb, pl, pr, P, Q;
} pool_geom;

/* Output length of one axis; ceil mode keeps a last window only if it starts before the end
 * of the input plus the leading padding. */
static size_t out_len(size_t in, size_t lo, size_t hi, size_t win, size_t stride, int ceil_mode)
{
    size_t span = in + lo + hi - win;
    size_t n = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceil_mode && (n - 1) * stride >= in + lo)
        n--;
    return n;
}

static clg_status make_geom(clg_ctx *ctx, const clg_pool2d_desc *d, clg_shape x, pool_geom *g)
{
    if (!d)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "pool2d: descriptor is NULL");
    const char *bad = NULL;
    if ((unsigned)d->mode > CLG_POOL_AVG_EXCLUDE)
        bad = "mode is not a clg_pool_mode";
    else if (d->window_h < 1 || d->window_w < 1)
        bad = "window_h and window_w must be >= 1";
    else if (d->stride_h < 1 || d->stride_w < 1)
        bad = "stride_h and stride_w must be >= 1";
    else if (d->pad_top < 0 || d->pad_bottom < 0 || d->pad_left < 0 || d->pad_right < 0)
        bad = "padding must be >= 0";
    else if (d->pad_top >= d->window_h || d->pad_bottom >= d->window_h ||
             d->pad_left >= d->window_w || d->pad_right >= d->window_w)
        bad = "padding must be smaller than the window";
    if (bad)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "pool2d: %s", bad);
    pool_geom p = {x.n, x.c, x.h, x.w, (size_t)d->window_h, (size_t)d->window_w,
                   (size_t)d->stride_h, (size_t)d->stride_w, (size_t)d->pad_top,
                   (size_t)d->pad_bottom, (size_t)d->pad_left, (size_t)d->pad_right, 0, 0};
    if (p.R > p.H + p.pt + p.pb || p.S > p.W + p.pl + p.pr)
        return clg__fail(ctx, CLG_ERR_SHAPE, "pool2d: the %zux%zu window is larger than the padded %zux%zu input",
                         p.R, p.S, p.H + p.pt + p.pb, p.W + p.pl + p.pr);
    p.P = out_len(p.H, p.pt, p.pb, p.R, p.sh, d->ceil_mode);
    p.Q = out_len(p.W, p.pl, p.pr, p.S, p.sw, d->ceil_mode);
    *g = p;
    return CLG_OK;
}

clg_status clg_pool2d_output_shape(const clg_pool2d_desc *d, clg_shape x, clg_shape *y)
{
    pool_geom g = {0};
    if (!y)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_pool2d_output_shape: y is NULL");
    clg_status st = make_geom(NULL, d, x, &g);
    if (st == CLG_OK) {
        clg_shape s = {g.N, g.C, g.P, g.Q};
        *y = s;
    }
    return st;
}

/* Windows that tile the input (stride = window, no padding): each input element belongs to
 * at most one window, and the tiled kernels, built for the window's size, apply. */
static int tiles(const pool_geom *g, clg_pool_mode mode, char *opts, size_t cap)
{
    int tiled = g->sh == g->R && g->sw == g->S && !g->pt && !g->pb && !g->pl && !g->pr &&
                mode != CLG_POOL_AVG_EXCLUDE && g->P * g->R <= g->H && g->Q * g->S <= g->W;
    opts[0] = '\0';
    if (tiled) /* the window is a build option: one small program per window shape */
        snprintf(opts, cap, "-DTR=%zu -DTS=%zu", g->R, g->S);
    return tiled;
}

/* GPUs: `elements` work-items, one an output (or input) element (_px kernels); CPUs: one a
 * plane, looping over its rows (pool.cl). */
static clg_status launch(clg__launch *l, const pool_geom *g, int gpu, size_t elements)
{
    if (gpu)
        return clg__launch_elementwise(l, elements);
    size_t global[3] = {1, g->N * g->C, 1}, local[3] = {1, ROWS, 1};
    return clg__launch_run(l, global, local);
}

static void tiled_args(clg__launch *l, const pool_geom *g, clg_pool_mode mode)
{
    size_t v[] = {g->H, g->W, g->P, g->Q, mode, g->N * g->C};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(l, v[i]);
}

static void geom_args(clg__launch *l, const pool_geom *g, clg_pool_mode mode)
{
    size_t v[] = {g->H, g->W, g->R, g->S, g->sh, g->sw, g->pt, g->pl, g->pb, g->pr, g->P, g->Q, mode,
                  g->N * g->C};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(l, v[i]);
}

/* Max pooling on CPUs, strides of 1 or 2 across, windows at most 16 wide, on planes padded
 * in local memory (clg_pool_max_planes), where they fit: PH x PW floats and the slack the
 * last row's vectors read past. */
enum { PLANE_FLOATS = 16384 };
static int max_planes_fit(const pool_geom *g, clg_pool_mode mode, size_t *ph, size_t *pw,
                          size_t *slack)
{
    *ph = (g->P - 1) * g->sh + g->R, *pw = (g->Q - 1) * g->sw + g->S;
    *slack = 16 * g->sw + g->S;
    return mode == CLG_POOL_MAX && g->sw <= 2 && g->S <= 16 && *ph * *pw + *slack <= PLANE_FLOATS;
}

static clg_status max_planes(clg_ctx *ctx, const pool_geom *g, const clg_tensor *x,
                             clg_tensor *y, size_t ph, size_t pw, size_t slack)
{
    size_t planes = g->N * g->C;
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "pool", NULL, "clg_pool_max_planes", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, y);
    size_t per = clg__runs_per_item(ctx, planes, g->P * g->Q, 4096);
    size_t v[] = {planes, per, g->H, g->W, g->R, g->S, g->sh, g->sw, g->pt, g->pl, g->P, g->Q,
                  ph, pw, slack};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    clg__arg_local(&l, (ph * pw + slack) * sizeof(float));
    return clg__launch_runs(&l, planes, per);
}

clg_status clg_pool2d_forward(clg_ctx *ctx, const clg_pool2d_desc *d, const clg_tensor *x,
                              clg_tensor *y)
{
    pool_geom g = {0};
    clg_status st = clg__tensors_check(ctx, "clg_pool2d_forward", (const clg_tensor *[]){x, y, y}, 3);
    if (st == CLG_OK)
        st = make_geom(ctx, d, x->shape, &g);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "pool2d", "y", y, (clg_shape){g.N, g.C, g.P, g.Q});
    char opts[48] = "";
    int gpu = clg_ctx_decides_as_gpu(ctx);
    int tiled = st == CLG_OK && !gpu && tiles(&g, d->mode, opts, sizeof opts);
    size_t ph, pw, slack;
    if (st == CLG_OK && !gpu && !tiled && max_planes_fit(&g, d->mode, &ph, &pw, &slack))
        return max_planes(ctx, &g, x, y, ph, pw, slack);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "pool", opts, gpu ? "clg_pool_fwd_px" : tiled ? "clg_pool_fwd_tiled"
                                                                     : "clg_pool_fwd", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, y);
    if (tiled)
        tiled_args(&l, &g, d->mode);
    else
        geom_args(&l, &g, d->mode);
    return launch(&l, &g, gpu, g.N * g.C * g.P * g.Q);
}

clg_status clg_pool2d_backward(clg_ctx *ctx, const clg_pool2d_desc *d, const clg_tensor *x,
                               const clg_tensor *dy, clg_tensor *dx)
{
    pool_geom g = {0};
    clg_status st = clg__tensors_check(ctx, "clg_pool2d_backward", (const clg_tensor *[]){x, dy, dx}, 3);
    if (st == CLG_OK)
        st = make_geom(ctx, d, x->shape, &g);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "pool2d", "dy", dy, (clg_shape){g.N, g.C, g.P, g.Q});
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "pool2d", "dx", dx, x->shape);
    char opts[48] = "";
    int gpu = clg_ctx_decides_as_gpu(ctx); /* GPUs: an element per work-item (_px kernels) */
    int tiled = st == CLG_OK && !gpu && tiles(&g, d->mode, opts, sizeof opts);
    cl_mem amax = NULL; /* the general max backward's argmax of each window */
    clg__launch l;
    if (st == CLG_OK && !tiled && d->mode == CLG_POOL_MAX)
        st = clg__scratch_get(ctx, CLG__SCRATCH_POOL, g.N * g.C * g.P * g.Q * sizeof(cl_int), &amax);
    if (amax && st == CLG_OK)
        st = clg__launch_begin(ctx, "pool", opts, gpu ? "clg_pool_argmax_map_px" : "clg_pool_argmax_map", &l);
    if (amax && st == CLG_OK) {
        clg__arg_tensor(&l, x);
        clg__arg_mem(&l, amax);
        geom_args(&l, &g, d->mode);
        st = launch(&l, &g, gpu, g.N * g.C * g.P * g.Q);
    }
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "pool", opts, gpu ? "clg_pool_bwd_px" : tiled ? "clg_pool_bwd_tiled"
                                                                     : "clg_pool_bwd", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, dy);
    clg__arg_tensor(&l, dx);
    if (tiled)
        tiled_args(&l, &g, d->mode);
    else
        geom_args(&l, &g, d->mode);
    clg__arg_u32(&l, d->relu_input != 0);
    if (!tiled) /* read only for max pooling */
        clg__arg_mem(&l, amax ? amax : dx->mem);
    return launch(&l, &g, gpu, g.N * g.C * g.H * g.W);
}

clg_status clg_global_avg_pool_forward(clg_ctx *ctx, const clg_tensor *x, clg_tensor *y)
{
    clg_status st = clg__tensors_check(ctx, "clg_global_avg_pool_forward", (const clg_tensor *[]){x, y, y}, 3);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "pool2d", "y", y, (clg_shape){x->shape.n, x->shape.c, 1, 1});
    clg__launch l;
    int gpu = clg_ctx_decides_as_gpu(ctx); /* GPUs: a work-group per plane */
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "pool", NULL, gpu ? "clg_pool_global_fwd_group" : "clg_pool_global_fwd16", &l);
    if (st != CLG_OK)
        return st;
    size_t nc = x->shape.n * x->shape.c, hw = x->shape.h * x->shape.w;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, y);
    clg__arg_u32(&l, hw);
    clg__arg_u32(&l, nc);
    if (!gpu) { /* runs of planes, at least 2,048 values an item */
        size_t per = clg__runs_per_item(ctx, nc, hw, 2048);
        clg__arg_u32(&l, per);
        return clg__launch_runs(&l, nc, per);
    }
    size_t global[3] = {nc * GLOBAL_GROUP, 1, 1}, local[3] = {GLOBAL_GROUP, 1, 1};
    return clg__launch_run(&l, global, local);
}

clg_status clg_global_avg_pool_backward(clg_ctx *ctx, const clg_tensor *dy, clg_tensor *dx)
{
    clg_status st = clg__tensors_check(ctx, "clg_global_avg_pool_backward", (const clg_tensor *[]){dy, dx, dx}, 3);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "pool2d", "dy", dy, (clg_shape){dx->shape.n, dx->shape.c, 1, 1});
    clg__launch l;
    int gpu = clg_ctx_decides_as_gpu(ctx);
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "pool", NULL, gpu ? "clg_pool_global_bwd" : "clg_pool_global_bwd16",
                               &l);
    if (st != CLG_OK)
        return st;
    size_t nc = dx->shape.n * dx->shape.c, hw = dx->shape.h * dx->shape.w;
    clg__arg_tensor(&l, dy);
    clg__arg_tensor(&l, dx);
    clg__arg_u32(&l, hw);
    if (!gpu) { /* as the forward pass: runs of planes, at least 2,048 values an item */
        size_t per = clg__runs_per_item(ctx, nc, hw, 2048);
        clg__arg_u32(&l, nc);
        clg__arg_u32(&l, per);
        return clg__launch_runs(&l, nc, per);
    }
    clg__arg_u64(&l, clg_tensor_numel(dx));
    return clg__launch_elementwise(&l, clg_tensor_numel(dx));
}
