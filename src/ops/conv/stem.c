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

static size_t items_of(const clg__conv_geom *g)
{
    return g->N * g->P * ((g->K + 15) / 16);
}

/* y = w * x, then bias and the activation (g->bias, g->act): a work-item per 16 channels of
 * an output row. */
clg_status clg__conv_stem_run(clg_ctx *ctx, const clg__conv_geom *g, const clg_tensor *x,
                              const clg_tensor *w, clg_tensor *y)
{
    char opts[80];
    options(g, opts, sizeof opts);
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_stem", opts, "clg_conv_stem_fwd", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, w);
    clg__arg_tensor(&l, y);
    clg__arg_tensor(&l, g->bias ? g->bias : y); /* not read without a bias */
    clg__arg_u32(&l, g->bias != NULL);
    clg__arg_u32(&l, (size_t)g->act);
    clg__arg_f32(&l, g->relu_max);
    size_t qa, qb;
    inside_columns(g, &qa, &qb);
    size_t v[] = {items_of(g), g->H, g->W, g->K, g->P, g->Q, g->sh, g->pt, g->pl, g->dh, qa,
                  qb}; /* the kernel's int padding: never negative here */
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    size_t global[3] = {v[0], 1, 1}, local[3] = {4, 1, 1};
    return clg__launch_run(&l, global, local);
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
