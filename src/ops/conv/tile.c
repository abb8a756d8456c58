/* The implicit algorithm on GPUs: implicit-GEMM convolutions on the GEMM's local-memory tiles
 * (cl_kernels/gemm_tile.cl, CONV 1-3), the columns gathered into the tiles from the tensors, so
 * no im2col workspace; any stride, padding and dilation. The weight gradient's long sum (every
 * pixel of every image) is cut into slices that run side by side, summed in order after. */
#include <stdio.h>
#include "ops/conv/conv_internal.h"
#include "ops/gemm_internal.h"

/* Slices of the weight gradient's k: enough groups to fill a large GPU (about 4 per compute
 * unit), each slice at least 4 k steps long, their partial products within the workspace. */
static size_t weight_slices(const clg_ctx *ctx, const clg_gemm_params *p, const clg__conv_geom *g,
                            size_t tiles, size_t k)
{
    size_t units = clg__compute_units(ctx);
    size_t want = (4 * units + tiles - 1) / tiles;
    size_t most_by_k = k / (4 * (size_t)p->kwg);
    size_t part = g->Kg * g->Cg * g->R * g->S * sizeof(float);
    size_t most_by_bytes = part ? g->workspace_limit / part : 1;
    size_t s = want < most_by_k ? want : most_by_k;
    s = s < most_by_bytes ? s : most_by_bytes;
    return s < 1 ? 1 : s > 256 ? 256 : s;
}

/* One group of channels: a, b, out already offset to it (elements). */
static clg_status run_group(clg_ctx *ctx, const clg_gemm_params *p, const clg__conv_geom *g,
                            clg_conv_pass pass, cl_mem a, size_t a_off, cl_mem b, size_t b_off,
                            cl_mem out, size_t out_off, size_t bias_off)
{
    static const char *const names[] = {"clg_conv_tile_fwd", "clg_conv_tile_bwd_data",
                                        "clg_conv_tile_bwd_weights"};
    size_t crs = g->Cg * g->R * g->S, npq = g->N * g->P * g->Q;
    size_t m = pass == CLG_CONV_BWD_DATA ? g->Cg : g->Kg;
    size_t n = pass == CLG_CONV_FWD ? npq : pass == CLG_CONV_BWD_DATA ? g->N * g->H * g->W : crs;
    size_t k = pass == CLG_CONV_FWD ? crs : pass == CLG_CONV_BWD_DATA ? g->Kg * g->R * g->S : npq;
    clg_gemm_params small;
    p = clg__gemm_tile_fit(p, m, n, &small); /* few channels: small tiles */
    size_t tiles_m = (m + p->mwg - 1) / p->mwg, tiles_n = (n + p->nwg - 1) / p->nwg;
    size_t slices = 1, kslice = k;
    cl_mem dest = out;
    size_t dest_off = out_off;
    clg_status st = CLG_OK;
    if (pass == CLG_CONV_BWD_WEIGHTS) {
        slices = weight_slices(ctx, p, g, tiles_m * tiles_n, k);
        kslice = (k + slices - 1) / slices;
        kslice = (kslice + p->kwg - 1) / p->kwg * p->kwg; /* whole k steps */
        slices = (k + kslice - 1) / kslice;               /* none empty */
        if (slices > 1) {
            st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_DW, slices * m * n * sizeof(float), &dest);
            dest_off = 0;
        }
    }
    char opts[224];
    clg__gemm_tile_options(p, 0, pass == CLG_CONV_BWD_WEIGHTS, 1 + (int)pass, opts, sizeof opts);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "gemm_tile", opts, names[pass], &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, a);
    clg__arg_u64(&l, a_off);
    clg__arg_mem(&l, b);
    clg__arg_u64(&l, b_off);
    clg__arg_mem(&l, dest);
    clg__arg_u64(&l, dest_off);
    size_t v[] = {g->N, g->Cg, g->H, g->W, g->Kg, g->R, g->S, g->P, g->Q, g->sh, g->sw, g->pt, g->pl,
                  g->dh, g->dw};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    clg__arg_u64(&l, g->C * g->H * g->W); /* img_in */
    clg__arg_u64(&l, g->K * g->P * g->Q); /* img_out */
    clg__arg_u32(&l, tiles_n);
    clg__arg_u32(&l, tiles_m);
    if (pass == CLG_CONV_BWD_WEIGHTS) {
        clg__arg_u32(&l, slices);
        clg__arg_u32(&l, kslice);
    }
    if (pass == CLG_CONV_FWD) { /* the epilogue: g->bias is offset to the group by bias_off */
        clg__arg_mem(&l, g->bias ? g->bias->mem : dest);
        clg__arg_u64(&l, g->bias ? g->bias->offset + bias_off : 0);
        clg__arg_u32(&l, g->bias != NULL);
        clg__arg_u32(&l, (size_t)g->act);
        clg__arg_f32(&l, g->relu_max);
    }
    size_t local[3] = {p->ndimc, p->mdimc, 1};
    size_t global[3] = {clg__grid_groups(tiles_n) * p->ndimc, clg__grid_groups(tiles_m) * p->mdimc,
                        clg__grid_groups(slices)}; /* the kernels loop past the grid */
    st = clg__launch_run(&l, global, local);
    if (st == CLG_OK && slices > 1)
        st = clg__gemm_reduce_slices(ctx, dest, slices, m, n, 0.0f, out, out_off, n);
    return st;
}

clg_status clg__conv_tile_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                              const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    clg_gemm_params p;
    clg_status st = clg_gemm_get_params(ctx, &p);
    size_t hw = g->H * g->W, pq = g->P * g->Q, rs = g->R * g->S;
    for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
        size_t x_off = gi * g->Cg * hw, y_off = gi * g->Kg * pq, w_off = gi * g->Kg * g->Cg * rs;
        if (pass == CLG_CONV_FWD) /* a = x, b = w, out = y */
            st = run_group(ctx, &p, g, pass, a->mem, a->offset + x_off, b->mem, b->offset + w_off,
                           out->mem, out->offset + y_off, gi * g->Kg);
        else if (pass == CLG_CONV_BWD_DATA) /* a = dy, b = w, out = dx */
            st = run_group(ctx, &p, g, pass, a->mem, a->offset + y_off, b->mem, b->offset + w_off,
                           out->mem, out->offset + x_off, 0);
        else /* a = x, b = dy, out = dw */
            st = run_group(ctx, &p, g, pass, a->mem, a->offset + x_off, b->mem, b->offset + y_off,
                           out->mem, out->offset + w_off, 0);
    }
    return st;
}

clg_status clg__conv_tile_warm_up(clg_ctx *ctx)
{
    clg_gemm_params p;
    clg_status st = clg_gemm_get_params(ctx, &p);
    for (int pass = 0; pass < 3 && st == CLG_OK; pass++)
        st = clg__gemm_tile_build(ctx, &p, 0, pass == CLG_CONV_BWD_WEIGHTS, 1 + pass);
    return st;
}
