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

/* The forward pass applies bias and ReLU, the weight gradient sums the bias gradient. */
int clg__conv_depthwise_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass)
{
    (void)ctx, (void)g;
    return pass == CLG_CONV_FWD || pass == CLG_CONV_BWD_WEIGHTS;
}

clg_status clg__conv_depthwise_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                   const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    static const char *const names[] = {"clg_dw_fwd", "clg_dw_bwd_data", "clg_dw_bwd_weights"};
    char opts[48];
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
        clg__arg_u32(&l, (size_t)(g->relu != 0));
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

/* The CPU form's data gradient of a layer with stride 2 across (dy, w -> dx). */
static clg_status data_rows2(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *dy,
                             const clg_tensor *w, clg_tensor *dx)
{
    char opts[48];
    options(g, opts, sizeof opts);
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_dw", opts, "clg_dw_bwd_rows2", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, dy);
    clg__arg_tensor(&l, w);
    clg__arg_tensor(&l, dx);
    size_t rows = g->N * g->C * g->H, v[] = {rows, g->C, g->H, g->W, g->P, g->Q};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    clg__arg_u32(&l, (uint32_t)(int32_t)g->pt);
    clg__arg_u32(&l, (uint32_t)(int32_t)g->pl);
    size_t more[] = {g->dh, g->dw, g->sh};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        clg__arg_u32(&l, more[i]);
    size_t global[3] = {rows, 1, 1}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* The CPU form's weight gradient (x, dy -> dW, and g->db). */
static clg_status weight_rows(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x,
                              const clg_tensor *dy, clg_tensor *dw)
{
    char opts[48];
    options(g, opts, sizeof opts);
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_dw", opts, "clg_dw_wgrad_rows", &l);
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
    clg__arg_u32(&l, (uint32_t)(int32_t)g->pt);
    clg__arg_u32(&l, (uint32_t)(int32_t)g->pl);
    size_t more[] = {g->dh, g->dw, g->sh, g->sw};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        clg__arg_u32(&l, more[i]);
    size_t global[3] = {g->C, 1, 1}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* CPU form: every pass by rows of 16-wide vectors for strides of 1 or 2 across (a stride-1
 * data gradient as the flipped filter over dy) (the generic kernels' gathers ran
 * MobileNet-v2's 3x3 layers at under 1 GFLOP/s); the rest as the generic form. */
clg_status clg__conv_depthwise_cpu_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                       const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    int strided = g->sh != 1 || g->sw != 1;
    if (pass == CLG_CONV_BWD_DATA && g->sw == 2)
        return data_rows2(ctx, g, a, b, out);
    if ((pass == CLG_CONV_BWD_DATA && strided) || g->sw > 2)
        return clg__conv_depthwise_run(ctx, g, pass, a, b, out);
    if (pass == CLG_CONV_BWD_WEIGHTS)
        return weight_rows(ctx, g, a, b, out);
    int fwd = pass == CLG_CONV_FWD;
    char opts[48];
    options(g, opts, sizeof opts);
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_dw", opts, "clg_dw_rows", &l);
    if (st != CLG_OK)
        return st;
    /* the data gradient: dy through the flipped filter, out dx (H x W rows of the P x Q dy) */
    size_t in_h = fwd ? g->H : g->P, in_w = fwd ? g->W : g->Q, out_h = fwd ? g->P : g->H;
    size_t out_w = fwd ? g->Q : g->W, rows = g->N * g->C * out_h;
    long pt = fwd ? (long)g->pt : (long)((g->R - 1) * g->dh) - (long)g->pt;
    long pl = fwd ? (long)g->pl : (long)((g->S - 1) * g->dw) - (long)g->pl;
    clg__arg_tensor(&l, a);
    clg__arg_tensor(&l, b);
    clg__arg_tensor(&l, out);
    clg__arg_tensor(&l, fwd && g->bias ? g->bias : out); /* not read without a bias */
    clg__arg_u32(&l, fwd && g->bias != NULL);
    clg__arg_u32(&l, (size_t)(fwd && g->relu));
    clg__arg_u32(&l, (size_t)!fwd);
    size_t v[] = {rows, g->C, in_h, in_w, out_h, out_w};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    clg__arg_u32(&l, (uint32_t)(int32_t)pt); /* the kernel's int: the same bits */
    clg__arg_u32(&l, (uint32_t)(int32_t)pl);
    clg__arg_u32(&l, g->dh);
    clg__arg_u32(&l, g->dw);
    clg__arg_u32(&l, g->sh); /* the data gradient runs at stride 1 */
    clg__arg_u32(&l, g->sw);
    size_t global[3] = {rows, 1, 1}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* The 3x3 and 5x5 programs (MobileNet's and EfficientNet's). */
clg_status clg__conv_depthwise_warm_up(clg_ctx *ctx)
{
    clg_status st = CLG_OK;
    for (size_t r = 3; r <= 5 && st == CLG_OK; r += 2) {
        clg__conv_geom g = {0};
        g.R = g.S = r;
        char opts[48];
        options(&g, opts, sizeof opts);
        cl_program prog;
        st = clg__program_get(ctx, "conv_dw", opts, &prog);
    }
    return st;
}
