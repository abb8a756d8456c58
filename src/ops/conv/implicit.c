/* The implicit algorithm: no column matrix. Layers run as products over shifted rows of a
 * zero-padded copy of the input (cl_kernels/conv_shift.cl), whose only workspace is the padded
 * input (about the input's size); strided layers with dilation, and any layer whose padded
 * input does not fit the workspace, run the direct kernels (direct.c), which need none.
 * Backward-data is the forward of the padded dy with flipped, transposed weights (strided
 * layers: phase by phase, each with its own taps); the weight gradient sums over slices of
 * images, then in slice order. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ops/conv/conv_internal.h"
#include "ops/gemm_internal.h"

/* One problem seen as a forward pass over a padded Hp x Wp grid. */
typedef struct shift_grid {
    size_t Hin, Win;  /* the tensor that gets padded */
    long top, left;   /* its placement in the grid (negative: leading rows/columns dropped) */
    size_t Hp, Wp;    /* grid */
    size_t P, Q;      /* pixels computed, on the grid's first rows and columns */
    size_t L;         /* grid columns spanned: (P-1)*Wp + Q (stride 1) */
} shift_grid;

static int strided(const clg__conv_geom *g)
{
    return g->sh > 1 || g->sw > 1;
}

static size_t ceil_div(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

static shift_grid grid_for(const clg__conv_geom *g, clg_conv_pass pass)
{
    size_t ext_h = (g->R - 1) * g->dh, ext_w = (g->S - 1) * g->dw;
    shift_grid s;
    if (pass == CLG_CONV_BWD_DATA && strided(g)) {
        /* dy padded by the most taps a phase has, less one (clg_conv_shift_bwd_px); rows
         * up to the last that a pixel of dx reads */
        s.Hin = g->P, s.Win = g->Q, s.top = (long)ceil_div(g->R, g->sh) - 1;
        s.left = (long)ceil_div(g->S, g->sw) - 1, s.P = g->H, s.Q = g->W;
        s.Hp = (g->H - 1 + g->pt) / g->sh + (size_t)s.top + 1;
        s.Wp = (g->W - 1 + g->pl) / g->sw + (size_t)s.left + 1;
        s.L = 0;
        return s;
    }
    if (pass == CLG_CONV_BWD_DATA) { /* dy padded so that dx is a forward of it */
        s.Hin = g->P, s.Win = g->Q, s.top = (long)ext_h - (long)g->pt, s.left = (long)ext_w - (long)g->pl;
        s.P = g->H, s.Q = g->W;
        s.Hp = s.P + ext_h, s.Wp = s.Q + ext_w;
    } else { /* the rows and columns the strided pixels' taps reach */
        s.Hin = g->H, s.Win = g->W, s.top = (long)g->pt, s.left = (long)g->pl;
        s.P = g->P, s.Q = g->Q;
        s.Hp = (s.P - 1) * g->sh + ext_h + 1, s.Wp = (s.Q - 1) * g->sw + ext_w + 1;
    }
    s.L = (s.P - 1) * s.Wp + s.Q;
    return s;
}

typedef struct shift_tiles {
    unsigned mr, nr;
    char opts[48];
} shift_tiles;

clg_status clg__conv_tiles(clg_ctx *ctx, unsigned *mr, unsigned *nr)
{
    clg__gemm_state *gs;
    clg_status st = clg__gemm_state_get(ctx, &gs);
    if (st != CLG_OK)
        return st;
    /* The convolutions' own blocks, else the GEMM's (their kernels take 16 or 32 columns) */
    *mr = gs->params.conv_mr ? gs->params.conv_mr : gs->params.mr;
    *nr = gs->params.conv_nr ? gs->params.conv_nr : gs->params.nr > 32 ? 32 : gs->params.nr;
    return CLG_OK;
}

void clg__conv_tiles_or_default(clg_ctx *ctx, unsigned *mr, unsigned *nr)
{
    char saved[CLG__ERR_TEXT];
    memcpy(saved, ctx->last_error, sizeof saved);
    if (clg__conv_tiles(ctx, mr, nr) != CLG_OK) /* sizes only: the defaults bound them */
        *mr = 8, *nr = 32;
    memcpy(ctx->last_error, saved, sizeof saved);
}

static clg_status tiles_get(clg_ctx *ctx, shift_tiles *t)
{
    clg_status st = clg__conv_tiles(ctx, &t->mr, &t->nr);
    if (st == CLG_OK)
        snprintf(t->opts, sizeof t->opts, "-DMR=%u -DNR=%u", t->mr, t->nr);
    return st;
}

clg_status clg__conv_implicit_options(clg_ctx *ctx, char *out, size_t size)
{
    shift_tiles t;
    clg_status st = tiles_get(ctx, &t);
    if (st == CLG_OK)
        snprintf(out, size, "%s", t.opts);
    return st;
}

/* Columns of the weight gradient's B: Kg rounded up to whole tiles of NR. */
static size_t ldd_for(const clg__conv_geom *g, unsigned nr)
{
    return (g->Kg + nr - 1) / nr * nr;
}

/* Slices of images for the weight gradient: enough tiles for every compute unit several
 * times over, never more than the images. */
static size_t slices_for(clg_ctx *ctx, const clg__conv_geom *g, unsigned mr, unsigned nr, size_t nb)
{
    size_t taps = g->Cg * g->R * g->S;
    size_t tiles = (taps + mr - 1) / mr * (ldd_for(g, nr) / nr);
    size_t want = 4 * (ctx->device.compute_units ? ctx->device.compute_units : 1);
    size_t s = tiles >= want ? 1 : (want + tiles - 1) / tiles;
    return s < nb ? s : nb;
}

/* Pixels as rows (clg_conv_shift_fwd_px) or channels as rows (clg_conv_shift_fwd): whichever
 * computes fewer values that are thrown away (lanes past the channels, or the grid's Wp - Q
 * columns and the last tile's overlap). */
static int pixel_rows(const clg__conv_geom *g, clg_conv_pass pass, unsigned mr, unsigned nr)
{
    if (strided(g)) /* the channel-row form reads contiguous runs of the grid: stride 1 only */
        return 1;
    shift_grid s = grid_for(g, pass);
    size_t outs = pass == CLG_CONV_BWD_DATA ? g->Cg : g->Kg, pq = s.P * s.Q;
    double by_channel = (double)((outs + mr - 1) / mr * mr) * (double)((s.L + nr - 1) / nr * nr);
    double by_pixel = (double)((pq + mr - 1) / mr * mr) * (double)((outs + nr - 1) / nr * nr);
    return by_pixel <= by_channel;
}

int clg__conv_implicit_fits(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass)
{
    size_t fixed, per_image;
    if (!clg__conv_implicit_applies(g))
        return 0;
    clg__conv_implicit_bytes(ctx, g, pass, &fixed, &per_image);
    return fixed + per_image <= g->workspace_limit;
}

int clg__conv_implicit_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass)
{
    if (clg__conv_stem_applies(g, pass))
        return 1;
    if (pass == CLG_CONV_BWD_DATA || !clg__conv_implicit_fits(ctx, g, pass))
        return 0;
    if (pass == CLG_CONV_BWD_WEIGHTS)
        return 1;
    unsigned mr, nr; /* when they cannot be read, the pass itself fails with the reason */
    clg__conv_tiles_or_default(ctx, &mr, &nr);
    return pixel_rows(g, CLG_CONV_FWD, mr, nr);
}

int clg__conv_implicit_applies(const clg__conv_geom *g)
{
    return !strided(g) || (g->dh == 1 && g->dw == 1); /* a strided, dilated dx: no phases */
}

/* Rows of the input grid that the output's rows start on span, first to last: the rows of
 * ones after each padded image that the weight gradient's bias row reads. */
static size_t rows_spanned(const clg__conv_geom *g)
{
    return (g->P - 1) * g->sh + 1;
}

void clg__conv_implicit_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                           size_t *fixed, size_t *per_image)
{
    shift_tiles t;
    clg__conv_tiles_or_default(ctx, &t.mr, &t.nr);
    shift_grid s = grid_for(g, pass);
    size_t planes = pass == CLG_CONV_BWD_DATA ? g->K : g->C;
    *per_image = planes * s.Hp * s.Wp * sizeof(float);
    *fixed = t.nr * sizeof(float); /* slack: the last tile's loads run past the last image */
    if (pass == CLG_CONV_BWD_DATA || (pass == CLG_CONV_FWD && pixel_rows(g, pass, t.mr, t.nr))) {
        /* the weights laid out as rows of taps */
        size_t outs = pass == CLG_CONV_BWD_DATA ? g->Cg : g->Kg;
        *fixed += (outs + t.nr - 1) / t.nr * t.nr * (g->Kg + g->Cg - outs) * g->R * g->S * sizeof(float);
    }
    if (pass == CLG_CONV_BWD_WEIGHTS) {
        /* dy's rows, and the rows of ones for a bias gradient */
        *per_image += (g->P * g->Q * ldd_for(g, t.nr) + rows_spanned(g) * s.Wp) * sizeof(float);
        size_t slices = slices_for(ctx, g, t.mr, t.nr, g->N);
        *fixed += slices * (g->Cg * g->R * g->S + 1) * ldd_for(g, t.nr) * sizeof(float);
    }
}

/* The padded copy of images [n0, n0+nb) of src, each followed by `ones` rows of 1. */
static clg_status pad(clg_ctx *ctx, const shift_tiles *t, const shift_grid *s,
                      const clg_tensor *src, size_t channels, size_t ones, size_t n0, size_t nb,
                      cl_mem dst)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_shift", t->opts, "clg_conv_shift_pad", &l);
    if (st != CLG_OK)
        return st;
    size_t img = channels * s->Hin * s->Win;
    clg__arg_mem(&l, src->mem);
    clg__arg_u64(&l, src->offset + n0 * img);
    clg__arg_u64(&l, img);
    clg__arg_u32(&l, channels);
    clg__arg_u32(&l, s->Hin);
    clg__arg_u32(&l, s->Win);
    clg__arg_u32(&l, (uint32_t)(int32_t)s->top); /* the kernel reads them as int */
    clg__arg_u32(&l, (uint32_t)(int32_t)s->left);
    clg__arg_u32(&l, s->Hp);
    clg__arg_u32(&l, s->Wp);
    clg__arg_u32(&l, ones);
    clg__arg_mem(&l, dst);
    size_t rows = channels * s->Hp + ones;
    clg__arg_u64(&l, rows * s->Wp);
    size_t global[3] = {rows, nb, 1}, local[3] = {64, 1, 1}; /* one local size (see tile_launch) */
    return clg__launch_run(&l, global, local);
}

/* Work-groups of 8 items: up to 8 row tiles by as many column tiles as make 8 (as the GEMM).
 * Four shapes only, whatever the layer: POCL compiles a kernel anew for every local size (~1 s
 * cold), and the items past the tiles only test their bounds. */
static void tile_launch(size_t tiles_m, size_t local[3])
{
    local[1] = clg__local_fit(8, tiles_m);
    local[0] = 8 / local[1];
    local[2] = 1;
}

/* y (rows x P*Q per image, image stride y_img) = a (rows x taps) . shifted rows of the padded
 * images in `padded` (planes channels each, the first at plane c0). */
static clg_status forward(clg_ctx *ctx, const shift_tiles *t, const shift_grid *s, size_t rows,
                          size_t channels, size_t R, size_t S, size_t dh, size_t dw,
                          cl_mem a, size_t a_off, cl_mem padded, size_t x_off, size_t x_img,
                          cl_mem y, size_t y_off, size_t y_img, size_t nb)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_shift", t->opts, "clg_conv_shift_fwd", &l);
    if (st != CLG_OK)
        return st;
    size_t v[] = {rows, s->L, channels, R, S, dh, dw, s->Hp, s->Wp, s->Q};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    clg__arg_mem(&l, a);
    clg__arg_u64(&l, a_off);
    clg__arg_u32(&l, channels * R * S);
    clg__arg_mem(&l, padded);
    clg__arg_u64(&l, x_off);
    clg__arg_u64(&l, x_img);
    clg__arg_mem(&l, y);
    clg__arg_u64(&l, y_off);
    clg__arg_u64(&l, y_img);
    clg__arg_u32(&l, s->P * s->Q);
    size_t tiles_n = (s->L + t->nr - 1) / t->nr, tiles_m = (rows + t->mr - 1) / t->mr;
    size_t global[3] = {tiles_n, tiles_m, nb}, local[3];
    tile_launch(tiles_m, local);
    return clg__launch_run(&l, global, local);
}

/* The group's weights as wt for clg_conv_shift_fwd_px (rows) or as flipped rows of taps for
 * clg_conv_shift_fwd (backward-data). */
static clg_status weights_layout(clg_ctx *ctx, const shift_tiles *t, const clg__conv_geom *g,
                                 const clg_tensor *w, size_t gi, int flip, int rows, size_t ldk,
                                 cl_mem wt)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_shift", t->opts, "clg_conv_shift_weights", &l);
    if (st != CLG_OK)
        return st;
    size_t taps = (flip ? g->Kg : g->Cg) * g->R * g->S;
    clg__arg_mem(&l, w->mem);
    clg__arg_u64(&l, w->offset + gi * g->Kg * g->Cg * g->R * g->S);
    clg__arg_u32(&l, g->Kg);
    clg__arg_u32(&l, g->Cg);
    clg__arg_u32(&l, g->R * g->S);
    clg__arg_u32(&l, (size_t)flip);
    clg__arg_u32(&l, (size_t)rows);
    clg__arg_u32(&l, ldk);
    clg__arg_mem(&l, wt);
    size_t global[3] = {taps, rows ? ldk : (flip ? g->Cg : g->Kg), 1};
    size_t local[3] = {16, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* The pixel-row kernels' buffers: the padded input, its offset and image stride; the weights'
 * rows of taps and their length; the output, its offset and image stride. */
static void px_args(clg__launch *l, cl_mem padded, size_t x_off, size_t x_img, cl_mem wt,
                    size_t ldk, cl_mem y, size_t y_off, size_t y_img)
{
    clg__arg_mem(l, padded);
    clg__arg_u64(l, x_off);
    clg__arg_u64(l, x_img);
    clg__arg_mem(l, wt);
    clg__arg_u32(l, ldk);
    clg__arg_mem(l, y);
    clg__arg_u64(l, y_off);
    clg__arg_u64(l, y_img);
}

/* Output pixels as rows; for the forward pass with the epilogue g->bias (group gi's part) and
 * g->act. */
static clg_status forward_px(clg_ctx *ctx, const shift_tiles *t, const shift_grid *s,
                             size_t outs, size_t ldk, size_t channels, const clg__conv_geom *g,
                             size_t gi, cl_mem padded, size_t x_off, size_t x_img, cl_mem wt,
                             cl_mem y, size_t y_off, size_t y_img, size_t nb)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_shift", t->opts, "clg_conv_shift_fwd_px", &l);
    if (st != CLG_OK)
        return st;
    size_t pq = s->P * s->Q;
    size_t v[] = {pq, s->Q, channels, g->R, g->S, g->dh, g->dw, g->sh, g->sw, s->Hp, s->Wp, outs};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    px_args(&l, padded, x_off, x_img, wt, ldk, y, y_off, y_img);
    clg__arg_mem(&l, g->bias ? g->bias->mem : wt); /* any buffer when unused */
    clg__arg_u64(&l, g->bias ? g->bias->offset + gi * outs : 0);
    clg__arg_u32(&l, (g->bias ? 1u : 0u) | (unsigned)g->act << 1);
    clg__arg_f32(&l, g->relu_max);
    size_t tiles_n = ldk / t->nr, tiles_m = (pq + t->mr - 1) / t->mr;
    size_t global[3] = {tiles_n, tiles_m, nb}, local[3];
    tile_launch(tiles_m, local);
    return clg__launch_run(&l, global, local);
}

/* Backward-data of a strided layer, phase by phase (clg_conv_shift_bwd_px). */
static clg_status backward_px(clg_ctx *ctx, const shift_tiles *t, const shift_grid *s,
                              size_t ldk, const clg__conv_geom *g, cl_mem padded, size_t x_off,
                              size_t x_img, cl_mem wt, cl_mem y, size_t y_off, size_t y_img,
                              size_t nb)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_shift", t->opts, "clg_conv_shift_bwd_px", &l);
    if (st != CLG_OK)
        return st;
    size_t v[] = {g->H, g->W, g->Kg, g->R, g->S, g->sh, g->sw, g->pt, g->pl, (size_t)s->top,
                  (size_t)s->left, s->Hp, s->Wp, g->Cg};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    px_args(&l, padded, x_off, x_img, wt, ldk, y, y_off, y_img);
    /* the largest phase: the first, ceil(H / sh) x ceil(W / sw) pixels at most */
    size_t pixels = ceil_div(g->H, g->sh) * ceil_div(g->W, g->sw);
    size_t tiles_n = ldk / t->nr, tiles_m = ceil_div(pixels, t->mr);
    size_t global[3] = {tiles_n, tiles_m, nb * g->sh * g->sw}, local[3];
    tile_launch(tiles_m, local);
    return clg__launch_run(&l, global, local);
}

/* Pixel rows over at most 16 channels: one vector of lanes, not two of which one is padding
 * (ResNet-20's stride-2 data gradient into 16 channels: half the products), and twice the
 * rows, so that a work-item keeps as many sums in registers. */
static shift_tiles narrowed(const shift_tiles *t)
{
    shift_tiles n = *t;
    n.nr = 16;
    n.mr = t->mr * 2 > 16 ? 16 : t->mr * 2;
    snprintf(n.opts, sizeof n.opts, "-DMR=%u -DNR=%u", n.mr, n.nr);
    return n;
}

/* Forward (a = x, b = w, out = y) and backward-data (a = dy, b = w, out = dx), in chunks of
 * images whose padded copies fit the workspace, group by group. */
static clg_status by_image(clg_ctx *ctx, const shift_tiles *wide, const clg__conv_geom *g,
                           clg_conv_pass pass, const clg_tensor *a, const clg_tensor *w,
                           clg_tensor *out)
{
    int data = pass == CLG_CONV_BWD_DATA, px = pixel_rows(g, pass, wide->mr, wide->nr);
    shift_tiles narrow;
    const shift_tiles *t = wide;
    if (px && (data ? g->Cg : g->Kg) <= 16 && wide->nr > 16) {
        narrow = narrowed(wide);
        t = &narrow;
    }
    if ((g->bias || g->act) && !px) /* clg__conv_implicit_fuses promised the epilogue */
        return clg__fail(ctx, CLG_ERR_INTERNAL, "conv2d: epilogue asked of the channel-row form");
    shift_grid s = grid_for(g, pass);
    size_t in_ch = data ? g->K : g->C, in_g = data ? g->Kg : g->Cg;
    size_t out_ch = data ? g->C : g->K, out_g = data ? g->Cg : g->Kg;
    size_t x_img = in_ch * s.Hp * s.Wp, y_img = out_ch * s.P * s.Q, taps = in_g * g->R * g->S;
    size_t ldk = (out_g + t->nr - 1) / t->nr * t->nr, fixed, per_image;
    clg__conv_implicit_bytes(ctx, g, pass, &fixed, &per_image);
    size_t nb = clg__conv_chunk_after(g, fixed, per_image);
    cl_mem padded, wt = NULL;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, (nb * x_img + t->nr) * sizeof(float), &padded);
    if (st == CLG_OK && (data || px))
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_AUX, ldk * taps * sizeof(float), &wt);
    for (size_t n0 = 0; n0 < g->N && st == CLG_OK; n0 += nb) {
        size_t cnt = g->N - n0 < nb ? g->N - n0 : nb;
        st = pad(ctx, t, &s, a, in_ch, 0, n0, cnt, padded);
        for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
            size_t x_off = gi * in_g * s.Hp * s.Wp;
            size_t y_off = out->offset + n0 * y_img + gi * out_g * s.P * s.Q;
            if (data || px)
                st = weights_layout(ctx, t, g, w, gi, data, px, px ? ldk : taps, wt);
            if (st == CLG_OK && data && strided(g))
                st = backward_px(ctx, t, &s, ldk, g, padded, x_off, x_img, wt, out->mem, y_off,
                                 y_img, cnt);
            else if (st == CLG_OK && px)
                st = forward_px(ctx, t, &s, out_g, ldk, in_g, g, gi, padded, x_off, x_img, wt,
                                out->mem, y_off, y_img, cnt);
            else if (st == CLG_OK)
                st = forward(ctx, t, &s, out_g, in_g, g->R, g->S, g->dh, g->dw,
                             data ? wt : w->mem, data ? 0 : w->offset + gi * out_g * taps,
                             padded, x_off, x_img, out->mem, y_off, y_img, cnt);
        }
    }
    return st;
}

static clg_status dy_rows(clg_ctx *ctx, const shift_tiles *t, const clg__conv_geom *g,
                          const clg_tensor *dy, size_t n0, size_t nb,
                          size_t gi, size_t ldd, cl_mem d)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_shift", t->opts, "clg_conv_shift_dy", &l);
    if (st != CLG_OK)
        return st;
    size_t img = g->K * g->P * g->Q;
    clg__arg_mem(&l, dy->mem);
    clg__arg_u64(&l, dy->offset + n0 * img + gi * g->Kg * g->P * g->Q);
    clg__arg_u64(&l, img);
    clg__arg_u32(&l, g->Kg);
    clg__arg_u32(&l, g->P * g->Q);
    clg__arg_u32(&l, ldd);
    clg__arg_mem(&l, d);
    size_t pq = g->P * g->Q;
    size_t global[3] = {pq, nb, 1}, local[3] = {64, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* Rows m = taps, or taps + 1 with the bias row reading the ones at `ones` past x_off. */
static clg_status wgrad(clg_ctx *ctx, const shift_tiles *t, const clg__conv_geom *g,
                        const shift_grid *s, size_t m, size_t ones, cl_mem padded, size_t x_off,
                        size_t x_img, size_t nb, size_t per_slice, size_t slices, cl_mem d,
                        size_t ldd, cl_mem part, int accumulate)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_shift", t->opts, "clg_conv_shift_wgrad", &l);
    if (st != CLG_OK)
        return st;
    size_t taps = g->Cg * g->R * g->S;
    size_t v[] = {m, taps, ones, g->P, g->Q, g->R, g->S, g->dh, g->dw, g->sh, g->sw, s->Hp, s->Wp, nb, per_slice};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    clg__arg_mem(&l, padded);
    clg__arg_u64(&l, x_off);
    clg__arg_u64(&l, x_img);
    clg__arg_mem(&l, d);
    clg__arg_u32(&l, ldd);
    clg__arg_mem(&l, part);
    clg__arg_u64(&l, 0);
    clg__arg_u32(&l, (size_t)accumulate);
    size_t tiles_n = ldd / t->nr, tiles_m = (m + t->mr - 1) / t->mr;
    size_t global[3] = {tiles_n, tiles_m, slices}, local[3];
    tile_launch(tiles_m, local);
    return clg__launch_run(&l, global, local);
}

static clg_status wsum(clg_ctx *ctx, const shift_tiles *t, const clg__conv_geom *g, cl_mem part,
                       size_t slices, size_t m, size_t ldd, clg_tensor *dw, size_t gi)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv_shift", t->opts, "clg_conv_shift_wsum", &l);
    if (st != CLG_OK)
        return st;
    size_t taps = g->Cg * g->R * g->S;
    clg__arg_mem(&l, part);
    clg__arg_u32(&l, slices);
    clg__arg_u32(&l, m);
    clg__arg_u32(&l, taps);
    clg__arg_u32(&l, ldd);
    clg__arg_u32(&l, g->Kg);
    clg__arg_mem(&l, dw->mem);
    clg__arg_u64(&l, dw->offset + gi * g->Kg * taps);
    clg__arg_mem(&l, g->db ? g->db->mem : dw->mem); /* any buffer when unused */
    clg__arg_u64(&l, g->db ? g->db->offset + gi * g->Kg : 0);
    size_t global[3] = {m, g->Kg, 1}, local[3] = {16, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* Weight gradient: per group, slice s of every chunk of images adds its partial sum to slot s
 * of `part` (chunks in order; a slice without images adds zero), then one pass sums the
 * slices in order into dW. With g->db, one more row of products against ones sums dy: the
 * bias gradient in the same pass. */
static clg_status weights(clg_ctx *ctx, const shift_tiles *t, const clg__conv_geom *g,
                          const clg_tensor *x, const clg_tensor *dy, clg_tensor *dw)
{
    shift_grid s = grid_for(g, CLG_CONV_BWD_WEIGHTS);
    size_t ldd = ldd_for(g, t->nr), taps = g->Cg * g->R * g->S, m = taps + (g->db != NULL);
    size_t ones = g->db ? rows_spanned(g) : 0; /* rows of ones after each image's planes */
    size_t x_img = (g->C * s.Hp + ones) * s.Wp, d_img = g->P * g->Q * ldd, fixed, per_image;
    clg__conv_implicit_bytes(ctx, g, CLG_CONV_BWD_WEIGHTS, &fixed, &per_image);
    size_t nb = clg__conv_chunk_after(g, fixed, per_image);
    size_t slices = slices_for(ctx, g, t->mr, t->nr, nb), per_slice = (nb + slices - 1) / slices;
    slices = (nb + per_slice - 1) / per_slice;
    size_t chunks = (g->N + nb - 1) / nb;
    cl_mem padded, d, part;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, (nb * x_img + t->nr) * sizeof(float), &padded);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_AUX, nb * d_img * sizeof(float), &d);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_DW, slices * m * ldd * sizeof(float), &part);
    for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
        for (size_t c = 0; c < chunks && st == CLG_OK; c++) {
            size_t n0 = c * nb, cnt = g->N - n0 < nb ? g->N - n0 : nb;
            if (gi == 0 || chunks > 1) /* one chunk: padded once for every group */
                st = pad(ctx, t, &s, x, g->C, ones, n0, cnt, padded);
            size_t x_off = gi * g->Cg * s.Hp * s.Wp;
            if (st == CLG_OK)
                st = dy_rows(ctx, t, g, dy, n0, cnt, gi, ldd, d);
            if (st == CLG_OK)
                st = wgrad(ctx, t, g, &s, m, g->C * s.Hp * s.Wp - x_off, padded, x_off, x_img,
                           cnt, per_slice, slices, d, ldd, part, c > 0);
        }
        if (st == CLG_OK)
            st = wsum(ctx, t, g, part, slices, m, ldd, dw, gi);
    }
    return st;
}

static clg_status shifted_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                               const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    shift_tiles t;
    clg_status st = tiles_get(ctx, &t);
    if (st != CLG_OK)
        return st;
    if (pass == CLG_CONV_BWD_WEIGHTS)
        return weights(ctx, &t, g, a, b, out);
    return by_image(ctx, &t, g, pass, a, b, out);
}

clg_status clg__conv_implicit_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    if (clg__conv_stem_applies(g, pass))
        return clg__conv_stem_run(ctx, g, a, b, out);
    if (clg__conv_implicit_fits(ctx, g, pass))
        return shifted_run(ctx, g, pass, a, b, out);
    return clg__conv_direct_run(ctx, g, pass, a, b, out);
}
