/* A first layer's forward pass on CPUs (cl_kernels/conv_stem.cl): an RGB photo's 3 channels
 * (up to 4) into many, as MobileNet's and EfficientNet's 3x3 stride-2 and ResNet's 7x7
 * stride-2 first layers. Part of the implicit algorithm (no column matrix, no workspace):
 * im2col's columns there were 27 or 147 rows deep, written and read back for a product that
 * sums too few values per output to pay for them. */
#include <stdio.h>

#include "ops/conv/conv_internal.h"

/* Input channels and taps per channel the kernel unrolls at most: a 7x7 RGB layer's; taps
 * across at most 17 (a block at the padding takes them as lane shifts of 32 columns). */
enum { STEM_MAX_C = 4, STEM_MAX_TAPS = 49, STEM_MAX_S = 17 };

int clg__conv_stem_applies(const clg__conv_geom *g, clg_conv_pass pass)
{
    return pass == CLG_CONV_FWD && g->G == 1 && g->C <= STEM_MAX_C && g->sw <= 2 && g->dw == 1 &&
           g->R * g->S <= STEM_MAX_TAPS && g->S <= STEM_MAX_S && g->Q > 0 && g->P > 0 &&
           g->N * g->P * ((g->K + 15) / 16) < (1u << 31);
}

static void options(const clg__conv_geom *g, char *out, size_t cap)
{
    snprintf(out, cap, "-DST_C=%zu -DST_R=%zu -DST_S=%zu -DST_SW=%zu", g->C, g->R, g->S, g->sw);
}

/* Output columns [*qa, *qb) read no padding across (their taps all inside a row). */
static void inside_columns(const clg__conv_geom *g, size_t *qa, size_t *qb)
{
    size_t reach = g->S - 1; /* columns a window spans past its first (dilation 1) */
    *qa = (g->pl + g->sw - 1) / g->sw;
    *qb = g->W + g->pl > reach ? (g->W - 1 + g->pl - reach) / g->sw + 1 : 0;
    *qb = *qb < g->Q ? *qb : g->Q;
    *qa = *qa < *qb ? *qa : *qb;
}

/* The channel-vector kernel's block: 2 vectors of 16 channels x 8 columns (16 accumulators of
 * 32 registers, and 10 loads for 16 FMAs a tap), from 64 taps. */
enum { KV_CHANNELS = 32, KV_COLUMNS = 8, KV_MIN_TAPS = 64 };

/* Whether the channel-vector form serves this layer: CPUs with AVX-512's 32 registers, and
 * enough taps to pay for storing the block channel by channel. The row form's 16 broadcast
 * weights a tap keep its loads the limit. Intel Xeon (family 6 model 207), batch 32, one-layer
 * networks, alternating runs, ms row -> channel vectors: ResNet's 7x7 stride 2 into 64
 * channels 34.9 -> 25.0, a 7x7 stride 1 into 24 68.0 -> 43.1, 5x5 stride 2 into 48 15.2 ->
 * 14.2; 3x3 stride 2 into 32 (27 taps) 2.9 -> 4.8, so not there. */
static int channel_vectors(clg_ctx *ctx, const clg__conv_geom *g)
{
    clg_cpu_class c = clg__ctx_cpu_class(ctx);
    return (c == CLG_CPU_CLASS_AVX512_1FMA || c == CLG_CPU_CLASS_AVX512_2FMA) &&
           g->C * g->R * g->S >= KV_MIN_TAPS;
}

/* w[k][tap] transposed into the scratch as wt[tap][Kp], zeros past K. */
static clg_status transpose_weights(clg_ctx *ctx, const clg__conv_geom *g, const char *opts,
                                    const clg_tensor *w, size_t kp, cl_mem *wt)
{
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_AUX,
                                     kp * g->C * g->R * g->S * sizeof(float), wt);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "conv_stem", opts, "clg_conv_stem_wt", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, w);
    clg__arg_mem(&l, *wt);
    clg__arg_u32(&l, g->K);
    clg__arg_u32(&l, kp);
    size_t global[3] = {kp, g->C * g->R * g->S, 1}, local[3] = {KV_CHANNELS, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* Either kernel over `items` work-items: x, the weights (w at w_off: the layer's, or the
 * channel-vector form's transposed copy, which takes kp, its channels per tap, last), y, then
 * bias, activation and the geometry. */
static clg_status launch(clg_ctx *ctx, const clg__conv_geom *g, const char *opts,
                         const char *kernel, const clg_tensor *x, cl_mem w, size_t w_off,
                         clg_tensor *y, size_t items, size_t kp)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_stem", opts, kernel, &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_mem(&l, w);
    clg__arg_u64(&l, w_off);
    clg__arg_tensor(&l, y);
    clg__arg_tensor(&l, g->bias ? g->bias : y); /* not read without a bias */
    clg__arg_u32(&l, g->bias != NULL);
    clg__arg_u32(&l, (size_t)g->act);
    clg__arg_f32(&l, g->relu_max);
    size_t qa, qb;
    inside_columns(g, &qa, &qb);
    size_t v[] = {items, g->H, g->W, g->K, g->P, g->Q, g->sh, g->pt, g->pl, g->dh, qa, qb};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) /* the kernel's int padding: >= 0 */
        clg__arg_u32(&l, v[i]);
    if (kp)
        clg__arg_u32(&l, kp);
    size_t global[3] = {items, 1, 1}, local[3] = {4, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* y = w * x, then bias and the activation (g->bias, g->act): a work-item per 16 channels of
 * an output row, or (channel_vectors) per 32 channels of 8 columns. */
clg_status clg__conv_stem_run(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x,
                              const clg_tensor *w, clg_tensor *y)
{
    char opts[80];
    options(g, opts, sizeof opts);
    size_t kp = (g->K + KV_CHANNELS - 1) / KV_CHANNELS * KV_CHANNELS;
    size_t blocks = (g->Q + KV_COLUMNS - 1) / KV_COLUMNS * (kp / KV_CHANNELS);
    if (!channel_vectors(ctx, g) || g->N * g->P * blocks >= (1u << 31))
        return launch(ctx, g, opts, "clg_conv_stem_fwd", x, w->mem, w->offset, y,
                      g->N * g->P * ((g->K + 15) / 16), 0);
    cl_mem wt;
    clg_status st = transpose_weights(ctx, g, opts, w, kp, &wt);
    return st == CLG_OK ? launch(ctx, g, opts, "clg_conv_stem_kv", x, wt, 0, y,
                                 g->N * g->P * blocks, kp)
                        : st;
}

/* The program of an RGB 3x3 first layer (MobileNet's, EfficientNet's). */
clg_status clg__conv_stem_warm_up(clg_ctx *ctx)
{
    clg__conv_geom g = {0};
    g.C = 3;
    g.R = g.S = 3;
    g.sw = 2;
    char opts[80];
    options(&g, opts, sizeof opts);
    cl_program prog;
    return clg__program_get(ctx, "conv_stem", opts, &prog);
}
