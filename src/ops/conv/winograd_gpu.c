/* Winograd convolution for GPUs (cl_kernels/winograd_gpu.cl): the same F(4x4, 3x3) and
 * F(2x2, 5x5) as the CPU form, shaped for GPUs. Scalar transforms, one tile of one channel per
 * work-item (coalesced along the tiles), between the tensors and point-major matrices; the
 * products are one batched GEMM of all 36 points on the GEMM's local-memory tiles, so they run
 * at the tuned GEMM's speed. The weight gradient's long sum over every tile is cut into slices
 * (a batch entry each: enough work-groups to fill the device), summed in order after. Unlike
 * the CPU form it keeps no transform from the forward pass (the weight gradient's is sliced). */
#include <stdio.h>
#include "ops/conv/winograd_internal.h"
#include "ops/gemm_internal.h"

enum { GROUP = 64 }; /* work-items a group along the tiles */

void clg__conv_winograd_gpu_options(size_t r, char *out, size_t size)
{
    snprintf(out, size, "-DWM=%zu -DWR=%zu -DWINO_VEC=float", clg__wino_tile(r), r);
}

/* Slices of the weight gradient's sum over the tiles: about 4 work-groups per compute unit
 * over the 36 products, each slice at least 64 tiles, the partial products within a quarter
 * of the workspace limit. */
static size_t slices_of(clg_ctx *ctx, const clg__conv_geom *g, size_t tiles)
{
    clg_gemm_params p, small;
    if (clg_gemm_get_params(ctx, &p) != CLG_OK)
        return 1;
    const clg_gemm_params *q = clg__gemm_tile_fit(&p, g->Kg, g->Cg, &small);
    size_t units = clg__compute_units(ctx);
    size_t groups = clg__wino_points(g) * ((g->Kg + q->mwg - 1) / q->mwg) *
                    ((g->Cg + q->nwg - 1) / q->nwg);
    size_t want = (4 * units + groups - 1) / groups, by_length = tiles / 64;
    size_t part = clg__wino_points(g) * g->Kg * g->Cg * sizeof(float);
    size_t by_bytes = g->workspace_limit / 4 / part;
    size_t s = want < by_length ? want : by_length;
    s = s < by_bytes ? s : by_bytes;
    return s < 1 ? 1 : s > 64 ? 64 : s;
}

/* The pass's scratch, and for the weight gradient the most slices it cuts a chunk into. */
static void plan(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass, size_t *fixed,
                 size_t *per_image, size_t *slices)
{
    clg__wino_problem w = clg__wino_problem_of(g, pass == CLG_CONV_BWD_WEIGHTS ? CLG_CONV_FWD : pass, 1);
    size_t a2 = clg__wino_points(g), tiles = w.th * w.tw, filters = w.ins * w.outs;
    *per_image = a2 * tiles * (w.ins + w.outs) * sizeof(float); /* V and M, or V and E */
    *slices = 1;
    if (pass != CLG_CONV_BWD_WEIGHTS) {
        *fixed = g->G * a2 * filters * sizeof(float); /* U */
        return;
    }
    size_t s = *slices = slices_of(ctx, g, g->N * tiles);
    /* the slices' partial products, dU of every group, and the last slice's tail of tiles */
    *fixed = a2 * (s * filters + g->G * filters + s * (w.ins + w.outs)) * sizeof(float);
}

void clg__conv_winograd_gpu_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  size_t *fixed, size_t *per_image)
{
    size_t slices;
    plan(ctx, g, pass, fixed, per_image, &slices);
}

/* Launch geometry of the per-filter kernels: channels in along 0, channels out along 1. */
static clg_status run_filters(clg__launch *l, size_t ins, size_t outs)
{
    size_t local[3] = {GROUP, 1, 1};
    size_t global[3] = {(ins + GROUP - 1) / GROUP * GROUP, outs, 1};
    return clg__launch_run(l, global, local);
}

static clg_status filters(clg_ctx *ctx, const char *opts, const clg__conv_geom *g,
                          const clg__wino_problem *w, const clg_tensor *wt, size_t gi, cl_mem U,
                          size_t u_off)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd_gpu", opts, "clg_winog_filter", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, wt->mem);
    clg__arg_u64(&l, wt->offset + gi * g->Kg * g->Cg * g->R * g->S);
    clg__arg_u32(&l, w->outs);
    clg__arg_u32(&l, w->ins);
    clg__arg_u32(&l, (size_t)w->flip);
    clg__arg_mem(&l, U);
    clg__arg_u64(&l, u_off);
    return run_filters(&l, w->ins, w->outs);
}

/* Launch geometry of the per-tile kernels: tiles along 0 (looped past the grid), channels. */
static clg_status run_tiles(clg__launch *l, size_t tiles, size_t chans)
{
    size_t local[3] = {GROUP, 1, 1};
    size_t global[3] = {clg__grid_groups((tiles + GROUP - 1) / GROUP) * GROUP, chans, 1};
    return clg__launch_run(l, global, local);
}

/* Where tiles come from: `channels` planes of H x W a tensor's image, of which a group's
 * start at `first`; input: the input's patches at (top, left) (kernel clg_winog_input), else
 * dy's tiles (clg_winog_dy). */
typedef struct tile_source {
    const clg_tensor *t;
    size_t channels, first, H, W;
    long top, left;
    int input;
} tile_source;

/* The tiles of `chans` planes of images from n0 into the sliced point-major layout. */
static clg_status tiles_of(clg_ctx *ctx, const char *opts, const tile_source *src,
                           const clg__wino_problem *w, size_t n0, size_t chans, size_t T,
                           size_t ts, cl_mem out)
{
    clg__launch l;
    int input = src->input;
    clg_status st = clg__launch_begin(ctx, "winograd_gpu", opts,
                                      input ? "clg_winog_input" : "clg_winog_dy", &l);
    if (st != CLG_OK)
        return st;
    size_t plane = src->H * src->W, img = src->channels * plane;
    clg__arg_mem(&l, src->t->mem);
    clg__arg_u64(&l, src->t->offset + n0 * img + src->first * plane);
    clg__arg_u64(&l, img);
    clg__arg_u32(&l, src->H);
    clg__arg_u32(&l, src->W);
    if (input) {
        clg__arg_u32(&l, (uint32_t)(int32_t)src->top); /* the kernel reads them as int */
        clg__arg_u32(&l, (uint32_t)(int32_t)src->left);
    }
    clg__arg_u32(&l, w->th);
    clg__arg_u32(&l, w->tw);
    clg__arg_u32(&l, T);
    clg__arg_u32(&l, ts);
    clg__arg_u32(&l, chans);
    clg__arg_mem(&l, out);
    size_t slices = (T + ts - 1) / ts;
    return run_tiles(&l, slices * ts, chans);
}

static clg_status outputs(clg_ctx *ctx, const char *opts, const clg__conv_geom *g,
                          const clg__wino_problem *w, cl_mem M, size_t T, clg_tensor *y,
                          size_t n0, size_t gi)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd_gpu", opts, "clg_winog_output", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, M);
    clg__arg_u32(&l, T);
    clg__arg_u32(&l, w->outs);
    clg__wino_args_output(&l, g, w, y, n0, gi, M);
    return run_tiles(&l, T, w->outs);
}

/* Forward or data gradient: U once per group; per chunk of images and group, V, the 36
 * products M[a] = U[a] V[a] (outs x T) in one batched GEMM, then the output transform. */
static clg_status forward(clg_ctx *ctx, const char *opts, const clg__conv_geom *g,
                          clg_conv_pass pass, const clg_tensor *a, const clg_tensor *b,
                          clg_tensor *out)
{
    clg__wino_problem w = clg__wino_problem_of(g, pass, 1);
    size_t a2 = clg__wino_points(g), tiles = w.th * w.tw, u_group = a2 * w.ins * w.outs;
    size_t fixed, per_image, one;
    plan(ctx, g, pass, &fixed, &per_image, &one);
    size_t nb = clg__conv_chunk_after(g, fixed, per_image);
    cl_mem U, V, M;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_AUX, g->G * u_group * sizeof(float), &U);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, nb * tiles * a2 * w.ins * sizeof(float), &V);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_DW, nb * tiles * a2 * w.outs * sizeof(float), &M);
    for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++)
        st = filters(ctx, opts, g, &w, b, gi, U, gi * u_group);
    tile_source src = {a, w.ins_total, 0, w.Hin, w.Win, w.top, w.left, 1};
    for (size_t n0 = 0; n0 < g->N && st == CLG_OK; n0 += nb) {
        size_t T = (g->N - n0 < nb ? g->N - n0 : nb) * tiles;
        for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
            src.first = gi * w.ins;
            st = tiles_of(ctx, opts, &src, &w, n0, w.ins, T, T, V);
            if (st == CLG_OK) /* M[a] (outs x T) = U[a] (outs x ins) V[a] (ins x T) */
                st = clg__conv_gemm(ctx, 0, 0, w.outs, T, w.ins, U, gi * u_group, w.ins,
                                    w.outs * w.ins, V, 0, T, w.ins * T, 0.0f, M, 0, T,
                                    w.outs * T, a2);
            if (st == CLG_OK)
                st = outputs(ctx, opts, g, &w, M, T, out, n0, gi);
        }
    }
    return st;
}

static clg_status wsum(clg_ctx *ctx, const char *opts, const clg__conv_geom *g, cl_mem parts,
                       size_t slices, int accumulate, int last, cl_mem dU, size_t du_off,
                       clg_tensor *dw, size_t gi)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd_gpu", opts, "clg_winog_wsum", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, parts);
    clg__arg_u32(&l, slices);
    clg__arg_u32(&l, g->Kg);
    clg__arg_u32(&l, g->Cg);
    clg__arg_u32(&l, (size_t)accumulate);
    clg__arg_u32(&l, (size_t)last);
    clg__arg_mem(&l, dU);
    clg__arg_u64(&l, du_off);
    clg__arg_mem(&l, dw->mem);
    clg__arg_u64(&l, dw->offset + gi * g->Kg * g->Cg * g->R * g->S);
    return run_filters(&l, g->Cg, g->Kg);
}

/* Weight gradient: per chunk of images and group, V of x's patches and E of dy's tiles in
 * slices, the products dU[a][s] = E[a][s] V[a][s]^T (Kg x Cg, a sum over the slice's tiles)
 * in one batched GEMM, then summed in slice order (and chunk order) into dU; the last chunk
 * writes dW = A'^T dU A'. */
static clg_status weights(clg_ctx *ctx, const char *opts, const clg__conv_geom *g,
                          const clg_tensor *x, const clg_tensor *dy, clg_tensor *dw)
{
    clg__wino_problem w = clg__wino_problem_of(g, CLG_CONV_FWD, 1);
    size_t a2 = clg__wino_points(g), tiles = w.th * w.tw, filters = g->Kg * g->Cg;
    size_t fixed, per_image, most;
    plan(ctx, g, CLG_CONV_BWD_WEIGHTS, &fixed, &per_image, &most);
    size_t nb = clg__conv_chunk_after(g, fixed, per_image);
    size_t room = nb * tiles + most; /* tiles a chunk's V and E hold, with the tail */
    cl_mem V, E, parts, dU;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, room * a2 * g->Cg * sizeof(float), &V);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_AUX, room * a2 * g->Kg * sizeof(float), &E);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_DW, most * a2 * filters * sizeof(float), &parts);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_WINO, g->G * a2 * filters * sizeof(float), &dU);
    tile_source xs = {x, g->C, 0, g->H, g->W, w.top, w.left, 1};
    tile_source dys = {dy, g->K, 0, g->P, g->Q, 0, 0, 0};
    for (size_t n0 = 0; n0 < g->N && st == CLG_OK; n0 += nb) {
        size_t cnt = g->N - n0 < nb ? g->N - n0 : nb, T = cnt * tiles;
        size_t ts = (T + most - 1) / most, slices = (T + ts - 1) / ts;
        for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
            xs.first = gi * g->Cg, dys.first = gi * g->Kg;
            st = tiles_of(ctx, opts, &xs, &w, n0, g->Cg, T, ts, V);
            if (st == CLG_OK)
                st = tiles_of(ctx, opts, &dys, &w, n0, g->Kg, T, ts, E);
            if (st == CLG_OK) /* parts[a][s] (Kg x Cg) = E[a][s] (Kg x ts) V[a][s]^T */
                st = clg__conv_gemm(ctx, 0, 1, g->Kg, g->Cg, ts, E, 0, ts, g->Kg * ts, V, 0, ts,
                                    g->Cg * ts, 0.0f, parts, 0, g->Cg, filters, a2 * slices);
            if (st == CLG_OK)
                st = wsum(ctx, opts, g, parts, slices, n0 > 0, n0 + cnt >= g->N, dU,
                          gi * a2 * filters, dw, gi);
        }
    }
    return st;
}

clg_status clg__conv_winograd_gpu_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                      const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    char opts[64];
    clg__conv_winograd_gpu_options(g->R, opts, sizeof opts);
    if (pass == CLG_CONV_BWD_WEIGHTS)
        return weights(ctx, opts, g, a, b, out);
    return forward(ctx, opts, g, pass, a, b, out);
}
