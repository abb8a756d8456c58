/* Depthwise convolution (cl_kernels/conv_dw.cl): a layer of one filter per channel, any kernel
 * size, stride, padding and dilation, every pass without workspace, the taps' count a build
 * option. The generic algorithms ran such layers as groups of one channel: MobileNet-v2's
 * took 70% of its inference time at about 1 GFLOP/s. */
#include <stdint.h>
#include <stdio.h>

#include "ops/conv/conv_internal.h"

int clg__conv_depthwise_applies(const clg__conv_geom *g)
{
    return g->G > 1 && g->Cg == 1 && g->Kg == 1 && g->R * g->S <= 64;
}

static void options(const clg__conv_geom *g, char *out, size_t cap)
{
    snprintf(out, cap, "-DDW_R=%zu -DDW_S=%zu", g->R, g->S);
}

/* The forward pass applies bias and activation, the weight gradient sums the bias gradient. */
int clg__conv_depthwise_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass)
{
    (void)ctx, (void)g;
    return pass == CLG_CONV_FWD || pass == CLG_CONV_BWD_WEIGHTS;
}

clg_status clg__conv_depthwise_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                   const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    static const char *const names[] = {"clg_dw_fwd", "clg_dw_bwd_data", "clg_dw_bwd_weights"};
    char opts[64];
    options(g, opts, sizeof opts);
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_dw", opts, names[pass], &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, a);
    clg__arg_tensor(&l, b);
    clg__arg_tensor(&l, out);
    size_t n = pass == CLG_CONV_FWD ? g->N * g->C * g->P * g->Q : g->N * g->C * g->H * g->W;
    if (pass == CLG_CONV_FWD) {
        clg__arg_tensor(&l, g->bias ? g->bias : out); /* not read without a bias */
        clg__arg_u32(&l, g->bias != NULL);
        clg__arg_u32(&l, (size_t)g->act);
        clg__arg_f32(&l, g->relu_max);
        clg__arg_u64(&l, n);
    } else if (pass == CLG_CONV_BWD_DATA) {
        clg__arg_u64(&l, n);
    } else {
        clg__arg_tensor(&l, g->db ? g->db : out);
        clg__arg_u32(&l, g->db != NULL);
        clg__arg_u32(&l, g->N);
    }
    size_t v[] = {g->C, g->H, g->W, g->P, g->Q, g->sh, g->sw, g->pt, g->pl, g->dh, g->dw};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    if (pass != CLG_CONV_BWD_WEIGHTS)
        return clg__launch_elementwise(&l, n);
    size_t global[3] = {g->C, 1, 1}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* A CPU-form kernel's launch begun on the layer's program (its taps' options). */
static clg_status begin(clg_ctx *ctx, const clg__conv_geom *g, const char *kernel, clg__launch *l)
{
    char opts[64];
    options(g, opts, sizeof opts);
    return clg__launch_begin(ctx, "conv_dw", opts, kernel, l);
}

/* A CPU-form kernel begun with the arguments the plane kernels start with: a, b, out, then the
 * forward pass's epilogue (bias, its flag, act, relu_max; none for a data gradient). */
static clg_status begin_planes(clg_ctx *ctx, const clg__conv_geom *g, const char *kernel, int fwd,
                               const clg_tensor *a, const clg_tensor *b, clg_tensor *out,
                               clg__launch *l)
{
    clg_status st = begin(ctx, g, kernel, l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(l, a);
    clg__arg_tensor(l, b);
    clg__arg_tensor(l, out);
    clg__arg_tensor(l, fwd && g->bias ? g->bias : out); /* not read without a bias */
    clg__arg_u32(l, fwd && g->bias != NULL);
    clg__arg_u32(l, fwd ? (size_t)g->act : 0);
    clg__arg_f32(l, g->relu_max);
    return CLG_OK;
}

/* The arguments the CPU-form kernels end with: signed padding (the kernel's int, the same
 * bits), then the given unsigned values; then one work-item each of `items`. */
static clg_status finish(clg__launch *l, long pt, long pl, const size_t *v, size_t nv,
                         size_t items)
{
    clg__arg_u32(l, (uint32_t)(int32_t)pt);
    clg__arg_u32(l, (uint32_t)(int32_t)pl);
    for (size_t i = 0; i < nv; i++)
        clg__arg_u32(l, v[i]);
    size_t global[3] = {items, 1, 1}, local[3] = {1, 1, 1};
    return clg__launch_run(l, global, local);
}

/* The data gradient of a layer with stride 2 across (dy, w -> dx): a work-item per dx row. */
static clg_status data_rows2(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *dy,
                             const clg_tensor *w, clg_tensor *dx)
{
    clg__launch l;
    clg_status st = begin(ctx, g, "clg_dw_bwd_rows2", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, dy);
    clg__arg_tensor(&l, w);
    clg__arg_tensor(&l, dx);
    size_t rows = g->N * g->C * g->H, v[] = {rows, g->C, g->H, g->W, g->P, g->Q};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    size_t more[] = {g->dh, g->dw, g->sh};
    return finish(&l, (long)g->pt, (long)g->pl, more, 3, rows);
}

/* The weight gradient (x, dy -> dW, and g->db): a work-item per channel. */
static clg_status weight_rows(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x,
                              const clg_tensor *dy, clg_tensor *dw)
{
    clg__launch l;
    clg_status st = begin(ctx, g, "clg_dw_wgrad_rows", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, dy);
    clg__arg_tensor(&l, dw);
    clg__arg_tensor(&l, g->db ? g->db : dw); /* not written without a bias */
    clg__arg_u32(&l, g->db != NULL);
    size_t v[] = {g->N, g->C, g->H, g->W, g->P, g->Q};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    size_t more[] = {g->dh, g->dw, g->sh, g->sw};
    return finish(&l, (long)g->pt, (long)g->pl, more, 4, g->C);
}

/* Padded planes of at most this many floats (and their slack) go through local memory. */
enum { PLANE_FLOATS = 16384, SLACK = 48 };

/* clg_dw_flat: rows()'s pass over planes as flat runs (stride 1, "same" padding pt, pl). */
static clg_status flat(clg_ctx *ctx, const clg__conv_geom *g, int fwd, const clg_tensor *a,
                       const clg_tensor *b, clg_tensor *out, size_t pt, size_t pl, size_t floats)
{
    size_t h = fwd ? g->H : g->P, w = fwd ? g->W : g->Q, planes = g->N * g->C;
    clg__launch l;
    clg_status st = begin_planes(ctx, g, "clg_dw_flat", fwd, a, b, out, &l);
    if (st != CLG_OK)
        return st;
    clg__arg_u32(&l, (size_t)!fwd);
    size_t per = clg__runs_per_item(ctx, planes, h * w, 4096);
    size_t v[] = {planes, per, g->C, h, w, pt, pl, g->dh, g->dw};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    clg__arg_local(&l, floats * sizeof(float));
    return clg__launch_runs(&l, planes, per);
}

/* clg_dw_flat2: a stride-2 forward pass over four phase planes as flat runs, where rows of
 * 16 outputs at a time would leave over a quarter of the lanes idle (7x7 outputs: 9 of 16),
 * a tap past an output row's end reads padding (2 Q >= W) and the planes fit in local
 * memory. Elsewhere the phase planes' copy costs more than the idle lanes (Xeon VM, batch
 * 32, ms, alternating builds: 672 channels 5x5 14 -> 7 4.0-5.5 -> 2.8-3.0; 144 3x3 28 -> 14
 * 1.0-1.3 against 1.3-1.9, 96 3x3 112 -> 56 9.9-12.1 against 12.3-13.4 by phase planes). */
static int flat2_fits(const clg__conv_geom *g, size_t *rows, size_t *gap, size_t *floats)
{
    size_t lanes = (g->Q + 15) / 16 * 16;
    if (g->sh != 2 || g->sw != 2 || g->dh != 1 || g->dw != 1 || 2 * g->Q < g->W ||
        g->pt >= g->R || g->pl >= g->S || 3 * lanes <= 4 * g->Q)
        return 0;
    size_t top = (g->pt + 1) / 2, below = (g->R - 1 - g->pt) / 2;
    *rows = g->P + top + below;
    *gap = 16 + g->S;
    *floats = 5 * *gap + 4 * *rows * g->Q;
    return *floats <= PLANE_FLOATS;
}

static clg_status flat2(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x,
                        const clg_tensor *w, clg_tensor *y, size_t rows, size_t gap,
                        size_t floats)
{
    size_t planes = g->N * g->C;
    clg__launch l;
    clg_status st = begin_planes(ctx, g, "clg_dw_flat2", 1, x, w, y, &l);
    if (st != CLG_OK)
        return st;
    size_t per = clg__runs_per_item(ctx, planes, g->P * g->Q, 4096);
    size_t v[] = {planes, per, g->C, g->H, g->W, g->P, g->Q, g->pt, g->pl, rows, gap};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    clg__arg_local(&l, floats * sizeof(float));
    return clg__launch_runs(&l, planes, per);
}

/* The forward pass, or (fwd 0) a stride-1 layer's data gradient as the forward pass of dy
 * through the flipped filter with the padding (R - 1) dh - pt, (S - 1) dw - pl: a work-item
 * per run of planes padded in local memory where they fit, else per output row. */
static clg_status rows(clg_ctx *ctx, const clg__conv_geom *g, int fwd, const clg_tensor *a,
                       const clg_tensor *b, clg_tensor *out)
{
    size_t in_h = fwd ? g->H : g->P, in_w = fwd ? g->W : g->Q, out_h = fwd ? g->P : g->H;
    size_t out_w = fwd ? g->Q : g->W, n_rows = g->N * g->C * out_h, planes = g->N * g->C;
    long pt = fwd ? (long)g->pt : (long)((g->R - 1) * g->dh) - (long)g->pt;
    long pl = fwd ? (long)g->pl : (long)((g->S - 1) * g->dw) - (long)g->pl;
    size_t sh = fwd ? g->sh : 1, sw = fwd ? g->sw : 1;
    /* the padded plane the outputs read: every 16-lane vector of a row stays inside PW + slack */
    size_t ph = (out_h - 1) * sh + (g->R - 1) * g->dh + 1;
    size_t pw = (out_w - 1) * sw + (g->S - 1) * g->dw + 1;
    int by_plane = ph * pw + SLACK <= PLANE_FLOATS;
    /* stride 1, outputs the inputs' size, rows short of whole vectors: planes as flat runs */
    size_t flat_floats = (in_h + (g->R - 1) * g->dh) * in_w + (g->S - 1) * g->dw + 16;
    if (sh == 1 && sw == 1 && out_h == in_h && out_w == in_w && in_w % 16 &&
        flat_floats <= PLANE_FLOATS)
        return flat(ctx, g, fwd, a, b, out, (size_t)pt, (size_t)pl, flat_floats);
    size_t rows2, gap2, floats2;
    if (fwd && flat2_fits(g, &rows2, &gap2, &floats2))
        return flat2(ctx, g, a, b, out, rows2, gap2, floats2);
    clg__launch l;
    clg_status st = begin_planes(ctx, g, by_plane ? "clg_dw_planes" : "clg_dw_rows", fwd, a, b,
                                 out, &l);
    if (st != CLG_OK)
        return st;
    clg__arg_u32(&l, (size_t)!fwd);
    if (by_plane) { /* runs of planes of at least 4,096 outputs (clg__runs_per_item) */
        size_t per = clg__runs_per_item(ctx, planes, out_h * out_w, 4096);
        size_t v[] = {planes, per, g->C, in_h, in_w, out_h, out_w};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            clg__arg_u32(&l, v[i]);
        clg__arg_u32(&l, (uint32_t)(int32_t)pt);
        clg__arg_u32(&l, (uint32_t)(int32_t)pl);
        size_t more[] = {g->dh, g->dw, sh, sw, ph, pw};
        for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
            clg__arg_u32(&l, more[i]);
        clg__arg_local(&l, (ph * pw + SLACK) * sizeof(float));
        return clg__launch_runs(&l, planes, per);
    }
    size_t v[] = {n_rows, g->C, in_h, in_w, out_h, out_w};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    size_t more[] = {g->dh, g->dw, g->sh, g->sw}; /* the data gradient's strides are 1 */
    return finish(&l, pt, pl, more, 4, n_rows);
}

/* CPU form: every pass by rows of 16-wide vectors for strides of 1 or 2 across (the generic
 * kernels' gathers ran MobileNet-v2's 3x3 layers at under 1 GFLOP/s), except a data
 * gradient strided down only; past 2 across, the generic form. */
clg_status clg__conv_depthwise_cpu_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                       const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    if (g->sw > 2)
        return clg__conv_depthwise_run(ctx, g, pass, a, b, out);
    if (pass == CLG_CONV_BWD_WEIGHTS)
        return weight_rows(ctx, g, a, b, out);
    if (pass == CLG_CONV_FWD)
        return rows(ctx, g, 1, a, b, out);
    if (g->sw == 2)
        return data_rows2(ctx, g, a, b, out);
    return g->sh == 1 ? rows(ctx, g, 0, a, b, out) : clg__conv_depthwise_run(ctx, g, pass, a, b, out);
}

/* The 3x3 and 5x5 programs (MobileNet's and EfficientNet's). */
clg_status clg__conv_depthwise_warm_up(clg_ctx *ctx)
{
    clg_status st = CLG_OK;
    for (size_t r = 3; r <= 5 && st == CLG_OK; r += 2) {
        clg__conv_geom g = {0};
        g.R = g.S = r;
        char opts[64];
        options(&g, opts, sizeof opts);
        cl_program prog;
        st = clg__program_get(ctx, "conv_dw", opts, &prog);
    }
    return st;
}
